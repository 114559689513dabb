"""The CLEVR-Ref+ paper's diagnostics, worked by hand: by object count, 0-Relate expressions by
the attribute that singles out their objects, IoU at each program step, false premises, and the
report's diagnostic tables built from them (pure Python, no database).

Two tiny scenes, 4 x 5 pixels (20 pixels, row-major), scored under the full-resolution variant
(union IoU, mean and cumulative), so every I and U below is a count of a few pixels.

Scene A (image 0, 3 objects)                 Scene B (image 1, 4 objects)
    row 0:  0 0 . . .                            row 0:  0 . 1 . 2
    row 1:  . . 1 1 1                            row 1:  . . . . .
    row 2:  2 . . . .                            row 2:  . . 3 . .
    row 3:  2 . . . .                            row 3:  . . . . .
    0 large red rubber cube     {0, 1}           0 large red rubber cube      {0}
    1 small red metal sphere    {7, 8, 9}        1 large blue rubber cube     {2}
    2 small blue rubber cylinder {10, 15}        2 small red rubber sphere    {4}
                                                 3 small blue rubber sphere   {12}

Which attributes single out an object (it alone has that value):
    A: object 2 by color (the only blue) and shape (the only cylinder); objects {0, 1} by color
       (the red ones); B: object 0 by none (another large, red, rubber and cube each).

    E0 (A) the blue thing                    -> [2]     0-Relate, names color: "included"
    E1 (A) the small rubber thing            -> [2]     0-Relate, names size and material
                                                        although color would do: "excluded"
    E2 (A) the red things                    -> [0, 1]  0-Relate, names color: "included"
    E3 (B) the large red thing               -> [0]     0-Relate, nothing singles it: "none"
    E4 (B) the blue thing right of the large red thing -> [1]   1-Relate
    E5 (A) the blue sphere                   -> []      false premise
    E6 (B) the green thing                   -> []      false premise

    pred  box (truth box)            box IoU     mask     I / U
    E0    [0,2,1,2] ([0,2,1,2])      1   ✓       {10,15}  2 / 2 = 1
    E1    [0,2,1,1] ([0,2,1,2])      1/2 ✓       {10}     1 / 2 = 0.5
    E2    (several objects)          -           {7,8,9}  3 / 5 = 0.6
    E3    [1,0,1,1] ([0,0,1,1])      0   ✗       {2}      0 / 2 = 0
    E4    [2,0,1,1] ([2,0,1,1])      1   ✓       {2}      1 / 1 = 1
    E5    no box, no mask: names nothing, right
    E6    box [0,0,1,1], mask {0}: names something, wrong
"""

from __future__ import annotations

import json
import math

import pytest

from benchmarks.records import FormatError
from plugins.clevrref import metric as clevrref
from plugins.clevrref.metric import FULL_RESOLUTION

HEIGHT, WIDTH = 4, 5
TINY = {"height": HEIGHT, "width": WIDTH, "variant": FULL_RESOLUTION}


def thing(size, color, material, shape):
    return {"size": size, "color": color, "material": material, "shape": shape}


SCENE_A = {
    "image_index": 0,
    "image_filename": "CLEVR_val_000000.png",
    "objects": [
        thing("large", "red", "rubber", "cube"),
        thing("small", "red", "metal", "sphere"),
        thing("small", "blue", "rubber", "cylinder"),
    ],
    "relationships": {},
    "obj_bbox": {"1": [0, 0, 2, 1], "2": [2, 1, 3, 1], "3": [0, 2, 1, 2]},
    "obj_mask": {"1": "0,2", "2": "7,3", "3": "10,1,4,1"},
}
SCENE_B = {
    "image_index": 1,
    "image_filename": "CLEVR_val_000001.png",
    "objects": [
        thing("large", "red", "rubber", "cube"),
        thing("large", "blue", "rubber", "cube"),
        thing("small", "red", "rubber", "sphere"),
        thing("small", "blue", "rubber", "sphere"),
    ],
    "relationships": {},
    "obj_bbox": {"1": [0, 0, 1, 1], "2": [2, 0, 1, 1], "3": [4, 0, 1, 1], "4": [2, 2, 1, 1]},
    "obj_mask": {"1": "0,1", "2": "2,1", "3": "4,1", "4": "12,1"},
}
SCENES = [SCENE_A, SCENE_B]


def step(kind, inputs, output, values=()):
    return {"type": kind, "inputs": inputs, "value_inputs": list(values), "_output": output}


