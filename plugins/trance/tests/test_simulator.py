"""TRANCE state changes, checked on hand-computed cases (pure Python, no Django).

Radii: small 2, medium 4, large 6; two objects overlap when distance + 1e-4 < r1 + r2 + 1.
"""

import copy

import pytest

from plugins.trance.simulator import (
    InvalidStep,
    apply_step,
    apply_steps,
    distance_to,
    is_invisible,
    is_on_plane,
    is_valid_state,
    is_visible,
    move_type,
    out_move_options,
    positions_match,
)
from plugins.trance.tests.helpers import change, move, scene, thing


@pytest.mark.parametrize(
    ("direction", "expected"),
    [
        ("behind", [10, 0]),
        ("front", [-10, 0]),
        ("right", [0, 10]),
        ("left", [0, -10]),
        ("behind-right", [10, 10]),
        ("behind-left", [10, -10]),
        ("front-right", [-10, 10]),
        ("front-left", [-10, -10]),
    ],
)
def test_each_direction_moves_ten_units_per_step(direction, expected):
    result = apply_step(scene(thing(0, 0)), move(0, direction, 1))
    assert result.objects[0]["position"] == expected
    assert (result.overlap, result.invalid_position, result.changed) == (False, False, True)


def test_step_two_moves_twenty_units():
    assert apply_step(scene(thing(0, 0)), move(0, "front-right", 2)).objects[0]["position"] == [-20, 20]
    assert apply_step(scene(thing(5, -3)), move(0, "behind", 2)).objects[0]["position"] == [25, -3]


def test_a_step_never_mutates_its_input_and_leaves_the_others_alone():
    state = scene(thing(0, 0), thing(15, 15, color="red"))
    before = copy.deepcopy(state)
    result = apply_step(state, change(1, "color", "blue"))
    assert state == before
    assert result.objects[1]["color"] == "blue"
    assert result.objects[0] == before[0] and result.objects[2:] == before[2:]
    result.objects[0]["position"][0] = 99  # the result owns its objects
    assert state[0]["position"] == [0, 0]


def test_overlap_after_a_move():
    # Small A moves to (10, 0); small B at (10, 4) is 4 away, less than 2 + 2 + 1.
    result = apply_step(scene(thing(0, 0), thing(10, 4)), move(0, "behind", 1))
    assert result.overlap and not result.invalid_position
    # 5 away exactly is the minimum gap: allowed (the 1e-4 slack).
    assert not apply_step(scene(thing(0, 0), thing(10, 5)), move(0, "behind", 1)).overlap
    # Medium A (r 4) with small B 6 away: 6 < 4 + 2 + 1.
    assert apply_step(scene(thing(0, 0, "medium"), thing(10, 6)), move(0, "behind", 1)).overlap


def test_overlap_counts_invisible_and_off_plane_objects():
    # Object 1 is moved off the plane to (45, 0); large object 0 then lands at (40, 2), 5.4 away
    # (6 + 2 + 1 = 9 needed).
    state = scene(thing(20, 2, "large"), thing(35, 0))
    outcome = apply_steps(state, [move(1, "behind", 1), move(0, "behind", 2)])
    assert outcome.invalid_position_error and outcome.overlap_error
    # An invisible neighbour counts too: (25, 3) lands 3 away from (25, 0).
    assert apply_step(scene(thing(15, 3), thing(25, 0)), move(0, "behind", 1)).overlap


def test_overlap_after_size_growth():
    # Small A and small B 6 apart are fine (5 needed); large A needs 6 + 2 + 1 = 9.
    state = scene(thing(0, 0), thing(0, 6))
    assert is_valid_state(state)
    assert apply_step(state, change(0, "size", "large")).overlap is True


def test_medium_growth_boundary():
    # 7 apart: medium (4) + small (2) + 1 = 7 is allowed; 6 apart is not.
    assert not apply_step(scene(thing(0, 0), thing(0, 7)), change(0, "size", "medium")).overlap
    assert apply_step(scene(thing(0, 0), thing(0, 6)), change(0, "size", "medium")).overlap


