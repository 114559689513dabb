"""TRANCE metrics: hand-computed cases for every rule of the released evaluator, and random cases.

Pure Python, no database. Grid facts used in the worked numbers (../shared/FORMATS.md):
radii small 2, medium 4, large 6; two objects overlap when distance + 1e-4 < r1 + r2 + 1;
visible area [-20, 20], plane [-40, 40], bounds included; one move step is 10 units;
"behind" is +x, "right" is +y.

Three checks tie the fast (numpy) scoring to the rules:

* `ReleasedEvaluator` below re-does the released evaluator (hughplay/TVR, EventEvaluator)
  literally, sample by sample, with loops and one-hot feature vectors, and is compared with
  `score_event` / `score_view` item by item on several hundred random cases.
* The vectorised replay is compared with the simulator (apply_steps, distance_to) on thousands
  of random answers: final states, both errors, distances and order-sensitivity.
* The overlap test's sqrt (numpy) and math.hypot (simulator) are checked to agree on every
  integer offset that could overlap.
"""

from __future__ import annotations

import itertools
import math
import random
import re
import struct

import numpy as np
import orjson
import pytest

from benchmarks.records import FormatError
from plugins.trance.formats import ATTRIBUTE_VALUES, DIRECTIONS
from plugins.trance.generator import FINAL_CAMERAS, generate
from plugins.trance.metric import (
    EncodedAnswers,
    decode_states,
    encode_answers,
    encode_states,
    parse_predictions,
    replay_answers,
    score_basic,
    score_event,
    score_file,
    score_view,
    view_cameras,
)
from plugins.trance.simulator import (
    all_moves,
    apply_step,
    apply_steps,
    distance_to,
    is_invisible,
    is_valid_state,
    is_visible,
    moved_position,
    out_move_options,
)
from plugins.trance.tests.helpers import change, fake_pixel_counter, move, sample, scene, thing

# --- Builders (thing, scene, move, change: plugins/trance/tests/helpers.py) -----------------------


def only_item(samples, answers):
    scored = score_event(samples, answers)
    assert len(scored.items) == 1
    return scored.items[0]


FLOAT32_ONE_THIRD = 0.3333333432674408


# --- Event: hand-computed cases, one per rule ----------------------------------------------------


def test_distance_counts_every_object_even_untouched_invisible_ones():
    # Truth: object 0 turns blue. The answer does that and also recolours parked object 7
    # (invisible, never part of the truth): 1 differing pair, on object 7. dist 1, AND 1/1.
    initial = scene(thing(0, 0, color="red"))
    samples = [sample(0, initial, [change(0, "color", "blue")])]
    item = only_item(samples, {0: [change(0, "color", "blue"), change(7, "color", "green")]})
    assert (item["dist"], item["norm_dist"], item["loose_correct"], item["correct"]) == (1, 1.0, False, False)


def test_invisible_true_position_matches_any_invisible_prediction():
    # Object 0 at (10, 0) moves out: behind 2 -> (30, 0), invisible. Answering behind-right 2
    # -> (30, 20) is invisible too: equal, dist 0, correct. Behind 1 -> (20, 0) is still
    # visible (bounds included): not equal, dist 1.
    samples = [sample(0, scene(thing(10, 0)), [move(0, "behind", 2)])]
    other_out = only_item(samples, {0: [move(0, "behind-right", 2)]})
    assert (other_out["dist"], other_out["correct"]) == (0, True)
    still_visible = only_item(samples, {0: [move(0, "behind", 1)]})
    assert (still_visible["dist"], still_visible["loose_correct"]) == (1, False)


def test_visible_true_position_needs_exact_equality():
    # Object 0 (0, 0) -> behind 1 -> (10, 0). Answer right 1 -> (0, 10): visible, different: dist 1.
    samples = [sample(0, scene(thing(0, 0)), [move(0, "behind", 1)])]
    assert only_item(samples, {0: [move(0, "right", 1)]})["dist"] == 1


def test_position_off_the_plane_never_matches_an_invisible_true_position():
    # Object 0 at (20, 0) moves out: behind 2 -> (40, 0), on the plane (bound included), invisible.
    # The answer behind 2, behind 1 ends at (50, 0): off the plane, so unequal (dist 1) and an
    # invalid-position error. The true answer itself raises nothing: 40 is inside [-40, 40].
    samples = [sample(0, scene(thing(20, 0)), [move(0, "behind", 2)])]
    off = only_item(samples, {0: [move(0, "behind", 2), move(0, "behind", 1)]})
    assert (off["dist"], off["err_invalid_position"], off["correct"]) == (1, True, False)
    exact = only_item(samples, {0: [move(0, "behind", 2)]})
    assert (exact["dist"], exact["err_invalid_position"], exact["correct"]) == (0, False, True)


def test_invalid_position_replay_continues_so_out_and_back_is_loose_correct_only():
    # (20, 0) -> behind 2 -> (40, 0) -> behind 1 -> (50, 0) off the plane -> front 1 -> (40, 0).
    # Final state right: dist 0, loose-correct; the invalid position makes it not correct.
    # pred_step 3, target_step 1.
    samples = [sample(0, scene(thing(20, 0)), [move(0, "behind", 2)])]
    item = only_item(samples, {0: [move(0, "behind", 2), move(0, "behind", 1), move(0, "front", 1)]})
    assert item["dist"] == 0
    assert (item["loose_correct"], item["correct"], item["err_invalid_position"]) == (True, False, True)
    assert (item["pred_step"], item["target_step"]) == (3, 1)


def test_norm_dist_and_and_are_float32_as_released():
    # Three true steps; the answer gets two: dist 1, norm_dist float32(1) / float32(3).
    initial = scene(thing(0, 0, color="red"))
    truth = [change(0, "color", "blue"), change(0, "material", "metal"), change(0, "shape", "sphere")]
    scored = score_event([sample(0, initial, truth)], {0: truth[:2]})
    assert scored.items[0]["norm_dist"] == FLOAT32_ONE_THIRD == float(np.float32(1) / np.float32(3))
    assert scored.items[0]["norm_dist"] != 1 / 3
    assert scored.summary["AND"] == pytest.approx(1 / 3, abs=1e-7)


