"""Random CLEVR scenes for the CLEVR-Ref+ generator (pure, no Django).

A scene is drawn the way CLEVR's own generator draws one, translated to the shared world of
``plugins.clevr.world``:

- 3 to 10 objects; shape cube/sphere/cylinder, size small/large, material rubber/metal, one of the
  8 CLEVR colours, a random rotation about the vertical axis.
- Units. The renderer works in grid units; CLEVR's files use Blender units. We take
  1 CLEVR unit = 10 grid units (``CLEVR_UNIT``), so CLEVR's radii 0.35 and 0.7 become 3.5 and 7
  grid units, CLEVR's placement square [-3, 3] becomes [-30, 30], its minimum gap between objects
  (0.25) becomes 2.5 and its direction margin (0.4) becomes 4. ``3d_coords`` are written in CLEVR
  units in the grid's axes (+x toward the camera, +y to the image's right, +z up); the
  ``directions`` recorded with each scene say which way left/right/front/behind point in them.
- Every object lies wholly inside the 480x320 frame, no two objects come closer than the gap,
  and (as CLEVR does, so that relationships are never borderline) no pair is separated along
  left/right/front/behind by a positive amount under the margin. One rule is ours: two objects
  related left/right on the ground must also be ordered that way in the picture (perspective can
  swap a near and a far object on the same side, and people judge by the picture). After
  rendering, the objects are placed again if any shows fewer than ``MIN_VISIBLE_PIXELS`` pixels
  (CLEVR's 200).

The record follows CLEVR: ``objects`` (shape, size, material, color, 3d_coords, rotation,
pixel_coords = [x, y, depth] with integer pixels and depth in CLEVR units), ``relationships``,
``directions``, plus CLEVR-Ref+'s ``obj_bbox`` and ``obj_mask`` keyed "1".."n".

Mask encoding (``encode_mask``/``decode_mask``), as in the released CLEVR-Ref+ scenes: the
320x480 mask is read row by row (row-major) and written as the lengths of its runs, separated by
commas, with no spaces: background run, object run, background run, ... The first run is
background and is 0 when the top-left pixel belongs to the object; the runs add up to 320 * 480.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from plugins.clevr import render as render_module
from plugins.clevr.camera import Camera, fitted_camera
from plugins.clevr.world import COLORS, SHAPES, SceneObject

IMAGE_WIDTH, IMAGE_HEIGHT = 480, 320
#: Grid units per CLEVR (Blender) unit.
CLEVR_UNIT = 10.0
#: CLEVR's radii (0.35 and 0.7 Blender units) in grid units.
RADII: dict[str, float] = {"small": 3.5, "large": 7.0}
SIZES = ("small", "large")
MATERIALS = ("rubber", "metal")
COLOR_NAMES = tuple(COLORS)

MIN_OBJECTS, MAX_OBJECTS = 3, 10
#: CLEVR samples centres uniformly in [-3, 3]^2 Blender units.
PLACEMENT_HALF_WIDTH = 30.0
#: Smallest distance between two objects' footprints (CLEVR's min_dist 0.25).
MIN_GAP = 2.5
#: CLEVR's margin 0.4: two objects are either level along a direction or this far apart along it.
DIRECTION_MARGIN = 4.0
#: Pixels by which two objects related left/right must also stand apart in the picture.
PICTURE_MARGIN = 10.0
#: Object j is R of object i when (coords_j - coords_i) . direction_R > RELATION_EPS (CLEVR units).
RELATION_EPS = 0.2
#: CLEVR rejects scenes where some object shows fewer pixels than this.
MIN_VISIBLE_PIXELS = 200
#: Pixels kept free between an object's projected extent and the image border.
FRAME_MARGIN = 2.0
#: Placement attempts per object before the whole scene is placed again. CLEVR uses 50, which
#: makes ten-object scenes restart about a hundred times; 500 cheap attempts restart less often.
PLACEMENT_ATTEMPTS = 500
#: Whole-scene placements tried before a scene gives up one object.
SCENE_ATTEMPTS = 400

#: Occlusion classes used by filter_visibleout.
FULLY_VISIBLE = "fully visible"
PARTIALLY_VISIBLE = "partially visible"
#: Share of an object's box covered by nearer objects above which it is partially visible.
PARTIAL_THRESHOLD = 0.2


class SceneGenerationError(RuntimeError):
    """No acceptable scene was found within the attempt budget (should not happen in practice)."""


@dataclass(frozen=True, slots=True)
class GeneratedScene:
    """A scene record plus what only the generator has: the picture and its id buffer."""

    record: dict[str, Any]
    objects: list[SceneObject]
    image: np.ndarray
    object_ids: np.ndarray
    visibility: list[str | None]


def clevr_camera() -> Camera:
    """The fitted Center camera's geometry at CLEVR's 480x320 resolution."""
    return fitted_camera("Camera_Center", width=IMAGE_WIDTH, height=IMAGE_HEIGHT)


# --- masks --------------------------------------------------------------------------------------


def encode_mask(mask: np.ndarray) -> str:
    """Run lengths of a boolean (H, W) mask, row-major, starting with a background run, comma-separated."""
    flat = np.asarray(mask, dtype=bool).ravel()
    if flat.size == 0:
        return "0"
    changes = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    boundaries = np.concatenate(([0], changes, [flat.size]))
    runs = np.diff(boundaries).tolist()
    if flat[0]:
        runs.insert(0, 0)
    return ",".join(str(run) for run in runs)


def decode_mask(text: str, width: int = IMAGE_WIDTH, height: int = IMAGE_HEIGHT) -> np.ndarray:
    """The boolean (height, width) mask of an `encode_mask` string.

    Commas or whitespace separate the runs (hand-written files use spaces). A missing trailing
    background run is implied; runs that overflow the image are an error.
    """
    runs = [int(part) for part in text.replace(",", " ").split()]
    total = width * height
    if any(run < 0 for run in runs):
        raise ValueError("mask run lengths must not be negative")
    if sum(runs) > total:
        raise ValueError(f"mask runs cover {sum(runs)} pixels, more than the {width}x{height} image")
    values = np.arange(len(runs)) % 2 == 1
    flat = np.zeros(total, dtype=bool)
    flat[: sum(runs)] = np.repeat(values, runs)
    return flat.reshape(height, width)


# --- geometry -----------------------------------------------------------------------------------


def ground_directions(camera: Camera) -> dict[str, list[float]]:
    """CLEVR's unit direction vectors, found from the camera: behind = its view direction on the ground.

    A pinhole camera's depth grows linearly with position, so its gradient on the ground plane is
    the view direction projected there (what CLEVR calls "behind"). "right" is the horizontal
    perpendicular whose step moves a point right in the picture; CLEVR projects the camera's own
    right axis instead, which is the same for a camera without roll (0.1 degree apart for the
    fitted Center camera). Rounded to 6 decimals so the stored vectors reproduce the stored
    relationships exactly.
    """
    origin, step_x, step_y = camera.project(np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))
    gradient = np.array([step_x[2] - origin[2], step_y[2] - origin[2]], dtype=float)
    behind = gradient / np.linalg.norm(gradient)
    right = np.array([-behind[1], behind[0]])
    moved = camera.project(np.array([[right[0], right[1], 0.0]]))[0]
    if moved[0] < origin[0]:
        right = -right
    behind_vector = [round(float(behind[0]), 6), round(float(behind[1]), 6), 0.0]
    right_vector = [round(float(right[0]), 6), round(float(right[1]), 6), 0.0]
    return {
        "behind": behind_vector,
        "front": [-value if value else 0.0 for value in behind_vector],
        "right": right_vector,
        "left": [-value if value else 0.0 for value in right_vector],
        "above": [0.0, 0.0, 1.0],
        "below": [0.0, 0.0, -1.0],
    }


def compute_relationships(
    coordinates: Sequence[Sequence[float]], directions: dict[str, Sequence[float]]
) -> dict[str, list[list[int]]]:
    """CLEVR's relationships: relationships[R][i] lists every j with (c_j - c_i) . d_R > eps.

    Plain Python floats in a fixed order, so anyone recomputing from the JSON gets the same sets.
    """
    relationships: dict[str, list[list[int]]] = {}
    for name in ("left", "right", "front", "behind"):
        direction = directions[name]
        related_lists = []
        for index, here in enumerate(coordinates):
            related = []
            for other, there in enumerate(coordinates):
                if other == index:
                    continue
                dot = sum((there[axis] - here[axis]) * direction[axis] for axis in range(3))
                if dot > RELATION_EPS:
                    related.append(other)
            related_lists.append(related)
        relationships[name] = related_lists
    return relationships


def corner_points(obj: SceneObject) -> np.ndarray:
    """The corners of the object's axis-aligned box (footprint circle x full height), in grid units."""
    height = 2 * obj.half_height
    return np.array(
        [
            [obj.x + dx * obj.radius, obj.y + dy * obj.radius, z]
            for dx in (-1, 1)
            for dy in (-1, 1)
            for z in (0.0, height)
        ]
    )


