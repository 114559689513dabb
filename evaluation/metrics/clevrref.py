"""CLEVR-Ref+ metrics: detection accuracy and segmentation IoU (mean and cumulative).

Pure Python (numpy), no Django. The objects an expression refers to are its program's last
output, ``program[-1]["_output"]`` (0-based indices into the scene's ``objects``). Scene object
i has its box in ``obj_bbox[str(i + 1)]`` ([x, y, w, h] in pixels) and its mask in
``obj_mask[str(i + 1)]``.

Detection (single-object expressions only; the paper's 32% subset)::

    box IoU  = area(B_true ∩ B_pred) / area(B_true ∪ B_pred)      (boxes as real rectangles
                                                                 [x, x + w] x [y, y + h])
    detected = box IoU >= 0.5                                    (inclusive)
    detection accuracy = share of single-object expressions detected

Segmentation (every expression). The true mask M of an expression is the union of the referred
objects' masks; with P the predicted mask, per expression I = |M ∩ P| and U = |M ∪ P| in
pixels, and::

    mean IoU       = mean over expressions of I / U      (I / U := 1 when U = 0: both empty)
    cumulative IoU = sum of I / sum of U                  (what the released code reports)

A prediction that gives no box (single-object expression) or no mask counts as an empty box or
mask: IoU 0. When no prediction at all carries a box, detection is not evaluated (its numbers
are None and ``params["detection"]`` is False); the same holds for masks and segmentation.
Expressions without a prediction score 0 and are listed in ``Scored.problems``; predictions for
unknown expressions are listed and ignored.

Breakdowns, each reported with all the numbers above:

- ``by_category``, from the program (first match wins): "AND" (an ``intersect`` step), "OR"
  (a ``union`` step), "Same" (a ``same_*`` step), otherwise "k-Relate" with k the number of
  ``relate`` steps (0 to 3 in CLEVR-Ref+'s templates).
- ``by_family``: ``template_filename`` (or ``refexp_family_index``) when the records carry it.
- ``by_module``: with / without ``filter_ordinal``, with / without ``filter_visibleout``.
- ``by_structure``: "chain" (every step has at most one input) or "tree".

Prediction file (Yardstick's format): a JSON list of

    {"refexp_index": int, "box": [x, y, w, h], "mask": "run lengths"}     (box, mask optional)

where the mask uses the scenes' obj_mask encoding: run lengths over the row-major
``height`` x ``width`` image, starting with a background run (0 when the top-left pixel is
foreground), separated by commas or whitespace; a missing trailing background run is implied.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from benchmarks.clevrref import formats
from benchmarks.clevrref.scenes import decode_mask
from benchmarks.records import RecordChecker, check_unique, indexed, load_json_list
from evaluation.metrics.scored import Scored, describe_ids, mean_or_none, ratio_or_none

METRIC = "CLEVR-Ref+"
#: Bump when a change to this module can change a number.
METRIC_VERSION = "1"

DEFAULT_HEIGHT = 320
DEFAULT_WIDTH = 480
#: A single-object expression is detected when the box IoU is at least this (inclusive).
DETECTION_THRESHOLD = 0.5

AND, OR, SAME = "AND", "OR", "Same"
CHAIN, TREE = "chain", "tree"
ORDINAL_STEP = "filter_ordinal"
VISIBLE_STEP = "filter_visibleout"


# --- geometry ----------------------------------------------------------------------------------


def box_iou(first: Sequence[float], second: Sequence[float]) -> float:
    """IoU of two [x, y, w, h] boxes as real rectangles; 0 when the union has no area."""
    x1, y1, w1, h1 = (float(value) for value in first)
    x2, y2, w2, h2 = (float(value) for value in second)
    overlap_width = max(0.0, min(x1 + w1, x2 + w2) - max(x1, x2))
    overlap_height = max(0.0, min(y1 + h1, y2 + h2) - max(y1, y2))
    intersection = overlap_width * overlap_height
    union = max(w1, 0.0) * max(h1, 0.0) + max(w2, 0.0) * max(h2, 0.0) - intersection
    return intersection / union if union > 0 else 0.0


def mask_overlap(truth: np.ndarray, predicted: np.ndarray | None) -> tuple[int, int]:
    """(|M ∩ P|, |M ∪ P|) in pixels; a missing prediction is an empty mask."""
    if predicted is None:
        area = int(np.count_nonzero(truth))
        return 0, area
    return int(np.count_nonzero(truth & predicted)), int(np.count_nonzero(truth | predicted))


# --- programs ----------------------------------------------------------------------------------


def referred_objects(refexp: Mapping[str, Any]) -> list[int]:
    """The 0-based object indices an expression refers to: its program's last output."""
    return list(refexp["program"][-1]["_output"])


