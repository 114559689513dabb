"""TRANCE state changes: the one implementation of what a transformation does (pure, no Django).

The dataset generator uses it to build samples and the evaluation engine uses it to replay a
predicted answer, so both read the rules from one place (see ../shared/FORMATS.md, TRANCE):

* A state is a list of objects in the official format,
  ``{"color", "material", "shape", "size", "position": [x, y]}``; a step is
  ``{"obj_idx", "attr", "val"}`` (other keys, such as ``options`` or ``type``, are ignored).
* A position step ``[direction, n]`` moves the object by ``DIRECTIONS[direction] * 10 * n``.
* After a position or size step the moved object is checked against every other object (visible,
  invisible or off the plane alike): they overlap when
  ``distance(centres) + 1e-4 < r_i + r_j + 1``. Colour, material and shape steps are never
  checked, and overlaps that are already in the state are never reported.
* After a position step, an object outside [-40, 40] (bounds included) is an invalid position.
  Replaying continues from there, as the released evaluator does.
* Visible means inside [-20, 20] on both axes, bounds included; invisible means on the plane but
  not visible. A move is inner (visible to visible), out (visible to invisible) or in (invisible
  to visible).

Functions never mutate their arguments: they return new lists of new object dicts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from plugins.clevr.world import GRID_MAX, GRID_MIN, MIN_GAP, RADII, STEP_UNITS, is_visible_position
from plugins.trance.formats import (
    ATTRIBUTES,
    DIRECTIONS,
    MOVE_STEPS,
    OBJECT_FIELDS,
    OBJECTS_PER_STATE,
    value_problem,
)

#: Slack of the overlap test, as in the released code: touching within 1e-4 is not overlapping.
OVERLAP_TOLERANCE = 1e-4

#: Attributes whose change can make the changed object overlap another one.
GEOMETRIC_ATTRIBUTES = ("position", "size")

Object = dict[str, Any]


class InvalidStep(ValueError):
    """A step that cannot be applied at all: an unknown attribute or value, or no such object.

    The released evaluator crashes on these; Yardstick reports them as a bad answer instead.
    """


@dataclass(frozen=True, slots=True)
class StepResult:
    """The state after one step, and what the step did wrong.

    `overlap` and `invalid_position` are the released evaluator's two error kinds. `changed` says
    whether the step altered the object at all (a colour set to the colour it already has does not),
    which the generator needs and the evaluator ignores.
    """

    objects: list[Object]
    overlap: bool
    invalid_position: bool
    changed: bool


class StepsOutcome(NamedTuple):
    """The state after a whole sequence of steps, and whether any step raised either error."""

    objects: list[Object]
    overlap_error: bool
    invalid_position_error: bool


def copy_objects(objects: Sequence[Object]) -> list[Object]:
    """New dicts with new position lists, so that callers may keep and change their own copies."""
    return [{**obj, "position": list(obj["position"])} for obj in objects]


def radius(obj: Object) -> float:
    """Radius of the circle the object occupies on the ground, in grid units."""
    return RADII[obj["size"]]


def is_on_plane(position: Sequence[float]) -> bool:
    """Inside the plane [-40, 40] on both axes, bounds included."""
    x, y = position
    return GRID_MIN <= x <= GRID_MAX and GRID_MIN <= y <= GRID_MAX


def is_visible(position: Sequence[float]) -> bool:
    """Inside the visible area [-20, 20] on both axes, bounds included."""
    return is_visible_position(*position)


def is_invisible(position: Sequence[float]) -> bool:
    """On the plane but outside the visible area: where "out" moves land and "in" moves start."""
    return is_on_plane(position) and not is_visible(position)


def objects_overlap(first: Object, second: Object) -> bool:
    """The released overlap rule: ``distance + 1e-4 < r1 + r2 + min_gap`` (min_gap = 1)."""
    (x1, y1), (x2, y2) = first["position"], second["position"]
    distance = math.hypot(x1 - x2, y1 - y2)
    return distance + OVERLAP_TOLERANCE < radius(first) + radius(second) + MIN_GAP


def overlaps_any(objects: Sequence[Object], index: int) -> bool:
    """Whether object `index` overlaps any of the others (only that object is checked)."""
    subject = objects[index]
    return any(objects_overlap(subject, other) for number, other in enumerate(objects) if number != index)


def move_delta(value: Sequence[Any]) -> tuple[int, int]:
    """The grid offset of a position value ``[direction, n]``: the direction's vector times 10 n."""
    direction, steps = value
    dx, dy = DIRECTIONS[direction]
    return dx * STEP_UNITS * steps, dy * STEP_UNITS * steps


def moved_position(position: Sequence[int], value: Sequence[Any]) -> list[int]:
    """Where a position step ``[direction, n]`` takes an object standing at `position`."""
    dx, dy = move_delta(value)
    return [position[0] + dx, position[1] + dy]


def normalised_value(attr: str, value: Any) -> Any:
    """Position values as lists (callers may pass tuples); other values unchanged."""
    if attr == "position" and isinstance(value, tuple):
        return list(value)
    return value


