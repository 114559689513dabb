"""STE-VQA diagnostics: answer-only predictions, evidence from OCR, evidence classes, the two answer
length rules, CLC as tau varies, and the report's diagnostic tables. Every number is worked out by
hand in the comments.

Quadrilaterals used throughout, against the ground-truth square G = (0,0)-(4,4) of area 16 (the
hull of all eight points is G itself whenever the prediction lies inside it, so the official LC is
the overlap / 16, as the paper's IoU is):
  SQ4 = G: LC 1; HALF = (0,0)-(4,2): LC 8/16 = 0.5 (sufficient, inclusive);
  QUARTER = (0,0)-(4,1): LC 4/16 = 0.25 (insufficient); FAR = (100,100)-(104,104): LC 0 (incorrect).
"""

from __future__ import annotations

import io
import json
from functools import partial

import pytest
from django.core.management import CommandError, call_command

from benchmarks.records import FormatError
from benchmarks.spec import ScoringInput
from evaluation.reports import ScoredSubmission, build_table, format_value, table_csv, table_latex
from evaluation.sampling import wilson_interval
from plugins.stevqa import demo as demo_data
from plugins.stevqa import formats
from plugins.stevqa import metric as stevqa
from plugins.stevqa import spec as spec_module
from plugins.stevqa.ocr import attach_tokens, check_image_pattern
from plugins.stevqa.spec import SPEC

SQ4 = [0, 0, 4, 0, 4, 4, 0, 4]
HALF = [0, 0, 4, 0, 4, 2, 0, 2]
QUARTER = [0, 0, 4, 0, 4, 1, 0, 1]
FAR = [100, 100, 104, 100, 104, 104, 100, 104]
EN, CH = "What is written here?", "这里写了什么?"


def truth(question_id, answer, question=EN, **extra):
    return {
        "question_id": question_id,
        "question": question,
        "answer": answer,
        "evidence": [str(value) for value in SQ4],
        **extra,
    }


def answer(question_id, text, evidence=None):
    record = {"question_id": question_id, "answer": text}
    if evidence is not None:
        record["evidence"] = evidence
    return record


def as_bytes(records) -> bytes:
    return json.dumps(records, ensure_ascii=False).encode()


def submission(scored, name="m", producer="model"):
    return ScoredSubmission(producer, name, "", scored.summary, list(scored.items))


def cells_by_label(table):
    """{(group, label): cell} of a one-row table."""
    return {
        (column.group, column.label): cell
        for column, cell in zip(table.columns, table.rows[0].cells, strict=True)
    }


# --- 1. answer-only predictions -----------------------------------------------------------------

ANSWER_ONLY_TRUTH = [truth(1, "stop"), truth(2, "补胎", CH), truth(3, "exit")]
# 1: "stop" exact, no evidence field: TC 1. 2: "补" against "补胎": NL 1/2 = 0.5, not < 0.5, so
# TC 0 (official); evidence null. 3: no prediction: TC 0.
ANSWER_ONLY = [{"question_id": 1, "answer": "stop"}, {"question_id": 2, "answer": "补", "evidence": None}]


def test_an_answer_only_file_is_scored_on_tc_and_says_there_is_no_evidence():
    scored = stevqa.score_file(as_bytes(ANSWER_ONLY_TRUTH), as_bytes(ANSWER_ONLY))
    summary = scored.summary
    # TC = (1 + 0 + 0) / 3; LC and CLC not computed anywhere, so Δr has no value either.
    assert summary["overall"] == {
        "count": 3,
        "TC": pytest.approx(1 / 3),
        "LC": None,
        "CLC": None,
        "Delta_r": None,
    }
    assert summary["by_language"]["en"]["TC"] == 0.5  # questions 1 and 3
    assert summary["by_language"]["ch"]["CLC"] is None
    assert summary["evidence"] == "none"
    assert summary["predictions_without_evidence"] == 2
    assert [(row["LC"], row["CLC"], row["evidence_sufficient"]) for row in scored.items] == [
        (None, None, None)
    ] * 3
    assert summary["evidence_classes"]["overall"]["count"] == 0
    assert summary["evidence_classes"]["overall"]["sufficient"] is None
    assert summary["by_tau"]["0.50"] == {"TC": pytest.approx(1 / 3), "CLC": None}
    assert any("no prediction carries evidence" in problem for problem in scored.problems)
    # The in-memory scorer gives the same summary.
    assert stevqa.score(ANSWER_ONLY_TRUTH, ANSWER_ONLY).summary == summary


