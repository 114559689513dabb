"""Tests for the STE-VQA metrics (pure Python, no database).

Besides hand cases for every detail of the released evaluator, `score` is compared item by item
with a literal reference written below the way the released ``eval.py`` works: one loop over
ground truth and predictions paired by position, shapely convex hulls of each quadrilateral,
and the "union" taken as the convex hull of all eight points.
"""

from __future__ import annotations

import itertools
import json
import random

import numpy as np
import pytest
import zhconv
from rapidfuzz.distance import Levenshtein
from shapely.geometry import MultiPoint, Polygon

from benchmarks.records import FormatError
from conftest import SHARED_DATA
from plugins.stevqa import metric as stevqa

SAMPLE_DIR = SHARED_DATA / "estvqa_sample"
SQUARE = [0, 0, 2, 0, 2, 2, 0, 2]


# --- the literal reference: the released evaluator's per-item loop ------------------------------


def reference_polygon_iou(first, second):
    """IoU as the released polyIoU computes it: hulls, hull-of-all-points union, 0 if disjoint."""
    first_points = np.array(first).reshape(4, 2)
    second_points = np.array(second).reshape(4, 2)
    all_points = np.concatenate((first_points, second_points))
    first_hull = Polygon(first_points).convex_hull
    second_hull = Polygon(second_points).convex_hull
    if not first_hull.intersects(second_hull):
        return 0
    intersection = first_hull.intersection(second_hull).area
    union = MultiPoint(all_points).convex_hull.area
    if union == 0:
        return 0
    return float(intersection) / union


def reference_process_answer(answer):
    return zhconv.convert(answer.lower(), "zh-cn")


def reference_is_chinese(question):
    return any("\u4e00" <= character <= "\u9fa5" for character in question)


def reference_evaluate(ground_truth, predictions):
    """Per-item (TC, LC, CLC, is_chinese) and the bilingual / en / ch means, as eval.py does."""
    assert len(ground_truth) == len(predictions)
    items = []
    for truth, prediction in zip(ground_truth, predictions, strict=True):
        assert truth["question_id"] == prediction["question_id"]
        truth_answer = reference_process_answer(truth["answer"])
        truth_evidence = list(map(int, truth["evidence"]))
        predicted_answer = reference_process_answer(prediction["answer"])
        predicted_evidence = list(map(int, prediction["evidence"]))
        distance = Levenshtein.distance(truth_answer, predicted_answer) / max(
            len(truth_answer), len(predicted_answer)
        )
        answer_score = 1 - distance if distance < 0.5 else 0
        evidence_score = reference_polygon_iou(truth_evidence, predicted_evidence)
        checked_score = answer_score if evidence_score >= 0.5 else 0
        items.append((answer_score, evidence_score, checked_score, reference_is_chinese(truth["question"])))
    means = {}
    for name, keep in (
        ("bi", lambda item: True),
        ("ch", lambda item: item[3]),
        ("en", lambda item: not item[3]),
    ):
        kept = [item for item in items if keep(item)]
        means[name] = tuple(float(np.mean([item[k] for item in kept])) if kept else None for k in range(3))
    return items, means


# --- random cases ------------------------------------------------------------------------------

#: Traditional / simplified pairs (phrase level) and other answers to mix and edit.
ANSWER_PAIRS = [
    ("軟體", "软件"),
    ("滑鼠", "鼠标"),
    ("記憶體", "内存"),
    ("網路", "网络"),
    ("華為", "华为"),
    ("韓國", "韩国"),
    ("善醫堂", "善医堂"),
    ("麥當勞", "麦当劳"),
    ("KFC", "kfc"),
    ("ＫＦＣ", "kfc"),
    ("Platform B", "platform b"),
    ("Hello World", "HELLO WORLD"),
]
PLAIN_ANSWERS = [
    "stop",
    "15952618488",
    "禾不锈钢",
    "小颜家电维修",
    "a",
    "7",
    "city of London",
    "A&J LIQUOR",
    "",
]
QUESTIONS = ["这家店的名字是什么?", "What is written on the sign?", "ＫＦＣ?", "カタカナ", "", "哪里?"]


