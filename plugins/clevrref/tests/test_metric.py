"""Tests for the CLEVR-Ref+ metrics (pure Python, no database).

The first part scores the full-resolution variant (Yardstick's union IoU, unchanged numbers) on
hand cases on tiny masks; the second part the official variant (the released IEP-Ref scorer's
rules: sum, resize 480 -> 320 columns, truncate) on real 320 x 480 masks.

The tiny scene below is a 4 x 5 image (height 4, width 5, 20 pixels, row-major):

    row 0:  A A . . .        object 0 ("1"): pixels 0, 1          runs "0,2"
    row 1:  . . B B B        object 1 ("2"): pixels 7, 8, 9       runs "7,3"
    row 2:  C . . . .        object 2 ("3"): pixels 10, 15        runs "10,1,4,1"
    row 3:  C . . . .
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from benchmarks import registry
from benchmarks.records import FormatError
from plugins.clevrref import metric as clevrref
from plugins.clevrref.metric import FULL_RESOLUTION
from plugins.clevrref.scenes import encode_mask

HEIGHT, WIDTH = 4, 5
TINY = {"height": HEIGHT, "width": WIDTH, "variant": FULL_RESOLUTION}
OBJECT = {"shape": "cube", "size": "small", "material": "rubber", "color": "red"}
SCENE = {
    "image_index": 0,
    "image_filename": "CLEVR_val_000000.png",
    "objects": [dict(OBJECT), dict(OBJECT), dict(OBJECT)],
    "relationships": {},
    "obj_bbox": {"1": [0, 0, 2, 1], "2": [2, 1, 3, 1], "3": [0, 2, 1, 2]},
    "obj_mask": {"1": "0,2", "2": "7,3", "3": "10,1,4,1"},
}


def step(kind, inputs, output=None, values=()):
    record = {"type": kind, "inputs": inputs, "value_inputs": list(values)}
    if output is not None:
        record["_output"] = output
    return record


def refexp(index, program, family=None):
    record = {
        "split": "val",
        "image_filename": "CLEVR_val_000000.png",
        "image_index": 0,
        "refexp": f"expression {index}",
        "program": program,
        "refexp_index": index,
    }
    if family is not None:
        record["template_filename"] = family
    return record


REFEXPS = [
    # 0: the red cube -> object 0 (zero hops, a chain, one object)
    refexp(0, [step("scene", []), step("filter_color", [0], [0], ["red"])], "zero_hop.json"),
    # 1: the sphere or the cylinder -> objects 1 and 2 (OR, a tree)
    refexp(
        1,
        [
            step("scene", []),
            step("filter_shape", [0], values=["sphere"]),
            step("scene", []),
            step("filter_shape", [2], values=["cylinder"]),
            step("union", [1, 3], [1, 2]),
        ],
        "single_or.json",
    ),
    # 2: the second object from the left right of the cube -> object 1 (one relate, ordinal)
    refexp(
        2,
        [
            step("scene", []),
            step("filter_shape", [0], values=["cube"]),
            step("unique", [1]),
            step("relate", [2], values=["right"]),
            step("filter_ordinal", [3], [1], ["2", "left"]),
        ],
        "one_hop.json",
    ),
    # 3: the fully visible thing left of X and in front of Y -> object 2 (AND, visibility)
    refexp(
        3,
        [
            step("scene", []),
            step("unique", [0]),
            step("relate", [1], values=["left"]),
            step("scene", []),
            step("unique", [3]),
            step("relate", [4], values=["front"]),
            step("intersect", [2, 5]),
            step("filter_visibleout", [6], [2], ["fully visible"]),
        ],
        "single_and.json",
    ),
    # 4: the things with the same colour as the cube -> objects 0 and 2 (Same)
    refexp(4, [step("scene", []), step("unique", [0]), step("same_color", [1], [0, 2])], "same_relate.json"),
]

PREDICTIONS = [
    {"refexp_index": 0, "box": [0, 0, 2, 1], "mask": "0,2"},  # exact: IoU 1, detected
    {"refexp_index": 1, "box": [0, 0, 1, 1], "mask": "7,3"},  # mask covers 3 of 5 pixels
    {"refexp_index": 2, "box": [2, 1, 3, 2]},  # box IoU 3 / 6 = 0.5 exactly: detected; no mask
    {"refexp_index": 3, "box": [1, 2, 1, 2], "mask": "10 1 4 1"},  # box beside the truth; spaces
    {"refexp_index": 99, "box": [0, 0, 1, 1]},  # unknown expression
]  # expression 4 has no prediction


@pytest.fixture
def scored():
    return clevrref.score(REFEXPS, [SCENE], PREDICTIONS, **TINY)


# --- boxes -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ([0, 0, 2, 2], [0, 0, 2, 2], 1.0),
        ([0, 0, 2, 2], [1, 0, 2, 2], 1 / 3),
        ([0, 0, 2, 2], [0, 0, 2, 1], 0.5),
        ([0, 0, 2, 2], [2, 0, 2, 2], 0.0),  # touching
        ([0, 0, 2, 2], [5, 5, 1, 1], 0.0),
        ([0, 0, 0, 0], [0, 0, 0, 0], 0.0),  # no area at all
        ([0.5, 0.5, 1, 1], [0, 0, 2, 2], 0.25),
    ],
)
def test_box_iou(first, second, expected):
    assert clevrref.box_iou(first, second) == pytest.approx(expected)


# --- per expression ----------------------------------------------------------------------------


def test_rows(scored):
    rows = {row["refexp_index"]: row for row in scored.items}
    assert [row["refexp_index"] for row in scored.items] == [0, 1, 2, 3, 4]
    assert rows[0]["box_iou"] == 1.0 and rows[0]["detected"] is True
    assert (rows[0]["mask_intersection"], rows[0]["mask_union"], rows[0]["mask_iou"]) == (2, 2, 1.0)
    # Multi-object: no detection; the true mask is objects 1 and 2 (5 pixels), 3 of them predicted.
    assert rows[1]["single"] is False and rows[1]["box_iou"] is None and rows[1]["detected"] is None
    assert (rows[1]["mask_intersection"], rows[1]["mask_union"], rows[1]["mask_iou"]) == (3, 5, 0.6)
    # IoU exactly 0.5 is a detection; no mask: an empty one.
    assert rows[2]["box_iou"] == 0.5 and rows[2]["detected"] is True
    assert (rows[2]["mask_intersection"], rows[2]["mask_union"], rows[2]["mask_iou"]) == (0, 3, 0.0)
    assert rows[3]["box_iou"] == 0.0 and rows[3]["detected"] is False
    assert rows[3]["mask_iou"] == 1.0
    # No prediction at all: not single (no detection), empty mask against objects 0 and 2.
    assert rows[4]["missing"] is True
    assert (rows[4]["mask_intersection"], rows[4]["mask_union"], rows[4]["mask_iou"]) == (0, 4, 0.0)


def test_categories_and_modules(scored):
    rows = {row["refexp_index"]: row for row in scored.items}
    assert [rows[index]["category"] for index in range(5)] == ["0-Relate", "OR", "1-Relate", "AND", "Same"]
    assert [rows[index]["structure"] for index in range(5)] == ["chain", "tree", "chain", "tree", "chain"]
    assert [rows[index]["ordinal"] for index in range(5)] == [False, False, True, False, False]
    assert [rows[index]["visible"] for index in range(5)] == [False, False, False, True, False]
    assert rows[1]["family"] == "single_or.json"


def test_relate_count():
    three_hops = refexp(
        9,
        [
            step("scene", []),
            step("unique", [0]),
            step("relate", [1], values=["left"]),
            step("unique", [2]),
            step("relate", [3], values=["behind"]),
            step("unique", [4]),
            step("relate", [5], [1], ["front"]),
        ],
    )
    assert clevrref.expression_category(three_hops) == "3-Relate"
    assert clevrref.expression_structure(three_hops) == "chain"
    assert clevrref.expression_family(three_hops) is None
    assert clevrref.expression_family({"refexp_family_index": 3}) == "family 3"


# --- summary -----------------------------------------------------------------------------------


def test_summary(scored):
    overall = scored.summary["overall"]
    assert overall["count"] == 5
    assert overall["detection_count"] == 3  # expressions 0, 2, 3
    assert overall["detection_accuracy"] == pytest.approx(2 / 3)
    assert overall["full_resolution_mean_iou"] == pytest.approx((1 + 0.6 + 0 + 1 + 0) / 5)
    assert overall["full_resolution_cumulative_iou"] == pytest.approx(
        (2 + 3 + 0 + 2 + 0) / (2 + 5 + 3 + 2 + 4)
    )
    assert "official_cumulative_iou" not in overall and "mean_iou" not in overall
    by_category = scored.summary["by_category"]
    assert list(by_category) == ["0-Relate", "1-Relate", "AND", "OR", "Same"]
    assert by_category["OR"] == {
        "count": 1,
        "detection_count": 0,
        "detection_accuracy": None,
        "full_resolution_mean_iou": 0.6,
        "full_resolution_cumulative_iou": 0.6,
    }
    assert scored.summary["by_module"]["ordinal"]["with"]["count"] == 1
    assert scored.summary["by_module"]["ordinal"]["without"]["count"] == 4
    assert scored.summary["by_module"]["visible"]["with"]["full_resolution_mean_iou"] == 1.0
    assert scored.summary["by_structure"]["tree"]["count"] == 2
    assert set(scored.summary["by_family"]) == {
        "zero_hop.json",
        "single_or.json",
        "one_hop.json",
        "single_and.json",
        "same_relate.json",
    }
    assert scored.summary["parameters"] == scored.params
    assert scored.params["detection"] is True and scored.params["segmentation"] is True
    assert scored.params["variant"] == "full-resolution" and scored.params["segmentation_grid"] == [4, 5]
    assert all(row["variant"] == "full-resolution" for row in scored.items)


def test_problems(scored):
    problems = "\n".join(scored.problems)
    assert "1 expression has no prediction" in problems and "refexp_index 4" in problems
    assert "give no mask" in problems and "refexp_index 2" in problems
    assert "ignored: refexp_index 99" in problems
    assert scored.summary["missing_predictions"] == 1 and scored.summary["extra_predictions"] == 1


def test_box_only_predictions_do_not_evaluate_segmentation():
    predictions = [{"refexp_index": 0, "box": [0, 0, 2, 1]}, {"refexp_index": 2, "box": [0, 0, 1, 1]}]
    result = clevrref.score(REFEXPS[:3], [SCENE], predictions, **TINY)
    assert result.params["segmentation"] is False
    overall = result.summary["overall"]
    assert overall["full_resolution_mean_iou"] is None and overall["full_resolution_cumulative_iou"] is None
    assert result.summary["overall"]["detection_accuracy"] == 0.5
    assert all(row["mask_iou"] is None for row in result.items)
    assert not any("mask" in problem for problem in result.problems)


def test_mask_only_predictions_do_not_evaluate_detection():
    predictions = [{"refexp_index": 0, "mask": "0,1"}]
    result = clevrref.score({"refexps": REFEXPS[:1]}, {"scenes": [SCENE]}, predictions, **TINY)
    assert result.params["detection"] is False
    assert result.summary["overall"]["detection_accuracy"] is None
    assert result.items[0]["detected"] is None
    assert result.summary["overall"]["full_resolution_mean_iou"] == 0.5


def test_scene_without_the_referred_mask_is_a_clear_error():
    scene = dict(SCENE, obj_mask={"1": "0,2"})
    with pytest.raises(ValueError, match="refexp 1: image 0 has no obj_mask for object 1"):
        clevrref.score(REFEXPS[:2], [scene], [{"refexp_index": 1, "mask": "0,1"}], **TINY)
    with pytest.raises(ValueError, match="refexp 0: image 7 has no scene"):
        clevrref.score(
            [dict(REFEXPS[0], image_index=7)],
            [SCENE],
            [{"refexp_index": 0, "mask": "0,1"}],
            **TINY,
        )


def test_full_size_masks_agree_with_numpy():
    rng = np.random.default_rng(5)
    truth = rng.random((320, 480)) < 0.3
    predicted = rng.random((320, 480)) < 0.3
    scene = {
        "image_index": 0,
        "objects": [OBJECT],
        "obj_bbox": {"1": [0, 0, 480, 320]},
        "obj_mask": {"1": encode_mask(truth)},
    }
    expression = refexp(0, [step("scene", []), step("filter_color", [0], [0], ["red"])])
    result = clevrref.score(
        [expression], [scene], [{"refexp_index": 0, "mask": encode_mask(predicted)}], variant=FULL_RESOLUTION
    )
    row = result.items[0]
    assert row["mask_intersection"] == int((truth & predicted).sum())
    assert row["mask_union"] == int((truth | predicted).sum())


# --- prediction files --------------------------------------------------------------------------


def test_parse_predictions_reports_every_bad_record():
    records = [
        {"refexp_index": 0, "box": [0, 0, 2, 1], "mask": "0,2"},
        {"box": [0, 0, 1, 1]},
        {"refexp_index": 2, "box": [0, 0, 1]},
        {"refexp_index": 3, "box": [0, 0, "1", 1]},
        {"refexp_index": 4, "mask": "0,a"},
        {"refexp_index": 5, "mask": "0,21"},
        {"refexp_index": 0, "mask": "0,1"},
        {"refexp_index": 6, "mask": 5},
    ]
    with pytest.raises(FormatError) as raised:
        clevrref.parse_predictions(json.dumps(records).encode(), source="p.json", height=HEIGHT, width=WIDTH)
    errors = {(error.record, error.field) for error in raised.value.errors}
    assert errors == {
        ("record 1", "refexp_index"),
        ("record 2", "box"),
        ("record 3", "box[2]"),
        ("record 4", "mask"),
        ("record 5", "mask"),
        ("record 6", "refexp_index"),
        ("record 7", "mask"),
    }
    message = str(raised.value)
    assert "more than the 5x4 image" in message and "duplicate refexp_index 0 (first at record 0)" in message


def test_parse_predictions_accepts_optional_fields():
    data = b'[{"refexp_index": 0}, {"refexp_index": 1, "box": null, "mask": " 3 , 2 "}]'
    assert clevrref.parse_predictions(data, height=HEIGHT, width=WIDTH) == [
        {"refexp_index": 0},
        {"refexp_index": 1, "mask": " 3 , 2 "},
    ]


def test_score_file_reads_official_files():
    refexps_data = json.dumps({"info": {}, "refexps": REFEXPS}).encode()
    scenes_data = json.dumps({"info": {}, "scenes": [SCENE]}).encode()
    predictions_data = json.dumps(PREDICTIONS).encode()
    result = clevrref.score_file(refexps_data, scenes_data, predictions_data, **TINY)
    assert result.summary["overall"]["full_resolution_cumulative_iou"] == pytest.approx(7 / 16)


def test_random_masks_mean_and_cumulative_iou():
    """Random tiny scenes: the summary equals a direct computation from the pixel sets."""
    rng = random.Random(11)
    scenes, expressions, predictions = [], [], []
    intersections, unions, ious = [], [], []
    for index in range(40):
        masks = [
            np.array([rng.random() < 0.3 for _ in range(HEIGHT * WIDTH)]).reshape(HEIGHT, WIDTH)
            for _ in range(3)
        ]
        scenes.append(
            {
                "image_index": index,
                "objects": [OBJECT] * 3,
                "obj_bbox": {str(k + 1): [0, 0, 1, 1] for k in range(3)},
                "obj_mask": {str(k + 1): encode_mask(mask) for k, mask in enumerate(masks)},
            }
        )
        referred = sorted(rng.sample(range(3), rng.randint(1, 3)))
        expression = refexp(index, [step("scene", []), step("filter_color", [0], referred, ["red"])])
        expressions.append(dict(expression, image_index=index))
        predicted = np.array([rng.random() < 0.4 for _ in range(HEIGHT * WIDTH)]).reshape(HEIGHT, WIDTH)
        predictions.append({"refexp_index": index, "mask": encode_mask(predicted)})
        truth = np.logical_or.reduce([masks[k] for k in referred])
        intersections.append(int((truth & predicted).sum()))
        unions.append(int((truth | predicted).sum()))
        ious.append(intersections[-1] / unions[-1] if unions[-1] else 1.0)
    result = clevrref.score(expressions, scenes, predictions, **TINY)
    assert result.summary["overall"]["full_resolution_mean_iou"] == pytest.approx(sum(ious) / len(ious))
    assert result.summary["overall"]["full_resolution_cumulative_iou"] == pytest.approx(
        sum(intersections) / sum(unions)
    )


# --- the official variant: the released scorer's rules, on real 320 x 480 masks ------------------
#
# Output column 2k of the 320 x 320 grid is 0.75·h[3k] + 0.25·h[3k+1], column 2k+1 is
# 0.25·h[3k+1] + 0.75·h[3k+2]; a pixel is ground truth when that value is at least 1.

ROWS, COLUMNS, GRID = 320, 480, 320


def full(*regions) -> np.ndarray:
    """A 320 x 480 mask, foreground in each (rows, columns) region (slices or indices)."""
    mask = np.zeros((ROWS, COLUMNS), dtype=bool)
    for rows, columns in regions:
        mask[rows, columns] = True
    return mask


def grid(*regions) -> np.ndarray:
    """A 320 x 320 mask, foreground in each (rows, columns) region."""
    mask = np.zeros((ROWS, GRID), dtype=bool)
    for rows, columns in regions:
        mask[rows, columns] = True
    return mask


def real_scene(masks, image_index=0) -> dict:
    return {
        "image_index": image_index,
        "image_filename": f"CLEVR_val_{image_index:06d}.png",
        "objects": [dict(OBJECT) for _ in masks],
        "obj_bbox": {str(k + 1): [0, 0, 10, 10] for k in range(len(masks))},
        "obj_mask": {str(k + 1): encode_mask(mask) for k, mask in enumerate(masks)},
    }


def referring(index, objects, image_index=0) -> dict:
    return dict(
        refexp(index, [step("scene", []), step("filter_color", [0], list(objects), ["red"])]),
        image_index=image_index,
    )


def on_grid(index, mask) -> dict:
    """A prediction given on the released 320 x 320 grid."""
    return {"refexp_index": index, "mask": encode_mask(mask), "mask_size": [320, 320]}


def at_full_resolution(index, mask) -> dict:
    return {"refexp_index": index, "mask": encode_mask(mask)}


#: A block over whole column triples 30..59 maps exactly onto grid columns 20..39.
BLOCK = full((slice(10, 20), slice(30, 60)))
BLOCK_ON_GRID = grid((slice(10, 20), slice(20, 40)))


def test_the_resize_in_closed_form_on_one_row():
    heat = np.array([[2.0, 0.0, 1.0, 1.0, 1.0, 0.0]])
    # x=0: 0.75·2 + 0.25·0 = 1.5; x=1: 0.25·0 + 0.75·1 = 0.75; x=2: 0.75·1 + 0.25·1 = 1; x=3: 0.25·1 + 0
    assert clevrref.released_resize(heat).tolist() == [[1.5, 0.75, 1.0, 0.25]]
    assert clevrref.released_mask(heat).tolist() == [[True, False, True, False]]
    with pytest.raises(ValueError, match="multiple of 3"):
        clevrref.released_resize(np.zeros((1, 5)))


def test_the_resize_agrees_with_opencv():
    """The closed form is what cv2.resize(h, (320, 320)) then an int64 cast give, pixel for pixel."""
    cv2 = pytest.importorskip("cv2")
    rng = np.random.default_rng(3)
    heat = (rng.random((ROWS, COLUMNS)) < 0.4).astype(np.float64) + (rng.random((ROWS, COLUMNS)) < 0.2)
    released = cv2.resize(heat, (320, 320)).astype(np.int64)
    assert np.array_equal(clevrref.released_resize(heat), cv2.resize(heat, (320, 320)))
    assert np.array_equal(clevrref.released_mask(heat), released >= 1)


def test_official_is_the_default_and_names_its_grid():
    result = clevrref.score([referring(0, [0])], [real_scene([BLOCK])], [on_grid(0, BLOCK_ON_GRID)])
    assert result.params["variant"] == "official" and result.params["segmentation_grid"] == [320, 320]
    row = result.items[0]
    assert row["variant"] == "official"
    assert (row["truth_pixels"], row["mask_intersection"], row["mask_union"], row["mask_iou"]) == (
        200,
        200,
        200,
        1.0,
    )
    assert result.summary["overall"]["official_cumulative_iou"] == 1.0
    # The released code computes no mean IoU: the official summary has none, under any name.
    assert not any("mean" in key for key in result.summary["overall"])


def test_rule_1_targets_are_the_last_output_and_the_scene_is_found_by_image_index():
    """Scene 3 is listed second; the expression names image 3 and its object 1, i.e. obj_mask["2"]."""
    other = real_scene([full((slice(100, 110), slice(90, 120)))], image_index=7)
    scene = real_scene([full((slice(200, 210), slice(0, 30))), BLOCK], image_index=3)
    expression = dict(
        refexp(
            0,
            [
                step("scene", [], [0, 1]),
                step("filter_color", [0], [0, 1], ["red"]),
                step("filter_shape", [1], [1], ["cube"]),
            ],
        ),
        image_index=3,
    )
    right = clevrref.score([expression], [other, scene], [on_grid(0, BLOCK_ON_GRID)])
    assert right.items[0]["mask_iou"] == 1.0
    wrong = clevrref.score([expression], [other, scene], [at_full_resolution(0, scene_mask(scene, "1"))])
    assert wrong.items[0]["mask_intersection"] == 0 and wrong.items[0]["mask_iou"] == 0.0


def scene_mask(scene, key):
    from plugins.clevrref.scenes import decode_mask

    return decode_mask(scene["obj_mask"][key])


def test_rule_3_the_ground_truth_is_the_sum_of_the_masks_not_their_union():
    """Objects A = {(5, 3)} and B = {(5, 2), (5, 3)} overlap at column 3, which sums to 2.

    Sum: h[2] = 1, h[3] = 2. Grid x=1: 0.25·h[1] + 0.75·h[2] = 0.75 -> 0; x=2: 0.75·h[3] +
    0.25·h[4] = 1.5 -> 1. One pixel survives. The union (h[2] = h[3] = 1) gives 0.75 at both
    and would leave nothing.
    """
    a = full((5, 3))
    b = full((5, slice(2, 4)))
    scene = real_scene([a, b])
    result = clevrref.score([referring(0, [0, 1])], [scene], [on_grid(0, grid((5, 2)))])
    row = result.items[0]
    assert (row["truth_pixels"], row["mask_intersection"], row["mask_union"]) == (1, 1, 1)
    assert result.summary["overall"]["official_cumulative_iou"] == 1.0
    assert not clevrref.released_mask(a | b).any()  # what the union would have given
    # Full resolution keeps the union: 2 true pixels, both missed by a full-resolution empty guess.
    full_result = clevrref.score(
        [referring(0, [0, 1])], [scene], [at_full_resolution(0, full())], variant=FULL_RESOLUTION
    )
    assert full_result.items[0]["truth_pixels"] == 2


@pytest.mark.parametrize(
    ("start", "width", "kept_columns"),
    [
        (6, 2, [4]),  # column ≡ 0 (mod 3): x=4 gets 0.75 + 0.25 = 1; x=5 gets 0.25 -> only x=4
        (7, 2, [5]),  # column ≡ 1 (mod 3): x=4 gets 0.25; x=5 gets 0.25 + 0.75 = 1 -> only x=5
        (8, 2, []),  # column ≡ 2 (mod 3): x=5 gets 0.75, x=6 gets 0.75 -> nothing
        (2, 2, []),  # the worked example of docs/metrics.md
        (6, 1, []),  # a 1-pixel strip never reaches 1: at most 0.75
        (7, 1, []),
        (8, 1, []),
    ],
)
def test_rules_4_and_5_vertical_strips(start, width, kept_columns):
    """A 10-row vertical strip, resized and truncated: what survives depends on its phase mod 3."""
    strip = full((slice(50, 60), slice(start, start + width)))
    truth = clevrref.released_mask(strip.astype(float))
    assert sorted(set(np.nonzero(truth)[1].tolist())) == kept_columns
    result = clevrref.score([referring(0, [0])], [real_scene([strip])], [on_grid(0, truth)])
    row = result.items[0]
    assert row["truth_pixels"] == 10 * len(kept_columns)
    if kept_columns:
        assert row["mask_iou"] == 1.0 and not result.problems
    else:
        assert row["mask_union"] == 0 and row["mask_iou"] is None
        assert any(
            "keep no ground-truth pixel" in problem and "refexp_index 0" in problem
            for problem in result.problems
        )


def test_rule_7_an_empty_ground_truth_still_counts_in_the_sum_of_unions():
    """Expression 1's only object is a 1-pixel strip: its ground truth vanishes, and the 5 pixels
    predicted for it join ΣU. ΣI / ΣU = 200 / (200 + 5), not 1."""
    scene = real_scene([BLOCK, full((slice(100, 130), 200))])
    predictions = [on_grid(0, BLOCK_ON_GRID), on_grid(1, grid((slice(100, 105), 133)))]
    result = clevrref.score([referring(0, [0]), referring(1, [1])], [scene], predictions)
    rows = result.items
    assert (rows[1]["truth_pixels"], rows[1]["mask_intersection"], rows[1]["mask_union"]) == (0, 0, 5)
    assert rows[1]["mask_iou"] == 0.0
    assert result.summary["overall"]["official_cumulative_iou"] == pytest.approx(200 / 205)
    assert result.problems == [
        "1 expression(s) keep no ground-truth pixel on the released 320x320 grid (the resize and truncation "
        "drop thin parts); they are scored as the released code scores them, their predicted pixels "
        "counting in the union: refexp_index 1"
    ]


def test_rule_7_an_expression_with_nothing_true_or_predicted_is_not_an_error():
    """U = 0: the expression adds nothing to either sum and its own I / U is left empty."""
    scene = real_scene([BLOCK, full((slice(100, 130), 200))])
    predictions = [on_grid(0, grid((slice(10, 20), slice(20, 30)))), on_grid(1, grid())]
    result = clevrref.score([referring(0, [0]), referring(1, [1])], [scene], predictions)
    assert (result.items[1]["mask_union"], result.items[1]["mask_iou"]) == (0, None)
    assert result.summary["overall"]["official_cumulative_iou"] == pytest.approx(100 / 200)
    # Only such expressions: ΣU = 0, the figure is undefined (None), still no error.
    alone = clevrref.score([referring(1, [1])], [scene], [on_grid(1, grid())])
    assert alone.summary["overall"]["official_cumulative_iou"] is None
    assert alone.summary["overall"]["count"] == 1


def test_a_full_resolution_prediction_is_resized_like_the_ground_truth():
    """The block plus a 1-pixel strip: the strip vanishes in the resize, so the official IoU is 1
    where the full-resolution IoU counts the strip's 30 pixels against it."""
    predicted = BLOCK | full((slice(100, 130), 200))
    prediction = [at_full_resolution(0, predicted)]
    official = clevrref.score([referring(0, [0])], [real_scene([BLOCK])], prediction)
    assert (official.items[0]["mask_intersection"], official.items[0]["mask_union"]) == (200, 200)
    assert official.summary["overall"]["official_cumulative_iou"] == 1.0
    same = clevrref.score(
        [referring(0, [0])], [real_scene([BLOCK])], [dict(prediction[0], mask_size=[320, 480])]
    )
    assert same.items[0]["mask_union"] == 200  # [320, 480] said aloud is the same as no mask_size
    full_result = clevrref.score(
        [referring(0, [0])], [real_scene([BLOCK])], prediction, variant=FULL_RESOLUTION
    )
    row = full_result.items[0]
    assert (row["mask_intersection"], row["mask_union"]) == (300, 330)
    assert full_result.summary["overall"]["full_resolution_mean_iou"] == pytest.approx(300 / 330)


