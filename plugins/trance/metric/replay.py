"""Replaying answers on arrays: every answer applied to its own copy of its initial state, step
k of all answers at once, with the simulator's overlap and invalid-position errors; the released
distance between states; and which samples are order-sensitive."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from plugins.clevr.world import GRID_MAX, GRID_MIN, MIN_GAP, VISIBLE_MAX, VISIBLE_MIN
from plugins.trance.formats import OBJECTS_PER_STATE
from plugins.trance.metric.encoding import (
    PAIR_COLUMN,
    PAIR_MOVE_X,
    PAIR_MOVE_Y,
    PAIR_VALUE,
    POSITION_COLUMN,
    RADIUS_BY_SIZE,
    SIZE_COLUMN,
    EncodedAnswers,
    EncodedStates,
)
from plugins.trance.simulator import OVERLAP_TOLERANCE


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

    Equal, answer by answer, to the simulator's ``apply_steps`` (see the package docstring).
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


@dataclass(slots=True)
class OrderSensitivity:
    """Per sample: whether it is order-sensitive (the released rule), and the share of the L!
    orderings of its true steps that raise an overlap or invalid-position error: the chance that
    its true steps given in a random order are loose-correct but not correct (when it is
    order-sensitive, every ordering reaches the true final state)."""

    sensitive: np.ndarray
    error_share: np.ndarray


class Orderings(NamedTuple):
    """What `try_all_orderings` finds per row: whether every ordering reaches the final state,
    and how many orderings raise an error."""

    always_reaches: np.ndarray
    erring: np.ndarray


def order_sensitive(initial: EncodedStates, final: EncodedStates, truth: EncodedAnswers) -> np.ndarray:
    """The released rule, per sample: some ordering of the true steps raises an overlap or an
    invalid-position error, while every ordering reaches the true final state (distance 0)."""
    return order_sensitivity(initial, final, truth).sensitive


def order_sensitivity(
    initial: EncodedStates, final: EncodedStates, truth: EncodedAnswers
) -> OrderSensitivity:
    """`order_sensitive`, and the share of the orderings of the true steps that err.

    An ordering counts as erring when any of its steps raises either error, also when a later
    step undoes what raised it (an object moved off the plane and back, onto another one that
    then moves away): the released evaluator flags an answer so, and the rule asks whether the
    ordering, given as an answer, is correct. What `try_all_orderings` finds by replaying all L!
    orderings (24 at most) is found here with less work, from the rules of `apply_step_batch`:

    * Only position and size steps can raise an error, and what they raise depends only on
      positions and sizes, which only position and size steps change. So an ordering errs when
      the order it gives the sample's G geometric steps errs, and each of the G! orders of those
      is given by L!/G! orderings: the share of erring orderings is the share of the G! orders
      of the geometric steps that err (the same ratio, so the same float). Only those orders are
      replayed, and only when G >= 2: with one geometric step or none, every ordering raises
      what the true order raises.
    * Moves add to a position, whatever the order; the other steps set a value, and the last
      one to set an (object, attribute) wins. So every ordering reaches the same final state
      unless two steps set the same (object, attribute) to different values, in which case the
      orderings that end with each differ and not all reach the true final state: every
      ordering reaches it when the true order does and no two steps set one (object,
      attribute) to different values.
    """
    count = len(truth.lengths)
    true_order = replay_answers(initial, truth)
    columns = PAIR_COLUMN[truth.codes]
    geometric = (columns == POSITION_COLUMN) | (columns == SIZE_COLUMN)
    owners = np.repeat(np.arange(count), truth.lengths)
    geometric_steps = np.bincount(owners[geometric], minlength=count)
    always_reaches = (state_distances(true_order.states, final) == 0) & ~conflicting_settings(
        owners, truth.objects, columns, truth.codes, count
    )
    erring = (true_order.overlap | true_order.invalid_position).astype(np.int64)
    error_share = erring.astype(np.float64)
    flat = np.flatnonzero(geometric)
    for length in np.unique(geometric_steps[geometric_steps >= 2]).tolist():
        rows = np.flatnonzero(geometric_steps == length)
        steps = flat[geometric_steps[owners[flat]] == length].reshape(len(rows), length)
        erring[rows] = erring_orderings(initial.take(rows), truth.objects[steps], truth.codes[steps])
        error_share[rows] = erring[rows] / math.factorial(length)
    return OrderSensitivity(always_reaches & (erring > 0), error_share)


def conflicting_settings(
    owners: np.ndarray, objects: np.ndarray, columns: np.ndarray, codes: np.ndarray, count: int
) -> np.ndarray:
    """Per sample: do two of its steps set the same (object, attribute) to different values?
    (Moves add, so they never conflict.) Steps are given flat, each with its sample (`owners`)."""
    setting = columns != POSITION_COLUMN
    targets = (owners[setting] * OBJECTS_PER_STATE + objects[setting]) * POSITION_COLUMN + columns[setting]
    settings = np.unique(targets * len(PAIR_COLUMN) + codes[setting]) // len(PAIR_COLUMN)
    conflicting = np.zeros(count, dtype=bool)
    conflicting[settings[1:][settings[1:] == settings[:-1]] // (OBJECTS_PER_STATE * POSITION_COLUMN)] = True
    return conflicting


def erring_orderings(initial: EncodedStates, objects: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Per row: how many of the L! orderings of its L steps (the columns of `objects` and
    `codes`) raise an error at any of their steps. Depth first over the tree of orderings, so
    that a shared prefix is applied once: each node applies one more step to a copy of its
    parent's states."""
    count, length = objects.shape
    rows = np.arange(count)
    erring = np.zeros(count, dtype=np.int64)
    pending = [(initial, tuple(range(length)), np.zeros(count, dtype=bool))]
    while pending:
        states, remaining, erred = pending.pop()
        if not remaining:
            erring += erred
            continue
        for number, step in enumerate(remaining):
            # The last child takes its parent's states: nothing reads them after it.
            child = states if number == len(remaining) - 1 else states.copy()
            overlap, invalid = apply_step_batch(child, rows, objects[:, step], codes[:, step])
            pending.append((child, remaining[:number] + remaining[number + 1 :], erred | overlap | invalid))
    return erring


def try_all_orderings(
    initial: EncodedStates, final: EncodedStates, objects: np.ndarray, codes: np.ndarray
) -> Orderings:
    """Per row: whether every ordering of its L steps (the columns of `objects` and `codes`)
    reaches `final`, and how many of the L! orderings raise an error at any of their steps.
    Depth first over the tree of orderings: each node applies one more step to a copy of its
    parent's states."""
    count, length = objects.shape
    rows = np.arange(count)
    always_reaches = np.ones(count, dtype=bool)
    erring = np.zeros(count, dtype=np.int64)
    pending = [(initial, tuple(range(length)), np.zeros(count, dtype=bool))]
    while pending:
        states, remaining, erred = pending.pop()
        if not remaining:
            always_reaches &= state_distances(states, final) == 0
            erring += erred
            continue
        for number, step in enumerate(remaining):
            child = states.copy()
            overlap, invalid = apply_step_batch(child, rows, objects[:, step], codes[:, step])
            pending.append((child, remaining[:number] + remaining[number + 1 :], erred | overlap | invalid))
    return Orderings(always_reaches, erring)