def inside_frame(obj: SceneObject, camera: Camera) -> bool:
    """The whole object projects inside the picture, in front of the camera."""
    projected = camera.project(corner_points(obj))
    return bool(
        np.all(projected[:, 2] > 0)
        and projected[:, 0].min() >= FRAME_MARGIN
        and projected[:, 0].max() <= IMAGE_WIDTH - 1 - FRAME_MARGIN
        and projected[:, 1].min() >= FRAME_MARGIN
        and projected[:, 1].max() <= IMAGE_HEIGHT - 1 - FRAME_MARGIN
    )


def fits_among(
    candidate: SceneObject, placed: Sequence[SceneObject], directions: dict[str, list[float]]
) -> bool:
    """CLEVR's placement test: a gap to every placed object and no borderline direction margins."""
    for other in placed:
        dx, dy = candidate.x - other.x, candidate.y - other.y
        if math.hypot(dx, dy) - candidate.radius - other.radius < MIN_GAP:
            return False
        for name in ("left", "right", "front", "behind"):
            vector = directions[name]
            margin = dx * vector[0] + dy * vector[1]
            if 0 < margin < DIRECTION_MARGIN:
                return False
    return True


def random_object(rng: random.Random) -> tuple[dict[str, str], SceneObject]:
    """Attributes and an unplaced SceneObject (x, y set later)."""
    attributes = {
        "shape": rng.choice(SHAPES),
        "size": rng.choice(SIZES),
        "material": rng.choice(MATERIALS),
        "color": rng.choice(COLOR_NAMES),
    }
    rotation = round(rng.uniform(0.0, 360.0), 2)
    obj = SceneObject(
        shape=attributes["shape"],
        radius=RADII[attributes["size"]],
        color=attributes["color"],
        material=attributes["material"],
        x=0.0,
        y=0.0,
        rotation=rotation,
    )
    return attributes, obj