def random_answer_pair(rng):
    """(truth, prediction); never both empty (that is an error, tested on its own)."""
    truth, prediction = edited_answer_pair(rng)
    return (truth, prediction) if truth or prediction else (truth, "x")


def edited_answer_pair(rng):
    kind = rng.random()
    if kind < 0.35:
        first, second = rng.choice(ANSWER_PAIRS)
        return (first, second) if rng.random() < 0.5 else (second, first)
    truth = rng.choice(PLAIN_ANSWERS + [pair[rng.randrange(2)] for pair in ANSWER_PAIRS])
    if kind < 0.5:
        return truth, truth.upper() if rng.random() < 0.5 else truth.swapcase()
    prediction = list(truth)
    for _ in range(rng.randrange(4)):
        position = rng.randrange(len(prediction) + 1)
        operation = rng.random()
        if operation < 0.4:
            prediction.insert(position, rng.choice("abc店软體 "))
        elif prediction and operation < 0.8:
            del prediction[min(position, len(prediction) - 1)]
        elif prediction:
            prediction[min(position, len(prediction) - 1)] = rng.choice("xyz的體")
    return truth, "".join(prediction)


def random_quad(rng, anchor=None):
    """A quadrilateral of 8 integer coordinates: rectangles, rotated, bow-ties, degenerate ones."""
    kind = rng.random()
    base_x, base_y = anchor if anchor else (rng.randint(0, 60), rng.randint(0, 60))
    if kind < 0.1:  # degenerate: a point or a segment
        x, y = base_x, base_y
        points = (
            [(x, y)] * 4 if rng.random() < 0.5 else [(x, y), (x + 5, y + 5), (x + 10, y + 10), (x + 5, y + 5)]
        )
    else:
        width, height = rng.randint(1, 40), rng.randint(1, 40)
        points = [
            (base_x, base_y),
            (base_x + width, base_y),
            (base_x + width, base_y + height),
            (base_x, base_y + height),
        ]
        points = [(x + rng.randint(-4, 4), y + rng.randint(-4, 4)) for x, y in points]
        if kind < 0.25:  # bow-tie: two vertices swapped
            points[1], points[2] = points[2], points[1]
        rotation = rng.randrange(4)
        points = points[rotation:] + points[:rotation]
        if rng.random() < 0.3:
            points.reverse()
    coordinates = [value for point in points for value in point]
    return [str(value) for value in coordinates] if rng.random() < 0.7 else coordinates


def random_case(rng, question_id):
    truth_answer, predicted_answer = random_answer_pair(rng)
    truth_quad = random_quad(rng)
    relation = rng.random()
    if relation < 0.25:  # the same quadrilateral, its vertices in another order
        values = [int(value) for value in truth_quad]
        points = list(zip(values[0::2], values[1::2], strict=True))
        rng.shuffle(points)
        predicted_quad = [value for point in points for value in point]
    elif relation < 0.45:  # nearly the same: every coordinate moved a little
        predicted_quad = [int(value) + rng.randint(-3, 3) for value in truth_quad]
    elif relation < 0.6:  # overlapping or nested: anchored near the truth
        x, y = int(truth_quad[0]), int(truth_quad[1])
        predicted_quad = random_quad(rng, (x + rng.randint(-10, 10), y + rng.randint(-10, 10)))
    elif relation < 0.7:  # touching: shares the truth's right edge
        values = [int(value) for value in truth_quad]
        right = max(values[0::2])
        top, bottom = min(values[1::2]), max(values[1::2])
        predicted_quad = [right, top, right + 10, top, right + 10, bottom, right, bottom]
    else:  # anywhere, often disjoint
        predicted_quad = random_quad(rng)
    truth = {
        "question_id": question_id,
        "question": rng.choice(QUESTIONS),
        "answer": truth_answer,
        "evidence": [str(value) for value in truth_quad],
    }
    prediction = {"question_id": question_id, "answer": predicted_answer, "evidence": predicted_quad}
    return truth, prediction


@pytest.fixture(scope="module")
def random_cases():
    rng = random.Random(20200613)
    pairs = [random_case(rng, question_id) for question_id in range(800)]
    return [truth for truth, _ in pairs], [prediction for _, prediction in pairs]