def refexp(index, image_index, program):
    return {
        "image_filename": f"CLEVR_val_{image_index:06d}.png",
        "image_index": image_index,
        "refexp": f"expression {index}",
        "program": program,
        "refexp_index": index,
    }


REFEXPS = [
    refexp(0, 0, [step("scene", [], [0, 1, 2]), step("filter_color", [0], [2], ["blue"])]),
    refexp(
        1,
        0,
        [
            step("scene", [], [0, 1, 2]),
            step("filter_size", [0], [1, 2], ["small"]),
            step("filter_material", [1], [2], ["rubber"]),
        ],
    ),
    refexp(2, 0, [step("scene", [], [0, 1, 2]), step("filter_color", [0], [0, 1], ["red"])]),
    refexp(
        3,
        1,
        [
            step("scene", [], [0, 1, 2, 3]),
            step("filter_size", [0], [0, 1], ["large"]),
            step("filter_color", [1], [0], ["red"]),
        ],
    ),
    refexp(
        4,
        1,
        [
            step("scene", [], [0, 1, 2, 3]),
            step("filter_size", [0], [0, 1], ["large"]),
            step("filter_color", [1], [0], ["red"]),
            step("unique", [2], 0),
            step("relate", [3], [1, 2], ["right"]),
            step("filter_color", [4], [1], ["blue"]),
        ],
    ),
    refexp(
        5,
        0,
        [
            step("scene", [], [0, 1, 2]),
            step("filter_color", [0], [2], ["blue"]),
            step("filter_shape", [1], [], ["sphere"]),
        ],
    ),
    refexp(6, 1, [step("scene", [], [0, 1, 2, 3]), step("filter_color", [0], [], ["green"])]),
]

PREDICTIONS = [
    {"refexp_index": 0, "box": [0, 2, 1, 2], "mask": "10,1,4,1"},
    {"refexp_index": 1, "box": [0, 2, 1, 1], "mask": "10,1"},
    {"refexp_index": 2, "mask": "7,3"},
    {"refexp_index": 3, "box": [1, 0, 1, 1], "mask": "2,1"},
    {"refexp_index": 4, "box": [2, 0, 1, 1], "mask": "2,1"},
    {"refexp_index": 5},
    {"refexp_index": 6, "box": [0, 0, 1, 1], "mask": "0,1"},
]


@pytest.fixture
def scored():
    return clevrref.score(REFEXPS, SCENES, PREDICTIONS, **TINY)


def rows_of(result):
    return {row["refexp_index"]: row for row in result.items}


# --- the per-expression fields ------------------------------------------------------------------


def test_rows_carry_object_count_attribute_group_and_false_premise(scored):
    rows = rows_of(scored)
    assert [rows[index]["object_count"] for index in range(7)] == [3, 3, 3, 4, 4, 3, 4]
    assert [rows[index]["zero_relate_attribute"] for index in range(7)] == [
        "included",
        "excluded",
        "included",
        "none",
        None,  # 1-Relate
        None,  # refers to nothing: a false premise has no attribute to name
        None,
    ]
    assert [rows[index]["false_premise"] for index in range(7)] == [False] * 5 + [True, True]
    # E5 predicts nothing: right on both counts; E6 gives a box and a one-pixel mask: wrong.
    assert (
        rows[5]["false_premise_correct"],
        rows[5]["false_premise_no_box"],
        rows[5]["false_premise_no_mask"],
    ) == (
        True,
        True,
        True,
    )
    assert (
        rows[6]["false_premise_correct"],
        rows[6]["false_premise_no_box"],
        rows[6]["false_premise_no_mask"],
    ) == (
        False,
        False,
        False,
    )
    # A false premise enters no per-expression figure: no detection, no I / U of its own.
    assert (rows[6]["detected"], rows[6]["box_iou"], rows[6]["mask_iou"]) == (None, None, None)
    assert (rows[6]["mask_intersection"], rows[6]["mask_union"]) == (0, 1)  # its one predicted pixel
    assert rows[0]["false_premise_correct"] is None


def test_singling_attributes_by_hand():
    objects = SCENE_A["objects"]
    assert clevrref.singling_attributes(objects, [2]) == ["color", "shape"]
    assert clevrref.singling_attributes(objects, [0, 1]) == ["color"]
    assert clevrref.singling_attributes(objects, [1]) == ["material", "shape"]  # the only metal, only sphere
    assert clevrref.singling_attributes(objects, [0, 2]) == ["material"]  # both rubber, 1 is metal
    assert clevrref.singling_attributes(SCENE_B["objects"], [0]) == []