def test_answer_only_predictions_under_the_paper_variant():
    # 补 against 补胎: NL 0.5 < 0.75, TC 0.5; overall TC = (1 + 0.5 + 0) / 3 = 0.5.
    summary = stevqa.score(ANSWER_ONLY_TRUTH, ANSWER_ONLY, variant="paper").summary
    assert summary["overall"]["TC"] == pytest.approx(0.5)
    assert summary["overall"]["CLC"] is None


def test_a_mixed_file_scores_answers_without_evidence_zero_on_lc_and_clc():
    ground_truth = [truth(1, "stop"), truth(2, "exit"), truth(3, "open")]
    predictions = [answer(1, "stop", SQ4), answer(2, "exit")]  # 3 has no prediction
    scored = stevqa.score(ground_truth, predictions)
    # 1: TC 1, LC 1, CLC 1. 2: TC 1, no evidence: LC 0, CLC 0. 3: missing: 0, 0, 0.
    assert [(row["TC"], row["LC"], row["CLC"]) for row in scored.items] == [
        (1.0, 1.0, 1.0),
        (1.0, 0.0, 0.0),
        (0.0, 0.0, 0.0),
    ]
    overall = scored.summary["overall"]
    assert (overall["TC"], overall["LC"], overall["CLC"]) == pytest.approx((2 / 3, 1 / 3, 1 / 3))
    assert scored.summary["evidence"] == "partial"
    assert scored.summary["predictions_without_evidence"] == 1
    assert (
        "1 prediction has no evidence and scores 0 on LC and CLC (TC is scored): question_id 2"
        in scored.problems
    )
    # Evidence classes: 2 and 3 (LC 0) incorrect, 1 sufficient.
    classes = scored.summary["evidence_classes"]["en"]
    assert classes["counts"] == {"incorrect": 2, "insufficient": 0, "sufficient": 1}
    assert stevqa.score_file(as_bytes(ground_truth), as_bytes(predictions)).summary == scored.summary


def test_a_file_with_evidence_everywhere_says_so():
    summary = stevqa.score([truth(1, "stop")], [answer(1, "stop", SQ4)]).summary
    assert (summary["evidence"], summary["predictions_without_evidence"]) == ("all", 0)


def test_answer_only_predictions_through_the_spec_and_the_report():
    """What the app does: read the file, score the stored answers, build the tables."""
    answers = SPEC.read_predictions(as_bytes(ANSWER_ONLY))
    assert answers["1"] == {"answer": "stop", "evidence": None}
    scored = SPEC.score(ScoringInput(records=ANSWER_ONLY_TRUTH, answers=answers))
    main = cells_by_label(build_table(SPEC, [submission(scored)]))
    # English: questions 1 (TC 1) and 3 (TC 0): 0.5; LC, CLC and Δr show "–".
    assert main[("English", "TC")].value == 0.5
    assert [format_value(main[("English", name)].value) for name in ("LC", "CLC", "Δr")] == ["–"] * 3
    assert "English,LC,,,," in table_csv(build_table(SPEC, [submission(scored)])).replace("m,model,", "")
    # The languages table keeps its TC columns only; the evidence table has no column left.
    languages = build_table(SPEC, [submission(scored)], diagnostic=SPEC.diagnostic("languages"))
    assert [(column.group, column.label) for column in languages.columns] == [("En", "TC"), ("Ch", "TC")]
    assert build_table(SPEC, [submission(scored)], diagnostic=SPEC.diagnostic("evidence")).columns == []


def test_bad_evidence_is_still_refused():
    with pytest.raises(FormatError, match="record 0: evidence: a quadrilateral needs 8 numbers"):
        stevqa.parse_predictions(as_bytes([{"question_id": 1, "answer": "x", "evidence": [1, 2]}]))
    with pytest.raises(FormatError, match="record 0: evidence: expected a list, got a string"):
        stevqa.parse_predictions(as_bytes([{"question_id": 1, "answer": "x", "evidence": "0,0"}]))


# --- 2. evidence from OCR -------------------------------------------------------------------------