def test_shrinking_or_same_size_is_still_checked():
    # Large A and small B are 5 apart: an overlap already there (9 needed), never flagged by itself.
    state = scene(thing(0, 0, "large"), thing(0, 5))
    assert not is_valid_state(state)
    to_medium = apply_step(state, change(0, "size", "medium"))  # 4 + 2 + 1 = 7 > 5: still overlaps
    assert to_medium.overlap and to_medium.changed
    same = apply_step(state, change(0, "size", "large"))  # no change, but checked all the same
    assert same.overlap and not same.changed
    to_small = apply_step(state, change(0, "size", "small"))  # 2 + 2 + 1 = 5: touching is fine
    assert not to_small.overlap


def test_no_overlap_check_after_color_material_or_shape():
    state = scene(thing(0, 0, "large"), thing(0, 5))  # overlapping from the start
    for step in (change(0, "color", "red"), change(0, "material", "metal"), change(0, "shape", "sphere")):
        result = apply_step(state, step)
        assert not result.overlap and not result.invalid_position and result.changed


def test_existing_overlaps_elsewhere_are_not_flagged():
    state = scene(thing(0, 0), thing(30, 30, "large"), thing(30, 33))  # objects 1 and 2 overlap
    assert not apply_step(state, move(0, "front", 1)).overlap


def test_invalid_position_and_replay_continues():
    state = scene(thing(35, 0))
    result = apply_step(state, move(0, "behind", 1))
    assert result.objects[0]["position"] == [45, 0]
    assert result.invalid_position and not result.overlap
    outcome = apply_steps(state, [move(0, "behind", 1), move(0, "front", 1)])
    assert outcome.objects[0]["position"] == [35, 0]
    assert outcome.invalid_position_error and not outcome.overlap_error
    assert outcome.objects == state  # back where it started, the error stays recorded
    # Only position steps can be invalid positions.
    assert not apply_step(scene(thing(35, 0)), change(0, "size", "large")).invalid_position


@pytest.mark.parametrize(
    ("start", "value", "end"),
    [
        ([30, 0], ["behind", 1], [40, 0]),
        ([-30, 0], ["front", 1], [-40, 0]),
        ([0, 20], ["right", 2], [0, 40]),
        ([0, -20], ["left", 2], [0, -40]),
        ([30, 30], ["behind-right", 1], [40, 40]),
    ],
)
def test_plane_bounds_are_inclusive(start, value, end):
    result = apply_step(scene(thing(*start)), {"obj_idx": 0, "attr": "position", "val": value})
    assert result.objects[0]["position"] == end
    assert not result.invalid_position


def test_one_past_the_bounds_is_invalid():
    assert apply_step(scene(thing(31, 0)), move(0, "behind", 1)).invalid_position
    assert apply_step(scene(thing(0, -21)), move(0, "left", 2)).invalid_position
    assert not is_on_plane([41, 0]) and not is_on_plane([0, -41])


def test_visible_area_bounds_are_inclusive():
    for position in ([20, 20], [-20, -20], [20, -20], [0, 0]):
        assert is_visible(position) and not is_invisible(position)
    for position in ([21, 0], [-21, 0], [0, 21], [0, -21], [40, 40]):
        assert not is_visible(position) and is_invisible(position)
    assert not is_visible([45, 0]) and not is_invisible([45, 0])  # off the plane: neither


def test_move_types():
    assert move_type([0, 0], [10, 0]) == "inner"
    assert move_type([10, 20], [20, 20]) == "inner"  # the corner is visible
    assert move_type([15, 0], [25, 0]) == "out"
    assert move_type([20, 10], [30, 10]) == "out"
    assert move_type([25, 0], [15, 0]) == "in"
    assert move_type([-21, -21], [-11, -11]) == "in"
    assert move_type([25, 0], [35, 0]) is None
    assert move_type([-30, 25], [-30, 35]) is None


def test_out_move_options_worked_example():
    # From (15, 5): behind 1 (25, 5), behind 2 (35, 5), right 2 (15, 25), behind-right 1 (25, 15),
    # behind-right 2 (35, 25), behind-left 1 (25, -5), behind-left 2 (35, -15), front-right 2
    # (-5, 25) land outside [-20, 20]; front 1/2, right 1, left 1/2, front-right 1 and
    # front-left 1/2 stay visible.
    state = scene(thing(15, 5))
    assert out_move_options(state, 0) == [
        ["behind", 1],
        ["behind", 2],
        ["right", 2],
        ["behind-right", 1],
        ["behind-right", 2],
        ["behind-left", 1],
        ["behind-left", 2],
        ["front-right", 2],
    ]