# --- the summary ---------------------------------------------------------------------------------


def test_false_premises_stay_out_of_the_papers_figures(scored):
    """Overall over E0..E4 only: 3 of 4 single-object expressions detected (E0, E1, E4; not E3);
    mean IoU (1 + 0.5 + 0.6 + 0 + 1) / 5 = 0.62; cumulative (2+1+3+0+1) / (2+2+5+2+1) = 7/12.
    E6's predicted pixel would have made ΣU 13, and E5 and E6 would have made the count 7."""
    overall = scored.summary["overall"]
    assert overall["count"] == 5 and overall["detection_count"] == 4
    assert overall["detection_accuracy"] == pytest.approx(0.75)
    assert overall["full_resolution_mean_iou"] == pytest.approx(0.62)
    assert overall["full_resolution_cumulative_iou"] == pytest.approx(7 / 12)
    assert scored.summary["by_category"]["0-Relate"]["count"] == 4  # E0..E3, not E5 or E6
    # "nothing" is the right answer to a false premise: E5 is not listed as giving no mask.
    assert scored.problems == []


def test_false_premise_statistic(scored):
    """Two false premises, E5 right and E6 wrong: 1/2 on each count."""
    assert scored.summary["false_premise"] == {
        "n": 2,
        "accuracy": 0.5,
        "detection_accuracy": 0.5,
        "segmentation_accuracy": 0.5,
    }


def test_by_object_count(scored):
    """3 objects (scene A): E0, E1, E2. Detected 2 of 2; mean IoU (1 + 0.5 + 0.6) / 3 = 0.7;
    cumulative (2 + 1 + 3) / (2 + 2 + 5) = 2/3.
    4 objects (scene B): E3, E4. Detected 1 of 2; mean IoU (0 + 1) / 2; cumulative 1 / 3."""
    by_count = scored.summary["by_object_count"]
    assert list(by_count) == ["3", "4"]
    assert by_count["3"] == pytest.approx(
        {
            "count": 3,
            "detection_count": 2,
            "detection_accuracy": 1.0,
            "full_resolution_mean_iou": 0.7,
            "full_resolution_cumulative_iou": 2 / 3,
        }
    )
    assert by_count["4"] == pytest.approx(
        {
            "count": 2,
            "detection_count": 2,
            "detection_accuracy": 0.5,
            "full_resolution_mean_iou": 0.5,
            "full_resolution_cumulative_iou": 1 / 3,
        }
    )


def test_object_counts_sort_as_numbers():
    """A 10-object scene comes after a 4-object one, not between 1 and 2 as text would put it."""
    big = dict(
        SCENE_B,
        image_index=2,
        objects=SCENE_B["objects"] + [thing("small", "gray", "metal", "cube")] * 6,
    )
    expressions = [REFEXPS[3], dict(REFEXPS[3], refexp_index=9, image_index=2)]
    result = clevrref.score(expressions, [SCENE_B, big], [], **TINY)
    assert list(result.summary["by_object_count"]) == ["4", "10"]


def test_zero_relate_attribute_groups(scored):
    """included: E0 (detected, IoU 1) and E2 (several objects, IoU 0.6): 1 of 1, mean 0.8;
    excluded: E1 (detected, IoU 0.5); none: E3 (missed, IoU 0)."""
    groups = scored.summary["zero_relate_attribute"]
    assert list(groups) == ["included", "excluded", "none"]
    assert (groups["included"]["count"], groups["included"]["detection_count"]) == (2, 1)
    assert groups["included"]["detection_accuracy"] == 1.0
    assert groups["included"]["full_resolution_mean_iou"] == pytest.approx(0.8)
    assert (groups["excluded"]["detection_accuracy"], groups["excluded"]["full_resolution_mean_iou"]) == (
        1.0,
        0.5,
    )
    assert (groups["none"]["detection_accuracy"], groups["none"]["full_resolution_mean_iou"]) == (0.0, 0.0)


def test_zero_relate_groups_are_there_when_empty():
    """A dataset without 0-Relate expressions still has the three groups, with nothing in them."""
    result = clevrref.score([REFEXPS[4]], SCENES, [PREDICTIONS[4]], **TINY)
    assert result.summary["zero_relate_attribute"]["none"]["count"] == 0
    assert result.summary["zero_relate_attribute"]["none"]["detection_accuracy"] is None


