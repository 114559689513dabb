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
Per function (the paper's modules: Find, Relate, Find KG, ...), ``by_function`` gives the mean
`set_iou` over every scored step of that function, so a weak module shows even where the final
answer hides it; each row carries ``set_iou:<function>``, the mean over its own steps of that
function, the unit an interval is drawn over (steps of one question are not independent).

Breakdowns, to read where a system fails as the papers' diagnostic figures do (each bucket with
count, Ans, Grd and Final; a question without a prediction counts wrong, as everywhere else):

- ``by_question_length``: words in the question (whitespace-separated, punctuation attached),
  in LENGTH_BUCKETS: at most 6, 7-9, 10-12, 13 or more.
- ``by_functions``: steps in the question's program, in FUNCTION_BUCKETS: at most 3, 4-5, 6-7,
  8 or more. Both are Yardstick's buckets (FORMATS.md gives none from the paper), four each so
  that a table of them keeps to 12 columns.
- ``by_object_size``: how big the object the question is about is, as its box area over the
  image's area (from the scene graphs, so only when they are given), small below 1% of the
  image, large from 10%, medium between. A question with several target objects takes the
  largest (any of them grounds it right, and the largest is the easiest to find). A question
  whose right grounding is no object (a verify question answered "no", an empty target) has no
  size and sits in no bucket; so does one whose image has no scene graph, no width and height,
  or lacks the target object (listed in the problems).
- ``recognition``: the questions whose program has a Recognition step (the module that names
  an object or its attribute: its result is the answer); recognition accuracy is their Ans.
  The paper reports Ans for Recognize questions (``by_kind``); the two agree where every
  Recognize question's program ends in Recognition, as the generated demo data's do.

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
    FormatError,
    RecordChecker,
    RecordErrors,
    check_unique,
    indexed,
    iter_converted,
    iter_official,
    load_json_list,
    paused_gc,
    stream_json_list,
)
from evaluation.metrics.scored import Scored, describe_ids, mean_or_none
from plugins.cric import formats
from plugins.cric.formats import FUNCTION_NAMES, VERIFY_TYPES

METRIC = "CRIC"
#: Bump when a change to this module can change a number (2: the breakdowns and per-function IoU).
METRIC_VERSION = "2"

VERIFY = "verify"
RECOGNIZE = "recognize"
YES = "yes"
NO = "no"

#: (key, most words or steps; None: no limit), in order: a question goes in the first that fits.
LENGTH_BUCKETS = (("1-6", 6), ("7-9", 9), ("10-12", 12), ("13+", None))
FUNCTION_BUCKETS = (("1-3", 3), ("4-5", 5), ("6-7", 7), ("8+", None))
SMALL = "small"
MEDIUM = "medium"
LARGE = "large"
SIZE_BUCKETS = (SMALL, MEDIUM, LARGE)
#: A box under this share of the image is small; from LARGE_FROM on, large.
SMALL_BELOW = 0.01
LARGE_FROM = 0.10
RECOGNITION = "Recognition"
#: The per-unit field holding a question's mean set IoU over its steps of one function.
FUNCTION_IOU_PREFIX = "set_iou:"
#: One key string per function, shared by every row.
FUNCTION_IOU_KEYS = {name: f"{FUNCTION_IOU_PREFIX}{name}" for name in FUNCTION_NAMES}

#: image id -> object id -> the object's box area over the image's (None: no usable image size).
ObjectSizes = dict[int, dict[int, float] | None]


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


def grounded_nothing(question: Mapping[str, Any]) -> bool:
    """Whether the right grounding of `question` is no object (a "no" to a verify question, or an
    empty target)."""
    return (question_kind(question) == VERIFY and question["answer"] == NO) or not question["target"]


def grounding_correct(question: Mapping[str, Any], chosen_object: int | None) -> bool:
    """Whether `chosen_object` (None: no object) is the right grounding for `question`.

    Verify question answered "no" in the ground truth: right only with no object. Otherwise:
    right when the object is in ``target`` (or, for an empty target, when there is no object).
    """
    if grounded_nothing(question):
        return chosen_object is None
    return chosen_object is not None and chosen_object in question["target"]


# --- breakdowns --------------------------------------------------------------------------------


def bucket(value: int, buckets: Sequence[tuple[str, int | None]]) -> str:
    """The key of the first bucket whose limit `value` does not pass."""
    for key, most in buckets:
        if most is None or value <= most:
            return key
    raise ValueError(f"{value} fits no bucket of {buckets}")