OCR_TRUTH = [
    # No token equals "stop": NL("stop here", "stop") = 5/9, NL("shop", "stop") = 1/4: SHOP (on G).
    truth(1, "stop", ocr_tokens=[{"text": "STOP HERE", "quad": FAR}, {"text": "SHOP", "quad": SQ4}]),
    # 軟體 normalises to 软件, the answer's own normalised text: that token, on HALF (LC 0.5).
    truth(2, "软件", CH, ocr_tokens=[{"text": "软件店", "quad": FAR}, {"text": "軟體", "quad": HALF}]),
    truth(3, "exit"),  # no ocr_tokens: OCR unavailable
    truth(4, "open", ocr_tokens=[]),  # OCR read nothing
    truth(5, "kfc", ocr_tokens=[{"text": "kfc", "quad": SQ4}]),  # the prediction has its own evidence
    # A tie: NL("xb", "ab") = NL("ax", "ab") = 1/2: the first token (on G).
    truth(6, "ab", ocr_tokens=[{"text": "xb", "quad": SQ4}, {"text": "ax", "quad": FAR}]),
]
OCR_PREDICTIONS = [
    answer(1, "stop"),
    answer(2, "軟體"),
    answer(3, "exit"),
    answer(4, "open"),
    answer(5, "kfc", QUARTER),
    answer(6, "ab"),
]