def test_score_matches_the_literal_reference_item_by_item(random_cases):
    ground_truth, predictions = random_cases
    reference_items, reference_means = reference_evaluate(ground_truth, predictions)
    scored = stevqa.score(ground_truth, predictions)

    assert len(scored.items) == len(reference_items)
    for row, (answer_score, evidence_score, checked_score, chinese) in zip(
        scored.items, reference_items, strict=True
    ):
        assert row["TC"] == pytest.approx(answer_score, abs=1e-12), row
        assert row["LC"] == pytest.approx(evidence_score, abs=1e-12), row
        assert row["CLC"] == pytest.approx(checked_score, abs=1e-12), row
        assert row["lang"] == ("ch" if chinese else "en")
    summary = scored.summary
    for name, group in (
        ("bi", summary["overall"]),
        ("en", summary["by_language"]["en"]),
        ("ch", summary["by_language"]["ch"]),
    ):
        assert (group["TC"], group["LC"], group["CLC"]) == pytest.approx(reference_means[name], abs=1e-12)


def test_random_cases_cover_the_interesting_situations(random_cases):
    """The comparison above is only worth something if the cases reach every branch."""
    ground_truth, predictions = random_cases
    items, _ = reference_evaluate(ground_truth, predictions)
    answer_scores = [item[0] for item in items]
    evidence_scores = [item[1] for item in items]
    assert sum(score == 1 for score in answer_scores) > 100
    assert sum(0 < score < 1 for score in answer_scores) > 50
    assert sum(score == 0 for score in answer_scores) > 50
    assert sum(score == 0 for score in evidence_scores) > 100
    assert sum(0 < score < 0.5 for score in evidence_scores) > 30
    assert sum(0.5 <= score < 1 for score in evidence_scores) > 30
    assert sum(score == pytest.approx(1) for score in evidence_scores) > 100
    traditional_pairs = sum(
        truth["answer"] != prediction["answer"]
        and stevqa.normalize_answer(truth["answer"]) == stevqa.normalize_answer(prediction["answer"])
        for truth, prediction in zip(*random_cases, strict=True)
    )
    assert traditional_pairs > 50


def test_paper_variant_differs_only_where_expected(random_cases):
    ground_truth, predictions = random_cases
    official = stevqa.score(ground_truth, predictions)
    paper = stevqa.score(ground_truth, predictions, variant="paper")
    assert paper.params["tau"] == 0.75 and official.params["tau"] == 0.5
    loosened = 0
    for official_row, paper_row in zip(official.items, paper.items, strict=True):
        # Same NL; only the threshold moves (0.5 -> 0.75), so the paper keeps every official score.
        if official_row["TC"] > 0:
            assert paper_row["TC"] == official_row["TC"]
        else:
            loosened += paper_row["TC"] > 0
    assert loosened > 0


# --- answers -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("traditional", "simplified"),
    [
        ("軟體", "软件"),
        ("滑鼠", "鼠标"),
        ("記憶體", "内存"),
        ("網路", "网络"),
        ("華為", "华为"),
        ("韓國", "韩国"),
    ],
)
def test_answers_are_converted_to_simplified_chinese_at_phrase_level(traditional, simplified):
    assert stevqa.normalize_answer(traditional) == simplified
    assert stevqa.answer_score(traditional, simplified) == 1.0
    assert stevqa.answer_score(simplified, traditional, variant="paper") == 1.0


def test_phrase_level_conversion_is_not_character_by_character():
    # Character by character, 記憶體 would become 记忆体.
    assert stevqa.normalize_answer("記憶體") == "内存"
    assert stevqa.normalize_answer("記憶體") != "记忆体"


def test_normalisation_is_lower_case_and_conversion_only():
    assert stevqa.normalize_answer("KFC") == "kfc"
    assert stevqa.normalize_answer("ＫＦＣ") == "ｋｆｃ"  # full-width stays full-width
    assert stevqa.answer_score("ＫＦＣ", "kfc") == 0.0
    assert stevqa.normalize_answer(" Kfc  ") == " kfc  "  # no stripping, no whitespace folding
    assert stevqa.answer_score("kfc ", "kfc") == 0.75
    assert stevqa.normalize_answer("K.F.C!") == "k.f.c!"  # no punctuation removal
    assert stevqa.normalize_answer("e\u0301") == "e\u0301"  # no Unicode normalisation