def question_words(question: Mapping[str, Any]) -> int:
    """Words in the question text: whitespace-separated tokens, punctuation attached ("table?")."""
    return len(str(question.get("question", "")).split())


def size_bucket(relative_area: float) -> str:
    """SMALL below SMALL_BELOW of the image, LARGE from LARGE_FROM, MEDIUM between."""
    if relative_area < SMALL_BELOW:
        return SMALL
    return LARGE if relative_area >= LARGE_FROM else MEDIUM


def relative_areas(scene: Mapping[str, Any]) -> dict[int, float] | None:
    """Object id -> its box's area (w × h) over the image's (width × height); None when the scene
    graph gives no positive width and height (Visual Genome's do; they are optional here)."""
    width, height = scene.get("width"), scene.get("height")
    if not isinstance(width, int | float) or not isinstance(height, int | float) or width <= 0 or height <= 0:
        return None
    image_area = float(width) * float(height)
    return {
        obj["object_id"]: max(obj["w"], 0) * max(obj["h"], 0) / image_area for obj in scene.get("objects", ())
    }


def read_object_sizes(labelled: Iterable[tuple[str, Any]], *, source: str = "scene graphs") -> ObjectSizes:
    """Each image's objects' relative areas from labelled scene-graph records (a list, or a file
    read a record at a time: memory then holds the areas, not the scene graphs). Every scene is
    checked as the CRIC format module imports it; every fault (and repeated image id) is reported
    at once in a FormatError, so no number comes from a broken scene file."""
    errors = RecordErrors()
    sizes: ObjectSizes = {}
    try:
        for scene in iter_converted(labelled, formats.scene_to_record, errors, id_field="image_id"):
            sizes[scene.data["image_id"]] = relative_areas(scene.data)
    except FormatError as error:
        errors.extend(error.errors)
    if errors:
        raise FormatError(errors, source=source)
    return sizes


def object_size(question: Mapping[str, Any], sizes: ObjectSizes) -> tuple[float | None, str]:
    """The relative area of the largest target object, with "" as the reason; (None, reason) when
    there is none: the right grounding is no object (reason ""), or the scene graphs cannot say
    (the reason, for the problems)."""
    if grounded_nothing(question):
        return None, ""
    image_id = question["image_id"]
    if image_id not in sizes:
        return None, "their image has no scene graph"
    areas = sizes[image_id]
    if areas is None:
        return None, "their image's scene graph gives no width and height"
    if any(object_id not in areas for object_id in question["target"]):
        return None, "their image's scene graph lacks a target object"
    return max(areas[object_id] for object_id in question["target"]), ""


def split_by(rows: Iterable[Mapping[str, Any]], field: str, keys: Iterable[str]) -> dict[str, list]:
    """The rows grouped by their value of `field`, one group per key in `keys` (empty ones kept, in
    that order); rows with another value (None: no bucket) are in none."""
    groups: dict[str, list] = {key: [] for key in keys}
    for row in rows:
        group = groups.get(row[field])
        if group is not None:
            group.append(row)
    return groups


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
    """count and the shares Ans, Grd, Final (None for an empty group), in one pass over the rows
    (a summary makes about twenty groups of up to 500,000 rows)."""
    answer = grounding = final = 0
    for row in rows:
        answer += row["answer_correct"]
        grounding += row["grounding_correct"]
        final += row["final_correct"]
    count = len(rows)
    if not count:
        return {"count": 0, "Ans": None, "Grd": None, "Final": None}
    return {"count": count, "Ans": answer / count, "Grd": grounding / count, "Final": final / count}


def parameters(*, scene_graphs: bool = False) -> dict[str, Any]:
    """How the numbers were computed; `scene_graphs`: whether they were given (object sizes)."""
    return {
        "metric": METRIC,
        "metric_version": METRIC_VERSION,
        # One variant only: nothing differs between the paper and the released material.
        "variant": "official",
        "answer_rule": "exact string match",
        "grounding_rule": "object in target; verify questions answered 'no': no object",
        "verify_types": sorted(VERIFY_TYPES),
        "step_iou": "|P ∩ G| / |P ∪ G| per program step, 1 when both empty",
        "by_function": "mean set IoU over every scored step of the function",
        "recognition": "Ans over the questions whose program has a Recognition step",
        "question_length": "whitespace-separated words of the question",
        "question_length_buckets": [key for key, _ in LENGTH_BUCKETS],
        "function_buckets": [key for key, _ in FUNCTION_BUCKETS],
        "object_size": "largest target box area / image area; none when the right grounding is no object",
        "object_size_thresholds": {"small_below": SMALL_BELOW, "large_from": LARGE_FROM},
        "scene_graphs": scene_graphs,
    }


