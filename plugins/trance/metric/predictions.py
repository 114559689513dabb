"""Prediction files: reading and checking one (`parse_predictions`, or `read_packed_predictions`
with each answer packed in a few bytes), each sample's answer, and the problems reported for
samples without a prediction and predictions for unknown idx."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import IO, Any

from benchmarks.records import (
    FormatError,
    RecordError,
    RecordErrors,
    load_json,
    stream_json_object,
    type_name,
)
from evaluation.metrics.scored import describe_ids
from plugins.trance.formats import FINAL_CAMERAS
from plugins.trance.metric.encoding import Sample, Step, answer_problems, canonical_step, step_code

_INTEGER_KEY = re.compile(r"-?[0-9]+")
#: A sample's answer: its steps (the same for every final camera), or an answer per final camera.
Answer = list[Step] | dict[str, list[Step]]
STEP_FIELDS = frozenset(("obj_idx", "attr", "val"))
ANSWER_PER_CAMERA_IN_VIEW_ONLY = (
    "an answer per final camera is for the View setting only: give one list of steps"
)


def parse_predictions(data: bytes | IO[bytes], *, source: str = "") -> dict[int, Answer]:
    """Read a prediction file: a JSON object from sample idx to its answer.

    An answer is a list of predicted steps, the same answer for every final camera
    (``{"0": [{"obj_idx": 2, "attr": "color", "val": "cyan"}], "1": []}``), or, for View, an
    object from final camera to its list of steps, one answer per camera
    (``{"0": {"Camera_Left": [...], "Camera_Center": [...], "Camera_Right": [...]}}``; a camera
    left out has no answer). Keys are the samples' idx written as JSON strings; other keys of a
    step (``options``, ``type``) are ignored and dropped. Any fault (not JSON, not an object, a
    key that is not an integer or names the same sample as another, an answer that is neither a
    list nor an object of cameras, an unknown camera, a step that is not an object, a missing
    field, an object index outside 0..9, an unknown attribute or value) raises one FormatError
    listing every problem, each as RecordError(record="idx KEY", field="[i].val" or
    "Camera_Left[i].val", ...). A sample with no key is not an error: scoring treats it as an
    empty answer.
    """
    return read_predictions(
        data,
        lambda answer: [step if len(step) == 3 else canonical_step(step) for step in answer],
        source=source,
    )


class PackedPredictions(dict[int, bytes | dict[str, bytes]]):
    """idx -> the answer packed as two bytes per step, (object index, pair code), or a packed
    answer per camera: a few dozen bytes an answer where its parsed steps take hundreds
    (`read_packed_predictions`)."""


def pack_answer(answer: Sequence[Step]) -> bytes:
    return bytes(itertools.chain.from_iterable((step["obj_idx"], step_code(step)) for step in answer))


def read_packed_predictions(data: bytes | IO[bytes], *, source: str = "") -> PackedPredictions:
    """`parse_predictions` (the same checks and errors), each answer packed (`PackedPredictions`);
    an open file is read a chunk of entries at a time, so the parsed document is never whole in
    memory either."""
    return PackedPredictions(read_predictions(data, pack_answer, source=source))


def read_predictions(
    data: bytes | IO[bytes], keep: Callable[[list[Step]], Any], *, source: str = ""
) -> dict[int, Any]:
    """The checked answers of a prediction file, each as `keep` makes it of its well-formed steps."""
    if isinstance(data, bytes | bytearray):
        document = load_json(data, source=source)
        if not isinstance(document, dict):
            raise FormatError(
                [
                    RecordError(
                        "file",
                        "top level",
                        f"expected an object mapping sample idx to a list of steps, got {type_name(document)}",
                    )
                ],
                source=source,
            )
        entries: Iterable[tuple[str, Any]] = document.items()
    else:
        entries = stream_json_object(data, source=source, what="sample idx mapped to lists of steps")
    predictions: dict[int, Any] = {}
    keys: dict[int, str] = {}
    errors = RecordErrors()
    for key, answer in entries:
        label = f"idx {key}"
        if not _INTEGER_KEY.fullmatch(key):
            errors.append(RecordError(label, "idx", f"expected a sample idx (an integer), got {key!r}"))
            continue
        idx = int(key)
        if idx in keys:
            errors.append(RecordError(label, "idx", f"the same sample as key {keys[idx]!r}"))
            continue
        keys[idx] = key
        if type(answer) is list and all(step_code(step) is not None for step in answer):
            predictions[idx] = keep(answer)
            continue
        problems = answer_form_problems(label, answer)
        if problems:
            errors.extend(problems)
        else:
            predictions[idx] = {camera: keep(steps) for camera, steps in answer.items()}
    if errors:
        raise FormatError(errors, source=source)
    return predictions


def is_step(value: Any) -> bool:
    """Whether an object looks like one step (a step not wrapped in a list), not a camera map."""
    return isinstance(value, dict) and bool(STEP_FIELDS & value.keys())


def answer_form_problems(label: str, answer: Any) -> RecordErrors:
    """Every problem of one answer in either form: a list of steps (fields ``[i].val``), or an
    object from final camera to a list of steps (an unknown camera names the key; a step's
    fields are ``Camera_Left[i].val``)."""
    if not isinstance(answer, dict) or is_step(answer):
        if isinstance(answer, dict):
            return RecordErrors(
                [
                    RecordError(
                        label,
                        "steps",
                        "expected a list of steps, or an object from final camera to a list of steps; "
                        "got one step (put it in a list)",
                    )
                ]
            )
        return answer_problems(label, answer)
    errors = RecordErrors()
    for camera, steps in answer.items():
        if camera not in FINAL_CAMERAS:
            errors.append(
                RecordError(
                    label, str(camera), f"unknown camera {camera!r} (expected {', '.join(FINAL_CAMERAS)})"
                )
            )
            continue
        if type(steps) is list and all(step_code(step) is not None for step in steps):
            continue
        for error in answer_problems(label, steps):
            field = camera if error.field == "steps" else f"{camera}{error.field}"
            errors.append(RecordError(error.record, field, error.message))
    return errors


def answer_for_camera(answer: Any, camera: str | None) -> Any:
    """The steps one unit is answered with: the answer itself (a list, or packed bytes), or its
    camera's entry of a per-camera answer (None when that camera has none)."""
    if isinstance(answer, dict):
        return answer.get(camera)
    return answer