def reads_the_same_in_the_picture(
    candidate: SceneObject, placed: Sequence[SceneObject], camera: Camera, directions: dict[str, list[float]]
) -> bool:
    """Left/right on the ground agrees with left/right in the picture, for every pair.

    CLEVR relates objects on the ground plane, but perspective can put the object that is left
    on the ground to the right in the image (a near object beside a far one on the same side).
    People read the picture, so such placements are refused, as CLEVR refuses borderline margins.
    Front/behind needs no test: the ground-contact points of nearer objects always lie lower.
    """
    if not placed:
        return True
    centres = np.array([[obj.x, obj.y, obj.half_height] for obj in (candidate, *placed)])
    pixel_x = camera.project(centres)[:, 0]
    right = directions["right"]
    for other, other_x in zip(placed, pixel_x[1:], strict=True):
        along = (candidate.x - other.x) * right[0] + (candidate.y - other.y) * right[1]
        if (
            abs(along) >= DIRECTION_MARGIN
            and (pixel_x[0] - other_x) * math.copysign(1, along) < PICTURE_MARGIN
        ):
            return False
    return True


def place_objects(
    rng: random.Random, camera: Camera, count: int, directions: dict[str, list[float]]
) -> tuple[list[dict[str, str]], list[SceneObject]] | None:
    """`count` objects placed one by one as CLEVR does; None when one cannot be placed."""
    attributes_list: list[dict[str, str]] = []
    placed: list[SceneObject] = []
    for _ in range(count):
        attributes, template = random_object(rng)
        for _attempt in range(PLACEMENT_ATTEMPTS):
            x = round(rng.uniform(-PLACEMENT_HALF_WIDTH, PLACEMENT_HALF_WIDTH), 2)
            y = round(rng.uniform(-PLACEMENT_HALF_WIDTH, PLACEMENT_HALF_WIDTH), 2)
            candidate = replace(template, x=x, y=y)
            if (
                fits_among(candidate, placed, directions)
                and inside_frame(candidate, camera)
                and reads_the_same_in_the_picture(candidate, placed, camera, directions)
            ):
                placed.append(candidate)
                attributes_list.append(attributes)
                break
        else:
            return None
    return attributes_list, placed


