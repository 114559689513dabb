"""STE-VQA scored from files open for reading (`score_file` on streams, as `manage.py score` passes
them): the training layout numbered as when the file is read whole, every fault named by record
and field as from bytes, the ground truth's faults reported first whichever way the files come,
and the spec passing the files through. The numbers themselves are compared, variant by variant,
in tests/evaluation/test_streamed_scoring.py."""

from __future__ import annotations

import io
import json

import pytest

from benchmarks import records
from benchmarks.records import FormatError
from benchmarks.spec import ScoringFiles
from conftest import SHARED_DATA
from plugins.stevqa import metric as stevqa
from plugins.stevqa.spec import SPEC

SQUARE = [0, 0, 40, 0, 40, 20, 0, 20]


@pytest.fixture
def small_pieces(monkeypatch):
    """Chunks of 61 bytes and evidence scored 3 pairs at a time: boundaries everywhere."""
    monkeypatch.setattr(records.streaming, "STREAM_CHUNK", 61)
    monkeypatch.setattr(stevqa, "EVIDENCE_BATCH", 3)


def question(question_id, answer="stop", **extra):
    return {
        "question_id": question_id,
        "question": "What is written here?",
        "answer": answer,
        "evidence": [str(value) for value in SQUARE],
        **extra,
    }


def answer(question_id, text="stop", evidence=SQUARE):
    return {"question_id": question_id, "answer": text, "evidence": evidence}


def encoded(document) -> bytes:
    return json.dumps(document, indent=1, ensure_ascii=False).encode()


def both_ways(truth: bytes, predictions: bytes, **options):
    """score_file on the bytes, then on the same files open for reading."""
    return (
        stevqa.score_file(truth, predictions, **options),
        stevqa.score_file(io.BytesIO(truth), io.BytesIO(predictions), **options),
    )


def faults_both_ways(truth: bytes, predictions: bytes, error=FormatError):
    """The faults score_file raises from the bytes and from the open files, as strings."""
    found = []
    for given in ((truth, predictions), (io.BytesIO(truth), io.BytesIO(predictions))):
        with pytest.raises(error) as raised:
            stevqa.score_file(*given, gt_source="gt.json", pred_source="pred.json")
        found.append(raised.value)
    return found


def test_a_streamed_training_file_numbers_its_pairs_in_file_order(small_pieces):
    # Image 1's pairs are questions 0 and 1, image 2 has none, image 3's are 2, 3 and 4.
    pairs = [{"question": f"q{n}", "answer": f"a{n}", "evidence": SQUARE} for n in range(5)]
    training = [
        {"id": 1, "image": "1.jpg", "annotation": pairs[:2], "ocr_tokens": [{"text": "A1", "quad": SQUARE}]},
        {"id": 2, "image": "2.jpg", "annotation": []},
        {"id": 3, "image": "3.jpg", "annotation": pairs[2:]},
    ]
    predictions = [answer(n, f"a{n}") for n in (4, 0, 2)] + [answer(1, "a1", None)]
    for variant in ("official", "ocr"):
        whole, streamed = both_ways(encoded(training), encoded(predictions), variant=variant)
        assert streamed.summary == whole.summary and streamed.problems == whole.problems
        assert list(streamed.items) == list(whole.items)
        assert [row["question_id"] for row in streamed.items] == [0, 1, 2, 3, 4]
        assert [row["missing"] for row in streamed.items] == [False, False, False, True, False]
    # Under "ocr", question 1 takes the quad of image 1's token "A1" (equal to "a1" once lower-cased).
    assert [row["evidence_from"] for row in streamed.items] == [
        "prediction",
        "ocr",
        "prediction",
        None,
        "prediction",
    ]