def test_pred_step_counts_duplicates_and_no_ops():
    # Truth: object 0 red -> blue. The answer repeats the step and sets object 1 to the colour it
    # already has (gray): 3 predicted steps, final state right, no error. StepDiff 3 - 1 = 2.
    samples = [sample(0, scene(thing(0, 0, color="red"), thing(10, 10)), [change(0, "color", "blue")])]
    scored = score_event(
        samples, {0: [change(0, "color", "blue"), change(0, "color", "blue"), change(1, "color", "gray")]}
    )
    assert (scored.items[0]["pred_step"], scored.items[0]["correct"]) == (3, True)
    assert scored.summary["StepDiff"] == 2


def test_colour_material_and_shape_steps_are_never_checked_for_overlap():
    # Objects 0 (0, 0) and 1 (3, 0), both small: 3 + 1e-4 < 2 + 2 + 1 = 5, they overlap from the
    # start. Recolouring, re-materialing or reshaping object 0 raises nothing.
    initial = scene(thing(0, 0), thing(3, 0))
    samples = [sample(0, initial, [change(0, "color", "blue")])]
    answer = [change(0, "color", "blue"), change(0, "material", "metal"), change(0, "shape", "sphere")]
    item = only_item(samples, {0: answer})
    assert (item["err_overlap"], item["dist"]) == (False, 2)


def test_size_step_is_checked_even_when_the_size_stays_or_shrinks():
    # Object 0 large at (0, 0), object 1 small at (6, 0): 6 < 6 + 2 + 1 = 9, overlapping from
    # the start (never flagged by itself). A size step on object 0 checks it again:
    #   "large" (stays):   6 < 9  -> overlap error
    #   "medium" (shrinks): 6 < 4 + 2 + 1 = 7 -> still an overlap error
    #   "small":            6 < 2 + 2 + 1 = 5 is false -> no error
    initial = scene(thing(0, 0, size="large"), thing(6, 0))
    samples = [sample(0, initial, [change(0, "color", "blue")])]
    assert only_item(samples, {0: [change(0, "size", "large")]})["err_overlap"] is True
    assert only_item(samples, {0: [change(0, "size", "medium")]})["err_overlap"] is True
    assert only_item(samples, {0: [change(0, "size", "small")]})["err_overlap"] is False
    assert only_item(samples, {0: []})["err_overlap"] is False


def test_only_the_moved_object_is_checked_so_initial_overlaps_are_never_flagged():
    # Objects 1 (0, 0) and 2 (3, 0) overlap from the start. Moving object 0 from (10, 10) to
    # (20, 10) (behind 1), far from both, raises nothing; nor does moving object 1 away to
    # (10, 0): 7 from object 2 >= 5, and 10 from object 0 ((10, 10)) >= 5.
    initial = scene(thing(10, 10), thing(0, 0), thing(3, 0))
    samples = [sample(0, initial, [move(0, "behind", 1)])]
    assert only_item(samples, {0: [move(0, "behind", 1)]})["correct"] is True
    assert only_item(samples, {0: [move(1, "behind", 1)]})["err_overlap"] is False


def test_overlap_counts_invisible_and_off_plane_objects():
    # Invisible object 1 small at (33, 0); object 0 small moves (20, 0) -> behind 1 -> (30, 0):
    # 3 < 5, overlap with an object nobody sees.
    initial = scene(thing(20, 0), thing(33, 0))
    samples = [sample(0, initial, [move(0, "front", 1)])]
    assert only_item(samples, {0: [move(0, "behind", 1)]})["err_overlap"] is True
    # Off the plane: object 1 (33, 0) -> behind 2 -> (53, 0); object 0 (20, 0) -> behind 2 ->
    # (40, 0) -> behind 1 -> (50, 0), 3 from object 1 < 5: overlap, and both left the plane.
    item = only_item(samples, {0: [move(1, "behind", 2), move(0, "behind", 2), move(0, "behind", 1)]})
    assert (item["err_overlap"], item["err_invalid_position"]) == (True, True)


def test_touching_is_not_overlapping():
    # Object 0 small (0, 0) -> behind 1 -> (10, 0). Object 1 small at (15, 0): distance 5,
    # 5 + 1e-4 < 5 is false: no overlap. At (14, 0): 4 + 1e-4 < 5: overlap.
    touching = [sample(0, scene(thing(0, 0), thing(15, 0)), [move(0, "behind", 1)])]
    assert only_item(touching, {0: [move(0, "behind", 1)]})["err_overlap"] is False
    closer = [sample(0, scene(thing(0, 0), thing(14, 0)), [change(0, "color", "red")])]
    assert only_item(closer, {0: [move(0, "behind", 1)]})["err_overlap"] is True


def test_empty_and_missing_answers_leave_the_initial_state():
    # Truth: object 0 red -> blue and (0, 0) -> right 1 -> (0, 10): an empty answer differs on
    # 2 pairs: dist 2, AND 2 / 2 = 1. A missing idx scores the same and is listed in problems.
    initial = scene(thing(0, 0, color="red"))
    samples = [
        sample(0, initial, [change(0, "color", "blue"), move(0, "right", 1)]),
        sample(1, initial, [change(0, "color", "blue"), move(0, "right", 1)]),
    ]
    scored = score_event(samples, {0: []})
    for item in scored.items:
        assert (item["dist"], item["norm_dist"], item["pred_step"], item["loose_correct"]) == (
            2,
            1.0,
            0,
            False,
        )
    assert [item["missing"] for item in scored.items] == [False, True]
    assert scored.summary["missing_predictions"] == 1
    assert "1 sample has no prediction" in scored.problems[0]


def test_predictions_for_unknown_samples_are_ignored_and_listed():
    samples = [sample(0, scene(thing(0, 0)), [change(0, "color", "red")])]
    scored = score_event(samples, {0: [change(0, "color", "red")], 99: []})
    assert scored.summary["Acc"] == 1.0
    assert scored.summary["extra_predictions"] == 1
    assert "idx 99" in scored.problems[0]


