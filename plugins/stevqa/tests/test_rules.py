"""Tests for the rules an annotator's question-answer pairs must keep (pure Python, no database)."""

from __future__ import annotations

import json
import math

import pytest

from annotation.problems import Problem
from plugins.stevqa import rules
from plugins.stevqa.rules import check_pairs, is_yes_no_answer, is_yes_no_question, normalise_question

WIDTH, HEIGHT = 640, 480
BOX = [10, 10, 110, 10, 110, 40, 10, 40]


def pair(question="What is the name of the shop?", answer="GOLDEN BAKERY", evidence=BOX):
    return {"question": question, "answer": answer, "evidence": evidence}


def codes(problems):
    return [(problem.pair, problem.field, problem.code) for problem in problems]


# --- yes/no questions and answers ---------------------------------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "Is this a bank?",
        "is this a bank",
        "Are there any prices on the board?",
        "Does the shop open on Sunday?",
        "Can you see a phone number?",
        "Isn't this the main street?",
        "Isn’t this the main street?",  # a typographic apostrophe
        "ＩＳ ＴＨＩＳ Ａ ＢＡＮＫ？",  # full-width letters
        "Would the bakery be open at 7AM?",
        "According to the sign, is the shop open?",
        "This is a bank, isn't it?",
        "The street is Oak Avenue, right?",
        "Is the price $5 or $6?",
        "这是银行吗？",
        "这是银行吗",
        "这是银行吗 ？ ",
        "这是药店么?",
        "这是药店嘛。",
        "这是药店吧？",
        "是不是药店",
        "这家店有没有卖面包？",
        "这家店能不能刷卡？",
        "这里可不可以停车？",
        "这家店是否营业？",
    ],
)
def test_yes_no_questions_are_recognised(question):
    assert is_yes_no_question(question)


@pytest.mark.parametrize(
    "question",
    [
        "What is the name of the shop?",
        "Which street is this?",
        "How many items are on the menu?",
        "Where is the pharmacy?",
        "What's the price of the coffee?",
        "Do you know what the shop is called?",
        "Isabella's shop sells what?",  # starts like "is", but the word is a name
        "Name the street on the green sign.",
        "这家店叫什么名字？",
        "这家店叫什么",  # ends in 么, but in 什么
        "这条路怎么走？",
        "苹果的价格是多少?",
        "你知道这家店叫什么吗？",
        "招牌上写的电话号码是",
    ],
)
def test_content_questions_are_not_yes_no(question):
    assert not is_yes_no_question(question)


@pytest.mark.parametrize(
    "answer", ["Yes", "yes.", "Yes.", "NO!", "no", "Nope", "yeah", "Y", "n", "True", "false?", "Ｙｅｓ"]
)
def test_english_yes_no_answers_are_recognised(answer):
    assert is_yes_no_answer(answer)


@pytest.mark.parametrize(
    "answer",
    ["是", "否", "是的", "不是", "不是。", "对", "对的！", "没有", "不", "可以", "不能", "不会", " 是 "],
)
def test_chinese_yes_no_answers_are_recognised(answer):
    assert is_yes_no_answer(answer)


@pytest.mark.parametrize(
    "answer",
    # 是非 ("right and wrong") is a word a sign may hold: only whole yes/no answers are refused.
    ["No Parking", "NO SMOKING", "Yes Bank", "North", "YO", "是非", "不二家", "有限公司", "会员价", "$7.75"],
)
def test_answers_that_merely_contain_yes_or_no_are_fine(answer):
    assert not is_yes_no_answer(answer)


def test_non_text_is_neither_a_yes_no_question_nor_answer():
    assert not is_yes_no_question(None)
    assert not is_yes_no_answer(3)


# --- check_pairs --------------------------------------------------------------------------------


