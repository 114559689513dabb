"""TRANCE metrics: Basic (ObjAcc, AttrAcc, ValAcc, Acc) and Event / View (AD, AND, LAcc, Acc, EO).

Pure, no Django. Definitions follow the released TRANCE evaluator (hughplay/TVR,
``EventEvaluator``), as ../shared/FORMATS.md spells it out; docs/metrics-trance.md has worked
examples. An answer is a list of steps ``{"obj_idx", "attr", "val"}``; a prediction file is a
JSON object from sample idx (as a string key) to its answer.

Basic (one true step t with its ``options``; p = the answer's first step)::

    obj_correct  = p.obj_idx == t.obj_idx
    attr_correct = p.attr == t.attr                      (whatever the object)
    pair_correct = [p.attr, p.val] is one of t's options (any listed out-move counts)
    correct      = obj_correct and pair_correct
    ObjAcc, AttrAcc, ValAcc, Acc = the means of the four over the samples

An empty answer is wrong on all four. Later steps of a Basic answer are ignored (the released
models answer exactly one step). A true step without ``options`` has its own value as only
option, as in the released vectoriser.

Event and View (true steps T, predicted steps P, initial state S0, true final state S*)::

    S        = P applied in order to a copy of S0 (an empty answer leaves S0 as it is)
    dist     = sum over the 10 objects and the 5 attributes of [S and S* differ]
    norm_dist = float32(dist) / float32(len(T))          (the released code divides in float32)
    loose_correct = dist == 0;  correct = loose_correct and no overlap and no invalid position
    AD = mean dist;  AND = mean norm_dist;  LAcc = mean loose_correct;  Acc = mean correct
    EO = (LAcc_o - Acc_o) / LAcc_o over the order-sensitive samples o only

with these rules, each as the released evaluator has it:

* Positions compare equal when equal, or when the true final position is invisible (on the
  plane, outside the visible area) and the predicted one is invisible too; a predicted position
  off the plane [-40, 40] never compares equal. Every object counts, moved or not.
* After a position or size step (never colour, material or shape), the moved object, and only
  it, is checked against the nine others, wherever they are: an overlap error when
  ``distance + 1e-4 < r_i + r_j + 1``. Overlaps between other objects, present from the start,
  are never reported. After a position step, a moved object outside [-40, 40] (bounds
  included) raises an invalid-position error; later steps carry on from there, so moving out of
  the plane and back is loose-correct but not correct.
* pred_step counts every predicted step (duplicates and no-ops too); target_step = len(T).
  ``options`` play no part.
* Order-sensitive sample: some ordering of the TRUE steps raises an overlap or invalid-position
  error while every ordering still reaches S* (dist 0). EO is None when no order-sensitive sample
  is loose-correct (no such sample, or LAcc_o = 0): the ratio is undefined there.
* View reports everything again per final camera (``by_camera``); the camera is the one the
  final state was shown from. Both settings report per true length (``by_length``, 1 to 4).

Summaries are exact means in float64 over per-item values (AND over the float32 per-item
values); the released code sums float32 per batch, so its AND can differ in the last digits.
A sample without a prediction is scored as an empty answer and listed in ``Scored.problems``;
predictions for unknown idx are listed there too and ignored.

Speed: the released evaluator replays each answer through torch, one sample at a time. Here
states are arrays (N samples, 10 objects) and step k of every answer is applied at once
(`replay_answers`): 60,000 View answers score in 2 to 2.5 s on one core, about half of it
spent reading the objects out of their dicts (perf/results/score_trance.md). The rules are
those of plugins.trance.simulator, with its constants (`move_delta`, radii, tolerance,
bounds); tests/evaluation/test_trance_metrics.py checks, on thousands of random cases, that the
arrays give exactly the simulator's states, errors and distances. One subtlety, checked there
exhaustively too: the overlap test takes ``sqrt(dx^2 + dy^2)`` where the simulator takes
``math.hypot(dx, dy)``. Both are within an ulp of the true distance d, and with integer
coordinates and integer reaches R (5 to 13) either d >= R, 1e-4 above the threshold
``R - 1e-4``, or d <= sqrt(R^2 - 1) < R - 0.038: never within an ulp of it, so the two agree.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import IO, Any

import numpy as np

from benchmarks.records import (
    FormatError,
    RecordChecker,
    RecordError,
    RecordErrors,
    load_json,
    paused_gc,
    stream_json_object,
    type_name,
)
from evaluation.metrics.scored import Scored, describe_ids
from plugins.clevr.world import GRID_MAX, GRID_MIN, MIN_GAP, RADII, VISIBLE_MAX, VISIBLE_MIN
from plugins.trance import formats
from plugins.trance.formats import (
    ATTRIBUTE_VALUES,
    BASIC,
    EVENT,
    FINAL_CAMERAS,
    MAX_STEPS,
    MIN_STEPS,
    OBJECT_FIELDS,
    OBJECTS_PER_STATE,
    SETTINGS,
    VIEW,
    check_step_action,
)
from plugins.trance.simulator import OVERLAP_TOLERANCE, all_moves, move_delta

METRIC = "TRANCE"
#: Bump when a change to this module can change a number.
METRIC_VERSION = "1"
VARIANT = "official"

#: True lengths reported in ``by_length`` even when no sample has them.
LENGTHS = (1, 2, 3, 4)

Step = dict[str, Any]
Sample = Mapping[str, Any]

# --- Encoding ------------------------------------------------------------------------------------

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


# --- Replaying -----------------------------------------------------------------------------------


@dataclass(slots=True)
class Replayed:
    """States after replaying answers, and whether each answer raised either error."""

    states: EncodedStates
    overlap: np.ndarray
    invalid_position: np.ndarray


def on_plane(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Inside [-40, 40] on both axes, bounds included."""
    return (x >= GRID_MIN) & (x <= GRID_MAX) & (y >= GRID_MIN) & (y <= GRID_MAX)