@pytest.mark.parametrize("variant", ["ocr", "paper-ocr"])
def test_answer_only_predictions_take_their_evidence_from_ocr(variant):
    scored = stevqa.score(OCR_TRUTH, OCR_PREDICTIONS, variant=variant)
    rows = scored.items
    # Every answer is exact (TC 1). LC: 1 (SHOP on G), 0.5 (軟體 on HALF), 0 (no OCR), 0 (no text),
    # 0.25 (its own QUARTER), 1 (first of the tie) -- the same under the paper's polygon IoU.
    assert [row["TC"] for row in rows] == [1.0] * 6
    assert [row["LC"] for row in rows] == pytest.approx([1.0, 0.5, 0.0, 0.0, 0.25, 1.0])
    assert [row["CLC"] for row in rows] == [1.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    assert [row["evidence_from"] for row in rows] == ["ocr", "ocr", None, None, "prediction", "ocr"]
    summary = scored.summary
    assert summary["ocr"] == {"attached": 3, "exact": 1, "nearest": 2, "no_text": 1, "unavailable": 1}
    assert summary["overall"]["CLC"] == 0.5  # 3 / 6
    assert (summary["evidence"], summary["predictions_without_evidence"]) == ("partial", 2)
    assert any(
        problem.startswith("OCR is unavailable for 1 question") and problem.endswith("question_id 3")
        for problem in scored.problems
    )
    assert "ocr_evidence" in summary["parameters"]


def test_without_an_ocr_variant_the_tokens_are_not_used():
    # Only question 5 has evidence (QUARTER: LC 0.25, CLC 0); the others score 0 on LC and CLC.
    summary = stevqa.score(OCR_TRUTH, OCR_PREDICTIONS).summary
    assert summary["overall"]["CLC"] == 0.0
    assert summary["predictions_without_evidence"] == 5
    assert "ocr" not in summary


def test_ocr_variant_without_any_ocr_says_so():
    ground_truth = [truth(1, "stop"), truth(2, "exit")]
    scored = stevqa.score(ground_truth, [answer(1, "stop"), answer(2, "exit")], variant="ocr")
    assert scored.summary["ocr"]["unavailable"] == 2
    assert scored.summary["evidence"] == "none" and scored.summary["overall"]["CLC"] is None
    assert any("OCR is unavailable for 2 questions" in problem for problem in scored.problems)


def test_bad_ocr_tokens_name_the_question_and_the_field():
    bad = [truth(7, "stop", ocr_tokens=[{"text": "stop", "quad": [1, 2, 3]}])]
    with pytest.raises(
        ValueError, match=r"question 7: ocr_tokens\[0\]\.quad: a quadrilateral needs 8 numbers"
    ):
        stevqa.score(bad, [answer(7, "stop")], variant="ocr")


def test_ocr_tokens_are_checked_at_import():
    records = [
        truth(1, "stop", ocr_tokens=[{"text": 5, "quad": SQ4}]),
        truth(2, "stop", ocr_tokens={"text": "stop"}),
        truth(3, "stop", ocr_tokens=[{"text": "stop", "quad": [0, 0, 1, 0, 1, "x", 0, 1]}]),
        truth(4, "stop", ocr_tokens=None),  # null: no OCR, accepted
    ]
    with pytest.raises(FormatError) as raised:
        formats.parse(as_bytes(records))
    assert {(error.record, error.field) for error in raised.value.errors} == {
        ("record 0", "ocr_tokens[0].text"),
        ("record 1", "ocr_tokens"),
        ("record 2", "ocr_tokens[0].quad[5]"),
    }


@pytest.mark.parametrize(
    "record",
    [
        truth(1, "stop", ocr_tokens=[{"text": "stop", "quad": SQ4}]),
        {"id": 1, "image": "a.jpg", "annotation": [], "ocr_tokens": [{"text": "stop", "quad": SQ4}]},
    ],
)
def test_ocr_tokens_are_written_back_on_export(record):
    parsed = formats.parse(as_bytes([record])).records[0]
    assert formats.to_official(parsed.payload, parsed.ground_truth) == record


def test_a_training_files_tokens_reach_each_of_its_questions():
    training = [
        {
            "id": 1,
            "image": "a.jpg",
            "annotation": [
                {"question": "q", "answer": "stop", "evidence": SQ4},
                {"question": "q2", "answer": "exit", "evidence": HALF},
            ],
            "ocr_tokens": [{"text": "stop", "quad": SQ4}, {"text": "EXIT", "quad": QUARTER}],
        }
    ]
    parsed = formats.parse(as_bytes(training))
    record = parsed.records[0]
    questions = formats.question_records(record.payload, record.ground_truth)
    assert [question["ocr_tokens"][1]["text"] for question in questions] == ["EXIT", "EXIT"]
    # Question 0: "stop" on G: LC 1. Question 1: "exit" takes EXIT's QUARTER against HALF: 4 / 8 = 0.5.
    scored = stevqa.score_file(
        as_bytes(training), as_bytes([answer(0, "stop"), answer(1, "exit")]), variant="ocr"
    )
    assert [row["LC"] for row in scored.items] == pytest.approx([1.0, 0.5])
    assert [row["CLC"] for row in scored.items] == [1.0, 1.0]


def test_attach_tokens_reads_each_image_once_and_counts_what_it_could_not_read():
    reads = []

    def read(name):
        reads.append(name)
        return None if name == "gone.jpg" else [{"text": name.upper(), "quad": SQ4}]

    document = [
        {"id": 1, "image": "a.jpg", "annotation": []},
        {"id": 2, "image": "a.jpg", "annotation": []},
        {"id": 3, "image": "gone.jpg", "annotation": []},
        {"question_id": 9, "question": "q", "answer": "a", "evidence": SQ4},
    ]
    counts = attach_tokens(document, read)
    assert reads == ["a.jpg", "gone.jpg"]
    assert counts == {"records": 4, "read": 2, "tokens": 2, "no_image": 1, "missing": 1}
    assert document[1]["ocr_tokens"] == [{"text": "A.JPG", "quad": SQ4}]
    assert "ocr_tokens" not in document[2] and "ocr_tokens" not in document[3]
    # A test record names no image: the pattern gives it one.
    counts = attach_tokens(document[3:], read, image_pattern="{question_id}.png")
    assert document[3]["ocr_tokens"][0]["text"] == "9.PNG" and counts["read"] == 1


def test_image_patterns_name_only_the_question_id():
    check_image_pattern("{question_id}.jpg")
    with pytest.raises(ValueError, match=r"may only name \{question_id\}, not \{id\}"):
        check_image_pattern("{id}.jpg")


def test_ocr_command_refuses_bad_input(tmp_path):
    gt = tmp_path / "gt.json"
    gt.write_bytes(as_bytes([{"question_id": 1}]))
    with pytest.raises(CommandError, match="is not a folder"):
        call_command(
            "stevqa_ocr", "--gt", str(gt), "--images", str(tmp_path / "no"), "--out", str(tmp_path / "o")
        )
    with pytest.raises(CommandError, match="record 0: question: missing field"):
        call_command("stevqa_ocr", "--gt", str(gt), "--images", str(tmp_path), "--out", str(tmp_path / "o"))


@pytest.mark.skipif(
    not (demo_data.CHINESE_FONT_PATH.is_file() and demo_data.ENGLISH_FONT_PATH.is_file()),
    reason="scene-text fonts missing: install fonts-wqy-microhei and fonts-dejavu-core",
)
def test_ocr_command_on_demo_images_gives_answer_only_predictions_their_evidence(tmp_path):
    """The real OCR on two demo street scenes: the demo's answers are read exactly (see
    plugins.stevqa.evidence), so true answers given without evidence find their own sign."""
    data = demo_data.generate_demo(tmp_path, count=2, seed=3)
    out = tmp_path / "with_ocr.json"
    printed = io.StringIO()
    call_command(
        "stevqa_ocr",
        "--gt",
        str(data),
        "--images",
        str(tmp_path / demo_data.IMAGES_FOLDER_NAME),
        "--out",
        str(out),
        "--json",
        stdout=printed,
    )
    counts = json.loads(printed.getvalue())
    assert (counts["records"], counts["read"], counts["missing"]) == (2, 2, 0)
    questions = [
        question
        for record in formats.parse(out.read_bytes()).records
        for question in formats.question_records(record.payload, record.ground_truth)
    ]
    predictions = [answer(question["question_id"], question["answer"]) for question in questions]
    scored = stevqa.score_file(out.read_bytes(), as_bytes(predictions), variant="ocr")
    assert scored.summary["ocr"]["attached"] == len(questions) and scored.summary["ocr"]["unavailable"] == 0
    sufficient = sum(1 for row in scored.items if row["LC"] >= 0.5)
    assert sufficient >= 0.8 * len(questions)
    # Without OCR the same file is answer-only: no LC at all.
    assert stevqa.score_file(data.read_bytes(), as_bytes(predictions)).summary["evidence"] == "none"


# --- 3. evidence classes and Δr per language ------------------------------------------------------

CLASS_TRUTH = [
    truth(1, "stop"),
    truth(2, "exit"),
    truth(3, "open"),
    truth(4, "kfc"),
    truth(5, "补胎", CH),
    truth(6, "软件", CH),
]
CLASS_PREDICTIONS = [
    answer(1, "stop", SQ4),  # TC 1, LC 1: sufficient, CLC 1
    answer(2, "exit", HALF),  # TC 1, LC 0.5: sufficient, CLC 1
    answer(3, "open", QUARTER),  # TC 1, LC 0.25: insufficient, CLC 0
    answer(4, "kfc", FAR),  # TC 1, LC 0: incorrect, CLC 0
    answer(5, "补胎", SQ4),  # TC 1, sufficient, CLC 1
    answer(6, "软体", FAR),  # NL 1/2, not < 0.5: TC 0; incorrect, CLC 0
]


def test_evidence_classes_and_reasonable_score_per_language():
    scored = stevqa.score(CLASS_TRUTH, CLASS_PREDICTIONS)
    classes = scored.summary["evidence_classes"]
    # En: 1 incorrect (4), 1 insufficient (3), 2 sufficient (1, 2) of 4.
    assert classes["en"] == {
        "count": 4,
        "incorrect": 0.25,
        "insufficient": 0.25,
        "sufficient": 0.5,
        "counts": {"incorrect": 1, "insufficient": 1, "sufficient": 2},
    }
    # Ch: 1 incorrect (6), 1 sufficient (5) of 2. All: 2, 1, 3 of 6.
    assert (classes["ch"]["incorrect"], classes["ch"]["insufficient"], classes["ch"]["sufficient"]) == (
        0.5,
        0,
        0.5,
    )
    assert classes["overall"]["counts"] == {"incorrect": 2, "insufficient": 1, "sufficient": 3}
    assert classes["overall"]["insufficient"] == pytest.approx(1 / 6)
    # Δr: En CLC 2/4 over TC 4/4 = 0.5; Ch CLC 1/2 over TC 1/2 = 1.
    assert scored.summary["by_language"]["en"]["Delta_r"] == 0.5
    assert scored.summary["by_language"]["ch"]["Delta_r"] == 1.0
    row = scored.items[2]
    assert (row["evidence_incorrect"], row["evidence_insufficient"], row["evidence_sufficient"]) == (0, 1, 0)


def test_reasonable_score_is_none_for_a_language_without_answer_score():
    # The one Chinese answer is wrong (TC 0): Δr for Ch has no value, En's is 1.
    summary = stevqa.score(
        CLASS_TRUTH[:1] + CLASS_TRUTH[5:], [CLASS_PREDICTIONS[0], CLASS_PREDICTIONS[5]]
    ).summary
    assert summary["by_language"]["ch"]["TC"] == 0.0 and summary["by_language"]["ch"]["Delta_r"] is None
    assert summary["by_language"]["en"]["Delta_r"] == 1.0


def test_evidence_table_cells_have_wilson_intervals_over_the_language_rows():
    scored = stevqa.score(CLASS_TRUTH, CLASS_PREDICTIONS)
    table = build_table(SPEC, [submission(scored)], diagnostic=SPEC.diagnostic("evidence"))
    cells = cells_by_label(table)
    # English sufficient: 2 of the 4 English questions.
    cell = cells[("English", "sufficient")]
    assert (cell.value, cell.n) == (0.5, 4)
    assert (cell.low, cell.high) == pytest.approx(wilson_interval(2, 4))
    assert cells[("Chinese", "incorrect")].value == 0.5 and cells[("Chinese", "incorrect")].n == 2
    assert cells[("All", "insufficient")].n == 6
    assert len(table.columns) == 9  # three classes for En, Ch and All
    assert r"\multicolumn{3}{c}{English}" in table_latex(table)


def test_languages_table_in_the_papers_layout():
    scored = stevqa.score(CLASS_TRUTH, CLASS_PREDICTIONS)
    human = stevqa.score(CLASS_TRUTH, [answer(i, t["answer"], SQ4) for i, t in enumerate(CLASS_TRUTH, 1)])
    table = build_table(
        SPEC,
        [submission(human, "Human", "human"), submission(scored, "Model (bi)")],
        diagnostic=SPEC.diagnostic("languages"),
    )
    assert [row.label for row in table.rows] == ["Model (bi)", "Human"]  # models first, Human last
    assert [(column.group, column.label) for column in table.columns] == [
        (group, name) for group in ("En", "Ch") for name in ("TC", "LC", "CLC", "Δr")
    ]
    model = dict(zip([(c.group, c.label) for c in table.columns], table.rows[0].cells, strict=True))
    # En LC = (1 + 0.5 + 0.25 + 0) / 4 = 0.4375; Ch CLC = (1 + 0) / 2.
    assert model[("En", "LC")].value == 0.4375
    assert model[("Ch", "CLC")].value == 0.5
    assert model[("En", "Δr")].value == 0.5


# --- 4. answer length by the two rules -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # jieba's words (0.42.1, its own dictionary): 补胎 | 麦当劳 | 中国银行 are one word each;
        # 禾 + 不锈钢, 7 + 号 and 9 + 元 + 斤 ("/" left out) are more.
        ("补胎", "one word"),
        ("麦当劳", "one word"),
        ("中国银行", "one word"),
        ("禾不锈钢", "more"),
        ("7号", "more"),
        ("9元/斤", "more"),
        # No Chinese character: whitespace words.
        ("McDonald's", "one word"),
        ("city of London", "more"),
        ("", "one word"),
    ],
)
def test_answer_length_jieba(text, expected):
    assert stevqa.answer_length_jieba(text) == expected