def test_good_pairs_in_both_languages_have_no_problem():
    pairs = [
        pair(),
        pair("这条路叫什么名字？", "东风路", [116, 234, 210, 224, 211, 260, 117, 261]),
        pair("What is the price of the muffin?", "$7.75", [382.5, 365, 427, 362, 428, 382, 383, 386]),
    ]
    assert check_pairs(pairs, width=WIDTH, height=HEIGHT) == []


def test_the_generated_demo_pairs_keep_every_rule(tmp_path):
    """The demo generator's questions are real STE-VQA style questions: none may be refused."""
    from plugins.stevqa import demo

    if not (demo.CHINESE_FONT_PATH.is_file() and demo.ENGLISH_FONT_PATH.is_file()):
        pytest.skip("scene-text fonts missing (fonts-wqy-microhei, fonts-dejavu-core)")
    records = json.loads(demo.generate_demo(tmp_path, count=12, seed=4).read_text(encoding="utf-8"))
    for record in records:
        pairs = [
            {**annotation, "evidence": [float(value) for value in annotation["evidence"]]}
            for annotation in record["annotation"]
        ]
        assert check_pairs(pairs, width=demo.IMAGE_WIDTH, height=demo.IMAGE_HEIGHT) == [], record


def test_yes_no_question_and_answer_are_refused_in_both_languages():
    problems = check_pairs(
        [pair("Is this a bank?", "Yes."), pair("这是银行吗？", "是"), pair("是不是药店", "No Parking")],
        width=WIDTH,
        height=HEIGHT,
    )
    assert codes(problems) == [
        (0, "question", "yes_no_question"),
        (0, "answer", "yes_no_answer"),
        (1, "question", "yes_no_question"),
        (1, "answer", "yes_no_answer"),
        (2, "question", "yes_no_question"),
    ]
    assert not any(problem.confirmable for problem in problems)


def test_no_pairs_is_a_problem_of_the_whole_submission():
    assert check_pairs([], width=WIDTH, height=HEIGHT) == [Problem(None, "pairs", "no_pairs", {})]
    assert codes(check_pairs(None, width=WIDTH, height=HEIGHT)) == [(None, "pairs", "no_pairs")]


@pytest.mark.parametrize("blank", ["", "   ", "\n\t", None, 42])
def test_empty_question_and_answer_are_refused(blank):
    problems = check_pairs([pair(blank, blank)], width=WIDTH, height=HEIGHT)
    assert codes(problems) == [(0, "question", "empty"), (0, "answer", "empty")]


def test_a_pair_that_is_not_a_dict_is_reported_field_by_field():
    problems = check_pairs([pair(), "What?"], width=WIDTH, height=HEIGHT)
    assert codes(problems) == [
        (1, "question", "empty"),
        (1, "answer", "empty"),
        (1, "evidence", "no_evidence"),
    ]


def test_missing_evidence_asks_for_a_quadrilateral():
    without = {"question": "What is the name of the shop?", "answer": "ACE SHOES"}
    problems = check_pairs(
        [without, pair("Which street is this?", evidence=None)], width=WIDTH, height=HEIGHT
    )
    assert codes(problems) == [(0, "evidence", "no_evidence"), (1, "evidence", "no_evidence")]


@pytest.mark.parametrize(
    "evidence",
    [
        [],
        BOX[:6],
        [*BOX, 1],
        [str(value) for value in BOX],  # strings are not numbers here: the page sends numbers
        [*BOX[:7], "x"],
        [*BOX[:7], None],
        [*BOX[:7], True],
        [*BOX[:7], math.nan],
        [*BOX[:7], math.inf],
        [*BOX[:7], -math.inf],
        [*BOX[:7], 10**400],  # too big for a float
        "10,10,110,10,110,40,10,40",
        "01234567",  # 8 characters, still not 8 numbers
        {"x1": 10},
        42,
    ],
)
def test_evidence_must_be_eight_finite_numbers(evidence):
    problems = check_pairs([pair(evidence=evidence)], width=WIDTH, height=HEIGHT)
    assert codes(problems) == [(0, "evidence", "quad_points")]