def visible(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Inside the visible area [-20, 20] on both axes, bounds included."""
    return (x >= VISIBLE_MIN) & (x <= VISIBLE_MAX) & (y >= VISIBLE_MIN) & (y <= VISIBLE_MAX)


def invisible(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """On the plane but not visible: where out-moves land."""
    return on_plane(x, y) & ~visible(x, y)


def moved_object_overlaps(states: EncodedStates, rows: np.ndarray, subjects: np.ndarray) -> np.ndarray:
    """For each (row, subject object): does the subject overlap any of the nine other objects?

    The simulator's `overlaps_any`: ``distance + 1e-4 < r_i + r_j + 1`` against every other
    object, wherever it stands.
    """
    within = np.arange(len(rows))
    x, y = states.x[rows], states.y[rows]
    offset_x = x - x[within, subjects][:, None]
    offset_y = y - y[within, subjects][:, None]
    distances = np.sqrt(offset_x * offset_x + offset_y * offset_y)
    radii = RADIUS_BY_SIZE[states.categories[rows, :, SIZE_COLUMN]]
    reach = radii + radii[within, subjects][:, None] + MIN_GAP
    hits = distances + OVERLAP_TOLERANCE < reach
    hits[within, subjects] = False
    return hits.any(axis=1)


def apply_step_batch(
    states: EncodedStates, rows: np.ndarray, subjects: np.ndarray, codes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Apply one step to each of `rows` of `states`, in place: object `subjects[i]` of row
    `rows[i]` takes pair `codes[i]`. Returns, per row, whether the step raised an overlap error
    and whether it raised an invalid-position error (the simulator's `apply_step`)."""
    columns = PAIR_COLUMN[codes]
    moves = columns == POSITION_COLUMN

    changes = ~moves
    states.categories[rows[changes], subjects[changes], columns[changes]] = PAIR_VALUE[codes[changes]]

    moved_rows, moved_subjects, move_codes = rows[moves], subjects[moves], codes[moves]
    new_x = states.x[moved_rows, moved_subjects] + PAIR_MOVE_X[move_codes]
    new_y = states.y[moved_rows, moved_subjects] + PAIR_MOVE_Y[move_codes]
    states.x[moved_rows, moved_subjects] = new_x
    states.y[moved_rows, moved_subjects] = new_y
    invalid_position = np.zeros(len(rows), dtype=bool)
    invalid_position[moves] = ~on_plane(new_x, new_y)

    geometric = moves | (columns == SIZE_COLUMN)
    overlap = np.zeros(len(rows), dtype=bool)
    overlap[geometric] = moved_object_overlaps(states, rows[geometric], subjects[geometric])
    return overlap, invalid_position


def replay_answers(initial: EncodedStates, answers: EncodedAnswers) -> Replayed:
    """Apply every answer to its own copy of its initial state, step k of all answers at once.

    Equal, answer by answer, to the simulator's ``apply_steps`` (see the module docstring).
    """
    states = initial.copy()
    count = len(answers.lengths)
    overlap = np.zeros(count, dtype=bool)
    invalid_position = np.zeros(count, dtype=bool)
    # Rows by decreasing length: the answers that still have a step k are a prefix.
    order = np.argsort(-answers.lengths, kind="stable")
    sorted_lengths = answers.lengths[order]
    longest = int(sorted_lengths[0]) if count else 0
    for k in range(longest):
        rows = order[: np.searchsorted(-sorted_lengths, -k, side="left")]
        flat = answers.starts[rows] + k
        step_overlap, step_invalid = apply_step_batch(
            states, rows, answers.objects[flat], answers.codes[flat]
        )
        overlap[rows[step_overlap]] = True
        invalid_position[rows[step_invalid]] = True
    return Replayed(states, overlap, invalid_position)


def state_distances(predicted: EncodedStates, true: EncodedStates) -> np.ndarray:
    """The released distance per state pair: differing (object, attribute) pairs over all 10
    objects, positions compared as the simulator's `positions_match` does."""
    category_differences = (predicted.categories != true.categories).sum(axis=(1, 2))
    same = (predicted.x == true.x) & (predicted.y == true.y)
    matches = same | (invisible(true.x, true.y) & invisible(predicted.x, predicted.y))
    return category_differences + (~matches).sum(axis=1)


def order_sensitive(initial: EncodedStates, final: EncodedStates, truth: EncodedAnswers) -> np.ndarray:
    """The released rule, per sample: some ordering of the true steps raises an overlap or an
    invalid-position error, while every ordering reaches the true final state (distance 0).

    Every ordering of the L true steps is tried (L! of them, 24 at most) for all samples of the
    same length at once, walking the tree of orderings so that a shared prefix is applied once
    (64 step applications for L = 4 instead of 96).

    One shortcut, from the rules: only position and size steps can raise an error, and what they
    raise depends only on positions and sizes, which only position and size steps change. So
    when the truth has at most one such step, every ordering raises exactly what the true order
    raises; if that is nothing, no ordering errs and the sample is not order-sensitive without
    trying the orderings.
    """
    count = len(truth.lengths)
    true_order = replay_answers(initial, truth)
    geometric = np.isin(PAIR_COLUMN[truth.codes], (POSITION_COLUMN, SIZE_COLUMN))
    geometric_steps = np.bincount(
        np.repeat(np.arange(count), truth.lengths), weights=geometric, minlength=count
    )
    candidates = (geometric_steps >= 2) | true_order.overlap | true_order.invalid_position
    result = np.zeros(count, dtype=bool)
    for length in np.unique(truth.lengths[candidates]).tolist():
        rows = np.flatnonzero(candidates & (truth.lengths == length))
        flat = truth.starts[rows][:, None] + np.arange(length)[None, :]
        always_reaches, some_error = try_all_orderings(
            initial.take(rows), final.take(rows), truth.objects[flat], truth.codes[flat]
        )
        result[rows] = always_reaches & some_error
    return result


def try_all_orderings(
    initial: EncodedStates, final: EncodedStates, objects: np.ndarray, codes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per row: whether every ordering of its L steps (the columns of `objects` and `codes`)
    reaches `final`, and whether some ordering raises an error. Depth first over the tree of
    orderings: each node applies one more step to a copy of its parent's states."""
    count, length = objects.shape
    rows = np.arange(count)
    always_reaches = np.ones(count, dtype=bool)
    some_error = np.zeros(count, dtype=bool)
    pending = [(initial, tuple(range(length)), np.zeros(count, dtype=bool))]
    while pending:
        states, remaining, erred = pending.pop()
        if not remaining:
            always_reaches &= state_distances(states, final) == 0
            some_error |= erred
            continue
        for number, step in enumerate(remaining):
            child = states.copy()
            overlap, invalid = apply_step_batch(child, rows, objects[:, step], codes[:, step])
            pending.append((child, remaining[:number] + remaining[number + 1 :], erred | overlap | invalid))
    return always_reaches, some_error


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


# --- Predictions ---------------------------------------------------------------------------------

_INTEGER_KEY = re.compile(r"-?[0-9]+")


def parse_predictions(data: bytes | IO[bytes], *, source: str = "") -> dict[int, list[Step]]:
    """Read a prediction file: a JSON object from sample idx to the list of predicted steps.

    ``{"0": [{"obj_idx": 2, "attr": "color", "val": "cyan"}], "1": []}``. Keys are the samples'
    idx written as JSON strings; other keys of a step (``options``, ``type``) are ignored and
    dropped. Any fault (not JSON, not an object, a key that is not an integer or names the same
    sample as another, an answer that is not a list, a step that is not an object, a missing
    field, an object index outside 0..9, an unknown attribute or value) raises one FormatError
    listing every problem, each as RecordError(record="idx KEY", field="[i].val", ...).
    A sample with no key is not an error: scoring treats it as an empty answer.
    """
    return read_predictions(
        data,
        lambda answer: [step if len(step) == 3 else canonical_step(step) for step in answer],
        source=source,
    )


class PackedPredictions(dict[int, bytes]):
    """idx -> the answer packed as two bytes per step, (object index, pair code): a few dozen
    bytes an answer where its parsed steps take hundreds (`read_packed_predictions`)."""


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
        else:
            errors.extend(answer_problems(label, answer))
    if errors:
        raise FormatError(errors, source=source)
    return predictions


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


def parameters(setting: str, **extra: Any) -> dict[str, Any]:
    return {
        "metric": METRIC,
        "setting": setting,
        "metric_version": METRIC_VERSION,
        "variant": VARIANT,
        "evaluator": "released TRANCE evaluator (hughplay/TVR EventEvaluator / BasicEvaluator)",
        **extra,
    }


# --- Basic ---------------------------------------------------------------------------------------


def option_keys(true_step: Mapping[str, Any]) -> set[tuple[Any, ...]]:
    """The pairs that count as right for a true step: its options, or its own value without them."""
    attr = true_step["attr"]
    options = true_step.get("options") or [true_step["val"]]
    return {pair_key(attr, option) for option in options}


def score_basic(samples: Sequence[Sample], predictions: Mapping[int, Sequence[Step]]) -> Scored:
    """Basic: one true step per sample, scored on the answer's first step.

    Items: idx, obj_correct, attr_correct, pair_correct, correct, missing. Summary: ObjAcc,
    AttrAcc, ValAcc (pair right), Acc (object and pair right), n (None means for n = 0).
    Raises FormatError for a sample that has not exactly one transformation or a bad step.
    """
    answers, missing, extra = answers_for(samples, predictions)
    without = set(missing)
    errors = RecordErrors()
    items: list[dict[str, Any]] = []
    for sample, answer in zip(samples, answers, strict=True):
        label = f"idx {sample['idx']}"
        transformations = sample["transformations"]
        if len(transformations) != 1:
            errors.append(
                RecordError(
                    label, "transformations", f"Basic needs one transformation, got {len(transformations)}"
                )
            )
            continue
        if any(step_code(step) is None for step in answer):
            errors.extend(answer_problems(label, list(answer)))
            continue
        truth = transformations[0]
        item = {
            "idx": sample["idx"],
            "obj_correct": False,
            "attr_correct": False,
            "pair_correct": False,
            "correct": False,
            "missing": sample["idx"] in without,
        }
        if answer:
            first = answer[0]
            item["obj_correct"] = first["obj_idx"] == truth["obj_idx"]
            item["attr_correct"] = first["attr"] == truth["attr"]
            item["pair_correct"] = pair_key(first["attr"], first["val"]) in option_keys(truth)
            item["correct"] = item["obj_correct"] and item["pair_correct"]
        items.append(item)
    if errors:
        raise FormatError(errors)
    count = len(items)

    def share(key: str) -> float | None:
        return sum(item[key] for item in items) / count if count else None

    params = parameters(BASIC)
    summary = {
        "parameters": params,
        "ObjAcc": share("obj_correct"),
        "AttrAcc": share("attr_correct"),
        "ValAcc": share("pair_correct"),
        "Acc": share("correct"),
        "n": count,
        "missing_predictions": len(missing),
        "extra_predictions": len(extra),
    }
    problems = prediction_problems(missing, extra, "wrong on object, attribute and value")
    return Scored(items=items, summary=summary, params=params, problems=problems)


# --- Event and View ------------------------------------------------------------------------------


@dataclass(slots=True)
class EventResults:
    """Per-sample arrays of the Event / View scoring, in sample order."""

    dist: np.ndarray
    norm_dist: np.ndarray
    loose_correct: np.ndarray
    correct: np.ndarray
    err_overlap: np.ndarray
    err_invalid_position: np.ndarray
    pred_step: np.ndarray
    target_step: np.ndarray
    order_sensitive: np.ndarray

    def group_summary(self, selected: np.ndarray | None = None) -> dict[str, Any]:
        """The metrics over the selected samples (all when None); means are None when n = 0."""
        if selected is None:
            selected = np.ones(len(self.dist), dtype=bool)
        count = int(selected.sum())

        def mean(values: np.ndarray) -> float | None:
            return float(values[selected].astype(np.float64).mean()) if count else None

        sensitive = selected & self.order_sensitive
        loose_sensitive = int((sensitive & self.loose_correct).sum())
        correct_sensitive = int((sensitive & self.correct).sum())
        return {
            "n": count,
            "AD": mean(self.dist),
            "AND": mean(self.norm_dist),
            "LAcc": mean(self.loose_correct),
            "Acc": mean(self.correct),
            "EO": (loose_sensitive - correct_sensitive) / loose_sensitive if loose_sensitive else None,
            "OverlapErrorRate": mean(self.err_overlap),
            "InvalidPositionErrorRate": mean(self.err_invalid_position),
            "StepDiff": mean(self.pred_step - self.target_step),
            "order_sensitive_n": int(sensitive.sum()),
        }


class SampleLabels(Sequence[str]):
    """ "idx 12" for each sample, made only when asked for (error messages are rare)."""

    def __init__(self, samples: Sequence[Sample]) -> None:
        self.samples = samples

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, number: Any) -> Any:
        if isinstance(number, slice):
            return [f"idx {sample['idx']}" for sample in self.samples[number]]
        return f"idx {self.samples[number]['idx']}"


def evaluate_event(
    samples: Sequence[Sample], answers: Sequence[Sequence[Step]] | EncodedAnswers
) -> EventResults:
    """Score each answer against its sample (the shared work of Event and View).

    Samples must have 1 to 4 true steps, as TRANCE defines (FormatError otherwise): none would
    make AND divide by zero, and order-sensitivity tries all L! orderings.
    """
    labels = SampleLabels(samples)
    truths = [sample["transformations"] for sample in samples]
    errors = [
        RecordError(
            labels[number],
            "transformations",
            f"expected {MIN_STEPS} to {MAX_STEPS} true steps, got {len(truth)}",
        )
        for number, truth in enumerate(truths)
        if not MIN_STEPS <= len(truth) <= MAX_STEPS
    ]
    if errors:
        raise FormatError(errors)
    initial = encode_states([sample["states"][0]["objects"] for sample in samples], labels)
    final = encode_states([sample["states"][-1]["objects"] for sample in samples], labels)
    predicted = answers if isinstance(answers, EncodedAnswers) else encode_answers(answers, labels)
    true_steps = encode_answers(truths, labels)

    replayed = replay_answers(initial, predicted)
    dist = state_distances(replayed.states, final)
    target_step = true_steps.lengths
    loose_correct = dist == 0
    return EventResults(
        dist=dist,
        norm_dist=dist.astype(np.float32) / target_step.astype(np.float32),
        loose_correct=loose_correct,
        correct=loose_correct & ~replayed.overlap & ~replayed.invalid_position,
        err_overlap=replayed.overlap,
        err_invalid_position=replayed.invalid_position,
        pred_step=predicted.lengths,
        target_step=target_step,
        order_sensitive=order_sensitive(initial, final, true_steps),
    )


#: Samples scored at a time: memory holds one batch of parsed samples, never the whole file.
BATCH = 4096


def batches(samples: Iterable[Sample], size: int = BATCH) -> Iterator[list[Sample]]:
    iterator = iter(samples)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


class ViewCameras(Mapping[Any, str]):
    """`view_cameras` for any idx, computed when asked (a stream has no list of samples)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def __getitem__(self, idx: Any) -> str:
        digest = hashlib.blake2b(f"{self.seed}:{idx}".encode(), digest_size=8).digest()
        return FINAL_CAMERAS[int.from_bytes(digest, "big") % len(FINAL_CAMERAS)]

    def __iter__(self) -> Iterator[Any]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def get(self, idx: Any, default: Any = None) -> Any:
        return self[idx]


@dataclass(slots=True)
class EventRun:
    """The Event / View scoring of a sequence of samples: ids, per-sample arrays, the samples
    without a prediction, the predictions for unknown idx, and (View) each sample's camera code
    (index into FINAL_CAMERAS)."""

    idxs: list[Any]
    results: EventResults
    missing: list[Any]
    extra: list[Any]
    cameras: np.ndarray | None = None


def evaluate_event_batches(
    samples: Iterable[Sample],
    predictions: Mapping[int, Sequence[Step]] | PackedPredictions,
    cameras: Mapping[Any, str] | None = None,
) -> EventRun:
    """`evaluate_event` over samples read BATCH at a time (a list, or a stream of a file):
    memory holds one batch of samples and the per-sample arrays. Every fault of every batch is
    reported in one FormatError; the same idx twice is a ValueError naming it. With `cameras`
    (View), every sample needs a known final camera."""
    idxs: list[Any] = []
    seen: set[Any] = set()
    missing: list[Any] = []
    parts: list[EventResults] = []
    camera_codes: list[int] = []
    errors = RecordErrors()
    camera_code = {camera: code for code, camera in enumerate(FINAL_CAMERAS)}
    for batch in batches(samples):
        batch_idxs = [sample["idx"] for sample in batch]
        for idx in batch_idxs:
            if idx in seen:
                raise ValueError(f"idx {idx}: the samples hold this idx twice")
            seen.add(idx)
        idxs.extend(batch_idxs)
        missing.extend(idx for idx in batch_idxs if idx not in predictions)
        if cameras is not None:
            for idx in batch_idxs:
                camera = cameras.get(idx)
                code = camera_code.get(camera) if isinstance(camera, str) else None
                if code is None:
                    message = "no final camera given" if camera is None else f"unknown camera {camera!r}"
                    errors.append(
                        RecordError(
                            f"idx {idx}", "camera", f"{message} (expected one of {', '.join(FINAL_CAMERAS)})"
                        )
                    )
                    code = 0
                camera_codes.append(code)
        answers: Sequence[Sequence[Step]] | EncodedAnswers
        if isinstance(predictions, PackedPredictions):
            answers = EncodedAnswers.from_packed([predictions.get(idx, b"") for idx in batch_idxs])
        else:
            answers = [predictions.get(idx, ()) for idx in batch_idxs]
        try:
            parts.append(evaluate_event(batch, answers))
        except FormatError as error:
            errors.extend(error.errors)
    if errors:
        raise FormatError(errors)
    results = (
        EventResults(
            *(np.concatenate([getattr(part, name) for part in parts]) for name in EventResults.__slots__)
        )
        if len(parts) > 1
        else parts[0]
        if parts
        else evaluate_event([], [])
    )
    return EventRun(
        idxs=idxs,
        results=results,
        missing=missing,
        extra=[idx for idx in predictions if idx not in seen],
        cameras=np.array(camera_codes, dtype=np.int8) if cameras is not None else None,
    )


#: The keys of an Event / View item, in order (View adds "camera").
EVENT_ITEM_KEYS = (
    "idx",
    "dist",
    "norm_dist",
    "loose_correct",
    "correct",
    "err_overlap",
    "err_invalid_position",
    "pred_step",
    "target_step",
    "order_sensitive",
    "missing",
)


class EventItems(Sequence[dict[str, Any]]):
    """The per-item rows of an Event / View run, each made from the run's arrays when read: a
    list of 500,000 dicts would be most of the memory of a large run, the arrays are a few
    bytes a sample."""

    def __init__(self, run: EventRun) -> None:
        self.run = run
        self.missing = set(run.missing)

    def __len__(self) -> int:
        return len(self.run.idxs)

    def __getitem__(self, number: Any) -> Any:
        if isinstance(number, slice):
            return [self.rows(index, index + 1)[0] for index in range(*number.indices(len(self)))]
        if number < 0:
            number += len(self)
        if not 0 <= number < len(self):
            raise IndexError(number)
        return self.rows(number, number + 1)[0]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for start in range(0, len(self), BATCH):
            yield from self.rows(start, start + BATCH)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(
            mine == theirs for mine, theirs in zip(self, other, strict=True)
        )

    __hash__ = None  # type: ignore[assignment]

    def rows(self, start: int, stop: int) -> list[dict[str, Any]]:
        results, idxs = self.run.results, self.run.idxs[start:stop]
        columns = [
            idxs,
            *(
                getattr(results, name)[start:stop].tolist()
                for name in (
                    "dist",
                    "norm_dist",
                    "loose_correct",
                    "correct",
                    "err_overlap",
                    "err_invalid_position",
                    "pred_step",
                    "target_step",
                    "order_sensitive",
                )
            ),
            [idx in self.missing for idx in idxs],
        ]
        keys: tuple[str, ...] = EVENT_ITEM_KEYS
        if self.run.cameras is not None:
            columns.append([FINAL_CAMERAS[code] for code in self.run.cameras[start:stop].tolist()])
            keys = (*keys, "camera")
        return [dict(zip(keys, values, strict=True)) for values in zip(*columns, strict=True)]


def event_summary(results: EventResults, params: dict[str, Any]) -> dict[str, Any]:
    lengths = sorted(set(LENGTHS) | set(results.target_step.tolist()))
    return {
        "parameters": params,
        **results.group_summary(),
        "by_length": {length: results.group_summary(results.target_step == length) for length in lengths},
    }


def event_scored(run: EventRun, params: dict[str, Any]) -> Scored:
    summary = event_summary(run.results, params)
    if run.cameras is not None:
        summary["by_camera"] = {
            camera: run.results.group_summary(run.cameras == code)
            for code, camera in enumerate(FINAL_CAMERAS)
        }
    summary["missing_predictions"], summary["extra_predictions"] = len(run.missing), len(run.extra)
    problems = prediction_problems(run.missing, run.extra, "the initial state stays as it is")
    return Scored(items=EventItems(run), summary=summary, params=params, problems=problems)


def score_event(
    samples: Iterable[Sample], predictions: Mapping[int, Sequence[Step]] | PackedPredictions
) -> Scored:
    """Event: AD, AND, LAcc, Acc, EO and the error rates over all samples, and by true length.

    Items: idx, dist, norm_dist, loose_correct, correct, err_overlap, err_invalid_position,
    pred_step, target_step, order_sensitive, missing. Summary: n, AD, AND, LAcc, Acc, EO,
    OverlapErrorRate, InvalidPositionErrorRate (shares of answers raising each error), StepDiff
    (mean pred_step - target_step), order_sensitive_n, ``by_length`` {1..4: the same}.
    FormatError for a bad step (the released code crashes on those). `samples` may be a stream:
    they are scored BATCH at a time.
    """
    with paused_gc():
        run = evaluate_event_batches(samples, predictions)
    return event_scored(run, parameters(EVENT))


def score_view(
    samples: Iterable[Sample],
    predictions: Mapping[int, Sequence[Step]] | PackedPredictions,
    cameras: Mapping[Any, str],
) -> Scored:
    """View: Event's metrics, plus each item's final ``camera`` and a ``by_camera`` summary.

    `cameras` maps each sample's idx to the final view it was shown with (Camera_Left,
    Camera_Center or Camera_Right); every sample needs one (FormatError otherwise).
    """
    with paused_gc():
        run = evaluate_event_batches(samples, predictions, cameras)
    return event_scored(run, parameters(VIEW, cameras="given"))


def view_cameras(samples: Iterable[Sample], seed: int = 0) -> dict[int, str]:
    """A deterministic final camera per sample, for View scoring when none was recorded.

    Camera = FINAL_CAMERAS[first 8 bytes of blake2b("{seed}:{idx}") as an integer, mod 3]:
    it depends on the idx and the seed only (not on the order or the subset of samples), is the
    same on every machine and Python version, and spreads the three cameras evenly. Explicit
    cameras (the views a test plan actually showed, or a camera file) always take precedence:
    use this only for answers that were produced without recording their view.
    """
    cameras = ViewCameras(seed)
    return {sample["idx"]: cameras[sample["idx"]] for sample in samples}


# --- Files ---------------------------------------------------------------------------------------


def score_file(
    gt_data: bytes | IO[bytes],
    predictions_data: bytes | IO[bytes],
    *,
    setting: str,
    cameras: Mapping[int, str] | None = None,
    camera_seed: int = 0,
    gt_source: str = "ground truth",
    predictions_source: str = "predictions",
) -> Scored:
    """Score a prediction file against a data.jsonl file (raw bytes, or files open for reading)
    in one setting.

    The ground truth is read by the TRANCE format module (`formats.iter_samples`: the checks of
    `formats.parse`, every bad record named, without building catalog records), one line at a
    time when it is an open file and scored BATCH samples at a time, so memory holds one batch of
    samples, the predictions and a few bytes of results per sample; the predictions by
    `parse_predictions`.

    `setting`: "basic", "event" or "view". For View, `cameras` (idx -> final camera) gives the
    views the answers were made from; explicit cameras always take precedence. Without them
    the cameras come from ``view_cameras(samples, camera_seed)`` and the parameters say so.
    """
    if setting not in SETTINGS:
        raise ValueError(f"unknown TRANCE setting {setting!r} (expected one of {', '.join(SETTINGS)})")
    # Collection stays off while the files are read: a collection over the parsed objects kept
    # alive (the predictions, a batch of samples) would walk them again and again.
    with paused_gc():
        read = parse_predictions if setting == BASIC else read_packed_predictions
        predictions = read(predictions_data, source=predictions_source)
        samples = formats.iter_samples(gt_data, source=gt_source)
        if setting == BASIC:
            truths = [
                {"idx": sample["idx"], "transformations": sample["transformations"]} for sample in samples
            ]
            scored = score_basic(truths, predictions)
        elif setting == EVENT:
            scored = score_event(samples, predictions)
        elif cameras is not None:
            scored = score_view(samples, predictions, cameras)
        else:
            scored = score_view(samples, predictions, ViewCameras(camera_seed))
            scored.params["cameras"] = f"view_cameras(seed={camera_seed})"
        del samples, predictions
    return scored