def test_a_prediction_on_the_grid_is_scored_as_given():
    """Half of the block's grid columns: I = 100, U = 200."""
    result = clevrref.score(
        [referring(0, [0])], [real_scene([BLOCK])], [on_grid(0, grid((slice(10, 20), slice(20, 30))))]
    )
    assert (result.items[0]["mask_intersection"], result.items[0]["mask_union"]) == (100, 200)
    assert result.items[0]["mask_iou"] == 0.5


def test_mask_sizes_are_checked_naming_record_and_field():
    records = [
        {"refexp_index": 0, "mask": "0,5", "mask_size": [480, 320]},  # width and height swapped
        {"refexp_index": 1, "mask": "0,5", "mask_size": [320]},
        {"refexp_index": 2, "mask": "0,5", "mask_size": ["320", "320"]},
        {"refexp_index": 3, "mask": f"0,{320 * 320 + 1}", "mask_size": [320, 320]},  # runs past the grid
        {"refexp_index": 4, "mask": f"0,{320 * 320}", "mask_size": [320, 320]},  # fine
        {"refexp_index": 5, "mask": f"0,{320 * 480}"},  # fine: full resolution
    ]
    with pytest.raises(FormatError) as raised:
        clevrref.parse_predictions(json.dumps(records), source="p.json")
    errors = {(error.record, error.field): error.message for error in raised.value.errors}
    assert set(errors) == {
        ("record 0", "mask_size"),
        ("record 1", "mask_size"),
        ("record 2", "mask_size[0]"),
        ("record 3", "mask"),
    }
    assert (
        "[320, 320] (the released scorer's grid) or [320, 480] (full resolution)"
        in errors[("record 0", "mask_size")]
    )
    assert "more than the 320x320 image" in errors[("record 3", "mask")]
    assert clevrref.parse_predictions(json.dumps(records[4:]))[0]["mask_size"] == [320, 320]