def test_options_play_no_part_in_event_scoring():
    # The true step says "right 1" and (wrongly, for the test) lists "left 1" as an option.
    # Event compares states: left 1 ends at (0, -10), not (0, 10): dist 1. Basic would accept it.
    samples = [sample(0, scene(thing(0, 0)), [move(0, "right", 1)], options={0: [["right", 1], ["left", 1]]})]
    assert only_item(samples, {0: [move(0, "left", 1)]})["dist"] == 1
    assert score_basic(samples, {0: [move(0, "left", 1)]}).items[0]["pair_correct"] is True


def test_bad_steps_are_a_clear_error_not_a_crash():
    samples = [sample(0, scene(thing(0, 0)), [change(0, "color", "red")])]
    with pytest.raises(FormatError) as caught:
        score_event(samples, {0: [change(10, "color", "red"), change(0, "color", "pink")]})
    assert [(error.record, error.field) for error in caught.value.errors] == [
        ("idx 0", "[0].obj_idx"),
        ("idx 0", "[1].val"),
    ]


def test_samples_need_one_to_four_true_steps():
    initial = scene(thing(0, 0))
    no_steps = sample(0, initial, [])
    five_steps = sample(
        1, initial, [change(0, "color", colour) for colour in ("red", "blue", "green", "cyan", "brown")]
    )
    with pytest.raises(FormatError) as caught:
        score_event([no_steps, five_steps], {})
    assert [(error.record, error.field) for error in caught.value.errors] == [
        ("idx 0", "transformations"),
        ("idx 1", "transformations"),
    ]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("color", "pink", "idx 0: objects[0].color: unknown value 'pink'"),
        ("position", [1, 2, 3], "idx 0: objects[0].position: expected [x, y] integers"),
        ("position", [1.5, 2], "idx 0: objects[0].position: expected [x, y] integers"),
    ],
)
def test_bad_sample_states_are_named(field, value, message):
    broken = sample(0, scene(thing(0, 0)), [change(0, "color", "red")])
    broken["states"][0]["objects"][0][field] = value
    with pytest.raises(ValueError, match=re.escape(message)):
        score_event([broken], {})


def test_no_samples_give_empty_means():
    summary = score_event([], {}).summary
    assert (summary["n"], summary["AD"], summary["Acc"], summary["EO"]) == (0, None, None, None)
    assert score_basic([], {}).summary["Acc"] is None


# --- Order sensitivity and EO --------------------------------------------------------------------


def swap_scene():
    # Object 0 small (0, 0), object 1 small (10, 0). True steps: object 1 behind 1 -> (20, 0),
    # then object 0 behind 1 -> (10, 0). In the other order object 0 lands on (10, 0) while
    # object 1 still stands there (distance 0 < 5): overlap. Both orders end in the same state.
    return scene(thing(0, 0), thing(10, 0)), [move(1, "behind", 1), move(0, "behind", 1)]


def test_a_move_into_a_place_another_object_leaves_is_order_sensitive():
    initial, truth = swap_scene()
    samples = [sample(0, initial, truth), sample(1, initial, truth)]
    scored = score_event(samples, {0: truth, 1: truth[::-1]})
    right_order, wrong_order = scored.items
    assert right_order["order_sensitive"] and wrong_order["order_sensitive"]
    assert (right_order["correct"], right_order["err_overlap"]) == (True, False)
    assert (wrong_order["loose_correct"], wrong_order["correct"], wrong_order["err_overlap"]) == (
        True,
        False,
        True,
    )
    # Order-sensitive samples: LAcc_o = 2/2, Acc_o = 1/2, EO = (1 - 0.5) / 1 = 0.5.
    assert scored.summary["EO"] == 0.5
    assert scored.summary["order_sensitive_n"] == 2


def test_eo_counts_order_sensitive_samples_only():
    # Sample 2 has two colour steps on different objects: no ordering raises an error, so it is
    # not order-sensitive, and its wrong answer does not enter EO: still (1 - 0.5) / 1.
    initial, truth = swap_scene()
    colours = [change(0, "color", "red"), change(1, "color", "blue")]
    samples = [sample(0, initial, truth), sample(1, initial, truth), sample(2, initial, colours)]
    scored = score_event(samples, {0: truth, 1: truth[::-1], 2: []})
    assert [item["order_sensitive"] for item in scored.items] == [True, True, False]
    assert scored.summary["EO"] == 0.5
    assert scored.summary["Acc"] == pytest.approx(1 / 3)


def test_orderings_that_end_elsewhere_make_a_sample_order_insensitive():
    # The swap (one ordering overlaps) plus object 0 turning blue, then green. Orderings that
    # swap the two colour steps end blue, not green: not every ordering reaches the final state,
    # so the sample is not order-sensitive although some orderings overlap.
    initial, truth = swap_scene()
    steps = [*truth, change(0, "color", "blue"), change(0, "color", "green")]
    assert only_item([sample(0, initial, steps)], {0: steps})["order_sensitive"] is False


def test_an_ordering_that_leaves_the_plane_makes_a_sample_order_sensitive():
    # Object 0 at (35, 0): front 2 -> (15, 0), behind 1 -> (25, 0). The other order goes
    # behind 1 -> (45, 0), off the plane (invalid position), then front 2 -> (25, 0): same end.
    steps = [move(0, "front", 2), move(0, "behind", 1)]
    item = only_item([sample(0, scene(thing(35, 0)), steps)], {0: steps[::-1]})
    assert item["order_sensitive"] is True
    assert (item["loose_correct"], item["err_invalid_position"], item["err_overlap"]) == (True, True, False)


def test_a_true_order_that_errs_itself_is_order_sensitive_by_the_letter_of_the_rule():
    # Hand-rolled, not valid data: the one true step moves object 0 onto object 1 at (10, 0).
    # Its only ordering overlaps and reaches the final state, so the rule calls it
    # order-sensitive (the shortcut for samples with one position/size step must keep that).
    steps = [move(0, "behind", 1)]
    item = only_item([sample(0, scene(thing(0, 0), thing(10, 0)), steps)], {0: steps})
    assert (item["order_sensitive"], item["err_overlap"], item["loose_correct"]) == (True, True, True)


def test_eo_is_none_without_loose_correct_order_sensitive_samples():
    initial, truth = swap_scene()
    assert score_event([sample(0, initial, truth)], {0: []}).summary["EO"] is None
    assert score_event([sample(0, scene(thing(0, 0)), [move(0, "left", 1)])], {}).summary["EO"] is None


