"""Tests for the CLEVR-Ref+ metrics (pure Python, no database): hand cases on tiny masks.

The scene below is a 4 x 5 image (height 4, width 5, 20 pixels, row-major):

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

from benchmarks.clevrref.scenes import encode_mask
from benchmarks.records import FormatError
from evaluation.metrics import clevrref

HEIGHT, WIDTH = 4, 5
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
    return clevrref.score(REFEXPS, [SCENE], PREDICTIONS, height=HEIGHT, width=WIDTH)


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
    assert overall["mean_iou"] == pytest.approx((1 + 0.6 + 0 + 1 + 0) / 5)
    assert overall["cumulative_iou"] == pytest.approx((2 + 3 + 0 + 2 + 0) / (2 + 5 + 3 + 2 + 4))
    by_category = scored.summary["by_category"]
    assert list(by_category) == ["0-Relate", "1-Relate", "AND", "OR", "Same"]
    assert by_category["OR"] == {
        "count": 1,
        "detection_count": 0,
        "detection_accuracy": None,
        "mean_iou": 0.6,
        "cumulative_iou": 0.6,
    }
    assert scored.summary["by_module"]["ordinal"]["with"]["count"] == 1
    assert scored.summary["by_module"]["ordinal"]["without"]["count"] == 4
    assert scored.summary["by_module"]["visible"]["with"]["mean_iou"] == 1.0
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


def test_problems(scored):
    problems = "\n".join(scored.problems)
    assert "1 expression has no prediction" in problems and "refexp_index 4" in problems
    assert "give no mask" in problems and "refexp_index 2" in problems
    assert "ignored: refexp_index 99" in problems
    assert scored.summary["missing_predictions"] == 1 and scored.summary["extra_predictions"] == 1


def test_box_only_predictions_do_not_evaluate_segmentation():
    predictions = [{"refexp_index": 0, "box": [0, 0, 2, 1]}, {"refexp_index": 2, "box": [0, 0, 1, 1]}]
    result = clevrref.score(REFEXPS[:3], [SCENE], predictions, height=HEIGHT, width=WIDTH)
    assert result.params["segmentation"] is False
    assert (
        result.summary["overall"]["mean_iou"] is None and result.summary["overall"]["cumulative_iou"] is None
    )
    assert result.summary["overall"]["detection_accuracy"] == 0.5
    assert all(row["mask_iou"] is None for row in result.items)
    assert not any("mask" in problem for problem in result.problems)


def test_mask_only_predictions_do_not_evaluate_detection():
    predictions = [{"refexp_index": 0, "mask": "0,1"}]
    result = clevrref.score(
        {"refexps": REFEXPS[:1]}, {"scenes": [SCENE]}, predictions, height=HEIGHT, width=WIDTH
    )
    assert result.params["detection"] is False
    assert result.summary["overall"]["detection_accuracy"] is None
    assert result.items[0]["detected"] is None
    assert result.summary["overall"]["mean_iou"] == 0.5


def test_scene_without_the_referred_mask_is_a_clear_error():
    scene = dict(SCENE, obj_mask={"1": "0,2"})
    with pytest.raises(ValueError, match="refexp 1: image 0 has no obj_mask for object 1"):
        clevrref.score(REFEXPS[:2], [scene], [{"refexp_index": 1, "mask": "0,1"}], height=HEIGHT, width=WIDTH)
    with pytest.raises(ValueError, match="refexp 0: image 7 has no scene"):
        clevrref.score(
            [dict(REFEXPS[0], image_index=7)],
            [SCENE],
            [{"refexp_index": 0, "mask": "0,1"}],
            height=HEIGHT,
            width=WIDTH,
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
    result = clevrref.score([expression], [scene], [{"refexp_index": 0, "mask": encode_mask(predicted)}])
    row = result.items[0]
    assert row["mask_intersection"] == int((truth & predicted).sum())
    assert row["mask_union"] == int((truth | predicted).sum())


# --- prediction files --------------------------------------------------------------------------


def test_parse_predictions_reports_every_bad_record():
    records = [
        {"refexp_index": 0, "box": [0, 0, 2, 1], "mask": "0,2"},
        {"box": [0, 0, 1, 1]},
        {"refexp_index": 2, "box": [0, 0, 1]},
        {"refexp_index": 3, "box": [0, 0, -1, 1]},
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
        ("record 3", "box"),
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
    result = clevrref.score_file(refexps_data, scenes_data, predictions_data, height=HEIGHT, width=WIDTH)
    assert result.summary["overall"]["cumulative_iou"] == pytest.approx(7 / 16)


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
    result = clevrref.score(expressions, scenes, predictions, height=HEIGHT, width=WIDTH)
    assert result.summary["overall"]["mean_iou"] == pytest.approx(sum(ious) / len(ious))
    assert result.summary["overall"]["cumulative_iou"] == pytest.approx(sum(intersections) / sum(unions))
