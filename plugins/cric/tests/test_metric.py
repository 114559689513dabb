"""Tests for the CRIC metrics (pure Python, no database): hand cases."""

from __future__ import annotations

import json

import pytest

from benchmarks.records import FormatError
from plugins.cric import metric as cric


def question(question_id, question_type, answer, target, program=None):
    return {
        "image_id": 1,
        "question_id": question_id,
        "question": f"question {question_id}?",
        "answer": answer,
        "question_type": question_type,
        "target": target,
        "program": program or [{"function": "Initial", "text_input": [], "output": [10, 11, 12, 13]}],
    }


QUESTIONS = [
    question("q1", "QueryObjKG", "knife", [11]),
    question("q2", "QueryAtt", "red", [12, 13]),
    question("q3", "VerifyKG", "yes", [11]),
    question("q4", "VerifyAtt", "no", []),
    question("q5", "QueryObjSG", "table", [10]),
]


# --- set IoU -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("predicted", "true", "expected"),
    [
        ([1, 2], [2, 3], 1 / 3),
        ([1, 2, 3], [1, 2, 3], 1.0),
        ([3, 2, 1], [1, 2, 3], 1.0),
        ([1], [2], 0.0),
        ([], [], 1.0),
        ([], [1], 0.0),
        ([1], [], 0.0),
        ([1, 1, 2], [1, 2], 1.0),
    ],
)
def test_set_iou(predicted, true, expected):
    assert cric.set_iou(predicted, true) == pytest.approx(expected)


# --- grounding ---------------------------------------------------------------------------------


def test_recognize_grounding_needs_an_object_in_target():
    knife = QUESTIONS[0]
    assert cric.grounding_correct(knife, 11)
    assert not cric.grounding_correct(knife, 12)
    assert not cric.grounding_correct(knife, None)
    several = QUESTIONS[1]
    assert cric.grounding_correct(several, 12) and cric.grounding_correct(several, 13)


def test_verify_yes_needs_an_eligible_object():
    yes = QUESTIONS[2]
    assert cric.grounding_correct(yes, 11)
    assert not cric.grounding_correct(yes, 10)
    assert not cric.grounding_correct(yes, None)


def test_verify_no_needs_no_object():
    no = QUESTIONS[3]
    assert cric.grounding_correct(no, None)
    assert not cric.grounding_correct(no, 10)
    # Even when a "no" question lists target objects, the right grounding is no object.
    no_with_target = question("q9", "VerifyAtt", "no", [11])
    assert cric.grounding_correct(no_with_target, None)
    assert not cric.grounding_correct(no_with_target, 11)


# --- scoring -----------------------------------------------------------------------------------


def test_score_hand_case():
    predictions = [
        {"question_id": "q1", "answer": "knife", "object": 11},  # both right
        {"question_id": "q2", "answer": "red", "object": 10},  # answer right, grounding wrong
        {"question_id": "q3", "answer": "no", "object": 11},  # answer wrong, grounding right
        {"question_id": "q4", "answer": "no"},  # object left out = null: both right
        {"question_id": "q5", "answer": "Table", "object": 10},  # exact match: case matters
    ]
    scored = cric.score(QUESTIONS, predictions)
    rows = {row["question_id"]: row for row in scored.items}
    assert [
        (rows[q]["answer_correct"], rows[q]["grounding_correct"], rows[q]["final_correct"]) for q in rows
    ] == [
        (True, True, True),
        (True, False, False),
        (False, True, False),
        (True, True, True),
        (False, True, False),
    ]
    summary = scored.summary
    assert summary["overall"] == {"count": 5, "Ans": 0.6, "Grd": 0.8, "Final": 0.4}
    assert summary["by_kind"]["verify"] == {"count": 2, "Ans": 0.5, "Grd": 1.0, "Final": 0.5}
    assert summary["by_kind"]["recognize"] == {"count": 3, "Ans": 2 / 3, "Grd": 2 / 3, "Final": 1 / 3}
    assert summary["by_question_type"]["QueryAtt"] == {"count": 1, "Ans": 1.0, "Grd": 0.0, "Final": 0.0}
    assert list(summary["by_question_type"]) == [
        "QueryAtt",
        "QueryObjKG",
        "QueryObjSG",
        "VerifyAtt",
        "VerifyKG",
    ]
    assert scored.problems == []
    assert summary["parameters"] == scored.params
    assert scored.params["metric"] == "CRIC" and scored.params["metric_version"] == "2"