LENGTH_TRUTH = [
    truth(1, "麦当劳", CH),  # jieba: one word; word rule: 3 Chinese characters, more
    truth(2, "7号", CH),  # jieba: 7 + 号, more; word rule: one token of 2 characters, one word
    truth(3, "city of london"),  # more by both
    truth(4, "stop"),  # one word by both
]
LENGTH_PREDICTIONS = [
    answer(1, "麦当劳", SQ4),  # TC 1, CLC 1
    answer(2, "7", SQ4),  # NL 1/2: TC 0, CLC 0
    answer(3, "city of london", SQ4),  # TC 1, CLC 1
    answer(4, "stopp", FAR),  # NL 1/5: TC 0.8, LC 0: CLC 0
]


def test_short_and_long_answers_by_both_rules():
    scored = stevqa.score(LENGTH_TRUTH, LENGTH_PREDICTIONS)
    jieba = scored.summary["by_answer_length_jieba"]
    words = scored.summary["by_answer_length"]
    # jieba: one word {1, 4}: TC (1 + 0.8) / 2, CLC (1 + 0) / 2; more {2, 3}: TC 0.5, CLC 0.5.
    assert (jieba["one word"]["TC"], jieba["one word"]["CLC"]) == pytest.approx((0.9, 0.5))
    assert (jieba["more"]["TC"], jieba["more"]["CLC"]) == (0.5, 0.5)
    # Word rule: one word {2, 4}: TC 0.4, CLC 0; more {1, 3}: TC 1, CLC 1.
    assert (words["one word"]["TC"], words["one word"]["CLC"]) == pytest.approx((0.4, 0.0))
    assert (words["more"]["TC"], words["more"]["CLC"]) == (1.0, 1.0)
    table = build_table(SPEC, [submission(scored)], diagnostic=SPEC.diagnostic("answer-length"))
    cells = cells_by_label(table)
    assert (
        cells[("Short (jieba)", "TC")].value == pytest.approx(0.9) and cells[("Short (jieba)", "TC")].n == 2
    )
    assert cells[("Long (word rule)", "CLC")].value == 1.0


