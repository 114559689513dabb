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
- ``by_object_count``: the number of objects in the expression's scene (3 to 10 in CLEVR), a
  key per number found (row field ``object_count``).
- ``zero_relate_attribute``: 0-Relate expressions only, by whether they name the attribute that
  gives their objects away (row field of the same name; neither the paper's released files nor
  its code define this split, so Yardstick defines it from the program and the scene). An
  attribute *singles out* the referred objects when they all share one value of it and no other
  object of the scene has that value. "included": some filter step names such an attribute;
  "excluded": such an attribute exists, yet the program names none of them (it combines other
  attributes, or uses an ordinal or visibility step); "none": no attribute alone singles them out.

False premises: an expression whose program outputs no object (the generator's
``false_premise_share``) has nothing to detect or segment. Its prediction is right when it names
nothing: no box (or a box with no area) and no mask pixel on the variant's grid; a missing
prediction is wrong, as everywhere. Such expressions count in ``false_premise`` (n, accuracy,
and detection_accuracy / segmentation_accuracy, the shares without a box / without a mask pixel,
where boxes / masks are evaluated) and in no other figure or breakdown, so the paper's figures
keep their meaning; their rows carry false_premise_correct, _no_box and _no_mask.

Steps (``by_step``): a prediction may give one prediction per program step, each scored against
that step's ``_output`` (the objects the step outputs; one index for ``unique``) exactly as a
whole expression is scored against its referred objects: box IoU and detection on steps that
output one object, I and U of the masks on the variant's grid. ``by_step["index"]`` and
``by_step["type"]`` group them by position and by step type, with count, expression_count,
detection_count, detection_accuracy and the variant's mean and cumulative IoU
(``official_mean_iou`` / ``official_cumulative_iou``, ``full_resolution_mean_iou`` /
``full_resolution_cumulative_iou``; the mean counts each expression once, see
`step_group_summary`). Each row keeps its steps' results (``steps``) and, per step type, the
mean I / U of its steps of that type (``step_iou_<type>``).

