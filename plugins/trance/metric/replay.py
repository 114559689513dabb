"""Replaying answers on arrays: every answer applied to its own copy of its initial state, step
k of all answers at once, with the simulator's overlap and invalid-position errors; the released
distance between states; and which samples are order-sensitive."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from plugins.clevr.world import GRID_MAX, GRID_MIN, MIN_GAP, VISIBLE_MAX, VISIBLE_MIN
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

    Every ordering of the L true steps is tried (L! of them, 24 at most) for all samples of the
    same length at once, walking the tree of orderings so that a shared prefix is applied once
    (64 step applications for L = 4 instead of 96). An ordering counts as erring when any of its
    steps raises either error, also when a later step undoes what raised it (an object moved
    off the plane and back, onto another one that then moves away): the released evaluator
    flags an answer so, and the rule asks whether the ordering, given as an answer, is correct.

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
    sensitive = np.zeros(count, dtype=bool)
    error_share = np.zeros(count, dtype=np.float64)
    for length in np.unique(truth.lengths[candidates]).tolist():
        rows = np.flatnonzero(candidates & (truth.lengths == length))
        flat = truth.starts[rows][:, None] + np.arange(length)[None, :]
        found = try_all_orderings(
            initial.take(rows), final.take(rows), truth.objects[flat], truth.codes[flat]
        )
        sensitive[rows] = found.always_reaches & (found.erring > 0)
        error_share[rows] = found.erring / math.factorial(length)
    return OrderSensitivity(sensitive, error_share)


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