# --- Summaries by length and camera --------------------------------------------------------------


def test_by_length_groups_samples_by_true_length():
    # Lengths 1, 1, 2: answers right, empty, right. Length 1: LAcc 1/2, AD (0 + 1) / 2 = 0.5.
    # Length 2: LAcc 1. Lengths 3 and 4: n 0 and None everywhere.
    initial = scene(thing(0, 0, color="red"))
    one = [change(0, "color", "blue")]
    two = [change(0, "color", "blue"), move(0, "left", 1)]
    samples = [sample(0, initial, one), sample(1, initial, one), sample(2, initial, two)]
    summary = score_event(samples, {0: one, 2: two}).summary
    assert (
        summary["by_length"]["1"]["n"],
        summary["by_length"]["1"]["LAcc"],
        summary["by_length"]["1"]["AD"],
    ) == (
        2,
        0.5,
        0.5,
    )
    assert (summary["by_length"]["2"]["n"], summary["by_length"]["2"]["Acc"]) == (1, 1.0)
    assert summary["by_length"]["3"] == summary["by_length"]["4"]
    assert summary["by_length"]["3"]["n"] == 0 and summary["by_length"]["3"]["AD"] is None
    assert summary["AD"] == pytest.approx(1 / 3)


def test_view_reports_each_final_camera():
    # Three samples, one per camera; only the Left one is answered right.
    initial = scene(thing(0, 0, color="red"))
    truth = [change(0, "color", "blue")]
    samples = [sample(idx, initial, truth) for idx in range(3)]
    cameras = {0: "Camera_Left", 1: "Camera_Center", 2: "Camera_Right"}
    scored = score_view(samples, {0: truth}, cameras)
    assert [item["camera"] for item in scored.items] == ["Camera_Left", "Camera_Center", "Camera_Right"]
    assert scored.summary["by_camera"]["Camera_Left"]["Acc"] == 1.0
    assert scored.summary["by_camera"]["Camera_Center"]["Acc"] == 0.0
    assert scored.summary["by_camera"]["Camera_Right"]["n"] == 1
    assert scored.summary["Acc"] == pytest.approx(1 / 3)
    assert scored.params["setting"] == "view" and scored.summary["parameters"] is scored.params


def test_view_needs_a_known_camera_for_every_sample():
    samples = [sample(idx, scene(thing(0, 0)), [change(0, "color", "red")]) for idx in range(2)]
    with pytest.raises(FormatError) as caught:
        score_view(samples, {}, {0: "Camera_Top"})
    assert [(error.record, error.field) for error in caught.value.errors] == [
        ("idx 0", "camera"),
        ("idx 1", "camera"),
    ]


def test_view_cameras_are_deterministic_per_idx_and_seed():
    samples = [{"idx": idx} for idx in range(300)]
    cameras = view_cameras(samples)
    assert cameras == view_cameras(list(reversed(samples)))
    assert view_cameras(samples[100:200]) == {idx: cameras[idx] for idx in range(100, 200)}
    assert set(cameras.values()) == set(FINAL_CAMERAS)
    assert all(60 <= list(cameras.values()).count(camera) <= 140 for camera in FINAL_CAMERAS)
    assert view_cameras(samples, seed=1) != cameras


# --- Basic ---------------------------------------------------------------------------------------


def test_basic_object_attribute_value_and_accuracy():
    # Truth of every sample: object 0 moves out from (10, 0) with options behind 2 and behind-right 2
    # (both land invisible; the list is not filtered for overlap).
    #   idx 0: object 0, behind-right 2 -> obj, attr, value right: correct
    #   idx 1: object 3, behind 2       -> attr and value right, object wrong: not correct
    #   idx 2: object 0, color red      -> object right only
    #   idx 3: object 0, right 2        -> object and attribute right, value not an option
    #   idx 4: no answer                -> wrong on all three
    # ObjAcc 3/5, AttrAcc 3/5, ValAcc 2/5, Acc 1/5.
    options = {0: [["behind", 2], ["behind-right", 2]]}
    samples = [sample(idx, scene(thing(10, 0)), [move(0, "behind", 2)], options=options) for idx in range(5)]
    answers = {
        0: [move(0, "behind-right", 2)],
        1: [move(3, "behind", 2)],
        2: [change(0, "color", "red")],
        3: [move(0, "right", 2)],
    }
    scored = score_basic(samples, answers)
    rows = [
        (item["obj_correct"], item["attr_correct"], item["pair_correct"], item["correct"])
        for item in scored.items
    ]
    assert rows == [
        (True, True, True, True),
        (False, True, True, False),
        (True, False, False, False),
        (True, True, False, False),
        (False, False, False, False),
    ]
    summary = scored.summary
    assert (summary["ObjAcc"], summary["AttrAcc"], summary["ValAcc"], summary["Acc"], summary["n"]) == (
        0.6,
        0.6,
        0.4,
        0.2,
        5,
    )
    assert scored.items[4]["missing"] is True


def test_basic_attribute_is_right_whatever_the_object():
    samples = [sample(0, scene(thing(0, 0)), [change(0, "color", "red")])]
    item = score_basic(samples, {0: [change(5, "color", "blue")]}).items[0]
    assert (item["obj_correct"], item["attr_correct"], item["pair_correct"]) == (False, True, False)


def test_basic_scores_the_first_step_only():
    samples = [sample(0, scene(thing(0, 0)), [change(0, "color", "red")])]
    item = score_basic(samples, {0: [change(0, "color", "red"), change(1, "size", "large")]}).items[0]
    assert item["correct"] is True


def test_basic_refuses_samples_with_several_steps():
    samples = [sample(0, scene(thing(0, 0)), [change(0, "color", "red"), change(0, "size", "large")])]
    with pytest.raises(FormatError) as caught:
        score_basic(samples, {})
    assert (caught.value.errors[0].record, caught.value.errors[0].field) == ("idx 0", "transformations")


# --- Prediction files ----------------------------------------------------------------------------