def test_normalized_levenshtein_on_code_points():
    assert stevqa.normalized_levenshtein("kitten", "sitting") == pytest.approx(3 / 7)
    assert stevqa.normalized_levenshtein("软件", "软体") == 0.5
    assert stevqa.normalized_levenshtein("", "abc") == 1.0
    assert stevqa.normalized_levenshtein("😀a", "😀b") == 0.5  # one code point each, not UTF-16 units


def test_two_empty_answers_are_a_clear_error_naming_the_question():
    with pytest.raises(ValueError, match="question 7: .*both empty"):
        stevqa.normalized_levenshtein("", "", where="question 7")
    truth = [{"question_id": 7, "question": "什么?", "answer": "", "evidence": SQUARE}]
    with pytest.raises(ValueError, match="question 7"):
        stevqa.score(truth, [{"question_id": 7, "answer": "", "evidence": SQUARE}])


def test_one_empty_answer_scores_zero():
    assert stevqa.answer_score("", "abc") == 0.0
    assert stevqa.answer_score("abc", "") == 0.0


def test_answer_threshold_is_strict():
    assert stevqa.answer_score("ab", "ac") == 0.0  # NL exactly 0.5: not < 0.5
    assert stevqa.answer_score("abcd", "abce") == 0.75
    assert stevqa.answer_score("abc", "axy", variant="paper") == pytest.approx(1 / 3)  # NL 2/3 < 0.75
    assert stevqa.answer_score("abcd", "wxyd", variant="paper") == 0.0  # NL exactly 0.75
    assert stevqa.answer_score("ab", "ac", tau=0.6) == 0.5


# --- evidence ----------------------------------------------------------------------------------


def test_overlapping_squares_official_uses_the_hull_of_all_points():
    shifted = [1, 1, 3, 1, 3, 3, 1, 3]
    # Intersection 1; hull of all eight points 8 (3x3 minus two half-unit corners); true union 7.
    assert stevqa.evidence_iou(SQUARE, shifted) == pytest.approx(1 / 8)
    assert stevqa.evidence_iou(SQUARE, shifted, "paper") == pytest.approx(1 / 7)


def test_evidence_exactly_half_counts_as_sufficient():
    inner = [0, 0, 2, 0, 2, 1, 0, 1]  # half of the square, inside it
    assert stevqa.evidence_iou(SQUARE, inner) == 0.5
    truth = [{"question_id": 1, "question": "what?", "answer": "stop", "evidence": [str(v) for v in SQUARE]}]
    scored = stevqa.score(truth, [{"question_id": 1, "answer": "stop", "evidence": inner}])
    assert scored.items[0]["LC"] == 0.5
    assert scored.items[0]["CLC"] == 1.0


def test_evidence_just_under_half_is_insufficient():
    truth = [{"question_id": 1, "question": "what?", "answer": "stop", "evidence": [0, 0, 4, 0, 4, 4, 0, 4]}]
    scored = stevqa.score(truth, [{"question_id": 1, "answer": "stop", "evidence": [0, 0, 4, 0, 4, 1, 0, 1]}])
    assert scored.items[0]["LC"] == 0.25
    assert scored.items[0]["TC"] == 1.0 and scored.items[0]["CLC"] == 0.0


@pytest.mark.parametrize("variant", ["official", "paper"])
def test_touching_quadrilaterals_score_zero(variant):
    right_neighbour = [2, 0, 4, 0, 4, 2, 2, 2]
    corner_neighbour = [2, 2, 4, 2, 4, 4, 2, 4]
    assert stevqa.evidence_iou(SQUARE, right_neighbour, variant) == 0.0
    assert stevqa.evidence_iou(SQUARE, corner_neighbour, variant) == 0.0


@pytest.mark.parametrize("variant", ["official", "paper"])
def test_bow_tie_is_read_as_its_convex_hull(variant):
    bow_tie = [0, 0, 2, 2, 2, 0, 0, 2]
    assert stevqa.evidence_iou(SQUARE, bow_tie, variant) == 1.0
    assert stevqa.evidence_iou(bow_tie, bow_tie, variant) == 1.0