def test_verify_yes_without_object_is_not_final():
    scored = cric.score([QUESTIONS[2]], [{"question_id": "q3", "answer": "yes", "object": None}])
    row = scored.items[0]
    assert row["answer_correct"] and not row["grounding_correct"] and not row["final_correct"]


def test_verify_no_with_an_object_is_not_final():
    scored = cric.score([QUESTIONS[3]], [{"question_id": "q4", "answer": "no", "object": 10}])
    row = scored.items[0]
    assert row["answer_correct"] and not row["grounding_correct"] and not row["final_correct"]


def test_missing_and_extra_predictions():
    predictions = {"q1": {"answer": "knife", "object": 11}, "zz": {"answer": "x", "object": None}}
    scored = cric.score(QUESTIONS[:2], predictions)
    assert scored.items[1]["missing"] is True
    assert scored.items[1]["final_correct"] is False
    assert scored.summary["overall"]["Final"] == 0.5
    assert scored.summary["missing_predictions"] == 1 and scored.summary["extra_predictions"] == 1
    assert "1 question has no prediction" in scored.problems[0] and "q2" in scored.problems[0]
    assert "ignored" in scored.problems[1] and "zz" in scored.problems[1]


def test_empty_groups_have_no_numbers():
    scored = cric.score([QUESTIONS[0]], [{"question_id": "q1", "answer": "knife", "object": 11}])
    assert scored.summary["by_kind"]["verify"] == {"count": 0, "Ans": None, "Grd": None, "Final": None}


def test_step_iou_from_program_outputs():
    program = [
        {"function": "Initial", "text_input": [], "output": [10, 11, 12]},
        {"function": "Find", "text_input": ["knife"], "output": [11]},
    ]
    questions = [question("q1", "QueryObjKG", "knife", [11], program)]
    predictions = [
        {"question_id": "q1", "answer": "knife", "object": 11, "program_outputs": [[10, 11], [11]]}
    ]
    scored = cric.score(questions, predictions)
    assert scored.items[0]["step_iou"] == pytest.approx((2 / 3 + 1) / 2)
    assert scored.summary["step_iou"] == {"count": 1, "mean": pytest.approx(5 / 6)}

    wrong_length = [{"question_id": "q1", "answer": "knife", "object": 11, "program_outputs": [[11]]}]
    scored = cric.score(questions, wrong_length)
    assert scored.items[0]["step_iou"] is None
    assert "program_outputs" in scored.problems[0]


def test_duplicate_question_ids_in_questions_are_an_error():
    with pytest.raises(ValueError, match="question q1"):
        cric.score([QUESTIONS[0], QUESTIONS[0]], [])


# --- prediction files --------------------------------------------------------------------------


def test_parse_predictions_reports_every_bad_record():
    records = [
        {"question_id": "q1", "answer": "knife", "object": 11},
        {"question_id": 2, "answer": "red", "object": 1},
        {"question_id": "q3", "object": 1},
        {"question_id": "q4", "answer": "no", "object": "11"},
        {"question_id": "q5", "answer": "no", "object": True},
        {"question_id": "q1", "answer": "again", "object": None},
        {"question_id": "q6", "answer": "x", "object": None, "program_outputs": [[1], ["2"]]},
        [],
    ]
    with pytest.raises(FormatError) as raised:
        cric.parse_predictions(json.dumps(records).encode(), source="cric_preds.json")
    errors = {(error.record, error.field) for error in raised.value.errors}
    assert errors == {
        ("record 1", "question_id"),
        ("record 2", "answer"),
        ("record 3", "object"),
        ("record 4", "object"),
        ("record 5", "question_id"),
        ("record 6", "program_outputs[1][0]"),
        ("record 7", "record"),
    }
    assert "duplicate question_id 'q1' (first at record 0)" in str(raised.value)


def test_parse_predictions_accepts_null_and_missing_objects():
    data = b'[{"question_id": "a", "answer": "no", "object": null}, {"question_id": "b", "answer": "no"}]'
    assert cric.parse_predictions(data) == [
        {"question_id": "a", "answer": "no", "object": None},
        {"question_id": "b", "answer": "no", "object": None},
    ]
    with pytest.raises(FormatError, match="expected a JSON list"):
        cric.parse_predictions(b"{}")


def test_score_file_reads_official_question_files():
    questions_data = json.dumps(QUESTIONS).encode()
    predictions_data = json.dumps([{"question_id": "q1", "answer": "knife", "object": 11}]).encode()
    scored = cric.score_file(questions_data, predictions_data)
    assert scored.items[0]["final_correct"] is True
    assert scored.summary["missing_predictions"] == 4