def answers_for(
    samples: Sequence[Sample], predictions: Mapping[int, Sequence[Step]]
) -> tuple[list[Sequence[Step]], list[Any], list[Any]]:
    """Each sample's answer (empty when missing), the idx without one, the unknown idx predicted."""
    idxs = [sample["idx"] for sample in samples]
    known = set(idxs)
    if len(known) != len(idxs):
        seen: set[Any] = set()
        for idx in idxs:
            if idx in seen:
                raise ValueError(f"idx {idx}: the samples hold this idx twice")
            seen.add(idx)
    answers = [predictions.get(idx, ()) for idx in idxs]
    missing = [idx for idx in idxs if idx not in predictions]
    extra = [idx for idx in predictions if idx not in known]
    return answers, missing, extra


def prediction_problems(missing: list[Any], extra: list[Any], empty_means: str) -> list[str]:
    problems = []
    if missing:
        problems.append(
            f"{len(missing)} sample{'s have' if len(missing) != 1 else ' has'} no prediction and "
            f"{'are' if len(missing) != 1 else 'is'} scored as an empty answer ({empty_means}): "
            f"idx {describe_ids(missing, 20)}"
        )
    if extra:
        problems.append(
            f"{len(extra)} prediction{'s are' if len(extra) != 1 else ' is'} for idx not in the ground truth "
            f"and {'were' if len(extra) != 1 else 'was'} ignored: idx {describe_ids(extra, 20)}"
        )
    return problems
