"""CRIC metrics: answer accuracy (Ans), grounding accuracy (Grd) and both together (Final).

Pure Python, no Django. A system answers each question with a text answer and at most one
object chosen among the image's candidate objects. Per question::

    answer correct    = predicted answer == ground-truth answer      (exact string match)
    grounding correct = see below
    final correct     = answer correct and grounding correct

Grounding is judged against the ground truth:

- Recognize questions (QueryObjKG, QueryObjSG, QueryAtt): the chosen object must be one of the
  question's ``target`` objects. (Should a target list be empty, the right grounding is no
  object.)
- Verify questions (VerifyKG, VerifyAtt; yes/no answers): when the true answer is "yes" the
  chosen object must be an eligible one (in ``target``); when it is "no" the system must choose
  no object (``null``). So a "no" question is fully right only as ``{"answer": "no", "object":
  null}``.

Ans, Grd and Final are the shares of questions with each kind of correctness, reported over
all questions, for Verify vs Recognize questions and per question type. A question without a
prediction counts as wrong on all three and is listed in ``Scored.problems``; predictions for
unknown question ids are listed and ignored.

Set-level grounding for intermediate program steps: `set_iou` = |P ∩ G| / |P ∪ G|. When a
prediction carries ``program_outputs`` (one list of object ids per program step), each item
gets ``step_iou``, the mean of `set_iou` over the question's steps, and the summary its mean.

Prediction file (Yardstick's format; CRIC releases no prediction format): a JSON list of

    {"question_id": str, "answer": str, "object": int | null,
     "program_outputs": [[int, ...], ...]}            # optional

``object`` may be left out, meaning null. Extra fields are ignored.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import IO, Any

from benchmarks.records import (
    RecordChecker,
    check_unique,
    indexed,
    iter_official,
    load_json_list,
    paused_gc,
    stream_json_list,
)
from evaluation.metrics.scored import Scored, describe_ids, mean_or_none
from plugins.cric import formats
from plugins.cric.formats import VERIFY_TYPES

METRIC = "CRIC"
#: Bump when a change to this module can change a number.
METRIC_VERSION = "1"

VERIFY = "verify"
RECOGNIZE = "recognize"
YES = "yes"
NO = "no"


def set_iou(predicted_ids: Collection[int], true_ids: Collection[int]) -> float:
    """|P ∩ G| / |P ∪ G| of two sets of object ids (duplicates count once).

    Two empty sets agree perfectly: 1.0. One empty and one not: 0.0.
    """
    predicted, true = set(predicted_ids), set(true_ids)
    union = predicted | true
    if not union:
        return 1.0
    return len(predicted & true) / len(union)


def question_kind(question: Mapping[str, Any]) -> str:
    """VERIFY for the yes/no question types (VerifyKG, VerifyAtt), RECOGNIZE for the others."""
    return VERIFY if question["question_type"] in VERIFY_TYPES else RECOGNIZE


def grounding_correct(question: Mapping[str, Any], chosen_object: int | None) -> bool:
    """Whether `chosen_object` (None: no object) is the right grounding for `question`.

    Verify question answered "no" in the ground truth: right only with no object. Otherwise:
    right when the object is in ``target`` (or, for an empty target, when there is no object).
    """
    target = question["target"]
    if question_kind(question) == VERIFY and question["answer"] == NO:
        return chosen_object is None
    if not target:
        return chosen_object is None
    return chosen_object is not None and chosen_object in target


# --- predictions -------------------------------------------------------------------------------


def prediction_from_record(raw: Any, checker: RecordChecker) -> dict[str, Any] | None:
    if not checker.is_object(raw):
        return None
    before = len(checker.errors)
    question_id = checker.get(raw, "question_id", str)
    answer = checker.get(raw, "answer", str)
    chosen_object = raw.get("object")
    if chosen_object is not None:
        chosen_object = checker.get(raw, "object", int)
    program_outputs = None
    if raw.get("program_outputs") is not None:
        # The object ids each program step outputs, as the question file's program[i].output.
        program_outputs = checker.get_lists(raw, "program_outputs", int)
    if len(checker.errors) > before:
        return None
    prediction = {"question_id": question_id, "answer": answer, "object": chosen_object}
    if program_outputs is not None:
        prediction["program_outputs"] = program_outputs
    return prediction


def check_prediction_records(
    labelled: Iterable[tuple[str, Any]], *, source: str = ""
) -> list[dict[str, Any]]:
    """Validate labelled prediction records; all faults (and duplicate ids) in one FormatError."""
    return check_unique(labelled, prediction_from_record, id_field="question_id", source=source)


def parse_predictions(data: bytes | str | list[Any] | IO[bytes], *, source: str = "") -> list[dict[str, Any]]:
    """A CRIC prediction file (format in the module docstring) as validated records; an open file
    is read a record at a time.

    Every fault of every record is reported at once as a FormatError of RecordError("record N",
    field, message), N counting from 0; duplicate question ids are faults too.
    """
    if isinstance(data, bytes | str | list):
        labelled = indexed(load_json_list(data, source=source, what="predictions"))
    else:
        labelled = stream_json_list(data, source=source, what="predictions")
    return check_prediction_records(labelled, source=source)


def predictions_as_records(
    predictions: Sequence[Mapping[str, Any]] | Mapping[str, Any],
) -> list[dict[str, Any]]:
    """Validated records from a list of predictions or a mapping question_id -> prediction."""
    if isinstance(predictions, Mapping):
        labelled = [
            (f"prediction {key!r}", dict(value, question_id=key) if isinstance(value, Mapping) else value)
            for key, value in predictions.items()
        ]
        return check_prediction_records(labelled)
    return check_prediction_records(indexed(list(predictions)))


# --- scoring -----------------------------------------------------------------------------------


def group_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """count and the shares Ans, Grd, Final (None for an empty group)."""
    return {
        "count": len(rows),
        "Ans": mean_or_none(float(row["answer_correct"]) for row in rows),
        "Grd": mean_or_none(float(row["grounding_correct"]) for row in rows),
        "Final": mean_or_none(float(row["final_correct"]) for row in rows),
    }


def parameters() -> dict[str, Any]:
    return {
        "metric": METRIC,
        "metric_version": METRIC_VERSION,
        # One variant only: nothing differs between the paper and the released material.
        "variant": "official",
        "answer_rule": "exact string match",
        "grounding_rule": "object in target; verify questions answered 'no': no object",
        "verify_types": sorted(VERIFY_TYPES),
        "step_iou": "|P ∩ G| / |P ∪ G| per program step, 1 when both empty",
    }


def step_iou(question: Mapping[str, Any], program_outputs: Sequence[Sequence[int]]) -> float | None:
    """Mean set IoU of predicted and true outputs over the program's steps; None if lengths differ."""
    program = question.get("program") or []
    if len(program) != len(program_outputs) or not program:
        return None
    return mean_or_none(
        set_iou(predicted, step.get("output", ()))
        for predicted, step in zip(program_outputs, program, strict=True)
    )