def test_out_move_options_leave_out_the_off_plane_and_ignore_overlap():
    # From (30, 30): every "behind" or "right" step 2 leaves the plane; front-left 1 reaches (20, 20),
    # visible; front-left 2 too. Overlap is not considered: object 1 sits on (40, 30).
    state = scene(thing(30, 30), thing(40, 30))
    options = out_move_options(state, 0)
    assert ["behind", 1] in options  # lands on object 1: still listed
    assert ["behind", 2] not in options and ["right", 2] not in options and ["behind-right", 2] not in options
    assert ["front-left", 1] not in options and ["front-left", 2] not in options
    assert ["front", 1] in options and ["left", 2] in options
    assert all(is_invisible(apply_step(state, move(0, *value)).objects[0]["position"]) for value in options)


def test_is_valid_state():
    assert is_valid_state(scene(thing(0, 0, "large"), thing(0, 13, "large")))  # 13 = 6 + 6 + 1
    assert not is_valid_state(scene(thing(0, 0, "large"), thing(0, 12, "large")))
    assert not is_valid_state(scene(thing(41, 0)))
    assert not is_valid_state(scene(thing(0, 0))[:9])


def test_apply_steps_without_steps_keeps_the_state():
    state = scene(thing(0, 0))
    outcome = apply_steps(state, [])
    assert outcome == (state, False, False)
    assert outcome.objects is not state


def test_apply_steps_runs_in_order():
    state = scene(thing(0, 0))
    outcome = apply_steps(
        state, [change(0, "color", "cyan"), move(0, "behind", 2), change(0, "size", "large")]
    )
    assert outcome.objects[0] == thing(20, 0, "large", color="cyan")
    assert not outcome.overlap_error and not outcome.invalid_position_error


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ({"obj_idx": 10, "attr": "color", "val": "red"}, "object index 10 out of range"),
        ({"obj_idx": -1, "attr": "color", "val": "red"}, "out of range"),
        ({"obj_idx": 0, "attr": "colour", "val": "red"}, "unknown attribute"),
        ({"obj_idx": 0, "attr": "color", "val": "pink"}, "unknown value 'pink'"),
        ({"obj_idx": 0, "attr": "position", "val": ["up", 1]}, "unknown direction 'up'"),
        ({"obj_idx": 0, "attr": "position", "val": ["behind", 3]}, "unknown step 3"),
        ({"obj_idx": 0, "attr": "size"}, "lacks val"),
    ],
)
def test_bad_steps_raise_a_clear_error(step, message):
    with pytest.raises(InvalidStep, match=message):
        apply_step(scene(thing(0, 0)), step)


def test_position_values_may_be_tuples():
    assert apply_step(scene(thing(0, 0)), move(0, "behind", 1) | {"val": ("behind", 1)}).objects[0][
        "position"
    ] == [10, 0]


def test_distance_counts_differing_object_attribute_pairs():
    true = scene(thing(0, 0, color="cyan"), thing(10, 10, "large"))
    assert distance_to(true, true) == 0
    predicted = copy.deepcopy(true)
    predicted[0]["color"] = "red"
    predicted[1]["size"] = "small"
    predicted[1]["shape"] = "sphere"
    assert distance_to(predicted, true) == 3
    predicted = copy.deepcopy(true)
    predicted[0]["position"] = [0, 10]  # visible and different
    assert distance_to(predicted, true) == 1


def test_distance_invisible_equals_invisible():
    true = scene(thing(30, 0))  # the true final position is invisible
    for elsewhere in ([0, 35], [-40, -40], [21, 0]):
        predicted = copy.deepcopy(true)
        predicted[0]["position"] = elsewhere
        assert distance_to(predicted, true) == 0
        assert positions_match(elsewhere, [30, 0])
    predicted = copy.deepcopy(true)
    predicted[0]["position"] = [20, 0]  # visible: differs
    assert distance_to(predicted, true) == 1


def test_distance_off_plane_is_never_equal():
    true = scene(thing(30, 0))
    predicted = copy.deepcopy(true)
    predicted[0]["position"] = [45, 0]
    assert distance_to(predicted, true) == 1
    assert not positions_match([45, 0], [30, 0])
    # A visible true position needs exact equality.
    assert not positions_match([0, 1], [0, 0]) and positions_match([0, 0], [0, 0])


def test_distance_needs_the_same_objects():
    with pytest.raises(ValueError, match="cannot compare"):
        distance_to(scene(thing(0, 0))[:9], scene(thing(0, 0)))