def test_parse_predictions_reads_integer_keys_and_keeps_three_fields():
    data = orjson.dumps(
        {
            "0": [{"obj_idx": 2, "attr": "color", "val": "cyan", "options": ["cyan"]}],
            "17": [{"obj_idx": 0, "attr": "position", "val": ["behind", 2], "type": "out"}],
            "-3": [],
        }
    )
    assert parse_predictions(data) == {
        0: [{"obj_idx": 2, "attr": "color", "val": "cyan"}],
        17: [{"obj_idx": 0, "attr": "position", "val": ["behind", 2]}],
        -3: [],
    }


def test_parse_predictions_lists_every_problem_with_record_and_field():
    data = orjson.dumps(
        {
            "abc": [],
            "1": {"obj_idx": 0},
            "2": [
                "color.red",
                {"attr": "color", "val": "red"},
                {"obj_idx": 10, "attr": "color", "val": "red"},
                {"obj_idx": True, "attr": "colour", "val": "red"},
                {"obj_idx": 0, "attr": "color", "val": "pink"},
                {"obj_idx": 0, "attr": "position", "val": ["up", 1]},
                {"obj_idx": 0, "attr": "position", "val": ["behind", 3]},
                {"obj_idx": 0, "attr": "size"},
            ],
            "3": [{"obj_idx": 1, "attr": "shape", "val": "cube"}],
            "03": [],
        }
    )
    with pytest.raises(FormatError) as caught:
        parse_predictions(data, source="answers.json")
    found = [(error.record, error.field) for error in caught.value.errors]
    assert found == [
        ("idx abc", "idx"),
        ("idx 1", "steps"),
        ("idx 2", "[0]"),
        ("idx 2", "[1].obj_idx"),
        ("idx 2", "[2].obj_idx"),
        ("idx 2", "[3].obj_idx"),
        ("idx 2", "[3].attr"),
        ("idx 2", "[4].val"),
        ("idx 2", "[5].val"),
        ("idx 2", "[6].val"),
        ("idx 2", "[7].val"),
        ("idx 03", "idx"),
    ]
    assert "answers.json" in str(caught.value)
    assert "unknown value 'pink'" in str(caught.value)


@pytest.mark.parametrize(
    ("data", "field"),
    [(b"[1, 2]", "top level"), (b'{"0": [', "column 8"), (b'"text"', "top level")],
)
def test_parse_predictions_refuses_what_is_not_an_object(data, field):
    with pytest.raises(FormatError) as caught:
        parse_predictions(data)
    assert caught.value.errors[0].field == field


# --- Files ---------------------------------------------------------------------------------------


def jsonl(samples):
    return b"".join(orjson.dumps(one) + b"\n" for one in samples)


def test_score_file_parses_both_files_and_defaults_view_cameras_for_one_camera_per_answer():
    initial, truth = swap_scene()
    samples = [sample(idx, initial, truth) for idx in range(6)]
    predictions = orjson.dumps({"0": truth, "1": truth[::-1], "2": []})
    event = score_file(jsonl(samples), predictions, setting="event")
    assert [item["correct"] for item in event.items] == [True, False, False, False, False, False]
    view = score_file(jsonl(samples), predictions, setting="view", variant="one-camera")
    assert view.params["cameras"] == "view_cameras(seed=0)" and view.params["variant"] == "one-camera"
    assert {item["idx"]: item["camera"] for item in view.items} == view_cameras(samples)
    given = {idx: "Camera_Right" for idx in range(6)}
    explicit = score_file(jsonl(samples), predictions, setting="view", variant="one-camera", cameras=given)
    assert explicit.params["cameras"] == "given"
    assert explicit.summary["by_camera"]["Camera_Right"]["n"] == 6
    # The released protocol (the default): every sample under each of the three cameras.
    official = score_file(jsonl(samples), predictions, setting="view")
    assert (official.summary["n"], official.summary["samples"], official.params["variant"]) == (
        18,
        6,
        "official",
    )
    with pytest.raises(ValueError, match="unknown TRANCE metric variant 'paper'"):
        score_file(jsonl(samples), predictions, setting="view", variant="paper")


def test_score_file_basic_and_bad_setting():
    samples = [sample(0, scene(thing(0, 0)), [change(0, "color", "red")])]
    basic = score_file(
        jsonl(samples), b'{"0": [{"obj_idx": 0, "attr": "color", "val": "red"}]}', setting="basic"
    )
    assert basic.summary["Acc"] == 1.0
    with pytest.raises(ValueError, match="unknown TRANCE setting"):
        score_file(jsonl(samples), b"{}", setting="Event")


def test_score_file_reports_bad_ground_truth():
    broken = sample(0, scene(thing(0, 0)), [change(0, "color", "red")])
    broken["states"][0]["objects"][0]["color"] = "pink"
    with pytest.raises(FormatError):
        score_file(jsonl([broken]), b"{}", setting="event")


# --- The released evaluator, literally -----------------------------------------------------------


