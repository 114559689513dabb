"""CLEVR-Ref+ metrics: detection accuracy and segmentation IoU, in two variants.

Pure Python (numpy), no Django. The objects an expression refers to are its program's last
output, ``program[-1]["_output"]`` (0-based indices into the scene's ``objects``); the scene is
the one whose ``image_index`` the expression names (not the one at that position in the list).
Scene object i has its box in ``obj_bbox[str(i + 1)]`` ([x, y, w, h] in pixels) and its mask in
``obj_mask[str(i + 1)]`` (run lengths over the row-major 320 x 480 image, background first).

Detection (single-object expressions only; the paper's 32% subset; the same in both variants)::

    box IoU  = area(B_true ∩ B_pred) / area(B_true ∪ B_pred)      (boxes as real rectangles
                                                                 [x, x + w] x [y, y + h])
    detected = box IoU >= 0.5                                    (inclusive)
    detection accuracy = share of single-object expressions detected

A predicted box with zero or negative width or height scores IoU 0 (not detected) and is listed
in ``Scored.problems``; a box that is not four finite numbers refuses the file.

Segmentation, variant ``"official"`` (the default): what the only released scorer (IEP-Ref)
computes, on a 320 x 320 grid.

1. The ground-truth heat map is the **sum** of the referred objects' masks (a pixel two masks
   cover has value 2), as floats.
2. It is resized from 480 to 320 columns the way OpenCV's default bilinear ``cv2.resize(h,
   (320, 320))`` does (rows unchanged). In closed form, exact in floating point, output column
   2k is ``0.75·h[3k] + 0.25·h[3k+1]`` and column 2k+1 is ``0.25·h[3k+1] + 0.75·h[3k+2]``
   (`released_resize`).
3. The result is cast to integers, which truncates toward zero: a pixel is ground truth when
   its value is at least 1 (`released_mask`). Thin vertical parts vanish, and some expressions
   are left with no ground-truth pixel at all: they are still scored (listed in problems).
4. A prediction mask is on that 320 x 320 grid (``"mask_size": [320, 320]``), or at full
   resolution (320 x 480), in which case it goes through steps 2 and 3 first.
5. Per expression I = |P ∧ M| and U = |P ∨ M| on the grid; the figure is the **cumulative IoU**
   ΣI / ΣU over every expression, those with an empty ground truth included. I / U of one
   expression is kept per row (None when U = 0: nothing to compare) but averaged nowhere: the
   released code reports no mean IoU.

Segmentation, variant ``"full-resolution"`` (Yardstick's earlier definition): the true mask M is
the union (OR) of the referred objects' masks at 320 x 480 and P the full-resolution predicted
mask; per expression I = |M ∩ P| and U = |M ∪ P|, and::

    mean IoU       = mean over expressions of I / U      (I / U := 1 when U = 0: both empty)
    cumulative IoU = sum of I / sum of U                  (1 when every U is 0)

A 320 x 320 prediction mask cannot be scored at full resolution and is refused under this
variant (upsampling it would invent pixels).

Summary keys name their variant: ``official_cumulative_iou`` (official);
``full_resolution_mean_iou`` and ``full_resolution_cumulative_iou`` (full-resolution). Every row
carries ``variant``.

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

    {"refexp_index": int, "box": [x, y, w, h], "mask": "run lengths", "mask_size": [h, w]}

(box, mask and mask_size optional). The mask uses the scenes' obj_mask encoding: run lengths
over the row-major image, starting with a background run (0 when the top-left pixel is
foreground), separated by commas or whitespace; a missing trailing background run is implied.
``mask_size`` is [height, width]: [320, 480] (full resolution, the default when it is left
out) or [320, 320] (the released scorer's grid).

The height and width parameters exist for small hand-made tests; at the real size they are 320
and 480. The official grid is always height x (2/3 · width), so the width must be a multiple
of 3.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from benchmarks.records import RecordChecker, check_unique, indexed, load_json_list
from benchmarks.spec import OFFICIAL
from evaluation.metrics.scored import Scored, describe_ids, mean_or_none, ratio_or_none
from plugins.clevrref import formats
from plugins.clevrref.scenes import decode_mask

METRIC = "CLEVR-Ref+"
#: Bump when a change to this module can change a number.
METRIC_VERSION = "2"

#: The variants: OFFICIAL, the released scorer's rules (sum, resize to 320 x 320, truncate), and
#: FULL_RESOLUTION, Yardstick's earlier union IoU at 320 x 480.
FULL_RESOLUTION = "full-resolution"
VARIANTS = (OFFICIAL, FULL_RESOLUTION)

DEFAULT_HEIGHT = 320
DEFAULT_WIDTH = 480
#: A single-object expression is detected when the box IoU is at least this (inclusive).
DETECTION_THRESHOLD = 0.5

AND, OR, SAME = "AND", "OR", "Same"
CHAIN, TREE = "chain", "tree"
ORDINAL_STEP = "filter_ordinal"
VISIBLE_STEP = "filter_visibleout"

#: Summary keys of the segmentation figures, each naming its variant.
OFFICIAL_CUMULATIVE = "official_cumulative_iou"
FULL_MEAN = "full_resolution_mean_iou"
FULL_CUMULATIVE = "full_resolution_cumulative_iou"


def check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"unknown CLEVR-Ref+ variant {variant!r} (expected one of {', '.join(VARIANTS)})")


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


def degenerate_box(box: Sequence[float]) -> bool:
    """A box with zero or negative width or height: it covers no area, so it scores IoU 0."""
    return box[2] <= 0 or box[3] <= 0


def mask_overlap(truth: np.ndarray, predicted: np.ndarray | None) -> tuple[int, int]:
    """(|M ∩ P|, |M ∪ P|) in pixels; a missing prediction is an empty mask."""
    if predicted is None:
        area = int(np.count_nonzero(truth))
        return 0, area
    return int(np.count_nonzero(truth & predicted)), int(np.count_nonzero(truth | predicted))


def released_width(width: int) -> int:
    """The width of the released scorer's grid: 2/3 of the image's (480 -> 320)."""
    if width % 3:
        raise ValueError(
            f"the official variant resizes {width} columns by 2/3: the width must be a multiple of 3"
        )
    return 2 * width // 3


def released_resize(heat: np.ndarray) -> np.ndarray:
    """A (height, width) heat map resized to (height, 2/3 width) as OpenCV's default bilinear
    ``cv2.resize`` does when it shrinks 480 columns to 320 (rows unchanged).

    Output column 2k samples source position 3k + 0.25 and column 2k+1 position 3k + 1.75, so::

        out[:, 2k]     = 0.75 · heat[:, 3k]     + 0.25 · heat[:, 3k + 1]
        out[:, 2k + 1] = 0.25 · heat[:, 3k + 1] + 0.75 · heat[:, 3k + 2]

    exact in floating point for the small integer values a heat map holds.
    """
    heat = np.asarray(heat, dtype=np.float64)
    height, width = heat.shape
    resized = np.empty((height, released_width(width)), dtype=np.float64)
    left, middle, right = heat[:, 0::3], heat[:, 1::3], heat[:, 2::3]
    resized[:, 0::2] = 0.75 * left + 0.25 * middle
    resized[:, 1::2] = 0.25 * middle + 0.75 * right
    return resized


def released_mask(heat: np.ndarray) -> np.ndarray:
    """The boolean mask the released scorer keeps of a heat map: resized (`released_resize`),
    then cast to integers, which truncates toward zero, so a pixel stays when its value is >= 1."""
    return released_resize(heat).astype(np.int64) >= 1


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


def mask_shape(
    raw: Mapping[str, Any], checker: RecordChecker, height: int, width: int, variant: str | None
) -> tuple[int, int] | None:
    """The (height, width) a prediction's mask is given at: its ``mask_size``, full resolution when
    it has none. None (after noting the fault) for a size neither variant reads, or one the chosen
    variant cannot score (a 320 x 320 mask under full-resolution)."""
    if raw.get("mask_size") is None:
        return height, width
    size = checker.get_list(raw, "mask_size", int, length=2)
    if size is None:
        return None
    full = (height, width)
    grid = (height, released_width(width)) if width % 3 == 0 else None
    shape = (size[0], size[1])
    if shape not in (full, grid):
        expected = f"[{height}, {width}] (full resolution)"
        if grid is not None:
            expected = f"[{grid[0]}, {grid[1]}] (the released scorer's grid) or " + expected
        checker.fail("mask_size", f"expected [height, width] {expected}, got {list(size)}")
        return None
    if shape == grid and variant == FULL_RESOLUTION:
        checker.fail(
            "mask_size",
            f"a {grid[0]}x{grid[1]} mask is scored only by the official variant; the full-resolution "
            f"variant needs the {height}x{width} mask (mask_size [{height}, {width}] or none)",
        )
        return None
    return shape


def prediction_from_record(
    raw: Any, checker: RecordChecker, height: int, width: int, variant: str | None = None
) -> dict[str, Any] | None:
    if not checker.is_object(raw):
        return None
    before = len(checker.errors)
    refexp_index = checker.get(raw, "refexp_index", int)
    prediction: dict[str, Any] = {"refexp_index": refexp_index}
    if raw.get("box") is not None:
        box = checker.get_list(raw, "box", (int, float), length=4)
        if box is not None:
            # Zero or negative sizes are scored (IoU 0, listed), not refused: see `score`.
            if not all(math.isfinite(value) for value in box):
                checker.fail("box", "coordinates must be finite numbers")
            prediction["box"] = box
    shape = mask_shape(raw, checker, height, width, variant)
    if raw.get("mask_size") is not None and shape is not None:
        prediction["mask_size"] = list(shape)
    if raw.get("mask") is not None:
        mask = checker.get(raw, "mask", str)
        if mask is not None:
            if shape is not None:
                check_mask_text(checker, mask, *shape)
            prediction["mask"] = mask
    if len(checker.errors) > before:
        return None
    return prediction


def check_prediction_records(
    labelled: list[tuple[str, Any]],
    *,
    height: int,
    width: int,
    variant: str | None = None,
    source: str = "",
) -> list[dict[str, Any]]:
    """Validate labelled prediction records; all faults (and duplicate indices) in one FormatError.

    `variant`: the variant the records will be scored under (None: any; a 320 x 320 mask is then
    accepted, and refused later if the full-resolution variant scores it).
    """
    return check_unique(
        labelled,
        lambda raw, checker: prediction_from_record(raw, checker, height, width, variant),
        id_field="refexp_index",
        source=source,
    )


def parse_predictions(
    data: bytes | str | list[Any],
    *,
    source: str = "",
    height: int = DEFAULT_HEIGHT,
    width: int = DEFAULT_WIDTH,
    variant: str | None = None,
) -> list[dict[str, Any]]:
    """A CLEVR-Ref+ prediction file (format in the module docstring) as validated records.

    Every fault of every record is reported at once as a FormatError of RecordError("record N",
    field, message), N counting from 0; duplicate refexp indices are faults too. With `variant`,
    masks that variant cannot score are faults as well.
    """
    document = load_json_list(data, source=source, what="predictions")
    return check_prediction_records(
        indexed(document), height=height, width=width, variant=variant, source=source
    )


def labelled_by_index(predictions: Sequence[Any]) -> list[tuple[str, Any]]:
    """Predictions handed to `score` (a submission's answers: their order means nothing), each
    labelled by its refexp_index where it has one, by its position otherwise."""
    labelled = []
    for position, raw in enumerate(predictions):
        index = raw.get("refexp_index") if isinstance(raw, Mapping) else None
        labelled.append((f"refexp_index {index}" if type(index) is int else f"record {position}", raw))
    return labelled


# --- scoring -----------------------------------------------------------------------------------


def group_summary(
    rows: Sequence[Mapping[str, Any]], *, detection: bool, segmentation: bool, variant: str
) -> dict[str, Any]:
    """count; detection count and accuracy; the variant's segmentation figures (None when not
    evaluated): official_cumulative_iou, or full_resolution_mean_iou and _cumulative_iou."""
    single = [row for row in rows if row["single"]]
    summary: dict[str, Any] = {
        "count": len(rows),
        "detection_count": len(single),
        "detection_accuracy": mean_or_none(float(row["detected"]) for row in single) if detection else None,
    }
    evaluated = segmentation and bool(rows)
    intersections = sum(row["mask_intersection"] for row in rows)
    unions = sum(row["mask_union"] for row in rows)
    if variant == OFFICIAL:
        # ΣU = 0 (no pixel predicted or true anywhere): the released code divides 0 by 0.
        summary[OFFICIAL_CUMULATIVE] = ratio_or_none(intersections, unions) if evaluated else None
    else:
        summary[FULL_MEAN] = mean_or_none(row["mask_iou"] for row in rows) if evaluated else None
        summary[FULL_CUMULATIVE] = (
            (ratio_or_none(intersections, unions) if unions else 1.0) if evaluated else None
        )
    return summary


def as_list(values: Any, key: str) -> list[Any]:
    """The records of an official document ({"refexps": [...]}) or of a plain list."""
    if isinstance(values, Mapping) and key in values:
        return list(values[key])
    return list(values.values()) if isinstance(values, Mapping) else list(values)


def parameters(height: int, width: int, detection: bool, segmentation: bool, variant: str) -> dict[str, Any]:
    params: dict[str, Any] = {
        "metric": METRIC,
        "metric_version": METRIC_VERSION,
        "variant": variant,
        "detection_threshold": DETECTION_THRESHOLD,
        "detection_rule": (
            "box IoU >= detection_threshold, single-object expressions only; "
            "a box with zero or negative width or height scores IoU 0"
        ),
        "segmentation": segmentation,
        "detection": detection,
        "height": height,
        "width": width,
    }
    if variant == OFFICIAL:
        grid = [height, released_width(width)]
        params.update(
            {
                "segmentation_grid": grid,
                "ground_truth_mask": (
                    "sum of the referred objects' masks, resized to the grid as cv2.resize (bilinear) does, "
                    "truncated to integers: a pixel counts when its value is >= 1"
                ),
                "prediction_mask": (
                    f"given on the {grid[0]}x{grid[1]} grid, or at full resolution and resized like the "
                    "ground truth"
                ),
                OFFICIAL_CUMULATIVE: "sum of I / sum of U over every expression, on the grid",
            }
        )
    else:
        params.update(
            {
                "segmentation_grid": [height, width],
                "ground_truth_mask": "union of the referred objects' masks",
                "prediction_mask": f"given at full resolution ({height}x{width})",
                FULL_MEAN: "mean over expressions of I / U (1 when U = 0)",
                FULL_CUMULATIVE: "sum of I / sum of U",
            }
        )
    return params


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
        """The union of the referred objects' masks (full-resolution variant)."""
        mask = np.zeros((self.height, self.width), dtype=bool)
        for object_index in objects:
            mask |= self.object_mask(image_index, object_index, where)
        return mask

    def expression_heat(self, image_index: int, objects: list[int], where: str) -> np.ndarray:
        """The sum of the referred objects' masks: 2 where two of them cover a pixel (official)."""
        heat = np.zeros((self.height, self.width), dtype=np.float64)
        for object_index in objects:
            heat += self.object_mask(image_index, object_index, where)
        return heat

    def object_box(self, image_index: int, object_index: int, where: str) -> list[float]:
        boxes = self.scene(image_index, where).get("obj_bbox") or {}
        box = boxes.get(str(object_index + 1))
        if box is None:
            raise ValueError(f"{where}: image {image_index} has no obj_bbox for object {object_index}")
        return box