def read_step(step: dict[str, Any], object_count: int) -> tuple[int, str, Any]:
    """The step's (object index, attribute, value), or InvalidStep saying what is wrong with it."""
    if not isinstance(step, dict):
        raise InvalidStep(f"a step must be an object, got {type(step).__name__}")
    missing = [key for key in ("obj_idx", "attr", "val") if key not in step]
    if missing:
        raise InvalidStep(f"step {step!r} lacks {', '.join(missing)}")
    index, attr = step["obj_idx"], step["attr"]
    if type(index) is not int or not 0 <= index < object_count:
        raise InvalidStep(f"object index {index!r} out of range (expected 0..{object_count - 1})")
    if attr not in ATTRIBUTES:
        raise InvalidStep(f"unknown attribute {attr!r} (expected one of {', '.join(ATTRIBUTES)})")
    value = normalised_value(attr, step["val"])
    if problem := value_problem(attr, value):
        raise InvalidStep(f"{attr}: {problem}")
    return index, attr, value


def apply_step(objects: Sequence[Object], step: dict[str, Any]) -> StepResult:
    """Apply one step to a copy of `objects`.

    Errors are reported, never refused: the new state is returned even when the moved object
    overlaps another or leaves the plane, because the released evaluator carries on from there.
    Raises InvalidStep for a step that names no object or no known value.
    """
    index, attr, value = read_step(step, len(objects))
    new_objects = copy_objects(objects)
    subject = new_objects[index]
    new_value = moved_position(subject["position"], value) if attr == "position" else value
    changed = subject[attr] != new_value
    subject[attr] = new_value
    overlap = attr in GEOMETRIC_ATTRIBUTES and overlaps_any(new_objects, index)
    invalid_position = attr == "position" and not is_on_plane(new_value)
    return StepResult(new_objects, overlap=overlap, invalid_position=invalid_position, changed=changed)


def apply_steps(objects: Sequence[Object], steps: Sequence[dict[str, Any]]) -> StepsOutcome:
    """Apply `steps` in order, as the released evaluator replays an answer.

    Each error kind is raised when any step commits it; later steps continue from the erroneous
    state (so moving out of the plane and back again reaches the right place, with an error).
    No steps leave the state as it is.
    """
    state = copy_objects(objects)
    overlap_error = invalid_position_error = False
    for step in steps:
        result = apply_step(state, step)
        state = result.objects
        overlap_error |= result.overlap
        invalid_position_error |= result.invalid_position
    return StepsOutcome(state, overlap_error, invalid_position_error)


def move_type(before: Sequence[int], after: Sequence[int]) -> str | None:
    """ "inner", "out" or "in" for a move from `before` to `after`; None for invisible to invisible.

    Only visibility counts: a position off the plane is simply not visible (a move there is
    "out"); whether it is on the plane is the invalid-position check's business.
    """
    was_visible, is_now_visible = is_visible(before), is_visible(after)
    if was_visible and is_now_visible:
        return "inner"
    if was_visible:
        return "out"
    if is_now_visible:
        return "in"
    return None


def all_moves() -> list[list[Any]]:
    """Every position value, in the order of DIRECTIONS, step 1 before step 2."""
    return [[direction, steps] for direction in DIRECTIONS for steps in MOVE_STEPS]


def out_move_options(objects: Sequence[Object], obj_idx: int) -> list[list[Any]]:
    """Every ``[direction, n]`` that lands object `obj_idx` in the invisible area.

    These are the `options` of an "out" step: once an object has left the visible area its exact
    place cannot be seen, so any of them is a right answer. As in the released generator the list
    is not filtered for overlap. Order: DIRECTIONS order, step 1 before step 2.
    """
    position = objects[obj_idx]["position"]
    return [value for value in all_moves() if is_invisible(moved_position(position, value))]


def is_valid_state(objects: Sequence[Object]) -> bool:
    """Ten objects, every one on the plane, no two overlapping: what every dataset state must be."""
    if len(objects) != OBJECTS_PER_STATE:
        return False
    if not all(is_on_plane(obj["position"]) for obj in objects):
        return False
    return not any(
        objects_overlap(objects[first], objects[second])
        for first in range(len(objects))
        for second in range(first + 1, len(objects))
    )


def positions_match(predicted: Sequence[int], true: Sequence[int]) -> bool:
    """The released evaluator's position equality.

    Equal positions match. Besides, when the true final position is invisible (on the plane,
    outside the visible area) any predicted position that is invisible too matches: the final
    images cannot tell them apart. A predicted position off the plane is never invisible, so it
    never matches.
    """
    if list(predicted) == list(true):
        return True
    return is_invisible(true) and is_invisible(predicted)


def distance_to(final_pred: Sequence[Object], final_true: Sequence[Object]) -> int:
    """How many (object, attribute) pairs differ between a predicted and the true final state.

    This is the released evaluator's distance, from which AD, AND, LAcc and Acc derive: every
    object is compared on colour, material, shape, size and position, position by
    `positions_match`. Both states must list the same objects in the same order.
    """
    if len(final_pred) != len(final_true):
        raise ValueError(
            f"cannot compare {len(final_pred)} predicted objects with {len(final_true)} true ones"
        )
    distance = 0
    for predicted, true in zip(final_pred, final_true, strict=True):
        for attr in OBJECT_FIELDS:
            if attr == "position":
                distance += not positions_match(predicted["position"], true["position"])
            else:
                distance += predicted[attr] != true[attr]
    return distance