Prediction file (Yardstick's format): a JSON list of

    {"refexp_index": int, "box": [x, y, w, h], "mask": "run lengths", "mask_size": [h, w],
     "steps": [null | {"box": ..., "mask": ..., "mask_size": ...}, ...]}

(box, mask, mask_size and steps optional). ``steps`` holds one entry per program step, in
program order: null for a step not predicted, or that step's own box / mask / mask_size, read as
the top-level ones; a list of another length than the program is refused. The mask uses the scenes' obj_mask encoding: run lengths
over the row-major image, starting with a background run (0 when the top-left pixel is
foreground), separated by commas or whitespace; a missing trailing background run is implied.
``mask_size`` is [height, width]: [320, 480] (full resolution, the default when it is left
out) or [320, 320] (the released scorer's grid).

The height and width parameters exist for small hand-made tests; at the real size they are 320
and 480. The official grid is always height x (2/3 · width), so the width must be a multiple
of 3.

Files: `score_file` takes the three files' bytes, or the files open for reading, which it reads
a record at a time (`score_streams`), with the same summary, rows, problems and errors. A split
(CLEVR's val: 15,000 images, 150,000 expressions) is then scored keeping the rows and the
scenes' masks as text, not the files: perf/score_clevrref.py measures both ways. The masks are
decoded as expressions need them, and the released grid is computed in integers inside each
mask's box (`grid_mask`), pixel for pixel what the floats of `released_mask` give.
"""

from __future__ import annotations

import io
import math
import re
import sys
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, Any

import ijson
import numpy as np
import orjson

from benchmarks.records import (
    FormatError,
    PreparedFile,
    RecordChecker,
    RecordError,
    RecordErrors,
    check_unique,
    first_byte,
    indexed,
    iter_converted,
    iter_official,
    load_json,
    load_json_list,
    paused_gc,
    stream_json_list,
    streaming,
    type_name,
)
from benchmarks.spec import OFFICIAL
from evaluation.metrics.scored import Scored, describe_ids, mean_or_none, ratio_or_none
from plugins.clevrref import formats
from plugins.clevrref.scenes import decode_mask

METRIC = "CLEVR-Ref+"
#: Bump when a change to this module can change a number.
METRIC_VERSION = "3"

#: The variants: OFFICIAL, the released scorer's rules (sum, resize to 320 x 320, truncate), and
#: FULL_RESOLUTION, Yardstick's earlier union IoU at 320 x 480.
FULL_RESOLUTION = "full-resolution"
VARIANTS = (OFFICIAL, FULL_RESOLUTION)

DEFAULT_HEIGHT = 320
DEFAULT_WIDTH = 480
#: A single-object expression is detected when the box IoU is at least this (inclusive).
DETECTION_THRESHOLD = 0.5

AND, OR, SAME = "AND", "OR", "Same"
ZERO_RELATE = "0-Relate"
ATTRIBUTES = ("size", "color", "material", "shape")
#: How a 0-Relate expression stands to the attribute that singles out its objects
#: (`zero_relate_attribute`): named, left out, or there is no such attribute.
INCLUDED, EXCLUDED, NO_SINGLE = "included", "excluded", "none"
ZERO_RELATE_GROUPS = (INCLUDED, EXCLUDED, NO_SINGLE)
#: Program step types in the order the by-step breakdown lists them (any other type after them).
STEP_TYPES = formats.STEP_TYPES
#: The per-expression field holding the mean IoU of its predicted steps of one type.
STEP_IOU_FIELD = "step_iou_{}"
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


def grid_mask(heat: np.ndarray) -> np.ndarray:
    """`released_mask` of a heat map of non-negative integers (a boolean mask, or the sum of
    several), computed in integers and only inside the box where the heat is not 0: the same
    pixels, 25 to 40 times quicker than `released_mask` on a 320 x 480 object mask and about 3
    times on the sum of two objects far apart (every expression and every full-resolution
    prediction goes through it).

    Exactly the same: grid column 2k is 0.75 a + 0.25 b (a, b the heat in columns 3k and
    3k + 1), which is at least 1 when 3a + b >= 4; column 2k + 1 is 0.25 b + 0.75 c (c in column
    3k + 2), at least 1 when b + 3c >= 4. For a boolean mask that is "both columns set". Both
    sides are exact, quarters of small integers being exact in floating point; where the heat
    is 0 the grid is 0."""
    height, width = heat.shape
    grid = np.zeros((height, released_width(width)), dtype=bool)
    rows = np.flatnonzero(heat.any(axis=1))
    if not rows.size:
        return grid
    top, bottom = int(rows[0]), int(rows[-1]) + 1
    columns = np.flatnonzero(heat[top:bottom].any(axis=0))
    # Whole triples of source columns: triple k makes grid columns 2k and 2k + 1.
    first, last = int(columns[0]) // 3, int(columns[-1]) // 3 + 1
    band = heat[top:bottom, 3 * first : 3 * last].reshape(bottom - top, last - first, 3)
    out = grid[top:bottom, 2 * first : 2 * last].reshape(bottom - top, last - first, 2)  # a view of grid
    if heat.dtype == bool:
        np.logical_and(band[:, :, 0], band[:, :, 1], out=out[:, :, 0])
        np.logical_and(band[:, :, 1], band[:, :, 2], out=out[:, :, 1])
        return grid
    band = band.astype(np.int64)
    np.greater_equal(3 * band[:, :, 0] + band[:, :, 1], 4, out=out[:, :, 0])
    np.greater_equal(band[:, :, 1] + 3 * band[:, :, 2], 4, out=out[:, :, 1])
    return grid


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


def singling_attributes(objects: Sequence[Mapping[str, Any]], referred: Sequence[int]) -> list[str]:
    """The attributes (size, color, material, shape) that alone pick out exactly the referred
    objects: every referred object has the same value of it, and no other object of the scene has
    that value. "The red thing" is enough to find them when color is one."""
    chosen = set(referred)
    found = []
    for name in ATTRIBUTES:
        values = {objects[index].get(name) for index in chosen}
        if len(values) != 1 or None in values:
            continue
        (value,) = values
        if {index for index, obj in enumerate(objects) if obj.get(name) == value} == chosen:
            found.append(name)
    return found


def zero_relate_attribute(refexp: Mapping[str, Any], objects: Sequence[Mapping[str, Any]]) -> str | None:
    """For a 0-Relate expression that refers to something: INCLUDED when its program filters on an
    attribute that alone singles out the referred objects (`singling_attributes`), EXCLUDED when
    such an attribute exists but the program names none of them (it finds the objects by a
    combination of other attributes, or by ordinal or visibility), NO_SINGLE when no attribute
    alone singles them out. None for every other expression."""
    referred = referred_objects(refexp)
    if expression_category(refexp) != ZERO_RELATE or not referred:
        return None
    singling = singling_attributes(objects, referred)
    if not singling:
        return NO_SINGLE
    named = {kind[len("filter_") :] for kind in step_types(refexp) if kind.startswith("filter_")}
    return INCLUDED if named & set(singling) else EXCLUDED


def step_objects(step: Mapping[str, Any], where: str, position: int) -> list[int]:
    """The objects one program step outputs (its ``_output``: a list of object indices, or one
    index for a ``unique`` step): the ground truth a prediction for that step is scored against."""
    if "_output" not in step:
        raise ValueError(
            f"{where}: program[{position}]._output: the step records no output, so the prediction "
            f"for it (steps[{position}]) cannot be scored"
        )
    output = step["_output"]
    if type(output) is int and output >= 0:
        return [output]
    if isinstance(output, list) and all(type(value) is int and value >= 0 for value in output):
        return list(output)
    raise ValueError(
        f"{where}: program[{position}]._output: expected an object index or a list of them, got {output!r}"
    )


# --- predictions -------------------------------------------------------------------------------


#: A mask text as `encode_mask` writes it: digits and single commas. Read by orjson, about four
#: times quicker than splitting it (a split's predictions and scenes hold millions of runs).
PLAIN_RUNS = re.compile(r"[0-9]+(?:,[0-9]+)*")


def quick_runs(text: str) -> list[int] | None:
    """The run lengths of a plain mask text (`PLAIN_RUNS`), None for any other text (spaces,
    leading zeros, a fault), which the slower general reading takes; both give the same runs."""
    if PLAIN_RUNS.fullmatch(text) is None:
        return None
    try:
        return orjson.loads(f"[{text}]")
    except orjson.JSONDecodeError:
        return None  # leading zeros, or a run beyond 64 bits


def check_mask_text(checker: RecordChecker, text: str, height: int, width: int, name: str = "mask") -> None:
    """A run-length mask must be non-negative integers covering at most height x width pixels."""
    runs = quick_runs(text)
    if runs is None:
        parts = text.replace(",", " ").split()
        if not all(part.isascii() and part.isdigit() for part in parts):
            checker.fail(name, "expected run lengths: non-negative integers separated by commas or spaces")
            return
        runs = [int(part) for part in parts]
    covered = sum(runs)
    if covered > height * width:
        checker.fail(name, f"runs cover {covered} pixels, more than the {width}x{height} image")


def decode_runs(text: str, width: int, height: int) -> np.ndarray:
    """`decode_mask`, quicker for a plain text (`quick_runs`); any other text, or runs that
    overflow the image, go to `decode_mask` itself, which decodes them or raises its error."""
    runs = quick_runs(text)
    covered = sum(runs) if runs is not None else 0
    if runs is None or covered > width * height:
        return decode_mask(text, width, height)
    flat = np.zeros(width * height, dtype=bool)
    flat[:covered] = np.repeat(np.arange(len(runs)) % 2 == 1, runs)
    return flat.reshape(height, width)


def field_name(path: str, key: str) -> str:
    """`key` inside `path` as an error names it: "mask", or "steps[2].mask" for a step's."""
    return f"{path}.{key}" if path else key


def mask_shape(
    raw: Mapping[str, Any],
    checker: RecordChecker,
    height: int,
    width: int,
    variant: str | None,
    path: str = "",
) -> tuple[int, int] | None:
    """The (height, width) a prediction's mask is given at: its ``mask_size``, full resolution when
    it has none. None (after noting the fault) for a size neither variant reads, or one the chosen
    variant cannot score (a 320 x 320 mask under full-resolution). `path`: where `raw` sits in the
    record ("" for the record itself, "steps[2]" for a step's prediction)."""
    if raw.get("mask_size") is None:
        return height, width
    size = checker.get_list(raw, "mask_size", int, path, length=2)
    if size is None:
        return None
    full = (height, width)
    grid = (height, released_width(width)) if width % 3 == 0 else None
    shape = (size[0], size[1])
    name = field_name(path, "mask_size")
    if shape not in (full, grid):
        expected = f"[{height}, {width}] (full resolution)"
        if grid is not None:
            expected = f"[{grid[0]}, {grid[1]}] (the released scorer's grid) or " + expected
        checker.fail(name, f"expected [height, width] {expected}, got {list(size)}")
        return None
    if shape == grid and variant == FULL_RESOLUTION:
        checker.fail(
            name,
            f"a {grid[0]}x{grid[1]} mask is scored only by the official variant; the full-resolution "
            f"variant needs the {height}x{width} mask (mask_size [{height}, {width}] or none)",
        )
        return None
    return shape


def region_fields(
    raw: Mapping[str, Any],
    checker: RecordChecker,
    height: int,
    width: int,
    variant: str | None,
    path: str = "",
    *,
    check_masks: bool = True,
) -> dict[str, Any]:
    """The box, mask and mask_size a prediction (or one step's prediction, at `path`) gives, each
    checked; faults are noted on `checker` and the faulty field left out. `check_masks`: False
    for a record checked before (`StreamedPredictions` reads its file twice), whose masks' run
    lengths need not be read again."""
    fields: dict[str, Any] = {}
    if raw.get("box") is not None:
        box = checker.get_list(raw, "box", (int, float), path, length=4)
        if box is not None:
            # Zero or negative sizes are scored (IoU 0, listed), not refused: see `score`.
            if not all(math.isfinite(value) for value in box):
                checker.fail(field_name(path, "box"), "coordinates must be finite numbers")
            fields["box"] = box
    shape = mask_shape(raw, checker, height, width, variant, path)
    if raw.get("mask_size") is not None and shape is not None:
        fields["mask_size"] = list(shape)
    if raw.get("mask") is not None:
        mask = checker.get(raw, "mask", str, path)
        if mask is not None:
            if shape is not None and check_masks:
                check_mask_text(checker, mask, *shape, name=field_name(path, "mask"))
            fields["mask"] = mask
    return fields


def step_predictions(
    raw: Mapping[str, Any],
    checker: RecordChecker,
    height: int,
    width: int,
    variant: str | None,
    *,
    check_masks: bool = True,
) -> list[dict[str, Any] | None] | None:
    """The optional ``steps``: one entry per program step, in program order, each null (that step
    not predicted) or an object with the step's own box / mask / mask_size, checked as the
    prediction's are. Whether there is one per step is checked against the program in `score`."""
    steps = raw.get("steps")
    if steps is None:
        return None
    if not isinstance(steps, list):
        checker.fail(
            "steps",
            f"expected a list with one entry per program step (null for a step not predicted), "
            f"got {type_name(steps)}",
        )
        return None
    parsed: list[dict[str, Any] | None] = []
    for position, step in enumerate(steps):
        path = f"steps[{position}]"
        if step is None:
            parsed.append(None)
        elif not isinstance(step, dict):
            checker.fail(path, f"expected an object with box and/or mask, or null, got {type_name(step)}")
        else:
            parsed.append(region_fields(step, checker, height, width, variant, path, check_masks=check_masks))
    return parsed


def prediction_from_record(
    raw: Any,
    checker: RecordChecker,
    height: int,
    width: int,
    variant: str | None = None,
    *,
    check_masks: bool = True,
) -> dict[str, Any] | None:
    if not checker.is_object(raw):
        return None
    before = len(checker.errors)
    refexp_index = checker.get(raw, "refexp_index", int)
    prediction: dict[str, Any] = {"refexp_index": refexp_index}
    prediction.update(region_fields(raw, checker, height, width, variant, check_masks=check_masks))
    steps = step_predictions(raw, checker, height, width, variant, check_masks=check_masks)
    if steps is not None:
        prediction["steps"] = steps
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


#: The by-step segmentation keys of each variant: (mean IoU, cumulative IoU) on its grid.
STEP_KEYS = {
    OFFICIAL: ("official_mean_iou", OFFICIAL_CUMULATIVE),
    FULL_RESOLUTION: (FULL_MEAN, FULL_CUMULATIVE),
}


def step_group_summary(
    entries: Sequence[tuple[int, Mapping[str, Any]]], *, detection: bool, segmentation: bool, variant: str
) -> dict[str, Any]:
    """The figures of a group of predicted steps, each given as (its expression's position, its
    result): count (steps), expression_count, detection_count (steps with one true object) and
    detection_accuracy over them, and the variant's mean and cumulative IoU (`STEP_KEYS`).

    The mean IoU counts each expression once: its steps in the group are averaged first, then
    those means (an expression with two filter_color steps weighs what one with one does, and the
    interval over expressions the report draws is around the same number). Steps whose I / U is
    empty (official variant, U = 0) are left out of it; the cumulative IoU is ΣI / ΣU over the
    steps, as for whole expressions.
    """
    mean_key, cumulative_key = STEP_KEYS[variant]
    single = [step for _, step in entries if step["single"]]
    summary: dict[str, Any] = {
        "count": len(entries),
        "expression_count": len({position for position, _ in entries}),
        "detection_count": len(single),
        "detection_accuracy": mean_or_none(float(step["detected"]) for step in single) if detection else None,
        mean_key: None,
        cumulative_key: None,
    }
    if segmentation and entries:
        by_expression: dict[int, list[float]] = {}
        for position, step in entries:
            if step["mask_iou"] is not None:
                by_expression.setdefault(position, []).append(step["mask_iou"])
        summary[mean_key] = mean_or_none(sum(values) / len(values) for values in by_expression.values())
        intersections = sum(step["mask_intersection"] for _, step in entries)
        unions = sum(step["mask_union"] for _, step in entries)
        if variant == FULL_RESOLUTION and not unions:
            summary[cumulative_key] = 1.0
        else:
            summary[cumulative_key] = ratio_or_none(intersections, unions)
    return summary


def step_type_order(kind: str) -> tuple[int, str]:
    """STEP_TYPES order, any other step type after them by name."""
    return (STEP_TYPES.index(kind) if kind in STEP_TYPES else len(STEP_TYPES), kind)


def by_step_summary(
    rows: Sequence[Mapping[str, Any]], *, detection: bool, segmentation: bool, variant: str
) -> dict[str, Any]:
    """``{"index": {"0": ..., "1": ...}, "type": {"scene": ..., "filter_color": ...}}``: the
    figures of the predicted steps (`step_group_summary`) by their position in the program and by
    their type; both empty when no prediction gives steps."""
    entries = [
        (position, index, step)
        for position, row in enumerate(rows)
        for index, step in enumerate(row.get("steps") or ())
        if step is not None
    ]

    def summarise(selected: list[tuple[int, int, Mapping[str, Any]]]) -> dict[str, Any]:
        return step_group_summary(
            [(position, step) for position, _, step in selected],
            detection=detection,
            segmentation=segmentation,
            variant=variant,
        )

    indices = sorted({index for _, index, _ in entries})
    kinds = sorted({step["type"] for _, _, step in entries}, key=step_type_order)
    return {
        "index": {
            str(index): summarise([entry for entry in entries if entry[1] == index]) for index in indices
        },
        "type": {kind: summarise([entry for entry in entries if entry[2]["type"] == kind]) for kind in kinds},
    }


def false_premise_summary(
    rows: Sequence[Mapping[str, Any]], *, detection: bool, segmentation: bool
) -> dict[str, Any]:
    """n (expressions that refer to no object) and accuracy (the share whose prediction names
    nothing); detection_accuracy (no box) and segmentation_accuracy (no mask pixel) where boxes or
    masks are evaluated. None for a share of no expression."""
    chosen = [row for row in rows if row["false_premise"]]
    return {
        "n": len(chosen),
        "accuracy": mean_or_none(float(row["false_premise_correct"]) for row in chosen),
        "detection_accuracy": (
            mean_or_none(float(row["false_premise_no_box"]) for row in chosen) if detection else None
        ),
        "segmentation_accuracy": (
            mean_or_none(float(row["false_premise_no_mask"]) for row in chosen) if segmentation else None
        ),
    }


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
        "false_premise_rule": (
            "an expression referring to no object is right when its prediction names nothing: no box "
            "(or one with no area) and no mask pixel on the grid; it counts in false_premise only"
        ),
        "zero_relate_attribute_rule": (
            "0-Relate expressions by whether a filter step names an attribute that alone singles out "
            "the referred objects (included), such an attribute exists but none is named (excluded), "
            "or none exists (none)"
        ),
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


#: How many images' decoded object masks `SceneMasks` keeps (a decoded 320 x 480 mask takes
#: 150 KB; a split's would take gigabytes). An image's expressions usually come together.
DECODED_IMAGES = 8


class SceneMasks:
    """The scenes' object masks and boxes, each mask decoded when first needed and kept while its
    image is among the last DECODED_IMAGES used.

    `scenes`: the scene records, or a mapping image_index -> scene (what `read_scenes` keeps of a
    file: each scene's objects' attributes, obj_bbox and obj_mask)."""

    def __init__(
        self, scenes: list[Mapping[str, Any]] | dict[int, Mapping[str, Any]], height: int, width: int
    ) -> None:
        self.scenes = (
            scenes if isinstance(scenes, dict) else {scene["image_index"]: scene for scene in scenes}
        )
        self.height = height
        self.width = width
        #: image_index -> {object index: its decoded mask}, the least recently used image first.
        self.decoded: OrderedDict[int, dict[int, np.ndarray]] = OrderedDict()

    def scene(self, image_index: int, where: str) -> Mapping[str, Any]:
        if image_index not in self.scenes:
            raise ValueError(f"{where}: image {image_index} has no scene")
        return self.scenes[image_index]

    def object_mask(self, image_index: int, object_index: int, where: str) -> np.ndarray:
        image = self.decoded.get(image_index)
        if image is None:
            image = self.decoded[image_index] = {}
            if len(self.decoded) > DECODED_IMAGES:
                self.decoded.popitem(last=False)
        else:
            self.decoded.move_to_end(image_index)
        if object_index not in image:
            masks = self.scene(image_index, where).get("obj_mask") or {}
            text = masks.get(str(object_index + 1))
            if text is None:
                raise ValueError(f"{where}: image {image_index} has no obj_mask for object {object_index}")
            image[object_index] = decode_runs(text, self.width, self.height)
        return image[object_index]

    def expression_mask(self, image_index: int, objects: list[int], where: str) -> np.ndarray:
        """The union of the referred objects' masks (full-resolution variant)."""
        mask = np.zeros((self.height, self.width), dtype=bool)
        for object_index in objects:
            mask |= self.object_mask(image_index, object_index, where)
        return mask

    def expression_heat(self, image_index: int, objects: list[int], where: str) -> np.ndarray:
        """The sum of the referred objects' masks: 2 where two of them cover a pixel (official).
        Integers (`grid_mask` takes them); one object's mask as it is."""
        if len(objects) == 1:
            return self.object_mask(image_index, objects[0], where)
        # A byte per pixel holds the sum when fewer than 256 objects are referred to.
        heat = np.zeros((self.height, self.width), dtype=np.uint8 if len(objects) < 256 else np.int64)
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
        return grid_mask(masks.expression_heat(image_index, objects, where))
    return masks.expression_mask(image_index, objects, where)


def predicted_mask(prediction: Mapping[str, Any], height: int, width: int, variant: str) -> np.ndarray | None:
    """A prediction's mask on the variant's grid (None when it gives none); under the official
    variant a full-resolution mask is resized and truncated as the ground truth is."""
    if "mask" not in prediction:
        return None
    rows, columns = prediction.get("mask_size") or (height, width)
    mask = decode_runs(prediction["mask"], columns, rows)
    if variant == OFFICIAL and (rows, columns) == (height, width):
        return grid_mask(mask)
    return mask


def check_step_counts(
    expressions: Sequence[Mapping[str, Any]], by_index: Mapping[int, Mapping[str, Any]]
) -> None:
    """A prediction's ``steps`` must hold one entry per step of its expression's program: a list
    of another length would score each step against the wrong one. Every such record in one
    FormatError."""
    errors = []
    for refexp in expressions:
        prediction = by_index.get(refexp["refexp_index"])
        steps = prediction.get("steps") if prediction is not None else None
        if steps is not None and len(steps) != len(refexp["program"]):
            errors.append(step_count_error(refexp["refexp_index"], len(steps), len(refexp["program"])))
    if errors:
        raise FormatError(errors)


def step_count_error(refexp_index: int, given: int, program: int) -> RecordError:
    return RecordError(
        f"refexp_index {refexp_index}",
        "steps",
        f"{given} step predictions for a program of {program} steps: give "
        "one per program step, in program order (null for a step not predicted)",
    )


def scene_objects(
    masks: SceneMasks, image_index: int, referred: Sequence[int], where: str, last: int
) -> list:
    """The expression's scene's objects, after checking that every referred object is one of them."""
    objects = masks.scene(image_index, where).get("objects")
    objects = objects if isinstance(objects, list) else []
    for index in referred:
        if index >= len(objects):
            raise ValueError(
                f"{where}: program[{last}]._output: object {index} is not in image {image_index}, "
                f"which has {len(objects)} objects"
            )
    return objects


def score_steps(
    refexp: Mapping[str, Any],
    given: Sequence[Mapping[str, Any] | None],
    masks: SceneMasks,
    where: str,
    *,
    detection: bool,
    segmentation: bool,
    height: int,
    width: int,
    variant: str,
) -> list[dict[str, Any] | None]:
    """Each predicted step scored against that step's own output, as a whole expression is: box
    IoU and detected (IoU >= 0.5) where the step outputs one object, I, U and I / U of the masks on
    the variant's grid. None for a step given as null."""
    results: list[dict[str, Any] | None] = []
    for position, (step, prediction) in enumerate(zip(refexp["program"], given, strict=True)):
        if prediction is None:
            results.append(None)
            continue
        objects = step_objects(step, where, position)
        result: dict[str, Any] = {
            "type": step["type"],
            "single": len(objects) == 1,
            "box_iou": None,
            "detected": None,
            "mask_intersection": 0,
            "mask_union": 0,
            "mask_iou": None,
        }
        if detection and result["single"]:
            box = prediction.get("box")
            truth_box = masks.object_box(refexp["image_index"], objects[0], where)
            result["box_iou"] = 0.0 if box is None or degenerate_box(box) else box_iou(truth_box, box)
            result["detected"] = result["box_iou"] >= DETECTION_THRESHOLD
        if segmentation:
            truth = truth_mask(masks, refexp["image_index"], objects, where, variant)
            intersection, union = mask_overlap(truth, predicted_mask(prediction, height, width, variant))
            result["mask_intersection"], result["mask_union"] = intersection, union
            if union:
                result["mask_iou"] = intersection / union
            elif variant == FULL_RESOLUTION:
                result["mask_iou"] = 1.0
        results.append(result)
    return results


def step_type_ious(steps: Sequence[Mapping[str, Any] | None]) -> dict[str, float]:
    """Per step type, the mean I / U of an expression's scored steps of that type: the per-row
    values behind the by-step figures' intervals (`STEP_IOU_FIELD`)."""
    by_type: dict[str, list[float]] = {}
    for step in steps:
        if step is not None and step["mask_iou"] is not None:
            by_type.setdefault(step["type"], []).append(step["mask_iou"])
    return {STEP_IOU_FIELD.format(kind): sum(values) / len(values) for kind, values in by_type.items()}


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
    list of ``{"refexp_index", "box"?, "mask"?, "mask_size"?, "steps"?}``, validated first (a
    FormatError names each bad one by its refexp_index). `variant`: "official" or
    "full-resolution" (see the module docstring).

    Items: one row per expression, in its order: refexp_index, image_index, variant,
    referred_count, single, category, family, structure, ordinal, visible, object_count (objects
    in its scene), zero_relate_attribute, missing, box_iou and detected (None for multi-object
    expressions or when detection is not evaluated), truth_pixels (the ground truth's size on the
    variant's grid), mask_intersection, mask_union, mask_iou (None when segmentation is not
    evaluated, and under the official variant when U = 0); false_premise, and for those
    false_premise_correct, false_premise_no_box and false_premise_no_mask; steps (each predicted
    step's result, None for none) and ``step_iou_<type>``.
    Summary: "overall", "by_category", "by_family", "by_module", "by_structure",
    "by_object_count", "zero_relate_attribute" (see `group_summary`), "by_step"
    (`by_step_summary`), "false_premise" (`false_premise_summary`), the parameters and the
    counts of missing and extra predictions. False-premise expressions count in "false_premise"
    only.
    """
    check_variant(variant)
    expressions = as_list(refexps, "refexps")
    records = check_prediction_records(
        labelled_by_index(list(predictions)), height=height, width=width, variant=variant
    )
    by_index = {prediction["refexp_index"]: prediction for prediction in records}
    check_step_counts(expressions, by_index)
    kinds = PredictionKinds()
    for prediction in records:
        kinds.add(prediction)
    run = Scoring(SceneMasks(as_list(scenes, "scenes"), height, width), kinds, variant=variant)
    for refexp in expressions:
        run.add(refexp, by_index.get(refexp["refexp_index"]))
    return run.scored([refexp_index for refexp_index in by_index if refexp_index not in run.seen])


class PredictionKinds:
    """What the predictions give, which decides what is evaluated for every expression: boxes
    (detection), masks (segmentation), and the same for program steps. Known only once every
    prediction is read, so a file is read for it before any expression is scored."""

    __slots__ = ("detection", "segmentation", "step_detection", "step_segmentation")

    def __init__(self) -> None:
        self.detection = self.segmentation = False
        self.step_detection = self.step_segmentation = False

    def add(self, prediction: Mapping[str, Any]) -> None:
        self.detection = self.detection or "box" in prediction
        self.segmentation = self.segmentation or "mask" in prediction
        for step in prediction.get("steps") or ():
            if step is not None:
                self.step_detection = self.step_detection or "box" in step
                self.step_segmentation = self.step_segmentation or "mask" in step


class Scoring:
    """One scoring run, an expression at a time (`add`), then summed up (`scored`): the rows and
    the expressions each problem lists. `score` feeds it a list; `score_file` the expressions of
    a file as they are read, so that what stays in memory is the rows, never the expressions."""

    def __init__(self, masks: SceneMasks, kinds: PredictionKinds, *, variant: str) -> None:
        self.masks = masks
        self.height, self.width, self.variant = masks.height, masks.width, variant
        self.detection, self.segmentation = kinds.detection, kinds.segmentation
        self.step_detection, self.step_segmentation = kinds.step_detection, kinds.step_segmentation
        self.params = parameters(masks.height, masks.width, kinds.detection, kinds.segmentation, variant)
        self.params.update(
            {"step_detection": kinds.step_detection, "step_segmentation": kinds.step_segmentation}
        )
        self.rows: list[dict[str, Any]] = []
        self.missing: list[int] = []
        self.missing_boxes: list[int] = []
        self.degenerate_boxes: list[int] = []
        self.missing_masks: list[int] = []
        self.empty_truths: list[int] = []
        self.seen: set[int] = set()

    def add(self, refexp: Mapping[str, Any], prediction: Mapping[str, Any] | None) -> None:
        """Score one expression against its prediction (None: it has none) and keep its row."""
        masks, variant = self.masks, self.variant
        detection, segmentation = self.detection, self.segmentation
        height, width = self.height, self.width
        refexp_index = refexp["refexp_index"]
        where = f"refexp {refexp_index}"
        if refexp_index in self.seen:
            raise ValueError(f"{where}: the expressions hold this refexp_index twice")
        self.seen.add(refexp_index)
        image_index = refexp["image_index"]
        objects = referred_objects(refexp)
        everything = scene_objects(masks, image_index, objects, where, len(refexp["program"]) - 1)
        types = step_types(refexp)
        false_premise = not objects
        row: dict[str, Any] = {
            "refexp_index": refexp_index,
            "image_index": image_index,
            "variant": variant,
            "referred_count": len(objects),
            "single": len(objects) == 1,
            # One string per category and family, not one per row: a split has a handful of each.
            "category": sys.intern(expression_category(refexp)),
            "family": intern_or_none(expression_family(refexp)),
            "structure": expression_structure(refexp),
            "ordinal": ORDINAL_STEP in types,
            "visible": VISIBLE_STEP in types,
            "object_count": len(everything),
            "zero_relate_attribute": zero_relate_attribute(refexp, everything),
            "missing": prediction is None,
            "box_iou": None,
            "detected": None,
            "truth_pixels": None,
            "mask_intersection": 0,
            "mask_union": 0,
            "mask_iou": None,
            "false_premise": false_premise,
            "false_premise_correct": None,
            "false_premise_no_box": None,
            "false_premise_no_mask": None,
            "steps": None,
        }
        self.rows.append(row)
        if prediction is None:
            self.missing.append(refexp_index)
            prediction = {}
        if detection and row["single"]:
            truth_box = masks.object_box(image_index, objects[0], where)
            if "box" not in prediction:
                row["box_iou"] = 0.0
                if not row["missing"]:
                    self.missing_boxes.append(refexp_index)
            elif degenerate_box(prediction["box"]):
                row["box_iou"] = 0.0
                self.degenerate_boxes.append(refexp_index)
            else:
                row["box_iou"] = box_iou(truth_box, prediction["box"])
            row["detected"] = row["box_iou"] >= DETECTION_THRESHOLD
        if segmentation:
            truth = truth_mask(masks, image_index, objects, where, variant)
            predicted = predicted_mask(prediction, height, width, variant)
            if predicted is None and not row["missing"] and not false_premise:
                self.missing_masks.append(refexp_index)
            intersection, union = mask_overlap(truth, predicted)
            row["truth_pixels"] = int(np.count_nonzero(truth))
            row["mask_intersection"], row["mask_union"] = intersection, union
            # A false premise's I / U enters no figure (it is scored in false_premise only), so it
            # is left empty: no per-expression mean or interval takes it in.
            if union and not false_premise:
                row["mask_iou"] = intersection / union
            elif variant == FULL_RESOLUTION and not false_premise:
                row["mask_iou"] = 1.0
            if variant == OFFICIAL and not row["truth_pixels"] and not false_premise:
                self.empty_truths.append(refexp_index)
        if false_premise:
            # The truth is empty, so U is the predicted pixels on the grid: nothing is right.
            no_box = "box" not in prediction or degenerate_box(prediction["box"])
            no_mask = row["mask_union"] == 0
            answered = not row["missing"]
            row["false_premise_correct"] = answered and no_box and no_mask
            row["false_premise_no_box"] = answered and no_box if detection else None
            row["false_premise_no_mask"] = answered and no_mask if segmentation else None
        if prediction.get("steps") is not None:
            row["steps"] = score_steps(
                refexp,
                prediction["steps"],
                masks,
                where,
                detection=self.step_detection,
                segmentation=self.step_segmentation,
                height=height,
                width=width,
                variant=variant,
            )
            row.update(step_type_ious(row["steps"]))

    def scored(self, extra: list[int]) -> Scored:
        """The summary, rows and problems of the expressions added; `extra`: the refexp indices
        of predictions for no expression, in the predictions' order."""
        rows, params, variant = self.rows, self.params, self.variant
        detection, segmentation = self.detection, self.segmentation
        step_detection, step_segmentation = self.step_detection, self.step_segmentation
        missing, missing_boxes, degenerate_boxes = self.missing, self.missing_boxes, self.degenerate_boxes
        missing_masks, empty_truths = self.missing_masks, self.empty_truths
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
                f"{len(empty_truths)} expression(s) keep no ground-truth pixel on the released "
                f"{grid[0]}x{grid[1]} grid (the resize and truncation drop thin parts); they are scored as "
                "the released code scores them, their predicted pixels counting in the union: "
                f"refexp_index {describe_ids(empty_truths)}"
            )
        if extra:
            problems.append(
                f"{len(extra)} prediction{'s are' if len(extra) != 1 else ' is'} for expressions not in the "
                f"ground truth and {'were' if len(extra) != 1 else 'was'} ignored: "
                f"refexp_index {describe_ids(extra)}"
            )

        # The paper's figures are on expressions that refer to something; false premises have their own.
        referring = [row for row in rows if not row["false_premise"]]

        def summarise(selected: list[dict[str, Any]]) -> dict[str, Any]:
            return group_summary(selected, detection=detection, segmentation=segmentation, variant=variant)

        def by_value(key: str, values: Sequence[Any]) -> dict[str, Any]:
            return {
                str(value): summarise([row for row in referring if row[key] == value]) for value in values
            }

        categories = sorted({row["category"] for row in referring}, key=category_order)
        families = sorted({row["family"] for row in referring if row["family"] is not None})
        summary = {
            "parameters": params,
            "overall": summarise(referring),
            "by_category": by_value("category", categories),
            "by_family": by_value("family", families),
            "by_module": {
                module: {
                    "with": summarise([row for row in referring if row[module]]),
                    "without": summarise([row for row in referring if not row[module]]),
                }
                for module in ("ordinal", "visible")
            },
            "by_structure": by_value("structure", [CHAIN, TREE]),
            "by_object_count": by_value("object_count", sorted({row["object_count"] for row in referring})),
            "zero_relate_attribute": by_value("zero_relate_attribute", ZERO_RELATE_GROUPS),
            "by_step": by_step_summary(
                referring, detection=step_detection, segmentation=step_segmentation, variant=variant
            ),
            "false_premise": false_premise_summary(rows, detection=detection, segmentation=segmentation),
            "missing_predictions": len(missing),
            "extra_predictions": len(extra),
        }
        return Scored(items=rows, summary=summary, params=params, problems=problems)


def intern_or_none(text: str | None) -> str | None:
    return None if text is None else sys.intern(text)


def category_order(category: str) -> tuple[int, str]:
    """k-Relate first by k, then AND, OR, Same (the paper's column order)."""
    if category.endswith("-Relate"):
        return (int(category.split("-")[0]), category)
    return (100 + (AND, OR, SAME).index(category), category)


def score_file(
    refexps_data: bytes | IO[bytes],
    scenes_data: bytes | IO[bytes],
    predictions_data: bytes | IO[bytes],
    *,
    height: int = DEFAULT_HEIGHT,
    width: int = DEFAULT_WIDTH,
    variant: str = OFFICIAL,
) -> Scored:
    """Score a prediction file against official refexp and scene files: their raw JSON bytes, or
    the files open for reading (binary and seekable, as files are), which are then read a record
    at a time; any of them given as bytes is then read from its bytes the same way.

    The refexps and scenes are read and checked by the CLEVR-Ref+ format module; the predictions
    are checked for `variant`, every fault named by its record in the file. Open files give the
    same summary, rows and problems as their bytes (`score_streams` says what memory holds).
    """
    check_variant(variant)
    with paused_gc():
        if not any(
            isinstance(data, bytes | bytearray) for data in (refexps_data, scenes_data, predictions_data)
        ):
            return score_streams(
                refexps_data, scenes_data, predictions_data, height=height, width=width, variant=variant
            )
        if not all(
            isinstance(data, bytes | bytearray) for data in (refexps_data, scenes_data, predictions_data)
        ):
            return score_streams(
                *(
                    io.BytesIO(data) if isinstance(data, bytes | bytearray) else data
                    for data in (refexps_data, scenes_data, predictions_data)
                ),
                height=height,
                width=width,
                variant=variant,
            )
        parsed = formats.parse(refexps_data, source="refexps")
        refexps = [formats.to_official(record.payload, record.ground_truth) for record in parsed.records]
        scenes = [scene.data for scene in formats.parse_scenes(scenes_data, source="scenes").scenes]
        predictions = parse_predictions(
            predictions_data, source="predictions", height=height, width=width, variant=variant
        )
        return score(refexps, scenes, predictions, height=height, width=width, variant=variant)


# --- files read as they are scored ---------------------------------------------------------------


def score_streams(
    refexps: IO[bytes],
    scenes: IO[bytes],
    predictions: IO[bytes],
    *,
    height: int = DEFAULT_HEIGHT,
    width: int = DEFAULT_WIDTH,
    variant: str = OFFICIAL,
) -> Scored:
    """`score_file` on open files, each read a record at a time: the same Scored as from their
    bytes, and the same error when a file is faulty (the one the bytes give first: the refexps',
    then the scenes', the predictions', the steps counted against the programs, then the first
    expression that cannot be scored).

    Memory holds the rows, each scene's objects' attributes, boxes and mask texts (masks are
    decoded when an expression needs them, and a few images' kept: `SceneMasks`), and of the
    predictions only their refexp indices and, while they wait for their expression, the
    predictions read ahead of it (`StreamedPredictions`): none when the predictions come in the
    expressions' order. Never a whole file, and no expression once it is scored.

    The predictions are read first, since whether any gives a box or a mask decides what is
    evaluated for every expression; then the scenes, since the expressions may name any image;
    then each expression is checked, scored and dropped.
    """
    failures: list[FormatError] = []
    try:
        answers = StreamedPredictions(predictions, height=height, width=width, variant=variant)
    except FormatError as error:
        answers, prediction_failure = None, error
    else:
        prediction_failure = None
    try:
        masks = SceneMasks(read_scenes(scenes, source="scenes"), height, width)
    except FormatError as error:
        masks = None
        failures.append(error)
    if prediction_failure is not None:
        failures.append(prediction_failure)
    run: Scoring | None = None
    pending: ValueError | None = None
    if answers is not None and masks is not None:
        try:
            run = Scoring(masks, answers.kinds, variant=variant)
        except ValueError as error:
            pending = error
    step_errors: list[RecordError] = []
    prepared = PreparedFile(
        meta={},
        labelled=document_records(refexps, "refexps", "referring expressions", source="refexps"),
        convert=formats.refexp_to_catalog,
        id_field="refexp_index",
        streamed=True,
    )
    # The refexps' faults are raised at the end of this loop, before any other file's.
    for refexp in iter_official(prepared, formats.to_official, source="refexps"):
        if answers is None or masks is None:
            continue
        refexp_index = refexp["refexp_index"]
        given = answers.step_count(refexp_index)
        if given is not None and given != len(refexp["program"]):
            step_errors.append(step_count_error(refexp_index, given, len(refexp["program"])))
        if run is None or step_errors or pending is not None:
            continue  # what is left is only checked: the result is an error
        try:
            run.add(refexp, answers.get(refexp_index))
        except ValueError as error:
            pending = error
    if failures:
        raise failures[0]
    if step_errors:
        raise FormatError(step_errors)
    if pending is not None:
        raise pending
    assert run is not None and answers is not None
    return run.scored(answers.extra(run.seen))


def document_records(stream: IO[bytes], key: str, what: str, *, source: str) -> Iterator[tuple[str, Any]]:
    """The records of an official document ``{..., key: [records], ...}`` (the refexps or scenes
    file) read one at a time, labelled as the format module labels them ("refexps[3]"); the same
    faults as `formats.split_document` finds in the bytes, with the same words. Memory holds a
    chunk of the file and one record.

    ijson's C parser reads the list in place (the document is an object, so the list-of-objects
    splitter of `stream_json_list` does not apply); the keys before it are read first to find
    whether the list is there. JSON that breaks off is named with its line and column, found by
    reading the file whole (as its bytes are read) once it is known to be broken."""
    start = stream.tell()
    head = first_byte(stream)
    if not head:
        load_json(b"", source=source)  # raises: an empty file is not JSON, as its bytes say
    if head != b"{":
        raise FormatError(
            [RecordError("file", "top level", f'expected a JSON object with a "{key}" list of {what}')],
            source=source,
        )
    index: int | None = None
    try:
        kind = top_level_kind(stream, key)
        if kind != "a list":
            problem = "missing field" if kind is None else f"expected a list, got {kind}"
            raise FormatError([RecordError("file", key, problem)], source=source)
        stream.seek(start)
        for index, value in enumerate(
            ijson.items(stream, f"{key}.item", use_float=True, buf_size=streaming.STREAM_CHUNK)
        ):
            yield f"{key}[{index}]", value
    except ijson.JSONError as error:
        stream.seek(start)
        load_json(stream.read(), source=source)  # raises, with the line and column
        where = "file" if index is None else f"after {key}[{index}]"
        raise FormatError(
            [RecordError(where, "top level", f"not valid JSON: {error}")], source=source
        ) from None


def top_level_kind(stream: IO[bytes], key: str) -> str | None:
    """The JSON type of the document's top-level `key`, as `type_name` names it ("a list"), None
    when the document has no such key; read from the stream's position, which is moved (the
    caller seeks back). Only the document's head is read when the key is there."""
    found = False
    for prefix, event, value in ijson.parse(stream, buf_size=1 << 16, use_float=True):
        if found:
            return {"start_array": "a list", "start_map": "an object"}.get(event) or type_name(value)
        found = prefix == "" and event == "map_key" and value == key
    return None


#: The attributes of a scene object the metric reads (`singling_attributes`).
SCENE_ATTRIBUTES = ATTRIBUTES


def read_scenes(stream: IO[bytes], *, source: str) -> dict[int, dict[str, Any]]:
    """image_index -> what scoring reads of the scene: its objects' attributes (one shared dict
    per combination of values: a split has 96 at most), obj_bbox and obj_mask (the masks as
    their run-length text, decoded when an expression needs them). Every scene is checked as
    `formats.parse_scenes` checks it; every fault (and repeated image_index) in one FormatError."""
    errors = RecordErrors()
    kept: dict[int, dict[str, Any]] = {}
    attributes: dict[tuple[Any, ...], dict[str, Any]] = {}
    try:
        for scene in iter_converted(
            document_records(stream, "scenes", "scenes", source=source),
            formats.scene_to_record,
            errors,
            id_field="image_index",
        ):
            if errors:
                continue
            data = scene.data
            objects = []
            for obj in data["objects"]:
                values = tuple(obj.get(name) for name in SCENE_ATTRIBUTES)
                shared = attributes.get(values)
                if shared is None:
                    shared = attributes[values] = {
                        name: obj[name] for name in SCENE_ATTRIBUTES if name in obj
                    }
                objects.append(shared)
            compact: dict[str, Any] = {"objects": objects}
            for name in ("obj_bbox", "obj_mask"):
                if name in data:
                    compact[name] = data[name]
            kept[data["image_index"]] = compact
    except FormatError as error:
        errors.extend(error.errors)
    if errors:
        raise FormatError(errors, source=source)
    return kept


class StreamedPredictions:
    """The predictions of an open file, joined to the expressions as these are read.

    The file is read twice. First every record is checked (`prediction_from_record`: every fault
    and repeated refexp_index in one FormatError, as `parse_predictions` finds them), keeping
    only each refexp_index, the number of steps it gives and what the predictions give
    (`PredictionKinds`). Then, as each expression asks for its prediction (`get`), the file is
    read on until that one is found; the predictions read past on the way wait in `waiting`
    until their expression comes. When the predictions are in the expressions' order nothing
    waits; in another order up to the whole file's predictions may (never more: each is read
    once), and memory then holds what `parse_predictions` would have.
    """

    def __init__(self, stream: IO[bytes], *, height: int, width: int, variant: str) -> None:
        self.height, self.width, self.variant = height, width, variant
        self.source = "predictions"
        self.kinds = PredictionKinds()
        #: refexp_index -> its position in the file, in the file's order.
        self.positions: dict[int, int] = {}
        #: refexp_index -> the number of steps its prediction gives, for those that give steps.
        self.step_counts: dict[int, int] = {}
        self.waiting: dict[int, dict[str, Any]] = {}
        start = stream.tell()
        errors = RecordErrors()
        labelled = stream_json_list(stream, source=self.source, what="predictions")
        for position, (label, raw) in enumerate(labelled):
            record = prediction_from_record(raw, RecordChecker(errors, label), height, width, variant)
            if record is None:
                continue
            refexp_index = record["refexp_index"]
            if refexp_index in self.positions:
                first = f"record {self.positions[refexp_index]}"
                errors.append(
                    RecordError(
                        label, "refexp_index", f"duplicate refexp_index {refexp_index!r} (first at {first})"
                    )
                )
                continue
            self.positions[refexp_index] = position
            self.kinds.add(record)
            if record.get("steps") is not None:
                self.step_counts[refexp_index] = len(record["steps"])
        if errors:
            raise FormatError(errors, source=self.source)
        stream.seek(start)
        self.unread = stream_json_list(stream, source=self.source, what="predictions")

    def step_count(self, refexp_index: int) -> int | None:
        """How many steps the expression's prediction gives (None: no steps, or no prediction)."""
        return self.step_counts.get(refexp_index)

    def get(self, refexp_index: int) -> dict[str, Any] | None:
        """The expression's prediction, as `prediction_from_record` gives it (None: it has none),
        reading on in the file until it is found."""
        if refexp_index not in self.positions:
            return None
        waiting = self.waiting
        while refexp_index not in waiting:
            label, raw = next(self.unread, (None, None))
            if label is None:
                problem = "the file no longer holds this prediction: it changed while it was scored"
                raise FormatError(
                    [RecordError(f"refexp_index {refexp_index}", "file", problem)], source=self.source
                )
            errors = RecordErrors()
            # Checked in the first reading: its masks' run lengths are not counted again.
            record = prediction_from_record(
                raw, RecordChecker(errors, label), self.height, self.width, self.variant, check_masks=False
            )
            if errors or record is None:
                raise FormatError(errors, source=self.source)  # the file changed under us
            waiting[record["refexp_index"]] = record
        return waiting.pop(refexp_index)

    def extra(self, seen: set[int]) -> list[int]:
        """The refexp indices of predictions for no expression, in the file's order."""
        return [refexp_index for refexp_index in self.positions if refexp_index not in seen]