def test_evidence_may_be_a_tuple_of_ints_and_floats():
    assert (
        check_pairs([pair(evidence=(10, 10.5, 110, 10, 110.25, 40, 10, 40))], width=WIDTH, height=HEIGHT)
        == []
    )


@pytest.mark.parametrize(
    "evidence",
    [
        [-1, 10, 110, 10, 110, 40, 10, 40],
        [10, 10, 641, 10, 641, 40, 10, 40],
        [10, 10, 110, 10, 110, 480.5, 10, 480.5],
        [10, -0.1, 110, 10, 110, 40, 10, 40],
        [10, 10, 1e300, 10, 1e300, 40, 10, 40],
    ],
)
def test_corners_outside_the_image_are_refused(evidence):
    problems = check_pairs([pair(evidence=evidence)], width=WIDTH, height=HEIGHT)
    assert codes(problems) == [(0, "evidence", "quad_outside")]
    assert problems[0].params == {"width": WIDTH, "height": HEIGHT}
    assert "640" in rules.message(problems[0]) and "480" in rules.message(problems[0])


def test_corners_on_the_image_border_are_inside():
    whole_image = [0, 0, WIDTH, 0, WIDTH, HEIGHT, 0, HEIGHT]
    assert check_pairs([pair(evidence=whole_image)], width=WIDTH, height=HEIGHT) == []


@pytest.mark.parametrize(
    "evidence",
    [
        [10, 10, 110, 40, 110, 10, 10, 40],  # a bow tie: top and bottom corners swapped
        [10, 10, 110, 10, 10, 40, 110, 40],  # the other diagonal
        [10, 10, 110, 10, 110, 10, 10, 40],  # two corners coincide
        [0, 0, 100, 0, 50, 0, 50, 50],  # a spike doubling back along the top side
    ],
)
def test_a_quadrilateral_must_be_simple(evidence):
    problems = check_pairs([pair(evidence=evidence)], width=WIDTH, height=HEIGHT)
    assert codes(problems) == [(0, "evidence", "quad_not_simple")]


def test_a_counter_clockwise_or_concave_quadrilateral_is_fine():
    counter_clockwise = [10, 10, 10, 40, 110, 40, 110, 10]
    concave = [10, 10, 110, 10, 60, 20, 10, 40]
    assert check_pairs([pair(evidence=counter_clockwise)], width=WIDTH, height=HEIGHT) == []
    assert check_pairs([pair("Which street?", evidence=concave)], width=WIDTH, height=HEIGHT) == []


@pytest.mark.parametrize(
    "evidence",
    [
        [10, 10, 11, 10, 11, 11, 10, 11],  # 1 square pixel
        [10, 10, 11.9, 10, 11.9, 11.9, 10, 11.9],  # just under 4
        [10, 10, 110, 10, 210, 10, 300, 10],  # four corners on a line: no area at all
        [10, 10, 10, 10, 10, 10, 10, 10],  # all four at one point: a click without a drag
        [10, 10, 300, 10, 10, 10.01, 300, 10.01],  # a hair-thin bow tie
        [10, 10, 510, 10, 510, 10.005, 10, 10.005],  # long but a hair thin
    ],
)
def test_a_tiny_quadrilateral_is_refused(evidence):
    problems = check_pairs([pair(evidence=evidence)], width=WIDTH, height=HEIGHT)
    assert codes(problems) == [(0, "evidence", "quad_too_small")]


def test_a_two_by_two_quadrilateral_is_just_big_enough():
    assert check_pairs([pair(evidence=[10, 10, 12, 10, 12, 12, 10, 12])], width=WIDTH, height=HEIGHT) == []