class ReleasedEvaluator:
    """hughplay/TVR's EventEvaluator, one sample at a time, in plain Python.

    Objects are feature vectors in the released order: position (2 numbers), then one-hot
    material, color, shape and size. Steps set one-hot slices or add to the position; after a
    position step the object is "invalid" when outside [-40, 40]; after a position or size step
    `is_overlap` counts the objects (the moved one included, at distance 0) closer than
    r_i + r_j + 1 - 1e-4 and reports an overlap when there are more than one. `compute_diff`
    compares every feature with a tolerance, overwrites both position features with the
    visibility-aware position equality, and halves the count (a changed one-hot flips two
    features; a position counts twice). The released code keeps positions normalised to [0, 1]
    in float32; here they stay in grid units, so the tolerance has nothing to absorb.
    """

    FEATURE_ORDER = ("position", "material", "color", "shape", "size")
    RADIUS = {"small": 2, "medium": 4, "large": 6}
    MIN_GAP = 1
    EPSILON = 1e-4
    INVISIBLE, VISIBLE, INVALID = 0, 1, 2

    def __init__(self):
        self.start = {}
        offset = 0
        for feature in self.FEATURE_ORDER:
            self.start[feature] = offset
            offset += 2 if feature == "position" else len(ATTRIBUTE_VALUES[feature])

    def vector(self, obj):
        features = [float(obj["position"][0]), float(obj["position"][1])]
        for feature in self.FEATURE_ORDER[1:]:
            one_hot = [0.0] * len(ATTRIBUTE_VALUES[feature])
            one_hot[ATTRIBUTE_VALUES[feature].index(obj[feature])] = 1.0
            features += one_hot
        return features

    def size_of(self, vector):
        start = self.start["size"]
        one_hot = vector[start : start + 3]
        return ATTRIBUTE_VALUES["size"][one_hot.index(max(one_hot))]

    def visibility(self, x, y):
        if -40 <= x <= 40 and -40 <= y <= 40:
            if -20 <= x <= 20 and -20 <= y <= 20:
                return self.VISIBLE
            return self.INVISIBLE
        return self.INVALID

    def is_overlap(self, vectors, obj_idx):
        subject = vectors[obj_idx]
        violations = 0
        for other in vectors:
            distance = math.sqrt((other[0] - subject[0]) ** 2 + (other[1] - subject[1]) ** 2)
            minimum = self.RADIUS[self.size_of(other)] + self.RADIUS[self.size_of(subject)] + self.MIN_GAP
            if distance + self.EPSILON < minimum:
                violations += 1
        return violations > 1

    def transform_step(self, vectors, obj_idx, attr, value):
        obj = vectors[obj_idx]
        if attr == "position":
            direction, steps = value
            dx, dy = DIRECTIONS[direction]
            obj[0] += dx * steps * 10
            obj[1] += dy * steps * 10
        else:
            start = self.start[attr]
            for offset in range(len(ATTRIBUTE_VALUES[attr])):
                obj[start + offset] = 0.0
            obj[start + ATTRIBUTE_VALUES[attr].index(value)] = 1.0
        error_out = attr == "position" and self.visibility(obj[0], obj[1]) == self.INVALID
        error_overlap = attr in ("position", "size") and self.is_overlap(vectors, obj_idx)
        return error_overlap, error_out

    def transform(self, initial_objects, steps):
        vectors = [self.vector(obj) for obj in initial_objects]
        error_overlap = error_out = False
        for step in steps:
            overlap, out = self.transform_step(vectors, step["obj_idx"], step["attr"], step["val"])
            error_overlap |= overlap
            error_out |= out
        return vectors, error_overlap, error_out

    def compute_diff(self, predicted, target):
        differences = 0
        for pred_vector, true_vector in zip(predicted, target, strict=True):
            diff = [abs(p - t) > self.EPSILON for p, t in zip(pred_vector, true_vector, strict=True)]
            position_equal = all(
                abs(p - t) < self.EPSILON for p, t in zip(pred_vector[:2], true_vector[:2], strict=True)
            )
            pred_visibility = self.visibility(pred_vector[0], pred_vector[1])
            true_visibility = self.visibility(true_vector[0], true_vector[1])
            equal = (true_visibility == self.VISIBLE and position_equal) or (
                true_visibility == self.INVISIBLE and pred_visibility == self.INVISIBLE
            )
            diff[0] = diff[1] = not equal
            differences += sum(diff)
        return differences / 2

    def evaluate(self, one_sample, prediction):
        initial = one_sample["states"][0]["objects"]
        target = [self.vector(obj) for obj in one_sample["states"][-1]["objects"]]
        vectors, error_overlap, error_out = self.transform(initial, prediction)
        dist = self.compute_diff(vectors, target)
        truth = one_sample["transformations"]
        return {
            "dist": int(dist),
            "norm_dist": float32(float32(dist) / float32(len(truth))),
            "loose_correct": dist == 0,
            "correct": dist == 0 and not error_overlap and not error_out,
            "err_overlap": error_overlap,
            "err_invalid_position": error_out,
            "pred_step": len(prediction),
            "target_step": len(truth),
            "order_sensitive": self.order_sensitive(initial, target, truth),
        }

    def order_sensitive(self, initial, target, truth):
        reaches_always, some_error = True, False
        for ordering in itertools.permutations(truth):
            vectors, error_overlap, error_out = self.transform(initial, ordering)
            reaches_always &= self.compute_diff(vectors, target) == 0
            some_error |= error_overlap or error_out
        return reaches_always and some_error


def float32(value):
    return struct.unpack("f", struct.pack("f", value))[0]


# --- Random cases --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def generated_samples(tmp_path_factory):
    folder = tmp_path_factory.mktemp("trance")
    generate(folder, count=300, seed=11, render_images=False, pixel_counter=fake_pixel_counter)
    return [orjson.loads(line) for line in (folder / "data.jsonl").read_bytes().splitlines()]


def random_object(rng, x, y):
    return {
        "color": rng.choice(ATTRIBUTE_VALUES["color"]),
        "material": rng.choice(ATTRIBUTE_VALUES["material"]),
        "shape": rng.choice(ATTRIBUTE_VALUES["shape"]),
        "size": rng.choice(ATTRIBUTE_VALUES["size"]),
        "position": [x, y],
    }


def random_step(rng, object_count=10):
    attr = rng.choice(("position", "position", "color", "material", "shape", "size"))
    value = list(rng.choice(all_moves())) if attr == "position" else rng.choice(ATTRIBUTE_VALUES[attr])
    return {"obj_idx": rng.randrange(object_count), "attr": attr, "val": value}


def steps_onto(state, place):
    """Every move that takes some object onto `place` (where an earlier move started)."""
    return [
        move(index, *value)
        for index, obj in enumerate(state)
        for value in all_moves()
        if moved_position(obj["position"], value) == place
    ]


def crowded_sample(rng, idx):
    """A hand-rolled sample: ten objects on a coarse lattice (crowded, sometimes overlapping from
    the start, some invisible), then 1 to 4 random error-free steps, often on the same few
    objects, and moves preferably onto the place the previous move left: many orderings
    collide, and some end elsewhere."""
    spots = rng.sample([(x, y) for x in range(-30, 31, 10) for y in range(-30, 31, 10)], 10)
    initial = [random_object(rng, x + rng.choice((-2, 0, 2)), y) for x, y in spots]
    steps, state, vacated = [], initial, None
    for _ in range(rng.randint(1, 4)):
        candidates = steps_onto(state, vacated) if vacated else []
        rng.shuffle(candidates)
        candidates += [random_step(rng, object_count=rng.choice((3, 10))) for _ in range(50)]
        for step in candidates:
            result = apply_step(state, step)
            if result.changed and not result.overlap and not result.invalid_position:
                if step["attr"] == "position":
                    vacated = state[step["obj_idx"]]["position"]
                steps.append(step)
                state = result.objects
                break
    if not steps:
        steps = [{"obj_idx": 0, "attr": "color", "val": "red" if initial[0]["color"] != "red" else "blue"}]
    return sample(idx, initial, steps)