def test_the_worked_example_of_the_docs():
    """docs/metrics.md, STE-VQA, "Worked example: the diagnostics": the same four questions."""
    summary = stevqa.score(LENGTH_TRUTH, LENGTH_PREDICTIONS).summary
    # Evidence: Chinese 2 of 2 sufficient; English 1 sufficient, 1 incorrect.
    assert summary["evidence_classes"]["ch"]["sufficient"] == 1.0
    assert (
        summary["evidence_classes"]["en"]["sufficient"],
        summary["evidence_classes"]["en"]["incorrect"],
    ) == (
        0.5,
        0.5,
    )
    # Δr: Chinese 0.5 / 0.5; English CLC 0.5 / TC 0.9.
    assert summary["by_language"]["ch"]["Delta_r"] == 1.0
    assert summary["by_language"]["en"]["Delta_r"] == pytest.approx(0.5 / 0.9)
    sweep = summary["by_tau"]
    assert sweep["0.00"] == {"TC": 0.0, "CLC": 0.0}
    for key in ("0.05", "0.20"):
        assert sweep[key] == {"TC": 0.5, "CLC": 0.5}
    for key in ("0.25", "0.50"):
        assert (sweep[key]["TC"], sweep[key]["CLC"]) == pytest.approx((0.7, 0.5))
    for key in ("0.55", "1.00"):
        assert (sweep[key]["TC"], sweep[key]["CLC"]) == pytest.approx((0.825, 0.625))
    # The same answers without evidence: TC 2.8 / 4, no LC, CLC or Δr.
    answer_only = [answer(record["question_id"], record["answer"]) for record in LENGTH_PREDICTIONS]
    overall = stevqa.score(LENGTH_TRUTH, answer_only).summary["overall"]
    assert overall["TC"] == pytest.approx(0.7)
    assert (overall["LC"], overall["CLC"], overall["Delta_r"]) == (None, None, None)