# --- occlusion ----------------------------------------------------------------------------------


def occlusion_fractions(
    object_ids: np.ndarray, boxes: Sequence[Sequence[int]], depths: Sequence[float]
) -> list[float]:
    """Per object, the share of its box's pixels that show an object nearer to the camera.

    This is CLEVR-Ref+'s "covered by other objects' masks", counted on the id buffer; only nearer
    objects count, so a neighbour standing behind and peeking into the box does not.
    """
    fractions = []
    for index, (x, y, width, height) in enumerate(boxes):
        window = object_ids[y : y + height, x : x + width]
        nearer = [other for other, depth in enumerate(depths) if depth < depths[index]]
        covered = int(np.isin(window, nearer).sum()) if nearer else 0
        fractions.append(covered / window.size if window.size else 0.0)
    return fractions


def visibility_classes(fractions: Sequence[float]) -> list[str | None]:
    """fully visible (nothing covered), partially visible (> 20% covered), or None in between.

    Objects in between are neither: CLEVR-Ref+ refuses visibility questions on such scenes, and
    the generator refuses a visibility filter whose input holds one.
    """
    classes: list[str | None] = []
    for fraction in fractions:
        if fraction == 0:
            classes.append(FULLY_VISIBLE)
        elif fraction > PARTIAL_THRESHOLD:
            classes.append(PARTIALLY_VISIBLE)
        else:
            classes.append(None)
    return classes


def id_buffer_from_masks(scene: dict[str, Any]) -> np.ndarray:
    """The (H, W) object-id buffer rebuilt from a scene record's obj_mask (-1 where no object)."""
    object_ids = np.full((IMAGE_HEIGHT, IMAGE_WIDTH), -1, dtype=np.int16)
    for key, text in scene.get("obj_mask", {}).items():
        object_ids[decode_mask(text)] = int(key) - 1
    return object_ids


def scene_visibility(scene: dict[str, Any]) -> list[str | None]:
    """Visibility classes of a scene record's objects, from its masks, boxes and depths."""
    object_ids = id_buffer_from_masks(scene)
    count = len(scene["objects"])
    boxes = [scene["obj_bbox"][str(index + 1)] for index in range(count)]
    depths = [obj["pixel_coords"][2] for obj in scene["objects"]]
    return visibility_classes(occlusion_fractions(object_ids, boxes, depths))