def truth_mask(
    masks: SceneMasks, image_index: int, objects: list[int], where: str, variant: str
) -> np.ndarray:
    """The ground-truth mask an expression is scored against, on the variant's grid."""
    if variant == OFFICIAL:
        return released_mask(masks.expression_heat(image_index, objects, where))
    return masks.expression_mask(image_index, objects, where)


def predicted_mask(prediction: Mapping[str, Any], height: int, width: int, variant: str) -> np.ndarray | None:
    """A prediction's mask on the variant's grid (None when it gives none); under the official
    variant a full-resolution mask is resized and truncated as the ground truth is."""
    if "mask" not in prediction:
        return None
    rows, columns = prediction.get("mask_size") or (height, width)
    mask = decode_mask(prediction["mask"], columns, rows)
    if variant == OFFICIAL and (rows, columns) == (height, width):
        return released_mask(mask)
    return mask


def score(
    refexps: Sequence[Mapping[str, Any]] | Mapping[str, Any],
    scenes: Sequence[Mapping[str, Any]] | Mapping[str, Any],
    predictions: Sequence[Mapping[str, Any]],
    *,
    height: int = DEFAULT_HEIGHT,
    width: int = DEFAULT_WIDTH,
    variant: str = OFFICIAL,
) -> Scored:
    """Score CLEVR-Ref+ predictions against official expressions and scenes.

    `refexps`: the expression records (or the whole ``{"refexps": [...]}`` document); `scenes`:
    the scene records (or ``{"scenes": [...]}``), matched by ``image_index``; `predictions`: a
    list of ``{"refexp_index", "box"?, "mask"?, "mask_size"?}``, validated first (a FormatError
    names each bad one by its refexp_index). `variant`: "official" or "full-resolution" (see the
    module docstring).

    Items: one row per expression, in its order: refexp_index, image_index, variant,
    referred_count, single, category, family, structure, ordinal, visible, missing, box_iou and
    detected (None for multi-object expressions or when detection is not evaluated),
    truth_pixels (the ground truth's size on the variant's grid), mask_intersection, mask_union,
    mask_iou (None when segmentation is not evaluated, and under the official variant when U = 0).
    Summary: "overall", "by_category", "by_family", "by_module", "by_structure" (see
    `group_summary`), the parameters and the counts of missing and extra predictions.
    """
    check_variant(variant)
    expressions = as_list(refexps, "refexps")
    records = check_prediction_records(
        labelled_by_index(list(predictions)), height=height, width=width, variant=variant
    )
    by_index = {prediction["refexp_index"]: prediction for prediction in records}
    detection = any("box" in prediction for prediction in records)
    segmentation = any("mask" in prediction for prediction in records)
    masks = SceneMasks(as_list(scenes, "scenes"), height, width)
    params = parameters(height, width, detection, segmentation, variant)

    rows: list[dict[str, Any]] = []
    missing: list[int] = []
    missing_boxes: list[int] = []
    degenerate_boxes: list[int] = []
    missing_masks: list[int] = []
    empty_truths: list[int] = []
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
            "variant": variant,
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
            "truth_pixels": None,
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
            if "box" not in prediction:
                row["box_iou"] = 0.0
                if not row["missing"]:
                    missing_boxes.append(refexp_index)
            elif degenerate_box(prediction["box"]):
                row["box_iou"] = 0.0
                degenerate_boxes.append(refexp_index)
            else:
                row["box_iou"] = box_iou(truth_box, prediction["box"])
            row["detected"] = row["box_iou"] >= DETECTION_THRESHOLD
        if segmentation:
            truth = truth_mask(masks, image_index, objects, where, variant)
            predicted = predicted_mask(prediction, height, width, variant)
            if predicted is None and not row["missing"]:
                missing_masks.append(refexp_index)
            intersection, union = mask_overlap(truth, predicted)
            row["truth_pixels"] = int(np.count_nonzero(truth))
            row["mask_intersection"], row["mask_union"] = intersection, union
            if union:
                row["mask_iou"] = intersection / union
            elif variant == FULL_RESOLUTION:
                row["mask_iou"] = 1.0
            if variant == OFFICIAL and not row["truth_pixels"]:
                empty_truths.append(refexp_index)

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
    if degenerate_boxes:
        problems.append(
            f"{len(degenerate_boxes)} single-object prediction(s) give a box with zero or negative width "
            f"or height, scored as IoU 0 (not detected): refexp_index {describe_ids(degenerate_boxes)}"
        )
    if missing_masks:
        problems.append(
            f"{len(missing_masks)} prediction(s) give no mask and count as empty masks: "
            f"refexp_index {describe_ids(missing_masks)}"
        )
    if empty_truths:
        grid = params["segmentation_grid"]
        problems.append(
            f"{len(empty_truths)} expression(s) keep no ground-truth pixel on the released {grid[0]}x{grid[1]} "
            "grid (the resize and truncation drop thin parts); they are scored as the released code "
            f"scores them, their predicted pixels counting in the union: refexp_index {describe_ids(empty_truths)}"
        )
    if extra:
        problems.append(
            f"{len(extra)} prediction{'s are' if len(extra) != 1 else ' is'} for expressions not in the "
            f"ground truth and {'were' if len(extra) != 1 else 'was'} ignored: refexp_index {describe_ids(extra)}"
        )

    def summarise(selected: list[dict[str, Any]]) -> dict[str, Any]:
        return group_summary(selected, detection=detection, segmentation=segmentation, variant=variant)

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
    variant: str = OFFICIAL,
) -> Scored:
    """Score a prediction file against official refexp and scene files (raw JSON bytes).

    The refexps and scenes are read and checked by the CLEVR-Ref+ format module; the predictions
    are checked for `variant`, every fault named by its record in the file.
    """
    check_variant(variant)
    parsed = formats.parse(refexps_data, source="refexps")
    refexps = [formats.to_official(record.payload, record.ground_truth) for record in parsed.records]
    scenes = [scene.data for scene in formats.parse_scenes(scenes_data, source="scenes").scenes]
    predictions = parse_predictions(
        predictions_data, source="predictions", height=height, width=width, variant=variant
    )
    return score(refexps, scenes, predictions, height=height, width=width, variant=variant)