# --- 5. CLC as tau varies --------------------------------------------------------------------------

TAU_TRUTH = [truth(1, "stop"), truth(2, "stop"), truth(3, "abcde")]
TAU_PREDICTIONS = [
    answer(1, "stop", SQ4),  # NL 0, sufficient
    answer(2, "stap", SQ4),  # NL 1/4, sufficient
    answer(3, "abxyz", FAR),  # NL 3/5, incorrect evidence
]


def test_tc_and_clc_over_the_tau_sweep():
    summary = stevqa.score(TAU_TRUTH, TAU_PREDICTIONS).summary
    sweep = summary["by_tau"]
    assert list(sweep) == [f"{step * 0.05:.2f}" for step in range(21)]
    # tau 0: no NL is < 0. Up to 0.25 (strict): only question 1 scores (1). From 0.30 to 0.60:
    # question 2 too (1 - 1/4). From 0.65: question 3 too (1 - 3/5), but its evidence is incorrect.
    assert sweep["0.00"] == {"TC": 0.0, "CLC": 0.0}
    for key in ("0.05", "0.25"):
        assert (sweep[key]["TC"], sweep[key]["CLC"]) == pytest.approx((1 / 3, 1 / 3))
    for key in ("0.30", "0.50", "0.60"):
        assert (sweep[key]["TC"], sweep[key]["CLC"]) == pytest.approx((1.75 / 3, 1.75 / 3))
    for key in ("0.65", "1.00"):
        assert (sweep[key]["TC"], sweep[key]["CLC"]) == pytest.approx((2.15 / 3, 1.75 / 3))
    # The variant's own tau gives its own numbers exactly.
    assert sweep["0.50"] == {"TC": summary["overall"]["TC"], "CLC": summary["overall"]["CLC"]}
    paper = stevqa.score(TAU_TRUTH, TAU_PREDICTIONS, variant="paper").summary
    assert paper["by_tau"]["0.75"] == {"TC": paper["overall"]["TC"], "CLC": paper["overall"]["CLC"]}