def test_every_fault_of_a_streamed_ground_truth_is_named_as_from_bytes(small_pieces):
    truth = [question(n) for n in range(12)]
    truth[3]["evidence"][2] = "wide"
    del truth[5]["answer"]
    truth[8]["question_id"] = 2  # the same id twice
    truth[10]["ocr_tokens"] = [{"text": "stop", "quad": [1, 2, 3]}]
    whole, streamed = faults_both_ways(encoded(truth), encoded([answer(0)]))
    assert [str(error) for error in streamed.errors] == [str(error) for error in whole.errors]
    assert [(error.record, error.field) for error in whole.errors] == [
        ("record 3", "evidence[2]"),
        ("record 5", "answer"),
        ("record 8", "question_id"),
        ("record 10", "ocr_tokens[0].quad"),
    ]
    assert streamed.source == "gt.json"


def test_records_before_the_first_object_are_faults_in_either_layout(small_pieces):
    pairs = [{"question": "q", "answer": "a", "evidence": SQUARE}]
    for first in ({"id": 1, "image": "1.jpg", "annotation": pairs}, question(0)):
        whole, streamed = faults_both_ways(encoded([7, "x", first, [1]]), encoded([answer(0)]))
        assert [str(error) for error in streamed.errors] == [str(error) for error in whole.errors]
        assert [error.record for error in whole.errors] == ["record 0", "record 1", "record 3"]


def test_json_that_breaks_off_in_a_streamed_ground_truth_is_named_with_its_place(small_pieces):
    data = encoded([question(n) for n in range(20)])
    with pytest.raises(FormatError, match=r"after record \d+: byte \d+: not valid JSON") as raised:
        stevqa.score_file(io.BytesIO(data[: len(data) // 2]), encoded([answer(0)]), gt_source="gt.json")
    assert raised.value.source == "gt.json"
    with pytest.raises(FormatError, match="expected a JSON list of STE-VQA records"):
        stevqa.score_file(io.BytesIO(b'{"question_id": 1}'), encoded([]))


def test_streamed_predictions_name_every_bad_record_as_from_bytes(small_pieces):
    truth = encoded([question(n) for n in range(4)])
    bad = [
        answer(0),
        {"question_id": "1", "answer": "stop"},
        answer(2, 5),
        answer(0),
        answer(3, evidence=[1, 2]),
    ]
    whole, streamed = faults_both_ways(truth, encoded(bad))
    assert [str(error) for error in streamed.errors] == [str(error) for error in whole.errors]
    assert [error.record for error in whole.errors] == ["record 1", "record 2", "record 3", "record 4"]
    assert streamed.source == "pred.json"


def test_the_ground_truths_faults_come_first_whichever_way_the_files_come(small_pieces):
    truth = [question(n) for n in range(10)]
    truth[7]["evidence"] = "nowhere"
    bad_predictions = encoded([{"question_id": 0}])
    for errors in faults_both_ways(encoded(truth), bad_predictions):
        assert [(error.record, error.field) for error in errors.errors] == [("record 7", "evidence")]
    # Two empty answers (question 2) cannot be scored; a fault further on is still what is told.
    truth[2]["answer"] = ""
    predictions = encoded([answer(n, "" if n == 2 else "stop") for n in range(10)])
    for errors in faults_both_ways(encoded(truth), predictions):
        assert [(error.record, error.field) for error in errors.errors] == [("record 7", "evidence")]
    # With the ground truth sound, the question that cannot be scored is named.
    truth[7]["evidence"] = SQUARE
    for error in faults_both_ways(encoded(truth), predictions, error=ValueError):
        assert not isinstance(error, FormatError)
        assert str(error).startswith("question 2: the predicted and the ground-truth answers are both empty")


def test_the_spec_scores_open_files_as_it_scores_bytes():
    assert SPEC.scores_streamed_files
    folder = SHARED_DATA / "estvqa_sample"
    truth, predictions = folder / "gt_sample.json", folder / "pred_sample.json"
    whole = SPEC.score_files(ScoringFiles(truth.read_bytes(), predictions.read_bytes(), variant="paper"))
    with truth.open("rb") as gt, predictions.open("rb") as answers:
        streamed = SPEC.score_files(ScoringFiles(gt, answers, variant="paper"))
    assert streamed.summary == whole.summary and list(streamed.items) == list(whole.items)
    assert streamed.summary["parameters"]["variant"] == "paper"