def recoloured_twice(rng, idx):
    """A crowded sample of at most two steps, plus two colour steps on one object (blue then
    green, say) at random places: orderings that swap the two end on the other colour."""
    while True:
        one = crowded_sample(rng, idx)
        if len(one["transformations"]) <= 2:
            break
    steps = [{key: step[key] for key in ("obj_idx", "attr", "val")} for step in one["transformations"]]
    obj_idx = rng.randrange(10)
    colours = [c for c in ATTRIBUTE_VALUES["color"] if c != one["states"][1]["objects"][obj_idx]["color"]]
    for colour in rng.sample(colours, 2):
        steps.insert(rng.randint(0, len(steps)), change(obj_idx, "color", colour))
    return sample(idx, one["states"][0]["objects"], steps)


EDGE_MOVES = {
    "front": ((35, 0), "behind"),
    "behind": ((-35, 0), "front"),
    "left": ((0, 35), "right"),
    "right": ((0, -35), "left"),
}


def edge_sample(rng, idx):
    """A hand-rolled sample whose truth moves an object standing 5 from an edge 20 inward, then
    10 back: the other ordering leaves the plane first. Other objects on a lattice around."""
    inward = rng.choice(list(EDGE_MOVES))
    (x, y), outward = EDGE_MOVES[inward]
    spots = [(sx, sy) for sx in range(-30, 31, 10) for sy in range(-30, 31, 10)]
    while True:
        initial = [random_object(rng, x, y)]
        initial += [random_object(rng, sx, sy) for sx, sy in rng.sample(spots, 9)]
        steps = [move(0, inward, 2), move(0, outward, 1)]
        steps.insert(rng.randint(0, 2), random_step(rng))
        outcome = apply_steps(initial, steps)
        if is_valid_state(initial) and not outcome.overlap_error and not outcome.invalid_position_error:
            return sample(idx, initial, steps)


def random_answer(rng, one_sample):
    """A prediction built to hit every rule: the truth, reordered, with wrong objects or values,
    duplicated or extra steps, moves off the plane and back, out-move alternatives, empty."""
    truth = [{key: step[key] for key in ("obj_idx", "attr", "val")} for step in one_sample["transformations"]]
    initial = one_sample["states"][0]["objects"]
    kind = rng.randrange(10)
    if kind == 0:
        return truth
    if kind == 1:
        return rng.sample(truth, len(truth))
    if kind == 2:
        answer = list(truth)
        answer[rng.randrange(len(answer))] = random_step(rng)
        return answer
    if kind == 3:
        return [*truth, *(random_step(rng) for _ in range(rng.randint(1, 3)))]
    if kind == 4:
        answer = list(truth)
        answer.insert(rng.randrange(len(answer) + 1), rng.choice(truth))
        return answer
    if kind == 5:
        return []
    if kind == 6:
        # Off the plane and back: push some object out twice, then bring it back.
        obj_idx = rng.randrange(10)
        direction = rng.choice(list(DIRECTIONS))
        back = {"behind": "front", "front": "behind", "left": "right", "right": "left"}.get(direction)
        answer = [
            *truth,
            move(obj_idx, direction, 2),
            move(obj_idx, direction, 2),
            move(obj_idx, direction, 2),
        ]
        if back:
            answer += [move(obj_idx, back, 2)] * rng.randint(1, 3)
        return answer
    if kind == 7:
        # Replace a move by another option that leads out of the visible area, if any.
        answer = list(truth)
        state = initial
        for number, step in enumerate(truth):
            if step["attr"] == "position" and is_visible(state[step["obj_idx"]]["position"]):
                options = out_move_options(state, step["obj_idx"])
                if options:
                    answer[number] = move(step["obj_idx"], *rng.choice(options))
            state = apply_step(state, step).objects
        return answer
    if kind == 8:
        return [random_step(rng) for _ in range(rng.randint(1, 6))]
    return truth[:-1]


@pytest.fixture(scope="module")
def random_cases(generated_samples):
    """(samples, answers, cameras): the generated samples and as many crowded ones, each with
    a random answer, idx renumbered."""
    rng = random.Random(20201126)
    samples = [dict(one, idx=number) for number, one in enumerate(generated_samples)]
    samples += [crowded_sample(rng, len(samples) + number) for number in range(300)]
    samples += [edge_sample(rng, len(samples) + number) for number in range(40)]
    samples += [recoloured_twice(rng, len(samples) + number) for number in range(40)]
    answers = {one["idx"]: random_answer(rng, one) for one in samples}
    cameras = {one["idx"]: rng.choice(FINAL_CAMERAS) for one in samples}
    return samples, answers, cameras


def test_random_cases_cover_every_rule(random_cases):
    samples, answers, cameras = random_cases
    items = score_event(samples, answers).items
    assert len(items) >= 400
    for key in ("loose_correct", "correct", "err_overlap", "err_invalid_position", "order_sensitive"):
        assert 0 < sum(item[key] for item in items) < len(items), key
    assert any(item["loose_correct"] and not item["correct"] for item in items)
    assert any(item["pred_step"] == 0 for item in items)
    assert not all(is_valid_state(one["states"][0]["objects"]) for one in samples)
    # Order-sensitive through an overlap only, and through leaving the plane.
    orderings = [
        [
            apply_steps(one["states"][0]["objects"], order)
            for order in itertools.permutations(one["transformations"])
        ]
        for one, item in zip(samples, items, strict=True)
        if item["order_sensitive"]
    ]
    assert any(not any(outcome.invalid_position_error for outcome in outcomes) for outcomes in orderings)
    assert any(not any(outcome.overlap_error for outcome in outcomes) for outcomes in orderings)
    # Some ordering errs but another ends elsewhere: not order-sensitive.
    assert any(
        not item["order_sensitive"]
        and any(
            apply_steps(one["states"][0]["objects"], order).overlap_error
            for order in itertools.permutations(one["transformations"])
        )
        for one, item in zip(samples, items, strict=True)
    )