def test_tau_command_prints_the_curve(tmp_path):
    gt, predictions = tmp_path / "gt.json", tmp_path / "pred.json"
    gt.write_bytes(as_bytes(TAU_TRUTH))
    predictions.write_bytes(as_bytes(TAU_PREDICTIONS))
    printed = io.StringIO()
    call_command("stevqa_tau", "--gt", str(gt), "--predictions", str(predictions), stdout=printed)
    lines = printed.getvalue().splitlines()
    assert lines[0].startswith("variant official (its own tau: 0.5")
    # tau 0.50: TC = CLC = 1.75 / 3 = 0.5833, marked as the variant's own.
    assert "  0.50  0.5833  0.5833 *" in lines
    assert "  0.65  0.7167  0.5833" in lines
    printed = io.StringIO()
    call_command(
        "stevqa_tau",
        "--gt",
        str(gt),
        "--predictions",
        str(predictions),
        "--variant",
        "paper",
        "--json",
        stdout=printed,
    )
    curve = json.loads(printed.getvalue())
    assert curve["tau"] == 0.75 and curve["by_tau"]["0.00"] == {"TC": 0.0, "CLC": 0.0}


def test_tau_command_refuses_bad_input(tmp_path):
    gt = tmp_path / "gt.json"
    gt.write_bytes(as_bytes(TAU_TRUTH))
    with pytest.raises(CommandError, match="metric variants"):
        call_command("stevqa_tau", "--gt", str(gt), "--predictions", str(gt), "--variant", "nope")
    with pytest.raises(CommandError, match="cannot read"):
        call_command("stevqa_tau", "--gt", str(gt), "--predictions", str(tmp_path / "none.json"))
    bad = tmp_path / "p.json"
    bad.write_bytes(as_bytes([{"question_id": 1}]))
    with pytest.raises(CommandError, match="record 0: answer: missing field"):
        call_command("stevqa_tau", "--gt", str(gt), "--predictions", str(bad))


# --- the declarations -----------------------------------------------------------------------------


def test_the_spec_names_what_the_metric_writes():
    summary = stevqa.score(CLASS_TRUTH, CLASS_PREDICTIONS).summary
    assert tuple(summary["by_tau"]) == spec_module.TAU_KEYS
    assert spec_module.EVIDENCE_CLASSES == stevqa.EVIDENCE_CLASSES
    assert (spec_module.ONE_WORD, spec_module.MORE) == stevqa.ANSWER_LENGTHS
    assert tuple(choice.value for choice in SPEC.variants) == stevqa.VARIANTS


def test_every_diagnostic_column_has_a_value_when_every_prediction_has_evidence():
    # Both languages and both lengths by both rules, so that no group is empty.
    scored = stevqa.score(LENGTH_TRUTH, LENGTH_PREDICTIONS)
    for diagnostic in SPEC.diagnostics:
        table = build_table(SPEC, [submission(scored)], diagnostic=diagnostic)
        assert table.columns == list(diagnostic.columns), diagnostic.key
    keys = [(c.group, c.label, c.setting, c.summary_path) for c in SPEC.all_columns()]
    assert len(keys) == len(set(keys))
    filters = [c.item_filter for c in SPEC.all_columns() if c.item_filter is not None]
    assert filters and all(isinstance(item_filter, partial) for item_filter in filters)


def test_the_tau_curves_are_line_plots_over_the_sweep():
    curves = [plot for plot in SPEC.plots if plot.summary_path == ("by_tau",)]
    assert {plot.metric for plot in curves} == {"TC", "CLC"}
    for plot in curves:
        assert (plot.kind, plot.xlabel) == ("line", "τ")
        assert tuple(choice.value for choice in plot.groups) == spec_module.TAU_KEYS