def test_a_referred_object_missing_from_the_scene_is_a_clear_error():
    broken = refexp(0, 0, [step("scene", [], [0, 1, 2]), step("filter_color", [0], [7], ["blue"])])
    with pytest.raises(
        ValueError, match=r"refexp 0: program\[1\]._output: object 7 is not in image 0, which has 3 objects"
    ):
        clevrref.score([broken], SCENES, [], **TINY)


# --- the official variant: false premises on the released grid ------------------------------------


def test_official_a_false_premise_whose_mask_vanishes_on_the_grid_names_nothing():
    """Official variant, real 320 x 480 masks. A 1-pixel-wide vertical strip predicted at full
    resolution keeps at most 0.75 after the resize (0.75·1 + 0.25·0) and truncates to 0: no pixel
    on the grid, so the false premise is answered right. The same strip two columns wide starting
    at column 6 (≡ 0 mod 3) keeps grid column 4 (0.75 + 0.25 = 1): 10 pixels, wrong. Neither touches
    the cumulative IoU of the one real expression (its exact mask: 200 / 200 = 1)."""
    import numpy as np

    from plugins.clevrref.scenes import encode_mask

    def full(rows, columns):
        mask = np.zeros((320, 480), dtype=bool)
        mask[rows, columns] = True
        return mask

    block = full(slice(10, 20), slice(30, 60))
    scene = {
        "image_index": 0,
        "objects": [thing("large", "red", "rubber", "cube")],
        "obj_bbox": {"1": [30, 10, 30, 10]},
        "obj_mask": {"1": encode_mask(block)},
    }
    expressions = [
        refexp(0, 0, [step("scene", [], [0]), step("filter_color", [0], [0], ["red"])]),
        refexp(1, 0, [step("scene", [], [0]), step("filter_color", [0], [], ["blue"])]),
        refexp(2, 0, [step("scene", [], [0]), step("filter_shape", [0], [], ["sphere"])]),
    ]
    predictions = [
        {"refexp_index": 0, "mask": encode_mask(block)},
        {"refexp_index": 1, "mask": encode_mask(full(slice(50, 60), 7))},
        {"refexp_index": 2, "mask": encode_mask(full(slice(50, 60), slice(6, 8)))},
    ]
    result = clevrref.score(expressions, [scene], predictions)
    rows = rows_of(result)
    assert rows[1]["false_premise_correct"] is True and rows[1]["mask_union"] == 0
    assert rows[2]["false_premise_correct"] is False and rows[2]["mask_union"] == 10
    assert result.summary["false_premise"]["n"] == 2
    assert result.summary["false_premise"]["accuracy"] == 0.5
    assert result.summary["false_premise"]["segmentation_accuracy"] == 0.5
    assert result.summary["false_premise"]["detection_accuracy"] is None  # no box anywhere
    assert result.summary["overall"]["official_cumulative_iou"] == 1.0
    assert result.problems == []  # an empty truth is what a false premise has: not a problem


def test_a_box_with_no_area_names_nothing_and_a_missing_prediction_is_wrong():
    """E5 answered with the box [0, 0, 0, 0] (what the executor baseline gives for no object) is
    right; E6 without any prediction is wrong (and listed as missing, as everywhere)."""
    predictions = [
        {"refexp_index": 0, "box": [0, 2, 1, 2]},
        {"refexp_index": 5, "box": [0, 0, 0, 0]},
    ]
    result = clevrref.score([REFEXPS[0], REFEXPS[5], REFEXPS[6]], SCENES, predictions, **TINY)
    rows = rows_of(result)
    assert rows[5]["false_premise_correct"] is True and rows[5]["false_premise_no_box"] is True
    assert rows[6]["false_premise_correct"] is False and rows[6]["missing"] is True
    assert result.summary["false_premise"]["accuracy"] == 0.5
    assert result.summary["false_premise"]["segmentation_accuracy"] is None  # no mask anywhere
    assert result.problems == ["1 expression has no prediction and scores 0: refexp_index 6"]


def test_without_false_premises_the_statistic_is_empty(scored):
    result = clevrref.score(REFEXPS[:5], SCENES, PREDICTIONS[:5], **TINY)
    assert result.summary["false_premise"] == {
        "n": 0,
        "accuracy": None,
        "detection_accuracy": None,
        "segmentation_accuracy": None,
    }
    # The paper's figures are the same with or without the false premises beside them.
    assert result.summary["overall"] == scored.summary["overall"]


