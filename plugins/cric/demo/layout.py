"""Where things go in a CRIC demo image: pixel boxes and the spatial predicates judged from
them alone ("on", "under", "next to", ...), the composition of a scene (which objects, with
which attributes, placed where so that those predicates describe them as intended), and the
scene's Visual Genome-style graph."""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Sequence
from typing import Any

from plugins.cric.demo.knowledge import (
    CATEGORY_LIST,
    FURNITURE,
    GROUND,
    INDOOR,
    OUTDOOR,
    STATE_SIZES,
    ObjectCategory,
)

IMAGE_WIDTH = 480
IMAGE_HEIGHT = 360

# --- Spatial relations --------------------------------------------------------------------------

PREDICATES = ("on", "under", "next to", "left of", "right of", "near")
PREDICATE_PHRASES = {
    "on": "on",
    "under": "under",
    "next to": "next to",
    "left of": "to the left of",
    "right of": "to the right of",
    "near": "near",
}
# Boxes at most this far apart side by side, at the same height, are "next to" each other.
NEXT_TO_GAP = 30
# Centres at most this far apart make objects "near" each other, when nothing closer applies.
NEAR_DISTANCE = 120

# --- Layout -------------------------------------------------------------------------------------

MARGIN = 4
FURNITURE_GAP = 8
# Two objects may share at most this fraction of the smaller box, so that both stay visible.
MAX_OVERLAP = 0.15
# Things resting on a surface may cover at most this fraction of its box, so it stays visible.
MAX_SUPPORT_COVER = 0.25
PLACEMENT_ATTEMPTS = 60
MIN_OBJECTS = 4
MAX_OBJECTS = 8
INDOOR_PROBABILITY = 0.6
# Chance that the first piece of furniture is one that things can rest on.
SURFACE_FIRST_PROBABILITY = 0.85
# A category already in the scene is this much less likely to be picked again.
REPEAT_WEIGHT = 0.3
# Wall-mounted items hang between these heights (their top edge), well above the furniture.
WALL_TOP_RANGE = (15, 60)
# Lowest y at which an object standing on the floor may have its base: bases above it would
# float on the wall or in the sky.
FLOOR_BASE_TOP = {INDOOR: 235, OUTDOOR: 215}
# Chance that an object whose category has materials gets one; colours and (drawn) states are
# always set.
MATERIAL_PROBABILITY = 0.6


# --- Geometry -----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Box:
    """An axis-aligned pixel box, as Visual Genome stores it: top-left corner, width, height."""

    x: int
    y: int
    w: int
    h: int

    @property
    def right(self) -> int:
        return self.x + self.w

    @property
    def bottom(self) -> int:
        return self.y + self.h

    @property
    def center_x(self) -> float:
        return self.x + self.w / 2

    @property
    def center_y(self) -> float:
        return self.y + self.h / 2

    @property
    def area(self) -> int:
        return self.w * self.h

    def overlap_area(self, other: Box) -> int:
        width = min(self.right, other.right) - max(self.x, other.x)
        height = min(self.bottom, other.bottom) - max(self.y, other.y)
        return max(width, 0) * max(height, 0)

    def horizontal_gap(self, other: Box) -> int:
        """Pixels between the boxes side by side; zero or negative when their x-ranges overlap."""
        return max(other.x - self.right, self.x - other.right)

    def vertical_overlap(self, other: Box) -> int:
        return min(self.bottom, other.bottom) - max(self.y, other.y)


def rests_on(subject: Box, support: Box) -> bool:
    """The subject sits on top of the support: its base lies in the support's upper part, it
    reaches above the support's top band, its centre is over the support, and it is smaller."""
    return (
        subject.area < support.area
        and support.x <= subject.center_x <= support.right
        and support.y <= subject.bottom <= support.y + 0.6 * support.h
        and subject.y < support.y + 0.3 * support.h
    )


def lies_under(subject: Box, shelter: Box) -> bool:
    """The subject is under the shelter: inside its width, below its top band, standing on the
    same floor line, and smaller."""
    return (
        subject.area < shelter.area
        and shelter.x <= subject.x
        and subject.right <= shelter.right
        and subject.y >= shelter.y + 0.3 * shelter.h
        and shelter.bottom - 0.25 * shelter.h <= subject.bottom <= shelter.bottom + 8
    )


def spatial_predicates(subject: Box, reference: Box) -> list[str]:
    """The predicates that hold from subject to reference, judged from the boxes alone.

    "on" and "under" win over everything else, and their inverse directions get no relation (a
    table is not "under" the cup on it, as in Visual Genome).  Otherwise objects side by side
    are "left of"/"right of", close ones at the same height also "next to", and the rest
    "near" when their centres are close.
    """
    if rests_on(subject, reference):
        return ["on"]
    if lies_under(subject, reference):
        return ["under"]
    if rests_on(reference, subject) or lies_under(reference, subject):
        return []
    predicates = []
    gap = subject.horizontal_gap(reference)
    if gap > 0:
        predicates.append("left of" if subject.center_x < reference.center_x else "right of")
        if gap <= NEXT_TO_GAP and subject.vertical_overlap(reference) > 0:
            predicates.append("next to")
    distance = math.hypot(subject.center_x - reference.center_x, subject.center_y - reference.center_y)
    if "next to" not in predicates and distance <= NEAR_DISTANCE:
        predicates.append("near")
    return predicates