@pytest.mark.parametrize("variant", ["official", "paper"])
def test_vertex_order_does_not_matter(variant):
    other = [1, 0, 5, 1, 4, 4, 0, 3]
    expected = stevqa.evidence_iou(SQUARE, other, variant)
    assert expected > 0
    points = list(zip(other[0::2], other[1::2], strict=True))
    for order in itertools.permutations(points):
        quad = [value for point in order for value in point]
        assert stevqa.evidence_iou(SQUARE, quad, variant) == pytest.approx(expected, abs=1e-12)


def test_valid_non_convex_quadrilateral_is_kept_in_the_paper_variant():
    dart = [0, 0, 4, 0, 1, 1, 0, 4]  # a valid, non-convex arrowhead of area 4
    big_square = [0, 0, 4, 0, 4, 4, 0, 4]
    assert stevqa.evidence_iou(big_square, dart, "paper") == pytest.approx(4 / 16)
    # Official: the dart becomes its hull, the triangle (0,0), (4,0), (0,4) of area 8.
    assert stevqa.evidence_iou(big_square, dart) == pytest.approx(8 / 16)


@pytest.mark.parametrize("variant", ["official", "paper"])
def test_zero_area_quadrilaterals_score_zero(variant):
    point = [1, 1] * 4
    segment = [0, 0, 1, 1, 2, 2, 1, 1]
    assert stevqa.evidence_iou(SQUARE, point, variant) == 0.0
    assert stevqa.evidence_iou(SQUARE, segment, variant) == 0.0
    assert stevqa.evidence_iou([0] * 8, [0] * 8, variant) == 0.0
    assert stevqa.evidence_iou(segment, segment, variant) == 0.0


def test_official_coordinates_are_integers():
    as_strings = [str(value) for value in SQUARE]
    assert stevqa.evidence_iou(as_strings, SQUARE) == 1.0
    # 2.9 is truncated to 2 like int(2.9); "2.9" too (the released code would crash on it).
    assert stevqa.evidence_iou(SQUARE, [0, 0, 2.9, 0, 2.9, 2.9, 0, 2.9]) == 1.0
    assert stevqa.evidence_iou(SQUARE, ["0", "0", "2.9", "0", "2.9", "2.9", "0", "2.9"]) == 1.0
    assert stevqa.evidence_iou(SQUARE, [0, 0, 2.9, 0, 2.9, 2.9, 0, 2.9], "paper") == pytest.approx(4 / 2.9**2)


def test_evidence_ious_is_vectorised_and_agrees_with_evidence_iou():
    rng = random.Random(3)
    truths = [random_quad(rng) for _ in range(50)]
    predictions = [random_quad(rng) for _ in range(50)]
    for variant in ("official", "paper"):
        ious = stevqa.evidence_ious(truths, predictions, variant)
        single = [stevqa.evidence_iou(t, p, variant) for t, p in zip(truths, predictions, strict=True)]
        assert ious.tolist() == pytest.approx(single, abs=1e-15)
    assert stevqa.evidence_ious([], []).shape == (0,)


# --- language and answer length ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("这家店的名字是什么?", "ch"),
        ("What is 軟體?", "ch"),
        ("What is this?", "en"),
        ("", "en"),
        ("カタカナ", "en"),
        ("ＫＦＣ?", "en"),
        ("\u4e00", "ch"),
        ("\u9fa5", "ch"),
        ("\u4dff", "en"),
        ("\u9fa6", "en"),
    ],
)
def test_language_comes_from_the_ground_truth_question(question, expected):
    assert stevqa.language(question) == expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("stop", "one word"),
        ("15952618488", "one word"),
        ("city of London", "more"),
        ("KFX 278F", "more"),
        ("补胎", "one word"),
        ("韓國", "one word"),
        ("7号", "one word"),
        ("麦当劳", "more"),
        ("禾不锈钢", "more"),
        ("Home Made", "more"),
        ("", "one word"),
    ],
)
def test_answer_length(answer, expected):
    assert stevqa.answer_length(answer) == expected


# --- matching, problems, summaries ---------------------------------------------------------------


def make_truth(question_id, answer="stop", question="what?"):
    return {
        "question_id": question_id,
        "question": question,
        "answer": answer,
        "evidence": [str(v) for v in SQUARE],
    }