# --- steps ----------------------------------------------------------------------------------------

#: E0's steps: the scene (truth {0,1,7,8,9,10,15}, all predicted: 7/7), filter_color blue (truth
#: {10,15}, predicted {10}: 1/2; box exact: detected).
#: E4's steps (scene B: object 0 = {0}, 1 = {2}, 2 = {4}): step 0 not predicted;
#:   1 filter_size large  truth {0, 2}  predicted {0, 2}  2/2 = 1
#:   2 filter_color red   truth {0}     predicted {0}     1/1 = 1    box [0,0,1,1] exact: detected
#:   3 unique             truth {0}     predicted {2}     0/2 = 0    box [2,0,1,1]: IoU 0, missed
#:   4 relate right       truth {2, 4}  predicted {2, 4}  2/2 = 1
#:   5 filter_color blue  truth {2}     predicted {2, 4}  1/2 = 0.5  box [2,0,1,1] exact: detected
STEPS = {
    0: [{"mask": "0,2,5,4,4,1"}, {"mask": "10,1", "box": [0, 2, 1, 2]}],
    4: [
        None,
        {"mask": "0,1,1,1"},
        {"mask": "0,1", "box": [0, 0, 1, 1]},
        {"mask": "2,1", "box": [2, 0, 1, 1]},
        {"mask": "2,1,1,1"},
        {"mask": "2,1,1,1", "box": [2, 0, 1, 1]},
    ],
}


@pytest.fixture
def stepped():
    predictions = [
        dict(prediction, steps=STEPS[prediction["refexp_index"]])
        if prediction["refexp_index"] in STEPS
        else prediction
        for prediction in PREDICTIONS
    ]
    return clevrref.score(REFEXPS, SCENES, predictions, **TINY)


def test_each_step_is_scored_against_its_own_output(stepped):
    rows = rows_of(stepped)
    steps = rows[4]["steps"]
    assert steps[0] is None
    assert [(s["mask_intersection"], s["mask_union"]) for s in steps[1:]] == [
        (2, 2),
        (1, 1),
        (0, 2),
        (2, 2),
        (1, 2),
    ]
    assert [s["detected"] for s in steps[1:]] == [None, True, False, None, True]  # one-object steps only
    # Per step type, the mean of this expression's steps of that type: filter_color (1 + 0.5) / 2.
    assert rows[4]["step_iou_filter_color"] == 0.75
    assert (rows[4]["step_iou_filter_size"], rows[4]["step_iou_unique"], rows[4]["step_iou_relate"]) == (
        1,
        0,
        1,
    )
    assert "step_iou_scene" not in rows[4]  # its scene step was not predicted
    assert rows[0]["step_iou_scene"] == 1.0 and rows[0]["step_iou_filter_color"] == 0.5
    assert rows[1]["steps"] is None
    # The expressions' own figures do not change with steps given.
    assert (
        stepped.summary["overall"] == clevrref.score(REFEXPS, SCENES, PREDICTIONS, **TINY).summary["overall"]
    )


def test_by_step_type_counts_each_expression_once(stepped):
    """filter_color: E0's one step (0.5) and E4's two (1 and 0.5, mean 0.75): mean IoU
    (0.5 + 0.75) / 2 = 0.625, not (0.5 + 1 + 0.5) / 3; cumulative (1 + 1 + 1) / (2 + 1 + 2) = 0.6;
    3 one-object steps, all detected."""
    by_type = stepped.summary["by_step"]["type"]
    assert list(by_type) == ["scene", "filter_size", "filter_color", "unique", "relate"]
    assert by_type["filter_color"] == pytest.approx(
        {
            "count": 3,
            "expression_count": 2,
            "detection_count": 3,
            "detection_accuracy": 1.0,
            "full_resolution_mean_iou": 0.625,
            "full_resolution_cumulative_iou": 0.6,
        }
    )
    assert (
        by_type["unique"]["full_resolution_mean_iou"] == 0.0
        and by_type["unique"]["detection_accuracy"] == 0.0
    )
    assert by_type["scene"]["full_resolution_cumulative_iou"] == 1.0  # 7 / 7