def step_ious(
    question: Mapping[str, Any], program_outputs: Sequence[Sequence[int]]
) -> list[tuple[str, float]] | None:
    """(function, set IoU of predicted and true output) per program step; None if lengths differ."""
    program = question.get("program") or []
    if len(program) != len(program_outputs) or not program:
        return None
    return [
        (step["function"], set_iou(predicted, step.get("output", ())))
        for predicted, step in zip(program_outputs, program, strict=True)
    ]


def step_iou(question: Mapping[str, Any], program_outputs: Sequence[Sequence[int]]) -> float | None:
    """Mean set IoU of predicted and true outputs over the program's steps; None if lengths differ."""
    ious = step_ious(question, program_outputs)
    return None if ious is None else mean_or_none(iou for _, iou in ious)


def function_iou_key(function: str) -> str:
    """The per-unit field of a function's mean set IoU over one question's steps."""
    return FUNCTION_IOU_KEYS.get(function) or f"{FUNCTION_IOU_PREFIX}{function}"


def score(
    questions: Iterable[Mapping[str, Any]],
    predictions: Sequence[Mapping[str, Any]] | Mapping[str, Any],
    *,
    scenes: Iterable[Mapping[str, Any]] | None = None,
) -> Scored:
    """Score CRIC predictions against official question records.

    `questions`: records as in the released question files (question_id, question_type, answer,
    target, program, ...). `predictions`: a list of ``{"question_id", "answer", "object"}`` (see
    the module docstring) or a mapping question_id -> ``{"answer", "object"}``; validated first.
    `scenes`: the images' scene graphs (Visual Genome's form), for the object sizes; checked
    first (a FormatError names every fault). Without them no question has a size.

    Items: one row per question, in its order: question_id, question_type, kind (verify /
    recognize), answer_correct, grounding_correct, final_correct, missing, step_iou (None unless
    program outputs were given), length_bucket, functions_bucket, size_bucket (None: no size),
    recognition_step (the program has a Recognition step), and ``set_iou:<function>`` for each
    function of a program whose outputs were given. Summary: "overall", "by_kind",
    "by_question_type", "by_question_length", "by_functions", "by_object_size", "recognition",
    each with count, Ans, Grd and Final; "step_iou" (mean and count); "by_function" (function ->
    count of steps, questions, set_iou); counts of missing and extra predictions; the parameters.
    """
    sizes = None if scenes is None else read_object_sizes(indexed(list(scenes)))
    return score_checked(questions, predictions_as_records(predictions), sizes)