def test_missing_and_extra_predictions_are_reported():
    truth = [make_truth(1), make_truth(2), make_truth(3, "软件", "什么?")]
    predictions = [
        {"question_id": 3, "answer": "軟體", "evidence": SQUARE},
        {"question_id": 1, "answer": "stop", "evidence": SQUARE},
        {"question_id": 99, "answer": "x", "evidence": SQUARE},
    ]
    scored = stevqa.score(truth, predictions)
    assert [row["question_id"] for row in scored.items] == [1, 2, 3]  # ground-truth order
    missing_row = scored.items[1]
    assert missing_row["missing"] is True
    assert (missing_row["TC"], missing_row["LC"], missing_row["CLC"]) == (0.0, 0.0, 0.0)
    assert scored.summary["overall"]["TC"] == pytest.approx(2 / 3)
    assert scored.summary["missing_predictions"] == 1
    assert scored.summary["extra_predictions"] == 1
    assert len(scored.problems) == 2
    assert "1 question has no prediction" in scored.problems[0] and "question_id 2" in scored.problems[0]
    assert "ignored" in scored.problems[1] and "question_id 99" in scored.problems[1]


def test_clean_input_has_no_problems_and_predictions_may_be_a_mapping():
    truth = [make_truth(1), make_truth(2)]
    mapping = {"1": {"answer": "stop", "evidence": SQUARE}, 2: {"answer": "stops", "evidence": SQUARE}}
    scored = stevqa.score(truth, mapping)
    assert scored.problems == []
    assert [row["TC"] for row in scored.items] == [1.0, 0.8]


def test_summary_groups_and_reasonable_score():
    truth = [
        make_truth(1, "stop"),
        make_truth(2, "city of london"),
        make_truth(3, "软件", "什么?"),
        make_truth(4, "禾不锈钢", "什么?"),
    ]
    far = [100, 100, 102, 100, 102, 102, 100, 102]
    predictions = [
        {"question_id": 1, "answer": "stop", "evidence": SQUARE},  # TC 1, LC 1, CLC 1
        {"question_id": 2, "answer": "city of london", "evidence": far},  # TC 1, LC 0, CLC 0
        {"question_id": 3, "answer": "软体", "evidence": SQUARE},  # TC 0 (NL 0.5), LC 1
        {"question_id": 4, "answer": "禾不锈", "evidence": SQUARE},  # TC 0.75, LC 1, CLC 0.75
    ]
    summary = stevqa.score(truth, predictions).summary
    assert summary["overall"] == {
        "count": 4,
        "TC": 0.6875,
        "LC": 0.75,
        "CLC": 0.4375,
        "Delta_r": 0.4375 / 0.6875,
    }
    assert summary["by_language"]["en"] == {"count": 2, "TC": 1.0, "LC": 0.5, "CLC": 0.5, "Delta_r": 0.5}
    assert summary["by_language"]["ch"] == {"count": 2, "TC": 0.375, "LC": 1.0, "CLC": 0.375, "Delta_r": 1.0}
    assert summary["by_answer_length"]["one word"]["count"] == 2  # stop, 软件
    assert summary["by_answer_length"]["more"]["count"] == 2
    parameters = summary["parameters"]
    assert (parameters["variant"], parameters["tau"], parameters["metric_version"]) == ("official", 0.5, "2")


def test_reasonable_score_is_none_without_answer_score():
    truth = [make_truth(1)]
    summary = stevqa.score(truth, [{"question_id": 1, "answer": "xxxx", "evidence": SQUARE}]).summary
    assert summary["overall"]["TC"] == 0.0
    assert summary["overall"]["Delta_r"] is None
    assert summary["by_language"]["ch"] == {"count": 0, "TC": None, "LC": None, "CLC": None, "Delta_r": None}


def test_params_record_variant_and_thresholds():
    scored = stevqa.score(
        [make_truth(1)], [{"question_id": 1, "answer": "stop", "evidence": SQUARE}], variant="paper"
    )
    assert scored.params["variant"] == "paper"
    assert scored.params["tau"] == 0.75
    assert scored.params["evidence_threshold"] == 0.5
    assert scored.summary["parameters"] == scored.params
    with pytest.raises(ValueError, match="unknown STE-VQA variant"):
        stevqa.score([make_truth(1)], [], variant="loose")