def test_by_step_index(stepped):
    """Step 0: E0's scene only (E4's is null): 1. Step 1: E0's filter_color (1/2) and E4's
    filter_size (2/2): mean 0.75, cumulative (1 + 2) / (2 + 2) = 0.75. Steps 2 to 5: E4 alone."""
    by_index = stepped.summary["by_step"]["index"]
    assert list(by_index) == ["0", "1", "2", "3", "4", "5"]
    assert by_index["0"]["count"] == 1 and by_index["0"]["full_resolution_mean_iou"] == 1.0
    assert by_index["1"]["full_resolution_mean_iou"] == pytest.approx(0.75)
    assert by_index["1"]["full_resolution_cumulative_iou"] == pytest.approx(0.75)
    assert [by_index[str(k)]["full_resolution_mean_iou"] for k in range(2, 6)] == [1.0, 0.0, 1.0, 0.5]
    assert stepped.params["step_segmentation"] is True and stepped.params["step_detection"] is True


def test_no_steps_no_by_step(scored):
    assert scored.summary["by_step"] == {"index": {}, "type": {}}
    assert scored.params["step_segmentation"] is False


def test_steps_under_the_official_variant_name_their_variant():
    """The official grid, real masks: a filter step predicted exactly scores 1 under
    official_mean_iou (the full-resolution keys are absent)."""
    import numpy as np

    from plugins.clevrref.scenes import encode_mask

    block = np.zeros((320, 480), dtype=bool)
    block[10:20, 30:60] = True
    scene = {
        "image_index": 0,
        "objects": [thing("large", "red", "rubber", "cube")],
        "obj_bbox": {"1": [30, 10, 30, 10]},
        "obj_mask": {"1": encode_mask(block)},
    }
    expression = refexp(0, 0, [step("scene", [], [0]), step("filter_color", [0], [0], ["red"])])
    prediction = {
        "refexp_index": 0,
        "mask": encode_mask(block),
        "steps": [None, {"mask": encode_mask(block)}],
    }
    result = clevrref.score([expression], [scene], [prediction])
    figures = result.summary["by_step"]["type"]["filter_color"]
    assert figures["official_mean_iou"] == 1.0 and figures["official_cumulative_iou"] == 1.0
    assert "full_resolution_mean_iou" not in figures
    assert result.items[0]["steps"][1]["mask_union"] == 200  # 10 rows x 20 grid columns


def test_steps_of_the_wrong_number_are_refused_naming_the_expression():
    predictions = [
        dict(PREDICTIONS[0], steps=[None]),  # a 2-step program
        dict(PREDICTIONS[4], steps=[None] * 7),  # a 6-step program
        dict(PREDICTIONS[1], steps=[None, None, None]),  # right
    ]
    with pytest.raises(FormatError) as raised:
        clevrref.score(REFEXPS, SCENES, predictions, **TINY)
    errors = {(error.record, error.field): error.message for error in raised.value.errors}
    assert set(errors) == {("refexp_index 0", "steps"), ("refexp_index 4", "steps")}
    assert errors[("refexp_index 4", "steps")] == (
        "7 step predictions for a program of 6 steps: give one per program step, in program order "
        "(null for a step not predicted)"
    )


def test_a_predicted_step_without_a_recorded_output_is_a_clear_error():
    program = [step("scene", [], [0, 1, 2]), step("filter_color", [0], [2], ["blue"])]
    del program[0]["_output"]
    expression = refexp(0, 0, program)
    with pytest.raises(ValueError, match=r"refexp 0: program\[0\]._output: the step records no output"):
        clevrref.score([expression], SCENES, [dict(PREDICTIONS[0], steps=[{"mask": "0,1"}, None])], **TINY)
    # Not predicting that step is fine: only predicted steps need their truth.
    result = clevrref.score(
        [expression], SCENES, [dict(PREDICTIONS[0], steps=[None, {"mask": "10,1,4,1"}])], **TINY
    )
    assert result.items[0]["steps"][1]["mask_iou"] == 1.0