def test_the_full_resolution_variant_refuses_a_grid_mask():
    data = json.dumps([at_full_resolution(0, BLOCK), on_grid(1, BLOCK_ON_GRID)])
    with pytest.raises(FormatError) as raised:
        clevrref.parse_predictions(data, variant=FULL_RESOLUTION)
    (error,) = raised.value.errors
    assert (error.record, error.field) == ("record 1", "mask_size")
    assert "scored only by the official variant" in error.message
    assert len(clevrref.parse_predictions(data)) == 2  # fine for the official variant
    # Scoring stored answers (a submission's: their order means nothing) names the expression.
    with pytest.raises(FormatError, match="refexp_index 1: mask_size: a 320x320 mask is scored only"):
        clevrref.score(
            [referring(0, [0]), referring(1, [0])],
            [real_scene([BLOCK])],
            json.loads(data),
            variant=FULL_RESOLUTION,
        )
    with pytest.raises(ValueError, match="unknown CLEVR-Ref\\+ variant 'paper'"):
        clevrref.score([referring(0, [0])], [real_scene([BLOCK])], [], variant="paper")


# --- degenerate boxes --------------------------------------------------------------------------


def test_degenerate_boxes_score_zero_and_are_listed_not_refused():
    predictions = [
        {"refexp_index": 0, "box": [0, 0, 0, 1]},  # zero width, at the true box's corner
        {"refexp_index": 2, "box": [2, 1, 3, -1]},  # negative height
        {"refexp_index": 3, "box": [0, 2, 1, 2]},  # exact
        {"refexp_index": 1, "box": [0, 0, 0, 0]},  # multi-object: the box is not scored at all
    ]
    parsed = clevrref.parse_predictions(json.dumps(predictions), height=HEIGHT, width=WIDTH)
    assert parsed[1]["box"] == [2, 1, 3, -1]
    result = clevrref.score(REFEXPS[:4], [SCENE], parsed, **TINY)
    rows = {row["refexp_index"]: row for row in result.items}
    assert (rows[0]["box_iou"], rows[0]["detected"]) == (0.0, False)
    assert (rows[2]["box_iou"], rows[2]["detected"]) == (0.0, False)
    assert rows[3]["detected"] is True and rows[1]["box_iou"] is None
    assert result.summary["overall"]["detection_accuracy"] == pytest.approx(1 / 3)
    assert (
        "2 single-object prediction(s) give a box with zero or negative width or height, scored as IoU 0 "
        "(not detected): refexp_index 0, 2"
    ) in result.problems


