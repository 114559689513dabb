"""TRANCE steps and states as numbers: the codes of the 33 (attribute, value) pairs, the checks
of a step (`step_code`, `answer_problems`), and states and answers as numpy arrays
(`encode_states`, `encode_answers`, `decode_states`), on which the replay works."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np

from benchmarks.records import FormatError, RecordChecker, RecordErrors, type_name
from plugins.clevr.world import RADII
from plugins.trance.formats import ATTRIBUTE_VALUES, OBJECT_FIELDS, OBJECTS_PER_STATE, check_step_action
from plugins.trance.simulator import all_moves, move_delta

Step = dict[str, Any]
Sample = Mapping[str, Any]

#: The four attributes stored as codes (index into ATTRIBUTE_VALUES[attr]); position is apart.
CATEGORY_FIELDS: tuple[str, ...] = tuple(field for field in OBJECT_FIELDS if field != "position")
SIZE_COLUMN = CATEGORY_FIELDS.index("size")
#: A step's column: 0..3 for CATEGORY_FIELDS, this for a move.
POSITION_COLUMN = len(CATEGORY_FIELDS)
#: Radius of each size code, from the simulator's world.
RADIUS_BY_SIZE = np.array([RADII[size] for size in ATTRIBUTE_VALUES["size"]], dtype=np.float64)

#: The 33 (attribute, value) pairs; a step is encoded as (object index, pair code).
PAIRS: tuple[tuple[str, Any], ...] = (
    *((attr, value) for attr in CATEGORY_FIELDS for value in ATTRIBUTE_VALUES[attr]),
    *(("position", move) for move in all_moves()),
)


def pair_key(attr: Any, value: Any) -> tuple[Any, ...]:
    """The hashable key of an (attribute, value) pair: moves as ("position", direction, n)."""
    if attr == "position":
        direction, steps = value
        return ("position", direction, steps)
    return (attr, value)


PAIR_CODES: dict[tuple[Any, ...], int] = {
    pair_key(attr, value): code for code, (attr, value) in enumerate(PAIRS)
}
#: Per pair code: the column it changes, the new value code (categories), the move in x and y.
PAIR_COLUMN = np.array(
    [POSITION_COLUMN if attr == "position" else CATEGORY_FIELDS.index(attr) for attr, _ in PAIRS],
    dtype=np.int64,
)
PAIR_VALUE = np.array(
    [0 if attr == "position" else ATTRIBUTE_VALUES[attr].index(value) for attr, value in PAIRS], dtype=np.int8
)
PAIR_MOVE_X, PAIR_MOVE_Y = (
    np.array(axis, dtype=np.int64)
    for axis in zip(
        *(move_delta(value) if attr == "position" else (0, 0) for attr, value in PAIRS), strict=True
    )
)

#: Every (color, material, shape, size) combination -> its row in OBJECT_KIND_CODES.
OBJECT_KINDS: dict[tuple[str, ...], int] = {
    kind: number
    for number, kind in enumerate(itertools.product(*(ATTRIBUTE_VALUES[attr] for attr in CATEGORY_FIELDS)))
}
OBJECT_KIND_CODES = np.array(
    [
        [ATTRIBUTE_VALUES[attr].index(value) for attr, value in zip(CATEGORY_FIELDS, kind, strict=True)]
        for kind in OBJECT_KINDS
    ],
    dtype=np.int8,
)
_object_kind = itemgetter(*CATEGORY_FIELDS)
_object_position = itemgetter("position")


def step_code(step: Any) -> int | None:
    """The pair code of a well-formed step, or None when anything about it is wrong.

    Well-formed: an object with an integer ``obj_idx`` in 0..9 (true/false are not integers),
    a known ``attr`` and a known ``val`` (a move as ``[direction, 1 or 2]``, list or tuple).
    This is the fast check; `answer_problems` says what is wrong, field by field.
    """
    if not isinstance(step, dict):
        return None
    try:
        index, attr, value = step["obj_idx"], step["attr"], step["val"]
    except KeyError:
        return None
    if type(index) is not int or not 0 <= index < OBJECTS_PER_STATE:
        return None
    try:
        if attr == "position":
            if type(value) not in (list, tuple) or len(value) != 2 or type(value[1]) is not int:
                return None
            return PAIR_CODES.get(("position", value[0], value[1]))
        if type(value) is not str:
            return None
        return PAIR_CODES.get((attr, value))
    except TypeError:  # an unhashable attribute or direction
        return None


def answer_problems(label: str, answer: Any) -> RecordErrors:
    """Every problem of one answer (a list of steps), each naming ``[i].field``."""
    errors = RecordErrors()
    checker = RecordChecker(errors, label)
    if not isinstance(answer, list):
        checker.fail("steps", f"expected a list of steps, got {type_name(answer)}")
        return errors
    for number, step in enumerate(answer):
        path = f"[{number}]"
        if not isinstance(step, dict):
            checker.fail(path, f"expected a step object, got {type_name(step)}")
            continue
        check_step_action(checker, step, path)
    return errors


def canonical_step(step: Step) -> Step:
    """A well-formed step reduced to its three fields, a move's value as a list."""
    attr, value = step["attr"], step["val"]
    return {"obj_idx": step["obj_idx"], "attr": attr, "val": list(value) if attr == "position" else value}


@dataclass(slots=True)
class EncodedStates:
    """N states of 10 objects: `categories` (N, 10, 4) codes of CATEGORY_FIELDS, and the
    positions as `x` and `y` (N, 10) integers (two arrays: reductions over an axis of 2 are slow)."""

    categories: np.ndarray
    x: np.ndarray
    y: np.ndarray

    def take(self, rows: np.ndarray) -> EncodedStates:
        return EncodedStates(self.categories[rows], self.x[rows], self.y[rows])

    def copy(self) -> EncodedStates:
        return EncodedStates(self.categories.copy(), self.x.copy(), self.y.copy())