def score_checked(
    questions: Iterable[Mapping[str, Any]],
    records: Sequence[Mapping[str, Any]],
    sizes: ObjectSizes | None = None,
) -> Scored:
    """`score` on validated prediction records and the scenes' object sizes (None: no scene
    graphs); the questions are read once, in order (they may be streamed from a file: only each
    question's row is kept)."""
    params = parameters(scene_graphs=sizes is not None)
    by_id = {prediction["question_id"]: prediction for prediction in records}
    rows: list[dict[str, Any]] = []
    missing: list[str] = []
    mismatched_steps: list[str] = []
    unsized: dict[str, list[str]] = {}
    #: function -> [sum of its steps' set IoU, its steps, the questions having it]
    function_totals: dict[str, list] = {}
    seen: set[str] = set()
    for question in questions:
        question_id = question["question_id"]
        if question_id in seen:
            raise ValueError(f"question {question_id}: the questions hold this question_id twice")
        seen.add(question_id)
        prediction = by_id.get(question_id)
        program = question.get("program") or ()
        recognition_step = False
        for step in program:
            if step.get("function") == RECOGNITION:
                recognition_step = True
                break
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
            "length_bucket": bucket(question_words(question), LENGTH_BUCKETS),
            "functions_bucket": bucket(len(program), FUNCTION_BUCKETS),
            "size_bucket": None,
            "recognition_step": recognition_step,
        }
        rows.append(row)
        if sizes is not None:
            area, reason = object_size(question, sizes)
            if area is not None:
                row["size_bucket"] = size_bucket(area)
            elif reason:
                unsized.setdefault(reason, []).append(question_id)
        if prediction is None:
            missing.append(question_id)
            continue
        row["answer_correct"] = prediction["answer"] == question["answer"]
        row["grounding_correct"] = grounding_correct(question, prediction["object"])
        row["final_correct"] = row["answer_correct"] and row["grounding_correct"]
        if "program_outputs" in prediction:
            ious = step_ious(question, prediction["program_outputs"])
            if ious is None:
                mismatched_steps.append(question_id)
            else:
                row["step_iou"] = mean_or_none(iou for _, iou in ious)
                add_function_ious(row, ious, function_totals)

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
    for reason, ids in unsized.items():
        problems.append(
            f"{len(ids)} question{'s have' if len(ids) != 1 else ' has'} no object size, as {reason}: "
            f"question_id {describe_ids(ids)}"
        )
    question_types = sorted({row["question_type"] for row in rows})
    question_ious = [row["step_iou"] for row in rows if row["step_iou"] is not None]
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
        "by_question_length": {
            key: group_summary(group)
            for key, group in split_by(rows, "length_bucket", [key for key, _ in LENGTH_BUCKETS]).items()
        },
        "by_functions": {
            key: group_summary(group)
            for key, group in split_by(rows, "functions_bucket", [key for key, _ in FUNCTION_BUCKETS]).items()
        },
        "by_object_size": {
            key: group_summary(group) for key, group in split_by(rows, "size_bucket", SIZE_BUCKETS).items()
        },
        "recognition": group_summary([row for row in rows if row["recognition_step"]]),
        "step_iou": {"count": len(question_ious), "mean": mean_or_none(question_ious)},
        "by_function": {
            name: {"count": steps, "questions": questions, "set_iou": total / steps}
            for name, (total, steps, questions) in sorted(
                function_totals.items(), key=lambda entry: function_order(entry[0])
            )
        },
        "missing_predictions": len(missing),
        "extra_predictions": len(extra),
    }
    return Scored(items=rows, summary=summary, params=params, problems=problems)


def add_function_ious(
    row: dict[str, Any], ious: Sequence[tuple[str, float]], function_totals: dict[str, list]
) -> None:
    """Put each function's mean set IoU over the question's steps in its row, and add its steps to
    the totals (function -> [sum of set IoU, steps, questions])."""
    by_function: dict[str, list[float]] = {}
    for function, iou in ious:
        by_function.setdefault(function, []).append(iou)
    for function, values in by_function.items():
        total = sum(values)
        row[function_iou_key(function)] = total / len(values)
        totals = function_totals.setdefault(function, [0.0, 0, 0])
        totals[0] += total
        totals[1] += len(values)
        totals[2] += 1


def function_order(function: str) -> tuple[int, str]:
    """The paper's order of the functions; names it does not list after them, alphabetically."""
    return (
        (FUNCTION_NAMES.index(function), "")
        if function in FUNCTION_NAMES
        else (len(FUNCTION_NAMES), function)
    )


def score_file(
    questions_data: bytes | IO[bytes],
    predictions_data: bytes | IO[bytes],
    *,
    scenes_data: bytes | IO[bytes] | None = None,
    questions_source: str = "questions",
    predictions_source: str = "predictions",
    scenes_source: str = "scene graphs",
) -> Scored:
    """Score a prediction file against an official question file (raw JSON bytes, or files open
    for reading: then both are read a record at a time and memory holds the predictions and one
    row per question, never the question file), with the scene-graph file where it is given (for
    the object sizes; read the same way, memory keeping only each object's relative area).

    The questions and scene graphs are read and checked by the CRIC format module.
    """
    with paused_gc():
        predictions = parse_predictions(predictions_data, source=predictions_source)
        sizes = None
        if scenes_data is not None:
            labelled = (
                indexed(load_json_list(scenes_data, source=scenes_source, what="scene graphs"))
                if isinstance(scenes_data, bytes | bytearray)
                else stream_json_list(scenes_data, source=scenes_source, what="scene graphs")
            )
            sizes = read_object_sizes(labelled, source=scenes_source)
        prepared = (
            formats.prepare(questions_data, source=questions_source)
            if isinstance(questions_data, bytes | bytearray)
            else formats.prepare_stream(questions_data, source=questions_source)
        )
        questions = iter_official(prepared, formats.to_official, source=questions_source)
        return score_checked(questions, predictions, sizes)