def test_event_and_view_match_the_released_evaluator_item_by_item(random_cases):
    samples, answers, cameras = random_cases
    reference = ReleasedEvaluator()
    view = score_view(samples, answers, cameras)
    expected_items = []
    for one, item in zip(samples, view.items, strict=True):
        expected = reference.evaluate(one, answers[one["idx"]])
        expected_items.append(expected)
        assert {key: item[key] for key in expected} == expected, one["idx"]
        assert item["camera"] == cameras[one["idx"]]
    event = score_event(samples, answers)
    assert [{**item, "camera": cameras[item["idx"]]} for item in event.items] == view.items

    # Summaries, recomputed from the reference's items.
    def means(selected):
        count = len(selected)
        sensitive = [item for item in selected if item["order_sensitive"]]
        loose = sum(item["loose_correct"] for item in sensitive)
        return {
            "n": count,
            "AD": sum(item["dist"] for item in selected) / count,
            "AND": sum(item["norm_dist"] for item in selected) / count,
            "LAcc": sum(item["loose_correct"] for item in selected) / count,
            "Acc": sum(item["correct"] for item in selected) / count,
            "EO": (loose - sum(item["correct"] for item in sensitive)) / loose if loose else None,
        }

    def check(summary, selected):
        expected = means(selected)
        assert summary["n"] == expected["n"]
        for key in ("AD", "AND", "LAcc", "Acc"):
            assert summary[key] == pytest.approx(expected[key], abs=1e-9), key
        assert (
            summary["EO"] == pytest.approx(expected["EO"])
            if expected["EO"] is not None
            else summary["EO"] is None
        )

    check(view.summary, expected_items)
    for camera in FINAL_CAMERAS:
        chosen = [
            item for one, item in zip(samples, expected_items, strict=True) if cameras[one["idx"]] == camera
        ]
        check(view.summary["by_camera"][camera], chosen)
    for length in (1, 2, 3, 4):
        chosen = [item for item in expected_items if item["target_step"] == length]
        check(view.summary["by_length"][str(length)], chosen)


def test_vectorised_replay_equals_the_simulator_on_thousands_of_answers(random_cases):
    samples, _, _ = random_cases
    rng = random.Random(7)
    cases = [(one, random_answer(rng, one)) for _ in range(8) for one in samples]
    assert len(cases) >= 3000
    labels = [f"case {number}" for number in range(len(cases))]
    initial = encode_states([one["states"][0]["objects"] for one, _ in cases], labels)
    answers = encode_answers([answer for _, answer in cases], labels)
    replayed = replay_answers(initial, answers)
    finals = decode_states(replayed.states)
    scored = score_event(
        [dict(one, idx=number) for number, (one, _) in enumerate(cases)],
        {number: answer for number, (_, answer) in enumerate(cases)},
    )
    for number, (one, answer) in enumerate(cases):
        outcome = apply_steps(one["states"][0]["objects"], answer)
        assert finals[number] == outcome.objects, number
        assert bool(replayed.overlap[number]) == outcome.overlap_error, number
        assert bool(replayed.invalid_position[number]) == outcome.invalid_position_error, number
        assert scored.items[number]["dist"] == distance_to(outcome.objects, one["states"][1]["objects"])


def test_order_sensitivity_equals_the_simulator_rule(random_cases):
    samples, _, _ = random_cases
    items = score_event(samples, {}).items
    for one, item in zip(samples, items, strict=True):
        initial, final = one["states"][0]["objects"], one["states"][1]["objects"]
        outcomes = [
            apply_steps(initial, ordering) for ordering in itertools.permutations(one["transformations"])
        ]
        expected = all(distance_to(outcome.objects, final) == 0 for outcome in outcomes) and any(
            outcome.overlap_error or outcome.invalid_position_error for outcome in outcomes
        )
        assert item["order_sensitive"] == expected, one["idx"]


def test_numpy_overlap_distance_agrees_with_math_hypot_on_every_integer_offset():
    # The simulator tests math.hypot(dx, dy) + 1e-4 < reach; the arrays test
    # sqrt(dx*dx + dy*dy) + 1e-4 < reach. Reaches are 5, 7, 9, 11 or 13; beyond |offset| 100
    # both distances exceed every reach. So agreeing on this square proves them equal.
    offsets = range(-100, 101)
    pairs = list(itertools.product(offsets, offsets))
    dx = np.array([pair[0] for pair in pairs])
    dy = np.array([pair[1] for pair in pairs])
    array_distances = np.sqrt(dx * dx + dy * dy)
    hypot_distances = np.array([math.hypot(x, y) for x, y in pairs])
    for reach in (5.0, 7.0, 9.0, 11.0, 13.0):
        assert np.array_equal(array_distances + 1e-4 < reach, hypot_distances + 1e-4 < reach)


def test_long_answers_are_replayed_without_padding():
    # One answer of 5,000 steps next to an empty one: ragged arrays, no (N, 5000) padding.
    initial = scene(thing(0, 0, color="red"))
    samples = [
        sample(0, initial, [change(0, "color", "blue")]),
        sample(1, initial, [change(0, "color", "blue")]),
    ]
    long_answer = [change(0, "color", "green"), change(0, "color", "blue")] * 2500
    scored = score_event(samples, {0: long_answer})
    assert (scored.items[0]["pred_step"], scored.items[0]["correct"]) == (5000, True)
    assert scored.items[1]["dist"] == 1


def test_encoded_answers_are_ragged():
    encoded = encode_answers(
        [[change(0, "color", "red")], [], [move(1, "left", 2), change(2, "size", "large")]], "abc"
    )
    assert isinstance(encoded, EncodedAnswers)
    assert encoded.lengths.tolist() == [1, 0, 2]
    assert encoded.starts.tolist() == [0, 1, 1]
    assert encoded.objects.tolist() == [0, 1, 2]


def test_invisible_helper_agrees_with_the_simulator_on_the_boundaries():
    # Sanity of the boundaries the hand cases rely on: 20 visible, 21 invisible, 40 on the plane.
    assert is_visible([20, -20]) and is_invisible([21, 0]) and is_invisible([40, 40])
    assert not is_invisible([41, 0])