def test_malformed_boxes_are_still_refused():
    records = [
        {"refexp_index": 0, "box": [0, 0, "2", 1]},
        {"refexp_index": 1, "box": [0, 0, 2]},
        {"refexp_index": 2, "box": "0 0 2 1"},
        {"refexp_index": "3", "box": [0, 0, 2, 1]},
        {"refexp_index": 4, "box": [0, 0, True, 1]},
    ]
    with pytest.raises(FormatError) as raised:
        clevrref.parse_predictions(json.dumps(records), height=HEIGHT, width=WIDTH)
    assert {(error.record, error.field) for error in raised.value.errors} == {
        ("record 0", "box[2]"),
        ("record 1", "box"),
        ("record 2", "box"),
        ("record 3", "refexp_index"),
        ("record 4", "box[2]"),
    }
    with pytest.raises(FormatError, match="refexp_index 0: box: coordinates must be finite numbers"):
        clevrref.score(REFEXPS[:1], [SCENE], [{"refexp_index": 0, "box": [0, 0, float("inf"), 1]}], **TINY)


# --- the spec, the report and the command line ---------------------------------------------------


def scored_both_ways():
    """One model's full-resolution prediction (the block and a thin strip) scored under each variant."""
    from benchmarks.spec import ScoringInput
    from plugins.clevrref.spec import SPEC

    task = {
        "records": [referring(0, [0])],
        "answers": {"0": {"mask": encode_mask(BLOCK | full((slice(100, 130), 200)))}},
        "scenes": [real_scene([BLOCK])],
    }
    return SPEC, {
        variant: SPEC.score(ScoringInput(**task, variant=variant))
        for variant in ("official", FULL_RESOLUTION)
    }