def test_outside_and_crossed_are_both_reported():
    problems = check_pairs([pair(evidence=[-5, 10, 110, 40, 110, 10, 10, 40])], width=WIDTH, height=HEIGHT)
    assert codes(problems) == [(0, "evidence", "quad_outside"), (0, "evidence", "quad_not_simple")]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("What is the name of the shop?", "what is the name of the shop"),
        ("What is the name of the shop?", "  WHAT is  the name\tof the shop ?! "),
        ("What is the name of the shop?", "Ｗｈａｔ ｉｓ ｔｈｅ ｎａｍｅ ｏｆ ｔｈｅ ｓｈｏｐ？"),
        ("这家店叫什么名字？", "这家店叫什么名字"),
        ("这家店叫什么名字？", "这家店叫什么名字。"),
        ("这家店叫什么名字？", "这家店叫什么名字?"),
    ],
)
def test_the_same_question_twice_is_refused_naming_the_first(first, second):
    problems = check_pairs(
        [pair(first), pair("Which street is this?"), pair(second)], width=WIDTH, height=HEIGHT
    )
    assert codes(problems) == [(2, "question", "duplicate_question")]
    assert problems[0].params == {"other": 0, "other_number": 1}
    assert "pair 1" in rules.message(problems[0])


def test_different_questions_are_not_duplicates():
    questions = ["What is the price of the coffee?", "What is the price of the tea?", "这家店叫什么名字？"]
    assert check_pairs([pair(question) for question in questions], width=WIDTH, height=HEIGHT) == []


def test_a_third_copy_names_the_first_not_the_second():
    problems = check_pairs([pair(), pair(), pair()], width=WIDTH, height=HEIGHT)
    assert [problem.params["other"] for problem in problems] == [0, 0]


def test_fixed_questions_skip_the_question_rules_but_keep_answer_and_evidence():
    given = [
        pair("Is this a bank?", "Yes", [10, 10, 110, 40, 110, 10, 10, 40]),
        pair("Is this a bank?", "", None),
        pair("", "ACE SHOES"),
    ]
    problems = check_pairs(given, width=WIDTH, height=HEIGHT, fixed_questions=True)
    assert codes(problems) == [
        (0, "answer", "yes_no_answer"),
        (0, "evidence", "quad_not_simple"),
        (1, "answer", "empty"),
        (1, "evidence", "no_evidence"),
    ]
    assert codes(check_pairs(given, width=WIDTH, height=HEIGHT))[:2] == [
        (0, "question", "yes_no_question"),
        (0, "answer", "yes_no_answer"),
    ]


def test_normalise_question():
    assert normalise_question("  What IS  the\tname?？ ") == "what is the name"
    assert normalise_question("这家店叫什么名字。") == "这家店叫什么名字"
    assert normalise_question("Ｓｔｒａße！") == "strasse"
    assert normalise_question(None) == ""


# --- messages -----------------------------------------------------------------------------------


def test_every_problem_check_pairs_gives_has_a_message_that_fills_in():
    submissions = [
        [],
        [pair("Is this a bank?", "yes", [-1, 0, 5, 0, 0, 5, 5, 5]), pair("is this a bank", "")],
        [pair(evidence=[1, 2, 3]), pair("Which street?", evidence=[10, 10, 11, 10, 11, 11, 10, 11])],
        [pair(evidence=None)],
    ]
    seen = set()
    for submission in submissions:
        for problem in check_pairs(submission, width=WIDTH, height=HEIGHT):
            seen.add(problem.code)
            text = rules.message(problem)
            assert text and "{" not in text
    seen |= {"ocr_mismatch", "ocr_empty"}
    assert seen == set(rules.MESSAGES)


def test_the_ocr_problems_are_confirmable_and_name_what_was_read():
    problem = rules.ocr_mismatch(1, "GOLDEN BAKERY")
    assert problem == Problem(1, "answer", "ocr_mismatch", {"recognised": "GOLDEN BAKERY"}, confirmable=True)
    assert '"GOLDEN BAKERY"' in rules.message(problem)
    nothing = rules.ocr_mismatch(0, " ")
    assert nothing.code == "ocr_empty" and nothing.confirmable
    assert "No text" in rules.message(nothing)