@dataclass(slots=True)
class EncodedAnswers:
    """N answers, ragged: answer i is steps ``starts[i] : starts[i] + lengths[i]`` of the flat
    arrays ``objects`` (object index) and ``codes`` (pair code)."""

    lengths: np.ndarray
    starts: np.ndarray
    objects: np.ndarray
    codes: np.ndarray

    @classmethod
    def from_packed(cls, packed: Sequence[bytes]) -> EncodedAnswers:
        """From answers packed as `pack_answer` does."""
        lengths = np.fromiter(map(len, packed), dtype=np.int64, count=len(packed)) // 2
        flat = np.frombuffer(b"".join(packed), dtype=np.uint8).reshape(-1, 2).astype(np.int64)
        return cls.from_flat(lengths, np.ascontiguousarray(flat[:, 0]), np.ascontiguousarray(flat[:, 1]))

    @classmethod
    def from_flat(cls, lengths: np.ndarray, objects: np.ndarray, codes: np.ndarray) -> EncodedAnswers:
        starts = np.zeros(len(lengths), dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        return cls(lengths.astype(np.int64), starts, objects, codes)


def encode_states(states: Sequence[Sequence[Mapping[str, Any]]], labels: Sequence[str]) -> EncodedStates:
    """States in the official format as arrays; ValueError naming the state when one is not
    10 objects with known values and integer positions.

    The loops run inside C (map, itemgetter, fromiter): reading the objects out of their dicts
    is most of the scoring time.
    """
    count = len(states)
    objects = list(itertools.chain.from_iterable(states))
    if len(objects) != count * OBJECTS_PER_STATE:
        raise ValueError(describe_bad_state(states, labels))
    if not objects:
        empty = np.zeros((0, OBJECTS_PER_STATE), dtype=np.int64)
        return EncodedStates(
            np.zeros((0, OBJECTS_PER_STATE, len(CATEGORY_FIELDS)), dtype=np.int8), empty, empty
        )
    try:
        kinds = np.fromiter(
            map(OBJECT_KINDS.__getitem__, map(_object_kind, objects)), dtype=np.int64, count=len(objects)
        )
        positions = list(map(_object_position, objects))
        lengths = set(map(len, positions))
        coordinates = np.array(list(itertools.chain.from_iterable(positions)))
    except (KeyError, TypeError):
        raise ValueError(describe_bad_state(states, labels)) from None
    if lengths != {2} or coordinates.dtype.kind != "i":
        raise ValueError(describe_bad_state(states, labels))
    categories = OBJECT_KIND_CODES[kinds].reshape(count, OBJECTS_PER_STATE, len(CATEGORY_FIELDS))
    coordinates = coordinates.astype(np.int64, copy=False).reshape(count, OBJECTS_PER_STATE, 2)
    return EncodedStates(
        categories, np.ascontiguousarray(coordinates[..., 0]), np.ascontiguousarray(coordinates[..., 1])
    )


def describe_bad_state(states: Sequence[Sequence[Mapping[str, Any]]], labels: Sequence[str]) -> str:
    """What is wrong with the first bad state (the slow path of encode_states)."""
    for objects, label in zip(states, labels, strict=True):
        if len(objects) != OBJECTS_PER_STATE:
            return f"{label}: expected {OBJECTS_PER_STATE} objects, got {len(objects)}"
        for number, obj in enumerate(objects):
            where = f"{label}: objects[{number}]"
            if not isinstance(obj, Mapping):
                return f"{where}: expected an object, got {type_name(obj)}"
            for attr in CATEGORY_FIELDS:
                if obj.get(attr) not in ATTRIBUTE_VALUES[attr]:
                    return f"{where}.{attr}: unknown value {obj.get(attr)!r}"
            position = obj.get("position")
            if (
                not isinstance(position, list | tuple)
                or len(position) != 2
                or any(type(coordinate) is not int for coordinate in position)
            ):
                return f"{where}.position: expected [x, y] integers, got {position!r}"
    return "bad states"


def encode_answers(answers: Sequence[Sequence[Step]], labels: Sequence[str]) -> EncodedAnswers:
    """Answers as ragged arrays; FormatError listing every bad step of every answer."""
    steps = list(itertools.chain.from_iterable(answers))
    codes = list(map(step_code, steps))
    if None in codes:
        errors = RecordErrors()
        for answer, label in zip(answers, labels, strict=True):
            if any(step_code(step) is None for step in answer):
                errors.extend(answer_problems(label, list(answer)))
        raise FormatError(errors)
    lengths = np.fromiter(map(len, answers), dtype=np.int64, count=len(answers))
    objects = np.fromiter(map(_step_object, steps), dtype=np.int64, count=len(steps))
    return EncodedAnswers.from_flat(lengths, objects, np.array(codes, dtype=np.int64))


_step_object = itemgetter("obj_idx")


def decode_states(states: EncodedStates) -> list[list[dict[str, Any]]]:
    """Arrays back to official objects (for tests and debugging)."""
    decoded = []
    for categories, xs, ys in zip(
        states.categories.tolist(), states.x.tolist(), states.y.tolist(), strict=True
    ):
        decoded.append(
            [
                {
                    **{
                        attr: ATTRIBUTE_VALUES[attr][code]
                        for attr, code in zip(CATEGORY_FIELDS, codes, strict=True)
                    },
                    "position": [x, y],
                }
                for codes, x, y in zip(categories, xs, ys, strict=True)
            ]
        )
    return decoded