def test_duplicate_ground_truth_ids_are_an_error():
    with pytest.raises(ValueError, match="question 1: .*twice"):
        stevqa.score([make_truth(1), make_truth(1)], [])


# --- prediction files --------------------------------------------------------------------------


def test_parse_predictions_reports_every_bad_record():
    records = [
        {"question_id": 0, "answer": "ok", "evidence": ["1", "2", "3", "4", "5", "6", "7", "8"]},
        {"question_id": "1", "answer": "x", "evidence": SQUARE},
        {"question_id": 2, "evidence": SQUARE},
        {"question_id": 3, "answer": "x", "evidence": SQUARE[:7]},
        {"question_id": 4, "answer": "x", "evidence": [0, 0, "a", 0, 2, 2, 0, 2]},
        {"question_id": 0, "answer": "again", "evidence": SQUARE},
        "not an object",
        {"question_id": True, "answer": "x", "evidence": SQUARE},
    ]
    with pytest.raises(FormatError) as raised:
        stevqa.parse_predictions(json.dumps(records).encode(), source="preds.json")
    errors = {(error.record, error.field) for error in raised.value.errors}
    assert errors == {
        ("record 1", "question_id"),
        ("record 2", "answer"),
        ("record 3", "evidence"),
        ("record 4", "evidence[2]"),
        ("record 5", "question_id"),
        ("record 6", "record"),
        ("record 7", "question_id"),
    }
    message = str(raised.value)
    assert message.startswith("preds.json: ")
    assert "duplicate question_id 0 (first at record 0)" in message


def test_parse_predictions_rejects_bad_documents():
    with pytest.raises(FormatError, match="not valid JSON"):
        stevqa.parse_predictions(b"[{", source="p.json")
    with pytest.raises(FormatError, match="expected a JSON list of predictions"):
        stevqa.parse_predictions(b'{"question_id": 1}')


def test_score_validates_prediction_lists():
    with pytest.raises(FormatError, match="record 0: evidence"):
        stevqa.score([make_truth(1)], [{"question_id": 1, "answer": "stop", "evidence": [1, 2]}])


def test_score_file_numbers_a_training_files_pairs_in_file_order():
    training = [
        {"id": 7, "image": "a.jpg", "annotation": [{"question": "q", "answer": "exit", "evidence": SQUARE}]},
        {
            "id": 3,
            "image": "b.jpg",
            "annotation": [
                {"question": "q2", "answer": "stop", "evidence": SQUARE},
                {"question": "q3", "answer": "停车", "evidence": SQUARE},
            ],
        },
    ]
    predictions = [{"question_id": 2, "answer": "停车", "evidence": SQUARE}]
    scored = stevqa.score_file(json.dumps(training).encode(), json.dumps(predictions).encode())
    assert [row["question_id"] for row in scored.items] == [0, 1, 2]
    assert [row["CLC"] for row in scored.items] == [0.0, 0.0, 1.0]
    assert scored.summary["missing_predictions"] == 2


# --- the released sample -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample_files():
    truth_path, prediction_path = SAMPLE_DIR / "gt_sample.json", SAMPLE_DIR / "pred_sample.json"
    if not (truth_path.is_file() and prediction_path.is_file()):
        pytest.skip(f"the released STE-VQA sample is not in {SAMPLE_DIR} (gt_sample.json, pred_sample.json)")
    return truth_path.read_bytes(), prediction_path.read_bytes()