def step_types(refexp: Mapping[str, Any]) -> list[str]:
    return [step["type"] for step in refexp["program"]]


def expression_category(refexp: Mapping[str, Any]) -> str:
    """AND, OR, Same, or "k-Relate" (k = number of relate steps); see the module docstring."""
    types = step_types(refexp)
    if "intersect" in types:
        return AND
    if "union" in types:
        return OR
    if any(kind.startswith("same_") for kind in types):
        return SAME
    return f"{types.count('relate')}-Relate"


def expression_structure(refexp: Mapping[str, Any]) -> str:
    """TREE when some step takes two or more inputs (AND / OR), CHAIN otherwise."""
    return TREE if any(len(step.get("inputs", ())) > 1 for step in refexp["program"]) else CHAIN


def expression_family(refexp: Mapping[str, Any]) -> str | None:
    if "template_filename" in refexp:
        return str(refexp["template_filename"])
    if "refexp_family_index" in refexp:
        return f"family {refexp['refexp_family_index']}"
    return None


# --- predictions -------------------------------------------------------------------------------


def check_mask_text(checker: RecordChecker, text: str, height: int, width: int) -> None:
    """A run-length mask must be non-negative integers covering at most height x width pixels."""
    parts = text.replace(",", " ").split()
    if not all(part.isascii() and part.isdigit() for part in parts):
        checker.fail("mask", "expected run lengths: non-negative integers separated by commas or spaces")
        return
    covered = sum(int(part) for part in parts)
    if covered > height * width:
        checker.fail("mask", f"runs cover {covered} pixels, more than the {width}x{height} image")


def prediction_from_record(
    raw: Any, checker: RecordChecker, height: int, width: int
) -> dict[str, Any] | None:
    if not checker.is_object(raw):
        return None
    before = len(checker.errors)
    refexp_index = checker.get(raw, "refexp_index", int)
    prediction: dict[str, Any] = {"refexp_index": refexp_index}
    if raw.get("box") is not None:
        box = checker.get_list(raw, "box", (int, float), length=4)
        if box is not None:
            if not all(math.isfinite(value) for value in box):
                checker.fail("box", "coordinates must be finite numbers")
            elif box[2] < 0 or box[3] < 0:
                checker.fail("box", f"width and height must not be negative, got {box[2]} x {box[3]}")
            prediction["box"] = box
    if raw.get("mask") is not None:
        mask = checker.get(raw, "mask", str)
        if mask is not None:
            check_mask_text(checker, mask, height, width)
            prediction["mask"] = mask
    if len(checker.errors) > before:
        return None
    return prediction


def check_prediction_records(
    labelled: list[tuple[str, Any]], *, height: int, width: int, source: str = ""
) -> list[dict[str, Any]]:
    """Validate labelled prediction records; all faults (and duplicate indices) in one FormatError."""
    return check_unique(
        labelled,
        lambda raw, checker: prediction_from_record(raw, checker, height, width),
        id_field="refexp_index",
        source=source,
    )


def parse_predictions(
    data: bytes | str | list[Any],
    *,
    source: str = "",
    height: int = DEFAULT_HEIGHT,
    width: int = DEFAULT_WIDTH,
) -> list[dict[str, Any]]:
    """A CLEVR-Ref+ prediction file (format in the module docstring) as validated records.

    Every fault of every record is reported at once as a FormatError of RecordError("record N",
    field, message), N counting from 0; duplicate refexp indices are faults too.
    """
    document = load_json_list(data, source=source, what="predictions")
    return check_prediction_records(indexed(document), height=height, width=width, source=source)


# --- scoring -----------------------------------------------------------------------------------


def group_summary(
    rows: Sequence[Mapping[str, Any]], *, detection: bool, segmentation: bool
) -> dict[str, Any]:
    """count; detection count and accuracy; mean and cumulative IoU (None when not evaluated)."""
    single = [row for row in rows if row["single"]]
    summary: dict[str, Any] = {
        "count": len(rows),
        "detection_count": len(single),
        "detection_accuracy": mean_or_none(float(row["detected"]) for row in single) if detection else None,
        "mean_iou": None,
        "cumulative_iou": None,
    }
    if segmentation and rows:
        summary["mean_iou"] = mean_or_none(row["mask_iou"] for row in rows)
        intersections = sum(row["mask_intersection"] for row in rows)
        unions = sum(row["mask_union"] for row in rows)
        summary["cumulative_iou"] = ratio_or_none(intersections, unions) if unions else 1.0
    return summary