def test_malformed_steps_are_refused_naming_record_and_field():
    records = [
        {"refexp_index": 0, "steps": "all of them"},
        {"refexp_index": 1, "steps": [5]},
        {"refexp_index": 2, "steps": [None, {"mask": "1,a"}]},
        {"refexp_index": 3, "steps": [{"box": [0, 0, 1]}]},
        {"refexp_index": 4, "steps": [{"mask": "0,1", "mask_size": [2, 2]}]},
        {"refexp_index": 5, "steps": [{"mask": "0,21"}]},  # 21 pixels on a 20-pixel image
        {"refexp_index": 6, "steps": [None, {"box": [0, 0, 1, 1], "mask": "0,1"}, {}]},  # fine
    ]
    with pytest.raises(FormatError) as raised:
        clevrref.parse_predictions(json.dumps(records), height=HEIGHT, width=WIDTH)
    errors = {(error.record, error.field): error.message for error in raised.value.errors}
    assert set(errors) == {
        ("record 0", "steps"),
        ("record 1", "steps[0]"),
        ("record 2", "steps[1].mask"),
        ("record 3", "steps[0].box"),
        ("record 4", "steps[0].mask_size"),
        ("record 5", "steps[0].mask"),
    }
    assert "one entry per program step" in errors[("record 0", "steps")]
    assert (
        errors[("record 1", "steps[0]")] == "expected an object with box and/or mask, or null, got an integer"
    )
    assert "more than the 5x4 image" in errors[("record 5", "steps[0].mask")]
    parsed = clevrref.parse_predictions(json.dumps(records[6:]), height=HEIGHT, width=WIDTH)
    assert parsed == [{"refexp_index": 6, "steps": [None, {"box": [0, 0, 1, 1], "mask": "0,1"}, {}]}]


# --- files, the spec and the report ----------------------------------------------------------------


def test_the_file_scorer_gives_the_same_summary_and_rows(stepped):
    predictions = [
        dict(prediction, steps=STEPS[prediction["refexp_index"]])
        if prediction["refexp_index"] in STEPS
        else prediction
        for prediction in PREDICTIONS
    ]
    from_files = clevrref.score_file(
        json.dumps({"info": {}, "refexps": REFEXPS}).encode(),
        json.dumps({"info": {}, "scenes": SCENES}).encode(),
        json.dumps(predictions).encode(),
        **TINY,
    )
    assert from_files.summary == stepped.summary
    assert from_files.items == stepped.items
    json.dumps(from_files.summary)  # the summary is stored as JSON


def test_the_spec_agrees_with_the_metric():
    from plugins.clevrref import spec

    assert spec.STEP_TYPES == clevrref.STEP_TYPES
    assert [group.value for group in spec.ZERO_RELATE_GROUPS] == list(clevrref.ZERO_RELATE_GROUPS)
    assert sorted(spec.CATEGORIES, key=clevrref.category_order) == list(spec.CATEGORIES)
    assert spec.FULL_RESOLUTION == clevrref.FULL_RESOLUTION
    keys = [(c.group, c.label, c.setting, c.summary_path) for c in spec.SPEC.all_columns()]
    assert len(keys) == len(set(keys))
    assert [table.key for table in spec.SPEC.diagnostics] == [
        "by-category",
        "by-category-segmentation",
        "by-object-count",
        "by-object-count-segmentation",
        "zero-relate-attribute",
        "by-step",
        "false-premise",
    ]


def diagnostic_table(result, key, name="Executor"):
    from evaluation.reports import ScoredSubmission, build_table
    from plugins.clevrref.spec import SPEC

    row = ScoredSubmission("model", name, "", result.summary, result.items)
    table = build_table(SPEC, [row], diagnostic=SPEC.diagnostic(key))
    return {
        (column.group, column.label): cell
        for column, cell in zip(table.columns, table.rows[0].cells, strict=True)
    }


def test_the_by_category_table(scored):
    """Full resolution: the official cumulative IoU no row has is left out, and so are the
    categories no expression has. 0-Relate: 2 of 3 detected (E0, E1; not E3), Wilson interval
    with p = 2/3, n = 3, z = 1.96: centre (p + z²/2n) / (1 + z²/n) = 1.3069 / 2.2805 = 0.5731,
    half z·sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n) = 1.96 · 0.4252 / 2.2805 = 0.3654, so [0.208, 0.939].
    Its mean IoU (1 + 0.5 + 0.6 + 0) / 4 = 0.525 over 4 expressions: E5 and E6 (0-Relate false
    premises) are not among them."""
    # Detection and segmentation in two tables, so that each fits a page beside the other.
    cells = diagnostic_table(scored, "by-category") | diagnostic_table(scored, "by-category-segmentation")
    assert list(cells) == [
        ("0-Relate", "Acc (single)"),
        ("1-Relate", "Acc (single)"),
        ("0-Relate", "mean IoU, full resolution"),
        ("1-Relate", "mean IoU, full resolution"),
    ]
    accuracy = cells[("0-Relate", "Acc (single)")]
    assert (accuracy.value, accuracy.n) == (pytest.approx(2 / 3), 3)
    assert (accuracy.low, accuracy.high) == (pytest.approx(0.208, abs=1e-3), pytest.approx(0.939, abs=1e-3))
    iou = cells[("0-Relate", "mean IoU, full resolution")]
    assert (iou.value, iou.n) == (pytest.approx(0.525), 4)
    assert cells[("1-Relate", "Acc (single)")].value == 1.0