def score(
    questions: Iterable[Mapping[str, Any]], predictions: Sequence[Mapping[str, Any]] | Mapping[str, Any]
) -> Scored:
    """Score CRIC predictions against official question records.

    `questions`: records as in the released question files (question_id, question_type, answer,
    target, program, ...). `predictions`: a list of ``{"question_id", "answer", "object"}`` (see
    the module docstring) or a mapping question_id -> ``{"answer", "object"}``; validated first.

    Items: one row per question, in its order: question_id, question_type, kind (verify /
    recognize), answer_correct, grounding_correct, final_correct, missing, step_iou (None unless
    program outputs were given). Summary: "overall", "by_kind", "by_question_type", each with
    count, Ans, Grd and Final; "step_iou" (mean and count); counts of missing and extra
    predictions; the parameters.
    """
    return score_checked(questions, predictions_as_records(predictions))


def score_checked(questions: Iterable[Mapping[str, Any]], records: Sequence[Mapping[str, Any]]) -> Scored:
    """`score` on validated prediction records; the questions are read once, in order (they may
    be streamed from a file: only each question's row is kept)."""
    params = parameters()
    by_id = {prediction["question_id"]: prediction for prediction in records}
    rows: list[dict[str, Any]] = []
    missing: list[str] = []
    mismatched_steps: list[str] = []
    seen: set[str] = set()
    for question in questions:
        question_id = question["question_id"]
        if question_id in seen:
            raise ValueError(f"question {question_id}: the questions hold this question_id twice")
        seen.add(question_id)
        prediction = by_id.get(question_id)
        row: dict[str, Any] = {
            "question_id": question_id,
            # One string per type, not one per row: 500,000 rows keep a handful of type names.
            "question_type": sys.intern(question["question_type"]),
            "kind": question_kind(question),
            "answer_correct": False,
            "grounding_correct": False,
            "final_correct": False,
            "missing": prediction is None,
            "step_iou": None,
        }
        rows.append(row)
        if prediction is None:
            missing.append(question_id)
            continue
        row["answer_correct"] = prediction["answer"] == question["answer"]
        row["grounding_correct"] = grounding_correct(question, prediction["object"])
        row["final_correct"] = row["answer_correct"] and row["grounding_correct"]
        if "program_outputs" in prediction:
            row["step_iou"] = step_iou(question, prediction["program_outputs"])
            if row["step_iou"] is None:
                mismatched_steps.append(question_id)

    extra = [question_id for question_id in by_id if question_id not in seen]
    problems = []
    if missing:
        problems.append(
            f"{len(missing)} question{'s have' if len(missing) != 1 else ' has'} no prediction and "
            f"{'count' if len(missing) != 1 else 'counts'} as wrong on Ans, Grd and Final: "
            f"question_id {describe_ids(missing)}"
        )
    if extra:
        problems.append(
            f"{len(extra)} prediction{'s are' if len(extra) != 1 else ' is'} for question ids not among the "
            f"questions and {'were' if len(extra) != 1 else 'was'} ignored: question_id {describe_ids(extra)}"
        )
    if mismatched_steps:
        problems.append(
            f"{len(mismatched_steps)} prediction(s) give program_outputs whose length differs from the "
            f"question's program; no step IoU for question_id {describe_ids(mismatched_steps)}"
        )
    question_types = sorted({row["question_type"] for row in rows})
    step_ious = [row["step_iou"] for row in rows if row["step_iou"] is not None]
    summary = {
        "parameters": params,
        "overall": group_summary(rows),
        "by_kind": {
            kind: group_summary([row for row in rows if row["kind"] == kind]) for kind in (VERIFY, RECOGNIZE)
        },
        "by_question_type": {
            name: group_summary([row for row in rows if row["question_type"] == name])
            for name in question_types
        },
        "step_iou": {"count": len(step_ious), "mean": mean_or_none(step_ious)},
        "missing_predictions": len(missing),
        "extra_predictions": len(extra),
    }
    return Scored(items=rows, summary=summary, params=params, problems=problems)


def score_file(
    questions_data: bytes | IO[bytes],
    predictions_data: bytes | IO[bytes],
    *,
    questions_source: str = "questions",
    predictions_source: str = "predictions",
) -> Scored:
    """Score a prediction file against an official question file (raw JSON bytes, or files open
    for reading: then both are read a record at a time and memory holds the predictions and one
    row per question, never the question file).

    The questions are read and checked by the CRIC format module.
    """
    with paused_gc():
        predictions = parse_predictions(predictions_data, source=predictions_source)
        prepared = (
            formats.prepare(questions_data, source=questions_source)
            if isinstance(questions_data, bytes | bytearray)
            else formats.prepare_stream(questions_data, source=questions_source)
        )
        questions = iter_official(prepared, formats.to_official, source=questions_source)
        return score_checked(questions, predictions)