def as_list(values: Any, key: str) -> list[Any]:
    """The records of an official document ({"refexps": [...]}) or of a plain list."""
    if isinstance(values, Mapping) and key in values:
        return list(values[key])
    return list(values.values()) if isinstance(values, Mapping) else list(values)


def parameters(height: int, width: int, detection: bool, segmentation: bool) -> dict[str, Any]:
    return {
        "metric": METRIC,
        "metric_version": METRIC_VERSION,
        # One variant only: nothing differs between the paper and the released material.
        "variant": "official",
        "detection_threshold": DETECTION_THRESHOLD,
        "detection_rule": "box IoU >= detection_threshold, single-object expressions only",
        "segmentation": segmentation,
        "detection": detection,
        "mean_iou": "mean over expressions of I / U (1 when U = 0)",
        "cumulative_iou": "sum of I / sum of U",
        "height": height,
        "width": width,
    }


class SceneMasks:
    """Decoded object masks of the scenes, each decoded once when first needed."""

    def __init__(self, scenes: list[Mapping[str, Any]], height: int, width: int) -> None:
        self.scenes = {scene["image_index"]: scene for scene in scenes}
        self.height = height
        self.width = width
        self.decoded: dict[tuple[int, int], np.ndarray] = {}

    def scene(self, image_index: int, where: str) -> Mapping[str, Any]:
        if image_index not in self.scenes:
            raise ValueError(f"{where}: image {image_index} has no scene")
        return self.scenes[image_index]

    def object_mask(self, image_index: int, object_index: int, where: str) -> np.ndarray:
        key = (image_index, object_index)
        if key not in self.decoded:
            masks = self.scene(image_index, where).get("obj_mask") or {}
            text = masks.get(str(object_index + 1))
            if text is None:
                raise ValueError(f"{where}: image {image_index} has no obj_mask for object {object_index}")
            self.decoded[key] = decode_mask(text, self.width, self.height)
        return self.decoded[key]

    def expression_mask(self, image_index: int, objects: list[int], where: str) -> np.ndarray:
        """The union of the referred objects' masks."""
        mask = np.zeros((self.height, self.width), dtype=bool)
        for object_index in objects:
            mask |= self.object_mask(image_index, object_index, where)
        return mask

    def object_box(self, image_index: int, object_index: int, where: str) -> list[float]:
        boxes = self.scene(image_index, where).get("obj_bbox") or {}
        box = boxes.get(str(object_index + 1))
        if box is None:
            raise ValueError(f"{where}: image {image_index} has no obj_bbox for object {object_index}")
        return box