def test_the_by_object_count_and_zero_relate_tables(scored):
    by_count = diagnostic_table(scored, "by-object-count") | diagnostic_table(
        scored, "by-object-count-segmentation"
    )
    assert [group for group, _ in by_count] == ["3", "4", "3", "4"]
    assert (by_count[("3", "Acc (single)")].value, by_count[("3", "Acc (single)")].n) == (1.0, 2)
    assert (
        by_count[("4", "mean IoU, full resolution")].value,
        by_count[("4", "mean IoU, full resolution")].n,
    ) == (
        0.5,
        2,
    )
    groups = diagnostic_table(scored, "zero-relate-attribute")
    assert groups[("attribute named", "mean IoU, full resolution")].value == pytest.approx(0.8)
    assert groups[("attribute named", "mean IoU, full resolution")].n == 2
    assert groups[("attribute left out", "Acc (single)")].value == 1.0
    assert groups[("no single attribute", "Acc (single)")].value == 0.0


def test_the_by_step_table(stepped):
    """filter_color: per-expression values 0.5 and 0.75, mean 0.625; sample sd
    sqrt(2 · 0.125² / 1) = 0.1768, standard error 0.1768 / sqrt(2) = 0.125, so the 95% interval
    is 0.625 ± 1.96 · 0.125 = [0.380, 0.870]."""
    cells = diagnostic_table(stepped, "by-step")
    assert [group for group, _ in cells] == ["scene", "filter_size", "filter_color", "unique", "relate"]
    assert {label for _, label in cells} == {"mean IoU, full resolution"}
    colour = cells[("filter_color", "mean IoU, full resolution")]
    assert (colour.value, colour.n) == (pytest.approx(0.625), 2)
    assert colour.low == pytest.approx(0.625 - 1.959964 * 0.125, abs=1e-4)
    assert colour.high == pytest.approx(0.625 + 1.959964 * 0.125, abs=1e-4)
    assert math.isclose(colour.low, 0.380, abs_tol=1e-3)


def test_the_false_premise_table(scored):
    cells = diagnostic_table(scored, "false-premise")
    assert list(cells) == [
        ("False premise", "Acc"),
        ("False premise", "no box"),
        ("False premise", "empty mask"),
    ]
    assert all((cell.value, cell.n) == (0.5, 2) for cell in cells.values())
    # Without false premises there is nothing to show.
    plain = clevrref.score(REFEXPS[:5], SCENES, PREDICTIONS[:5], **TINY)
    assert diagnostic_table(plain, "false-premise") == {}


def test_the_main_table_leaves_false_premises_out_of_its_intervals(scored):
    """The full-resolution mean IoU's n is the 5 expressions that refer to something."""
    from evaluation.reports import ScoredSubmission, build_table
    from plugins.clevrref.spec import SPEC

    table = build_table(SPEC, [ScoredSubmission("model", "Executor", "", scored.summary, scored.items)])
    cells = {
        (column.group, column.label): cell
        for column, cell in zip(table.columns, table.rows[0].cells, strict=True)
    }
    mean = cells[("Segmentation (full resolution)", "mean IoU")]
    assert (mean.value, mean.n) == (pytest.approx(0.62), 5)
    assert cells[("Segmentation (full resolution)", "cumulative IoU")].n == 5
    assert cells[("Detection", "Acc (single)")].n == 4


def test_the_object_count_plot_draws_a_curve_over_three_to_ten_objects(scored):
    from evaluation.plots import draw
    from evaluation.reports import ScoredSubmission
    from plugins.clevrref.spec import SPEC

    plot = next(plot for plot in SPEC.plots if plot.summary_path == ("by_object_count",))
    assert plot.kind == "line" and plot.metric == "detection_accuracy"
    assert [group.value for group in plot.groups] == [str(count) for count in range(3, 11)]
    svg = draw(plot, [ScoredSubmission("model", "Executor", "", scored.summary, scored.items)])
    assert svg is not None and "Executor" in svg and "number of objects in the scene" in svg