def test_the_spec_declares_both_variants_and_passes_them_to_the_metric():
    spec, scored = scored_both_ways()
    assert (
        [choice.value for choice in spec.variants]
        == list(clevrref.VARIANTS)
        == ["official", "full-resolution"]
    )
    assert spec.variant_problem("full-resolution") is None
    assert "not 'paper'" in spec.variant_problem("paper")
    assert scored["official"].summary["overall"]["official_cumulative_iou"] == 1.0
    assert scored[FULL_RESOLUTION].summary["overall"]["full_resolution_cumulative_iou"] == pytest.approx(
        300 / 330
    )


def test_the_report_shows_each_number_under_its_variant():
    from evaluation.plots import draw
    from evaluation.reports import ScoredSubmission, build_table, table_csv

    spec, scored = scored_both_ways()
    rows = [
        ScoredSubmission("model", f"model ({variant})", "", result.summary, result.items)
        for variant, result in scored.items()
    ]
    table = build_table(spec, rows)
    headers = [(column.group, column.label) for column in table.columns]
    assert headers == [
        ("Detection", "Acc (single)"),
        ("Segmentation (official 320×320)", "cumulative IoU"),
        ("Segmentation (full resolution)", "mean IoU"),
        ("Segmentation (full resolution)", "cumulative IoU"),
    ]
    values = {row.label: [cell.value for cell in row.cells] for row in table.rows}
    assert values["model (official)"] == [None, 1.0, None, None]
    assert values["model (full-resolution)"][:2] == [None, None]
    assert values["model (full-resolution)"][2:] == pytest.approx([300 / 330, 300 / 330])
    # Counts come from the rows scored under the column's variant only.
    counts = {row.label: [cell.n for cell in row.cells][1:] for row in table.rows}
    assert counts == {"model (official)": [1, 0, 0], "model (full-resolution)": [0, 1, 1]}
    assert "model (official),model,Segmentation (official 320×320),cumulative IoU,1.0,,,1" in table_csv(table)
    # The official plot leaves the full-resolution row out instead of drawing it as zeros.
    plot, detection = spec.plots[:2]
    assert plot.metric == "official_cumulative_iou" and detection.metric == "detection_accuracy"
    svg = draw(plot, rows)
    assert "model (official)" in svg and "model (full-resolution)" not in svg
    assert draw(plot, rows[1:]) is None
    # A variant no row was scored under is left out of the table (the demo: official only).
    official_only = build_table(spec, rows[:1])
    assert [(column.group, column.label) for column in official_only.columns] == headers[:2]
    assert [cell.value for cell in official_only.rows[0].cells] == [None, 1.0]