def score(
    refexps: Sequence[Mapping[str, Any]] | Mapping[str, Any],
    scenes: Sequence[Mapping[str, Any]] | Mapping[str, Any],
    predictions: Sequence[Mapping[str, Any]],
    *,
    height: int = DEFAULT_HEIGHT,
    width: int = DEFAULT_WIDTH,
) -> Scored:
    """Score CLEVR-Ref+ predictions against official expressions and scenes.

    `refexps`: the expression records (or the whole ``{"refexps": [...]}`` document); `scenes`:
    the scene records (or ``{"scenes": [...]}``), matched by ``image_index``; `predictions`: a
    list of ``{"refexp_index", "box"?, "mask"?}``, validated first.

    Items: one row per expression, in its order: refexp_index, image_index, referred_count,
    single, category, family, structure, ordinal, visible, missing, box_iou and detected (None
    for multi-object expressions or when detection is not evaluated), mask_intersection,
    mask_union, mask_iou (None when segmentation is not evaluated). Summary: "overall",
    "by_category", "by_family", "by_module", "by_structure" (see `group_summary`), the parameters
    and the counts of missing and extra predictions.
    """
    expressions = as_list(refexps, "refexps")
    records = check_prediction_records(indexed(list(predictions)), height=height, width=width)
    by_index = {prediction["refexp_index"]: prediction for prediction in records}
    detection = any("box" in prediction for prediction in records)
    segmentation = any("mask" in prediction for prediction in records)
    masks = SceneMasks(as_list(scenes, "scenes"), height, width)
    params = parameters(height, width, detection, segmentation)

    rows: list[dict[str, Any]] = []
    missing: list[int] = []
    missing_boxes: list[int] = []
    missing_masks: list[int] = []
    seen: set[int] = set()
    for refexp in expressions:
        refexp_index = refexp["refexp_index"]
        where = f"refexp {refexp_index}"
        if refexp_index in seen:
            raise ValueError(f"{where}: the expressions hold this refexp_index twice")
        seen.add(refexp_index)
        image_index = refexp["image_index"]
        objects = referred_objects(refexp)
        prediction = by_index.get(refexp_index)
        types = step_types(refexp)
        row: dict[str, Any] = {
            "refexp_index": refexp_index,
            "image_index": image_index,
            "referred_count": len(objects),
            "single": len(objects) == 1,
            "category": expression_category(refexp),
            "family": expression_family(refexp),
            "structure": expression_structure(refexp),
            "ordinal": ORDINAL_STEP in types,
            "visible": VISIBLE_STEP in types,
            "missing": prediction is None,
            "box_iou": None,
            "detected": None,
            "mask_intersection": 0,
            "mask_union": 0,
            "mask_iou": None,
        }
        rows.append(row)
        if prediction is None:
            missing.append(refexp_index)
            prediction = {}
        if detection and row["single"]:
            truth_box = masks.object_box(image_index, objects[0], where)
            if "box" in prediction:
                row["box_iou"] = box_iou(truth_box, prediction["box"])
            else:
                row["box_iou"] = 0.0
                if not row["missing"]:
                    missing_boxes.append(refexp_index)
            row["detected"] = row["box_iou"] >= DETECTION_THRESHOLD
        if segmentation:
            truth_mask = masks.expression_mask(image_index, objects, where)
            predicted_mask = decode_mask(prediction["mask"], width, height) if "mask" in prediction else None
            if predicted_mask is None and not row["missing"]:
                missing_masks.append(refexp_index)
            intersection, union = mask_overlap(truth_mask, predicted_mask)
            row["mask_intersection"], row["mask_union"] = intersection, union
            row["mask_iou"] = intersection / union if union else 1.0

    extra = [refexp_index for refexp_index in by_index if refexp_index not in seen]
    problems = []
    if missing:
        problems.append(
            f"{len(missing)} expression{'s have' if len(missing) != 1 else ' has'} no prediction and "
            f"score{'' if len(missing) != 1 else 's'} 0: refexp_index {describe_ids(missing)}"
        )
    if missing_boxes:
        problems.append(
            f"{len(missing_boxes)} single-object prediction(s) give no box and count as not detected: "
            f"refexp_index {describe_ids(missing_boxes)}"
        )
    if missing_masks:
        problems.append(
            f"{len(missing_masks)} prediction(s) give no mask and count as empty masks: "
            f"refexp_index {describe_ids(missing_masks)}"
        )
    if extra:
        problems.append(
            f"{len(extra)} prediction{'s are' if len(extra) != 1 else ' is'} for expressions not in the "
            f"ground truth and {'were' if len(extra) != 1 else 'was'} ignored: refexp_index {describe_ids(extra)}"
        )

    def summarise(selected: list[dict[str, Any]]) -> dict[str, Any]:
        return group_summary(selected, detection=detection, segmentation=segmentation)

    def by_value(key: str, values: Sequence[Any]) -> dict[str, Any]:
        return {str(value): summarise([row for row in rows if row[key] == value]) for value in values}

    categories = sorted({row["category"] for row in rows}, key=category_order)
    families = sorted({row["family"] for row in rows if row["family"] is not None})
    summary = {
        "parameters": params,
        "overall": summarise(rows),
        "by_category": by_value("category", categories),
        "by_family": by_value("family", families),
        "by_module": {
            module: {
                "with": summarise([row for row in rows if row[module]]),
                "without": summarise([row for row in rows if not row[module]]),
            }
            for module in ("ordinal", "visible")
        },
        "by_structure": by_value("structure", [CHAIN, TREE]),
        "missing_predictions": len(missing),
        "extra_predictions": len(extra),
    }
    return Scored(items=rows, summary=summary, params=params, problems=problems)


def category_order(category: str) -> tuple[int, str]:
    """k-Relate first by k, then AND, OR, Same (the paper's column order)."""
    if category.endswith("-Relate"):
        return (int(category.split("-")[0]), category)
    return (100 + (AND, OR, SAME).index(category), category)


def score_file(
    refexps_data: bytes,
    scenes_data: bytes,
    predictions_data: bytes,
    *,
    height: int = DEFAULT_HEIGHT,
    width: int = DEFAULT_WIDTH,
) -> Scored:
    """Score a prediction file against official refexp and scene files (raw JSON bytes).

    The refexps and scenes are read and checked by the CLEVR-Ref+ format module.
    """
    parsed = formats.parse(refexps_data, source="refexps")
    refexps = [formats.to_official(record.payload, record.ground_truth) for record in parsed.records]
    scenes = [scene.data for scene in formats.parse_scenes(scenes_data, source="scenes").scenes]
    predictions = parse_predictions(predictions_data, source="predictions", height=height, width=width)
    return score(refexps, scenes, predictions, height=height, width=width)