# --- Scenes -------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PlacedObject:
    """One object in a scene.  `support` is the id of the object it rests on, if any: those
    are drawn after everything standing on the floor, so a cup is never hidden by its table."""

    object_id: int
    category: ObjectCategory
    box: Box
    color: str
    material: str | None
    state: str | None
    support: int | None = None

    @property
    def attributes(self) -> list[str]:
        return [value for value in (self.color, self.material, self.state) if value is not None]


@dataclasses.dataclass(frozen=True)
class Scene:
    """One image's layout: an indoor or outdoor backdrop and the objects placed on it."""

    image_id: int
    kind: str
    objects: tuple[PlacedObject, ...]


def compose_scene(rng: random.Random, image_id: int) -> Scene:
    """Lays out 4-8 objects: first one to three pieces of furniture side by side on the floor,
    then small objects on the floor, on surfaces that hold them, or under tables and benches.

    Every candidate position is checked against the geometric relation rules, so an object
    placed on a table is "on" it by `spatial_predicates` and nothing ends up "on" or "under"
    something by accident.
    """
    kind = INDOOR if rng.random() < INDOOR_PROBABILITY else OUTDOOR
    furniture = [
        category for category in CATEGORY_LIST if category.role == FURNITURE and kind in category.scenes
    ]
    surfaces = [category for category in furniture if category.holds]
    small = [category for category in CATEGORY_LIST if category.role != FURNITURE and kind in category.scenes]
    target_count = rng.randint(MIN_OBJECTS, MAX_OBJECTS)

    objects: list[PlacedObject] = []

    def next_id() -> int:
        return image_id * 1000 + len(objects) + 1

    for index in range(rng.randint(1, 3)):
        choices = surfaces if index == 0 and rng.random() < SURFACE_FIRST_PROBABILITY else furniture
        category = _pick_category(rng, choices, objects)
        color, material, state = _choose_attributes(rng, category)
        size = _choose_size(rng, category, state)
        box = _place_furniture(rng, kind, size, objects)
        if box is not None:
            objects.append(PlacedObject(next_id(), category, box, color, material, state))

    attempts = 0
    # Small objects fit on the floor nearly always, so the minimum is reached long before the
    # second limit, which only guards against looping forever.
    while (len(objects) < target_count and attempts < 40) or (len(objects) < MIN_OBJECTS and attempts < 400):
        attempts += 1
        placeable = [
            category
            for category in small
            if category.role == GROUND
            or (category.on_wall and kind == INDOOR)
            or any(category.name in other.category.holds for other in objects)
        ]
        if not placeable:
            break
        category = _pick_category(rng, placeable, objects)
        color, material, state = _choose_attributes(rng, category)
        size = _choose_size(rng, category, state)
        placement = _place_small(rng, kind, category, size, objects)
        if placement is not None:
            box, support = placement
            if support is not None:
                support_color = next(other.color for other in objects if other.object_id == support)
                color = _contrasting_color(rng, category, color, support_color)
            objects.append(PlacedObject(next_id(), category, box, color, material, state, support))
    return Scene(image_id=image_id, kind=kind, objects=tuple(objects))


def _pick_category(
    rng: random.Random, categories: Sequence[ObjectCategory], objects: Sequence[PlacedObject]
) -> ObjectCategory:
    """A category weighted by its frequency, and less likely when the scene already has one."""
    present = {placed.category.name for placed in objects}
    weights = [
        category.frequency * (REPEAT_WEIGHT if category.name in present else 1) for category in categories
    ]
    return rng.choices(categories, weights=weights)[0]


def _contrasting_color(rng: random.Random, category: ObjectCategory, color: str, support_color: str) -> str:
    """The object's colour, or another one when it matches what the object rests on: a black
    fork on a black table would vanish into it."""
    if color != support_color:
        return color
    others = [option for option in category.colors if option != support_color]
    return rng.choice(others) if others else color


def _choose_attributes(rng: random.Random, category: ObjectCategory) -> tuple[str, str | None, str | None]:
    color = rng.choice(category.colors)
    material = None
    if category.materials and rng.random() < MATERIAL_PROBABILITY:
        material = rng.choice(category.materials)
    state = rng.choice(category.states) if category.states else None
    return color, material, state


def _choose_size(rng: random.Random, category: ObjectCategory, state: str | None) -> tuple[int, int]:
    width, height = STATE_SIZES.get((category.name, state or ""), category.size)
    scale = rng.uniform(0.85, 1.15)
    return max(8, round(width * scale)), max(8, round(height * scale))