def test_the_score_command_takes_the_variant_and_keeps_intersections_and_unions(tmp_path):
    import io

    from django.core.management import call_command
    from django.core.management.base import CommandError

    refexps, scenes, predictions = tmp_path / "refexps.json", tmp_path / "scenes.json", tmp_path / "p.json"
    refexps.write_text(json.dumps({"info": {}, "refexps": [referring(0, [0])]}))
    scenes.write_text(json.dumps({"info": {}, "scenes": [real_scene([BLOCK])]}))
    predictions.write_text(json.dumps([on_grid(0, grid((slice(10, 20), slice(20, 30))))]))
    files = ["--gt", str(refexps), "--scenes", str(scenes), "--predictions", str(predictions)]
    out, details = io.StringIO(), tmp_path / "details.jsonl"
    call_command("score", "clevrref", *files, "--details", str(details), "--json", stdout=out)
    assert json.loads(out.getvalue())["summary"]["overall"]["official_cumulative_iou"] == 0.5
    (row,) = [json.loads(line) for line in details.read_text().splitlines()]
    assert (row["variant"], row["mask_intersection"], row["mask_union"]) == ("official", 100, 200)
    with pytest.raises(
        CommandError, match="record 0: mask_size: a 320x320 mask is scored only by the official"
    ):
        call_command("score", "clevrref", *files, "--variant", "full-resolution", stdout=io.StringIO())


def test_the_report_plots_detection_accuracy_by_expression_category():
    from evaluation.plots import draw
    from evaluation.reports import ScoredSubmission

    spec = registry.get("clevrref")
    detection = next(plot for plot in spec.plots if plot.metric == "detection_accuracy")
    # By hand: 0-Relate 3 of 4 single-object expressions found, 1-Relate 1 of 2, AND none single.
    summary = {
        "overall": {"detection_accuracy": 4 / 6},
        "by_category": {
            "0-Relate": {"count": 4, "detection_count": 4, "detection_accuracy": 0.75},
            "1-Relate": {"count": 3, "detection_count": 2, "detection_accuracy": 0.5},
            "AND": {"count": 2, "detection_count": 0, "detection_accuracy": None},
        },
    }
    svg = draw(detection, [ScoredSubmission("model", "Executor", "", summary, [])])
    assert "Detection accuracy (single-object expressions) by expression category" in svg
    assert all(category in svg for category in ("0-Relate", "1-Relate", "AND")) and "Executor" in svg
    # A row without any detection figure draws no plot rather than zeros.
    empty = {"by_category": {"AND": {"detection_accuracy": None}}}
    assert draw(detection, [ScoredSubmission("model", "Executor", "", empty, [])]) is None