def test_released_sample_scores(sample_files):
    truth_bytes, prediction_bytes = sample_files
    scored = stevqa.score_file(truth_bytes, prediction_bytes)
    assert scored.problems == []
    rows = {row["question_id"]: row for row in scored.items}
    # Checked by hand against the files:
    # 0: answer "Sample" for 禾不锈钢, evidence all zeros.
    assert (rows[0]["TC"], rows[0]["LC"], rows[0]["CLC"]) == (0.0, 0.0, 0.0)
    # 1: answer and evidence copied from the ground truth.
    assert (rows[1]["TC"], rows[1]["LC"], rows[1]["CLC"]) == (1.0, 1.0, 1.0)
    # 3: wrong answer "Sample", right evidence.
    assert (rows[3]["TC"], rows[3]["LC"], rows[3]["CLC"]) == (0.0, 1.0, 0.0)
    # 8: right answer 补胎, evidence all zeros.
    assert (rows[8]["TC"], rows[8]["LC"], rows[8]["CLC"]) == (1.0, 0.0, 0.0)
    # 20: 韓國 in both (traditional), right answer; 54 is an English question.
    assert rows[20]["TC"] == 1.0 and rows[20]["lang"] == "ch"
    assert rows[54]["lang"] == "en" and rows[56]["lang"] == "ch"  # 56: Chinese question, English answer
    # 45 exact answers, 50 exact evidences, 25 both; 55 Chinese questions.
    overall = scored.summary["overall"]
    assert overall == {
        "count": 100,
        "TC": 0.45,
        "LC": 0.5,
        "CLC": 0.25,
        "Delta_r": pytest.approx(0.25 / 0.45),
    }
    assert scored.summary["by_language"]["ch"]["count"] == 55
    assert scored.summary["by_language"]["en"]["count"] == 45


def test_released_sample_agrees_with_the_literal_reference(sample_files):
    truth_bytes, prediction_bytes = sample_files
    ground_truth, predictions = json.loads(truth_bytes), json.loads(prediction_bytes)
    reference_items, reference_means = reference_evaluate(ground_truth, predictions)
    scored = stevqa.score(ground_truth, predictions)
    for row, item in zip(scored.items, reference_items, strict=True):
        assert (row["TC"], row["LC"], row["CLC"]) == pytest.approx(item[:3], abs=1e-12)
    assert scored.summary["overall"]["CLC"] == pytest.approx(reference_means["bi"][2])


# --- ANLS and VQA accuracy ---------------------------------------------------------------------


def test_anls_examples():
    assert stevqa.anls("Cookies", ["cookies"]) == 1.0
    assert stevqa.anls("  COOKIES ", ["cookies"]) == 1.0  # stripped and lower-cased
    assert stevqa.anls("cookie", ["cookies"]) == pytest.approx(1 - 1 / 7)
    assert stevqa.anls("ab", ["ac"]) == 0.5  # 1 - NL = 0.5 is kept (inclusive)
    assert stevqa.anls("abc", ["axy"]) == 0.0  # 1 - NL = 1/3
    assert stevqa.anls("world", ["hello", "world"]) == 1.0  # max over answers
    assert stevqa.anls("worl", ["hello", "world", "word"]) == 0.8
    assert stevqa.anls("", [""]) == 1.0
    assert stevqa.anls("ｋｆｃ", ["kfc"]) == 0.0  # no width folding
    with pytest.raises(ValueError):
        stevqa.anls("x", [])


@pytest.mark.parametrize(
    ("matches", "expected"), [(0, 0.0), (1, 0.3), (2, 0.6), (3, 0.9), (4, 1.0), (10, 1.0)]
)
def test_vqa_accuracy_leave_one_out(matches, expected):
    answers = ["yes"] * matches + ["no"] * (10 - matches)
    prediction = "yes" if matches else "maybe"
    assert stevqa.vqa_accuracy(prediction, answers) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("Two", "2"),
        ("the dog", "dog"),
        ("A Dog", "dog"),
        ("dont", "don't"),
        ("yes.", "yes"),
        ("3.5", "3.5"),
        ("hot-dog", "hot dog"),
        ("hot - dog", "hot dog"),
        ("1,000", "1000"),
        ("a man's hat", "man 's hat"),
        ("none", "0"),
        ("what?", "what"),
        ("(red)", "red"),
        ("red ;blue", "red blue"),
        ("  multiple\tspaces\nhere ", "multiple spaces here"),
        ("st. louis", "st louis"),
    ],
)
def test_vqa_answer_normalisation(raw, normalized):
    assert stevqa.normalize_vqa_answer(raw) == normalized


def test_vqa_accuracy_normalises_both_sides():
    answers = ["two", "2", "2 ", "Two.", "three", "3", "3", "3", "3", "3"]
    assert stevqa.vqa_accuracy("2", answers) == 1.0
    assert stevqa.vqa_accuracy("the three", answers) == 1.0
    assert stevqa.vqa_accuracy("2,", ["2", "1", "1", "1", "1", "1", "1", "1", "1", "1"]) == pytest.approx(0.3)