def _place_furniture(
    rng: random.Random, kind: str, size: tuple[int, int], objects: Sequence[PlacedObject]
) -> Box | None:
    width, height = size
    for _ in range(PLACEMENT_ATTEMPTS):
        x = rng.randint(MARGIN, IMAGE_WIDTH - MARGIN - width)
        bottom = rng.randint(FLOOR_BASE_TOP[kind], IMAGE_HEIGHT - MARGIN)
        box = Box(x, bottom - height, width, height)
        if box.y >= MARGIN and all(box.horizontal_gap(other.box) >= FURNITURE_GAP for other in objects):
            return box
    return None


def _place_small(
    rng: random.Random,
    kind: str,
    category: ObjectCategory,
    size: tuple[int, int],
    objects: Sequence[PlacedObject],
) -> tuple[Box, int | None] | None:
    """A free position for a small object and the id of what it rests on, or None."""
    width, height = size
    supports = [
        other for other in objects if category.name in other.category.holds and other.box.w >= width + 8
    ]
    shelters = [
        other
        for other in objects
        if category.role == GROUND
        and other.category.has_space_under
        and height <= 0.65 * other.box.h
        and width <= 0.7 * other.box.w
    ]
    modes = []
    if supports:
        modes += ["on", "on"]
    if category.on_wall and kind == INDOOR:
        modes.append("wall")
    if category.role == GROUND:
        modes += ["floor", "floor", "floor"]
        if shelters:
            modes.append("under")
    if not modes:
        return None
    for _ in range(PLACEMENT_ATTEMPTS):
        mode = rng.choice(modes)
        if mode == "on":
            support = rng.choice(supports)
            x = rng.randint(support.box.x + 4, support.box.right - width - 4)
            bottom = support.box.y + round(support.category.resting_height * support.box.h)
        elif mode == "wall":
            support = None
            x = rng.randint(MARGIN, IMAGE_WIDTH - MARGIN - width)
            bottom = rng.randint(*WALL_TOP_RANGE) + height
        elif mode == "under":
            support = rng.choice(shelters)
            inset = round(0.12 * support.box.w)
            if support.box.w - 2 * inset < width:
                continue
            x = rng.randint(support.box.x + inset, support.box.right - inset - width)
            bottom = support.box.bottom - rng.randint(0, 3)
        else:
            support = None
            x = rng.randint(MARGIN, IMAGE_WIDTH - MARGIN - width)
            bottom = rng.randint(FLOOR_BASE_TOP[kind], IMAGE_HEIGHT - MARGIN)
        box = Box(x, bottom - height, width, height)
        if _fits(box, objects, support, mode):
            return box, (support.object_id if support is not None and mode == "on" else None)
    return None


def _fits(box: Box, objects: Sequence[PlacedObject], support: PlacedObject | None, mode: str) -> bool:
    """The box is inside the image, relates to its support exactly as intended, relates to
    nothing else by "on" or "under", and hides little of any other object (its support
    included, however many things already rest there).

    Objects on the floor must not stand behind furniture: seen from the front they would seem
    to float on a sofa's back or a table's top.
    """
    if (
        box.x < MARGIN
        or box.y < MARGIN
        or box.right > IMAGE_WIDTH - MARGIN
        or box.bottom > IMAGE_HEIGHT - MARGIN
    ):
        return False
    for other in objects:
        if other is support:
            if spatial_predicates(box, other.box) != [mode]:
                return False
            resting = [placed.box for placed in objects if placed.support == other.object_id]
            covered = sum(other.box.overlap_area(item) for item in [*resting, box])
            if mode == "on" and covered > MAX_SUPPORT_COVER * other.box.area:
                return False
            continue
        if (
            rests_on(box, other.box)
            or lies_under(box, other.box)
            or rests_on(other.box, box)
            or lies_under(other.box, box)
        ):
            return False
        if (
            mode == "floor"
            and other.category.role == FURNITURE
            and box.horizontal_gap(other.box) <= 0
            and box.bottom < other.box.bottom
        ):
            return False
        if box.overlap_area(other.box) > MAX_OVERLAP * min(box.area, other.box.area):
            return False
    return True


def scene_graph_record(scene: Scene) -> dict[str, Any]:
    """The scene's Visual Genome-style graph; relationships are derived from the boxes alone.

    Besides the Visual Genome fields it names its image file (``file_name``), which the CRIC
    scene-graph loader uses to find the picture.
    """
    objects = [
        {
            "object_id": placed.object_id,
            "names": [placed.category.name],
            "x": placed.box.x,
            "y": placed.box.y,
            "w": placed.box.w,
            "h": placed.box.h,
            "attributes": placed.attributes,
        }
        for placed in scene.objects
    ]
    relationships = []
    for subject in scene.objects:
        for reference in scene.objects:
            if subject is reference:
                continue
            for predicate in spatial_predicates(subject.box, reference.box):
                relationships.append(
                    {
                        "relationship_id": scene.image_id * 10000 + len(relationships) + 1,
                        "subject_id": subject.object_id,
                        "predicate": predicate,
                        "object_id": reference.object_id,
                    }
                )
    return {
        "image_id": scene.image_id,
        "width": IMAGE_WIDTH,
        "height": IMAGE_HEIGHT,
        "file_name": f"{scene.image_id}.png",
        "objects": objects,
        "relationships": relationships,
    }