# --- scenes -------------------------------------------------------------------------------------


def image_filename(split: str, image_index: int) -> str:
    return f"CLEVR_{split}_{image_index:06d}.png"


def object_record(attributes: dict[str, str], obj: SceneObject, projected: np.ndarray) -> dict[str, Any]:
    return {
        "shape": attributes["shape"],
        "size": attributes["size"],
        "material": attributes["material"],
        "color": attributes["color"],
        "3d_coords": [
            round(obj.x / CLEVR_UNIT, 4),
            round(obj.y / CLEVR_UNIT, 4),
            round(obj.half_height / CLEVR_UNIT, 4),
        ],
        "rotation": obj.rotation,
        "pixel_coords": [
            int(round(float(projected[0]))),
            int(round(float(projected[1]))),
            round(float(projected[2]) / CLEVR_UNIT, 4),
        ],
    }


def generate_scene(
    rng: random.Random, camera: Camera, *, image_index: int, split: str = "val"
) -> GeneratedScene:
    """Draw, place and render one scene, placing again until every object shows enough pixels.

    As in CLEVR, the number of objects is drawn once and kept through the retries, so crowded
    scenes (which fail more often) are not under-represented. Only after SCENE_ATTEMPTS failed
    placements (rare, and only with ten objects) does the scene give up one object, so that
    generation always ends.
    """
    directions = ground_directions(camera)
    count = rng.randint(MIN_OBJECTS, MAX_OBJECTS)
    while count >= MIN_OBJECTS:
        for _attempt in range(SCENE_ATTEMPTS):
            placement = place_objects(rng, camera, count, directions)
            if placement is None:
                continue
            attributes_list, objects = placement
            # The id buffer alone is cheap; shade only scenes that pass. CLEVR places objects
            # beyond the grid's visible area, so none is hidden for being outside it.
            object_ids = render_module.render_ids(objects, camera, hide_outside_visible_area=False)
            if min(render_module.visible_pixel_counts(object_ids, count)) < MIN_VISIBLE_PIXELS:
                continue
            rendered = render_module.render(
                objects, camera, draw_visible_area=False, hide_outside_visible_area=False
            )
            return assemble_scene(
                attributes_list,
                objects,
                camera,
                directions,
                rendered.image,
                rendered.object_ids,
                image_index,
                split,
            )
        count -= 1
    raise SceneGenerationError(f"no acceptable scene of {MIN_OBJECTS} or more objects")


def assemble_scene(
    attributes_list: list[dict[str, str]],
    objects: list[SceneObject],
    camera: Camera,
    directions: dict[str, list[float]],
    image: np.ndarray,
    object_ids: np.ndarray,
    image_index: int,
    split: str,
) -> GeneratedScene:
    """The CLEVR record of a rendered scene, with boxes, masks and occlusion classes."""
    centres = np.array([[obj.x, obj.y, obj.half_height] for obj in objects])
    projected = camera.project(centres)
    records = [
        object_record(attributes, obj, point)
        for attributes, obj, point in zip(attributes_list, objects, projected, strict=True)
    ]
    boxes = [[int(value) for value in box] for box in render_module.bounding_boxes(object_ids, len(objects))]
    masks = [encode_mask(object_ids == index) for index in range(len(objects))]
    depths = [record["pixel_coords"][2] for record in records]
    visibility = visibility_classes(occlusion_fractions(object_ids, boxes, depths))
    record = {
        "split": split,
        "image_index": image_index,
        "image_filename": image_filename(split, image_index),
        "objects": records,
        "relationships": compute_relationships([obj["3d_coords"] for obj in records], directions),
        "directions": directions,
        "obj_bbox": {str(index + 1): box for index, box in enumerate(boxes)},
        "obj_mask": {str(index + 1): mask for index, mask in enumerate(masks)},
    }
    return GeneratedScene(
        record=record, objects=objects, image=image, object_ids=object_ids, visibility=visibility
    )
