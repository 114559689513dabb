"""Prediction files: reading and checking one (`parse_predictions`, or `read_packed_predictions`
with each answer packed in a few bytes), each sample's answer, and the problems reported for
samples without a prediction and predictions for unknown idx."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import itemgetter
from typing import IO, Any

import orjson

from benchmarks.records import (
    FormatError,
    RecordError,
    RecordErrors,
    load_json,
    stream_json_object,
    type_name,
)
from evaluation.metrics.scored import describe_ids
from plugins.trance.formats import FINAL_CAMERAS, OBJECTS_PER_STATE
from plugins.trance.metric.encoding import PAIRS, Sample, Step, answer_problems, canonical_step, step_code

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
    return read_predictions(data, kept_steps, source=source)


def kept_steps(answer: list[Any]) -> list[Step] | None:
    """The steps of an answer as `parse_predictions` keeps them (other keys of a step dropped),
    or None when a step is not well-formed (`step_code`)."""
    if not all(step_code(step) is not None for step in answer):
        return None
    return [step if len(step) == 3 else canonical_step(step) for step in answer]


class PackedPredictions(dict[int, bytes | dict[str, bytes]]):
    """idx -> the answer packed as two bytes per step, (object index, pair code), or a packed
    answer per camera: a few dozen bytes an answer where its parsed steps take hundreds
    (`read_packed_predictions`)."""


def pack_answer(answer: Sequence[Step]) -> bytes | None:
    """Two bytes per step, (object index, pair code); None when a step is not well-formed
    (`step_code`). Each step's code is found once: checking the steps and packing them are the
    same pass, the most of the time a prediction file takes to read after its parse."""
    codes = list(map(step_code, answer))
    if None in codes:
        return None
    return bytes(itertools.chain.from_iterable(zip(map(_step_object, answer), codes, strict=True)))


_step_object = itemgetter("obj_idx")


def read_packed_predictions(data: bytes | IO[bytes], *, source: str = "") -> PackedPredictions:
    """`parse_predictions` (the same checks and errors), each answer packed (`PackedPredictions`);
    an open file is read a chunk of entries at a time, so the parsed document is never whole in
    memory either."""
    return PackedPredictions(read_predictions(data, pack_answer, source=source, keep_all=pack_answers))


#: Each well-formed step's JSON, as orjson writes its (obj_idx, attr, val), to the step packed.
_PACKED_STEPS = {
    orjson.dumps((obj_idx, attr, value)): bytes((obj_idx, code))
    for code, (attr, value) in enumerate(PAIRS)
    for obj_idx in range(OBJECTS_PER_STATE)
}
_step_action = itemgetter(*orjson.loads(b'{"obj_idx": 0, "attr": 0, "val": 0}'))


def pack_answers(answers: Sequence[list[Any]]) -> list[bytes] | None:
    """`pack_answer` of each answer (lists of parsed JSON steps), or None when a step is not
    well-formed. Each step is looked up by the JSON of its three fields: orjson writes that the
    same way for every well-formed step of the same object index, attribute and value (and for
    no other), so the steps of many answers are packed by a few calls, none per step in Python."""
    try:
        packed = b"".join(
            map(
                _PACKED_STEPS.__getitem__,
                map(orjson.dumps, map(_step_action, itertools.chain.from_iterable(answers))),
            )
        )
    except (KeyError, TypeError):  # an unknown step, a missing field, a step not an object
        return None
    bounds = list(itertools.accumulate(map(len, answers), initial=0))
    return [packed[2 * start : 2 * stop] for start, stop in itertools.pairwise(bounds)]


#: Entries of a prediction file read at a time by the quick path of `read_predictions`.
ENTRIES_AT_ONCE = 1024


def read_predictions(
    data: bytes | IO[bytes],
    keep: Callable[[list[Any]], Any],
    *,
    source: str = "",
    keep_all: Callable[[Sequence[list[Any]]], list[Any] | None] | None = None,
) -> dict[int, Any]:
    """The checked answers of a prediction file, each as `keep` makes it of its steps. `keep`
    returns None when a step is not well-formed, and the answer's problems are then named (it
    checks as it keeps, so that the common, well-formed answer is walked once). `keep_all`, if
    given, does what `keep` does for many answers at once (None when any is not well-formed):
    entries are then taken ENTRIES_AT_ONCE at a time, and only a run of them with anything to
    report (a key that is not a new sample idx, an answer that is not a well-formed list) is
    read one entry at a time."""
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
    if keep_all is None:
        for key, answer in entries:
            read_entry(key, answer, keep, predictions, keys, errors)
    else:
        iterator = iter(entries)
        while part := list(itertools.islice(iterator, ENTRIES_AT_ONCE)):
            if (kept_part := kept_entries(part, keys, keep_all)) is not None:
                predictions.update(kept_part)
                continue
            for key, answer in part:
                read_entry(key, answer, keep, predictions, keys, errors)
    if errors:
        raise FormatError(errors, source=source)
    return predictions


def kept_entries(
    part: list[tuple[str, Any]],
    keys: dict[int, str],
    keep_all: Callable[[Sequence[list[Any]]], list[Any] | None],
) -> Iterable[tuple[int, Any]] | None:
    """The (idx, kept answer) of entries whose every key is a new sample idx and every answer a
    list that `keep_all` keeps (their keys noted in `keys`), or None."""
    names = [key for key, _ in part]
    answers = [answer for _, answer in part]
    if not all(map(_INTEGER_KEY.fullmatch, names)) or set(map(type, answers)) != {list}:
        return None
    idxs = list(map(int, names))
    if len(set(idxs)) != len(idxs) or not keys.keys().isdisjoint(idxs):
        return None
    kept = keep_all(answers)
    if kept is None:
        return None
    keys.update(zip(idxs, names, strict=True))
    return zip(idxs, kept, strict=True)


def read_entry(
    key: str,
    answer: Any,
    keep: Callable[[list[Any]], Any],
    predictions: dict[int, Any],
    keys: dict[int, str],
    errors: RecordErrors,
) -> None:
    """One entry of a prediction file, checked: kept in `predictions`, or its faults noted."""
    label = f"idx {key}"
    if not _INTEGER_KEY.fullmatch(key):
        errors.append(RecordError(label, "idx", f"expected a sample idx (an integer), got {key!r}"))
        return
    idx = int(key)
    if idx in keys:
        errors.append(RecordError(label, "idx", f"the same sample as key {keys[idx]!r}"))
        return
    keys[idx] = key
    if type(answer) is list and (kept := keep(answer)) is not None:
        predictions[idx] = kept
        return
    problems = answer_form_problems(label, answer)
    if problems:
        errors.extend(problems)
    else:
        predictions[idx] = {camera: keep(steps) for camera, steps in answer.items()}


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
