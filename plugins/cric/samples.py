"""Synthetic sample data for the CRIC benchmark.

CRIC (Compositional Reasoning on vIsion and Commonsense) asks questions that need both the
picture and everyday knowledge: "What object in the image can be used for cutting food?" is
answered by finding the knife, which takes knowing that knives cut food.  Every question comes
with a functional program (Find, Relate, Find KG, ...) that lists the objects each step yields,
the objects that ground the answer (``target``), the scene-graph facts and knowledge triplets it
relies on (``sub_graph``), and, for "no" answers to yes/no questions, the part that fails
(``wrong_part``).

The real data set (Visual Genome photos plus ConceptNet) cannot ship with the app, so this
module builds a small world of its own: about twenty-five everyday object categories, each with
a drawable shape and a set of possible attributes, a commonsense knowledge graph about them, and
a generator that paints simple indoor and outdoor scenes, derives Visual Genome-style scene
graphs from the geometry, and asks questions of all five CRIC types.  A tiny program executor
(`execute_program`) fills in every step's output; the tests run the same executor, so the
recorded programs and the scene graphs cannot drift apart.

The module is deliberately free of Django so it can run in scripts and tests.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import json
import math
import pathlib
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from plugins.cric.formats import QUESTION_TYPES

IMAGE_WIDTH = 480
IMAGE_HEIGHT = 360

QUESTIONS_FILE_NAME = "cric_questions.json"
SCENE_GRAPHS_FILE_NAME = "cric_scene_graphs.json"
KNOWLEDGE_FILE_NAME = "cric_knowledge.json"
IMAGES_FOLDER_NAME = "images"

LABEL_FONT_PATH = pathlib.Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
LABEL_FONT_SIZE = 11


INDOOR = "indoor"
OUTDOOR = "outdoor"
SCENE_KINDS = (INDOOR, OUTDOOR)

# --- Attributes ---------------------------------------------------------------------------------

# Every colour differs clearly from every backdrop colour below, so an object always stands out
# from the wall, floor, sky, grass or road behind it.
COLORS: dict[str, tuple[int, int, int]] = {
    "red": (200, 40, 40),
    "blue": (40, 80, 200),
    "green": (40, 150, 60),
    "yellow": (235, 200, 40),
    "orange": (240, 130, 30),
    "pink": (240, 130, 180),
    "purple": (130, 60, 170),
    "brown": (120, 70, 30),
    "black": (30, 30, 30),
    "white": (250, 250, 250),
    "gray": (150, 150, 150),
}
MATERIALS = ("wooden", "metal", "plastic", "glass", "ceramic", "leather", "fabric")
# How a material reads after "made of" in a question ("Is the table made of wood?").
MATERIAL_NOUNS = {"wooden": "wood"}
# Only states that the drawings show: an open laptop has a screen up, a sitting dog is upright.
STATES = ("open", "closed", "sitting", "standing")

COLOR = "color"
MATERIAL = "material"
STATE = "state"
# Which kind each attribute word is; "What color is ...?" recognises the one colour attribute.
ATTRIBUTE_KINDS: dict[str, str] = {
    **dict.fromkeys(COLORS, COLOR),
    **dict.fromkeys(MATERIALS, MATERIAL),
    **dict.fromkeys(STATES, STATE),
}
# Chance that an object whose category has materials gets one; colours and (drawn) states are
# always set.
MATERIAL_PROBABILITY = 0.6

# --- Backdrops ----------------------------------------------------------------------------------

WALL_COLOR = (214, 204, 182)
SKIRTING_COLOR = (150, 132, 110)
FLOOR_COLOR = (178, 142, 104)
SKY_COLOR = (164, 206, 238)
GRASS_COLOR = (122, 178, 96)
ROAD_COLOR = (92, 92, 98)
ROAD_MARKING_COLOR = (225, 225, 215)
BACKDROP_COLORS = (WALL_COLOR, FLOOR_COLOR, SKY_COLOR, GRASS_COLOR, ROAD_COLOR)
# Where the wall meets the floor (indoor) or the sky meets the grass (outdoor).
HORIZONS = {INDOOR: 190, OUTDOOR: 170}
ROAD_TOP = 205
# Lowest y at which an object standing on the floor may have its base: bases above it would
# float on the wall or in the sky.
FLOOR_BASE_TOP = {INDOOR: 235, OUTDOOR: 215}

OUTLINE_COLOR = (25, 25, 25)
OUTLINE_WIDTH = 2
# Boxes thinner than this get one-pixel outlines, so a fork is not all outline.
THIN_BOX = 24
SCREEN_COLOR = (45, 55, 75)
WINDOW_COLOR = (190, 220, 240)
TRUNK_COLOR = (110, 72, 40)
LEAF_COLOR = (60, 140, 50)
BEAK_COLOR = (245, 160, 20)
LABEL_BACKGROUND = (255, 255, 255)
LABEL_TEXT_COLOR = (20, 20, 20)

# --- Object categories --------------------------------------------------------------------------

FURNITURE = "furniture"  # large; stands on the floor and never overlaps other furniture
ITEM = "item"  # small; always rests on a surface (a cup on a table, a book on a bench)
GROUND = "ground"  # small; on the floor, on a surface that holds it, or under a table or bench

TABLE_ITEMS = (
    "cup",
    "knife",
    "fork",
    "plate",
    "bottle",
    "laptop",
    "phone",
    "book",
    "clock",
    "apple",
    "banana",
)


@dataclasses.dataclass(frozen=True)
class ObjectCategory:
    """One kind of object the world knows how to place, draw and ask about.

    `holds` names the categories that may rest on this one, and `resting_height` says where they
    rest, as a fraction of this object's box height from its top (a sofa's seat is half-way
    down, a table's top is at the very top), so that drawings and the geometric "on" rule agree.
    `frequency` weighs how often the category is picked, so that tables are common and balls
    do not crowd out everything else; `on_wall` items may also hang on the wall.
    """

    name: str
    shape: str
    size: tuple[int, int]
    role: str
    scenes: tuple[str, ...]
    colors: tuple[str, ...]
    materials: tuple[str, ...] = ()
    states: tuple[str, ...] = ()
    holds: tuple[str, ...] = ()
    resting_height: float = 0.0
    has_space_under: bool = False
    frequency: float = 1.0
    on_wall: bool = False


BOTH_SCENES = (INDOOR, OUTDOOR)

CATEGORY_LIST = (
    ObjectCategory(
        "table", "table", (170, 90), FURNITURE, (INDOOR,), ("brown", "white", "black", "gray"),
        materials=("wooden", "metal", "glass", "plastic"), holds=(*TABLE_ITEMS, "cat"),
        resting_height=0.1, has_space_under=True, frequency=3,
    ),
    ObjectCategory(
        "chair", "chair", (70, 100), FURNITURE, (INDOOR,), ("brown", "black", "red", "blue", "white"),
        materials=("wooden", "metal", "plastic"),
    ),
    ObjectCategory(
        "sofa", "sofa", (180, 90), FURNITURE, (INDOOR,), ("red", "blue", "gray", "green", "brown", "purple"),
        materials=("leather", "fabric"), holds=("book", "phone", "laptop", "cat", "dog", "backpack", "ball"),
        resting_height=0.48, frequency=1.5,
    ),
    ObjectCategory(
        "shelf", "shelf", (90, 150), FURNITURE, (INDOOR,), ("brown", "white", "black"),
        materials=("wooden", "metal"), holds=("book", "clock", "bottle", "cup", "plate"), resting_height=0.02,
    ),
    ObjectCategory(
        "lamp", "lamp", (46, 130), FURNITURE, (INDOOR,), ("white", "yellow", "black", "red"),
        materials=("metal", "plastic"),
    ),
    ObjectCategory(
        "cup", "cup", (30, 34), ITEM, BOTH_SCENES, ("white", "red", "blue", "yellow", "green", "black"),
        materials=("ceramic", "plastic", "glass"),
    ),
    ObjectCategory("knife", "knife", (54, 14), ITEM, (INDOOR,), ("gray", "black", "red"), materials=("metal", "plastic")),
    ObjectCategory("fork", "fork", (46, 14), ITEM, (INDOOR,), ("gray", "white", "black"), materials=("metal", "plastic")),
    ObjectCategory(
        "plate", "plate", (62, 18), ITEM, (INDOOR,), ("white", "blue", "yellow", "red"),
        materials=("ceramic", "plastic", "glass"),
    ),
    ObjectCategory(
        "bottle", "bottle", (24, 58), ITEM, BOTH_SCENES, ("green", "blue", "white", "red"), materials=("glass", "plastic")
    ),
    ObjectCategory(
        "laptop", "laptop", (74, 52), ITEM, (INDOOR,), ("gray", "black", "white", "blue"),
        materials=("metal", "plastic"), states=("open", "closed"),
    ),
    ObjectCategory("phone", "phone", (20, 36), ITEM, BOTH_SCENES, ("black", "white", "blue", "pink", "gray")),
    ObjectCategory("book", "book", (32, 42), ITEM, BOTH_SCENES, ("red", "blue", "green", "yellow", "purple", "orange")),
    ObjectCategory(
        "clock", "clock", (38, 38), ITEM, (INDOOR,), ("white", "black", "red", "yellow"),
        materials=("metal", "plastic", "wooden"), on_wall=True,
    ),
    ObjectCategory("apple", "apple", (24, 24), ITEM, BOTH_SCENES, ("red", "green", "yellow")),
    ObjectCategory("banana", "banana", (44, 20), ITEM, BOTH_SCENES, ("yellow", "green")),
    ObjectCategory(
        "dog", "dog", (80, 55), GROUND, BOTH_SCENES, ("brown", "black", "white", "gray", "yellow"),
        states=("sitting", "standing"),
    ),
    ObjectCategory(
        "cat", "cat", (56, 40), GROUND, BOTH_SCENES, ("gray", "black", "white", "orange", "brown"),
        states=("sitting", "standing"),
    ),
    ObjectCategory("bird", "bird", (36, 26), GROUND, (OUTDOOR,), ("blue", "red", "yellow", "black", "brown")),
    ObjectCategory(
        "ball", "ball", (30, 30), GROUND, BOTH_SCENES, ("red", "blue", "yellow", "orange", "white", "green"),
        materials=("plastic", "leather"), frequency=0.5,
    ),
    ObjectCategory(
        "backpack", "backpack", (42, 52), GROUND, BOTH_SCENES, ("red", "blue", "black", "green", "purple", "orange"),
        materials=("leather", "fabric"), frequency=0.5,
    ),
    ObjectCategory(
        "car", "car", (160, 72), FURNITURE, (OUTDOOR,), ("red", "blue", "white", "black", "gray", "yellow", "green"),
    ),
    ObjectCategory(
        "bicycle", "bicycle", (104, 64), FURNITURE, (OUTDOOR,), ("red", "blue", "black", "green", "yellow", "orange"),
        materials=("metal",),
    ),
    ObjectCategory(
        "bench", "bench", (150, 64), FURNITURE, (OUTDOOR,), ("brown", "green", "gray", "black", "red"),
        materials=("wooden", "metal"),
        holds=("book", "bottle", "phone", "cup", "backpack", "bird", "cat", "apple", "banana"),
        resting_height=0.4, has_space_under=True, frequency=1.5,
    ),
    ObjectCategory("tree", "tree", (110, 190), FURNITURE, (OUTDOOR,), ("green", "orange", "yellow")),
    ObjectCategory(
        "umbrella", "umbrella", (76, 78), GROUND, (OUTDOOR,), ("red", "blue", "black", "yellow", "purple", "pink"),
        states=("open", "closed"),
    ),
)  # fmt: skip
CATEGORIES: dict[str, ObjectCategory] = {category.name: category for category in CATEGORY_LIST}

# Boxes that depend on the drawn state: a closed laptop is a thin slab, a sitting dog is taller.
STATE_SIZES: dict[tuple[str, str], tuple[int, int]] = {
    ("laptop", "closed"): (74, 14),
    ("umbrella", "closed"): (24, 80),
    ("dog", "sitting"): (54, 66),
    ("cat", "sitting"): (40, 50),
}

# --- Knowledge ----------------------------------------------------------------------------------

# ConceptNet-style commonsense about the categories above.  Several heads share a tail on purpose
# ("sitting": chair, sofa, bench) so that a question is only asked when the image makes it
# unambiguous, as in CRIC.
COMMONSENSE_TRIPLETS: tuple[tuple[str, str, str], ...] = (
    ("knife", "UsedFor", "cutting food"),
    ("fork", "UsedFor", "eating"),
    ("plate", "UsedFor", "serving food"),
    ("cup", "UsedFor", "drinking"),
    ("bottle", "UsedFor", "drinking"),
    ("bottle", "UsedFor", "carrying water"),
    ("laptop", "UsedFor", "writing emails"),
    ("phone", "UsedFor", "calling people"),
    ("phone", "UsedFor", "taking photos"),
    ("book", "UsedFor", "learning"),
    ("chair", "UsedFor", "sitting"),
    ("sofa", "UsedFor", "sitting"),
    ("bench", "UsedFor", "sitting"),
    ("table", "UsedFor", "eating meals"),
    ("shelf", "UsedFor", "storing books"),
    ("lamp", "UsedFor", "lighting a room"),
    ("clock", "UsedFor", "telling time"),
    ("umbrella", "UsedFor", "keeping dry"),
    ("backpack", "UsedFor", "carrying books"),
    ("car", "UsedFor", "driving"),
    ("bicycle", "UsedFor", "riding"),
    ("ball", "UsedFor", "playing games"),
    ("dog", "CapableOf", "bark"),
    ("dog", "CapableOf", "guard a house"),
    ("cat", "CapableOf", "climb trees"),
    ("cat", "CapableOf", "catch mice"),
    ("bird", "CapableOf", "fly"),
    ("bird", "CapableOf", "sing"),
    ("ball", "CapableOf", "bounce"),
    ("car", "CapableOf", "carry passengers"),
    ("book", "AtLocation", "library"),
    ("knife", "AtLocation", "kitchen"),
    ("fork", "AtLocation", "kitchen"),
    ("plate", "AtLocation", "restaurant"),
    ("cup", "AtLocation", "cafe"),
    ("laptop", "AtLocation", "office"),
    ("car", "AtLocation", "garage"),
    ("bench", "AtLocation", "park"),
    ("tree", "AtLocation", "forest"),
    ("bird", "AtLocation", "nest"),
    ("apple", "AtLocation", "orchard"),
    ("knife", "HasProperty", "sharp"),
    ("sofa", "HasProperty", "soft"),
    ("car", "HasProperty", "heavy"),
    ("ball", "HasProperty", "round"),
    ("plate", "HasProperty", "fragile"),
    ("tree", "HasProperty", "tall"),
    ("apple", "HasProperty", "crunchy"),
    ("banana", "HasProperty", "sweet"),
    ("bicycle", "HasA", "two wheels"),
    ("car", "HasA", "an engine"),
    ("book", "HasA", "pages"),
    ("laptop", "HasA", "a keyboard"),
    ("phone", "HasA", "a touch screen"),
    ("clock", "HasA", "hands"),
    ("bird", "HasA", "feathers"),
    ("cat", "HasA", "whiskers"),
    ("cat", "HasA", "fur"),
    ("dog", "HasA", "fur"),
    ("tree", "HasA", "leaves"),
    ("backpack", "HasA", "straps"),
    ("chair", "HasA", "four legs"),
    ("table", "HasA", "four legs"),
    ("laptop", "HasPrerequisite", "electricity"),
    ("lamp", "HasPrerequisite", "electricity"),
    ("car", "HasPrerequisite", "fuel"),
    ("phone", "HasPrerequisite", "a charged battery"),
    ("book", "ReceivesAction", "read"),
    ("apple", "ReceivesAction", "eaten"),
    ("banana", "ReceivesAction", "peeled"),
    ("ball", "ReceivesAction", "kicked"),
    ("bottle", "ReceivesAction", "recycled"),
    ("cup", "ReceivesAction", "filled with coffee"),
    ("bicycle", "HasSubevent", "pedaling"),
    ("clock", "HasSubevent", "ticking"),
    ("phone", "HasSubevent", "ringing"),
    ("book", "MadeFrom", "paper"),
    ("ball", "MadeFrom", "rubber"),
    ("knife", "MadeFrom", "steel"),
    ("umbrella", "MadeFrom", "waterproof fabric"),
)
# Triplets whose tail is a category: asked backwards ("What would you usually find coffee in?"),
# through Find KG Reverse.
CONTENT_TRIPLETS: tuple[tuple[str, str, str], ...] = (
    ("coffee", "AtLocation", "cup"),
    ("water", "AtLocation", "bottle"),
    ("food", "AtLocation", "plate"),
    ("books", "AtLocation", "shelf"),
    ("pencils", "AtLocation", "backpack"),
)
HYPERNYM_TRIPLETS: tuple[tuple[str, str, str], ...] = (
    ("dog", "IsA", "animal"),
    ("cat", "IsA", "animal"),
    ("bird", "IsA", "animal"),
    ("car", "IsA", "vehicle"),
    ("bicycle", "IsA", "vehicle"),
    ("cup", "IsA", "container"),
    ("bottle", "IsA", "container"),
    ("backpack", "IsA", "container"),
    ("apple", "IsA", "fruit"),
    ("banana", "IsA", "fruit"),
    ("knife", "IsA", "utensil"),
    ("fork", "IsA", "utensil"),
    ("table", "IsA", "furniture"),
    ("chair", "IsA", "furniture"),
    ("sofa", "IsA", "furniture"),
    ("shelf", "IsA", "furniture"),
    ("bench", "IsA", "furniture"),
    ("laptop", "IsA", "device"),
    ("phone", "IsA", "device"),
    ("clock", "IsA", "device"),
    ("ball", "IsA", "toy"),
    ("tree", "IsA", "plant"),
)
HYPERNYMS = tuple(sorted({hypernym for _, _, hypernym in HYPERNYM_TRIPLETS}))
# How a hypernym reads as a countable noun in a question.
HYPERNYM_NOUNS = {"furniture": "piece of furniture", "device": "electronic device"}

# How "<object> <relation> <tail>" reads in a question, after "object that" or "What object".
KNOWLEDGE_PHRASES = {
    "UsedFor": "can be used for {tail}",
    "CapableOf": "can {tail}",
    "AtLocation": "is usually found in {tail_with_article}",
    "HasProperty": "is typically {tail}",
    "HasA": "has {tail}",
    "HasPrerequisite": "needs {tail}",
    "ReceivesAction": "can be {tail}",
    "HasSubevent": "involves {tail}",
    "MadeFrom": "is typically made from {tail}",
}

# Every (relation, tail) pair a Find KG step may ask about, in a stable order.
KNOWLEDGE_PAIRS: tuple[tuple[str, str], ...] = tuple(
    dict.fromkeys((relation, tail) for _, relation, tail in COMMONSENSE_TRIPLETS)
)
CATEGORY_KNOWLEDGE: dict[str, tuple[tuple[str, str], ...]] = {
    name: tuple((relation, tail) for head, relation, tail in COMMONSENSE_TRIPLETS if head == name)
    for name in CATEGORIES
}

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

Step = tuple[str, tuple[str, ...]]
Triplet = tuple[str, str, str]


# --- Files --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CricSampleFiles:
    """Where `generate_samples` wrote the data set: the three official-style JSON files and the
    folder of ``<image_id>.png`` images."""

    questions: pathlib.Path
    scene_graphs: pathlib.Path
    knowledge: pathlib.Path
    images_dir: pathlib.Path


def knowledge_graph() -> list[Triplet]:
    """Every triplet of the world's knowledge graph: commonsense, contents and hypernyms."""
    return [*COMMONSENSE_TRIPLETS, *CONTENT_TRIPLETS, *HYPERNYM_TRIPLETS]


def generate_samples(out_dir: pathlib.Path, *, images: int = 30, seed: int = 0) -> CricSampleFiles:
    """Writes a small CRIC-style data set into out_dir and returns where its files are.

    For every image ``<image_id>.png`` goes into out_dir/images/, its Visual Genome-style scene
    graph into cric_scene_graphs.json and its questions (usually six or seven, covering all five
    CRIC types) into cric_questions.json; cric_knowledge.json holds the knowledge graph the
    questions use.  Image ids run from 1 to `images`.  Images left over from an earlier, larger
    run in the same folder are not removed.

    Each image gets its own random stream drawn from `seed`, so the same seed always gives
    byte-identical files and no global random state is touched.
    """
    if images < 0:
        raise ValueError(f"images must not be negative, got {images}")
    out_dir = pathlib.Path(out_dir)
    images_dir = out_dir / IMAGES_FOLDER_NAME
    images_dir.mkdir(parents=True, exist_ok=True)
    knowledge = [{"triplet": list(triplet)} for triplet in knowledge_graph()]

    seeds = random.Random(seed)
    scene_graphs = []
    questions = []
    for image_id in range(1, images + 1):
        rng = random.Random(seeds.getrandbits(64))
        scene = compose_scene(rng, image_id)
        render_scene(scene).save(images_dir / f"{image_id}.png", format="PNG")
        scene_graph = scene_graph_record(scene)
        scene_graphs.append(scene_graph)
        questions.extend(ask_questions(rng, scene_graph, knowledge))

    files = CricSampleFiles(
        questions=out_dir / QUESTIONS_FILE_NAME,
        scene_graphs=out_dir / SCENE_GRAPHS_FILE_NAME,
        knowledge=out_dir / KNOWLEDGE_FILE_NAME,
        images_dir=images_dir,
    )
    for path, document in (
        (files.questions, questions),
        (files.scene_graphs, scene_graphs),
        (files.knowledge, knowledge),
    ):
        path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return files


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


# --- Drawing ------------------------------------------------------------------------------------


def render_backdrop(kind: str, width: int = IMAGE_WIDTH, height: int = IMAGE_HEIGHT) -> Image.Image:
    """The empty room (wall and floor) or street (sky, grass and road) behind every object.

    It has no randomness, so tests can render it again and compare it with a finished image.
    """
    image = Image.new("RGB", (width, height), WALL_COLOR if kind == INDOOR else SKY_COLOR)
    draw = ImageDraw.Draw(image)
    horizon = HORIZONS[kind]
    if kind == INDOOR:
        draw.rectangle((0, horizon, width - 1, height - 1), fill=FLOOR_COLOR)
        draw.rectangle((0, horizon - 6, width - 1, horizon - 1), fill=SKIRTING_COLOR)
    else:
        draw.rectangle((0, horizon, width - 1, height - 1), fill=GRASS_COLOR)
        draw.rectangle((0, ROAD_TOP, width - 1, height - 1), fill=ROAD_COLOR)
        marking_y = (ROAD_TOP + height) // 2
        for left in range(10, width, 60):
            draw.rectangle((left, marking_y - 2, left + 30, marking_y + 2), fill=ROAD_MARKING_COLOR)
    return image


def render_scene(scene: Scene) -> Image.Image:
    """The backdrop, then every object as a coloured outlined shape, then the name labels.

    Objects standing on the floor are drawn back to front (by the height of their base), and
    objects resting on others after all of them; labels come last so none is hidden.
    """
    image = render_backdrop(scene.kind)
    draw = ImageDraw.Draw(image)
    order = sorted(
        scene.objects, key=lambda placed: (placed.support is not None, placed.box.bottom, placed.object_id)
    )
    for placed in order:
        painter = SHAPE_PAINTERS[placed.category.shape]
        painter(draw, placed.box, COLORS[placed.color], placed.state)
    labels: list[Box] = []
    for placed in order:
        labels.append(_draw_label(draw, placed, labels, scene.objects))
    return image


@functools.lru_cache(maxsize=4)
def _label_font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.truetype(str(LABEL_FONT_PATH), size)
    except OSError:
        return ImageFont.load_default()


def _draw_label(
    draw: ImageDraw.ImageDraw, placed: PlacedObject, taken: Sequence[Box], objects: Sequence[PlacedObject]
) -> Box:
    """Writes the object's name on white next to its box and returns where the label went.

    Labels go below the box, or above it for objects resting on something (below them is the
    surface, crowded with its own things).  Of those spots, the other side and small sideways
    shifts, the first that clears every earlier label and every other object wins (a label on
    its own support is fine), else the first that clears the labels, so that names never cover
    each other and rarely sit on a neighbour, where they would name the wrong thing.
    """
    font = _label_font(LABEL_FONT_SIZE)
    text = placed.category.name
    box = placed.box
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    width, height = right - left + 4, bottom - top + 2
    below = box.bottom + 2
    above = box.y - height - 2
    rows = [above, below] if placed.support is not None else [below, above]
    spots = []
    for shift in (0, width // 2 + 2, -(width // 2 + 2)):
        for row in rows:
            x = min(max(round(box.center_x - width / 2) + shift, 1), IMAGE_WIDTH - width - 1)
            y = min(max(row, 1), IMAGE_HEIGHT - height - 1)
            spots.append(Box(x, y, width, height))
    clear_of_labels = [spot for spot in spots if all(spot.overlap_area(label) == 0 for label in taken)]
    neighbours = [other.box for other in objects if other is not placed and other.object_id != placed.support]
    clear = [spot for spot in clear_of_labels if all(spot.overlap_area(other) == 0 for other in neighbours)]
    spot = (clear or clear_of_labels or spots)[0]
    draw.rectangle((spot.x, spot.y, spot.right - 1, spot.bottom - 1), fill=LABEL_BACKGROUND)
    draw.text((spot.x + 2 - left, spot.y + 1 - top), text, fill=LABEL_TEXT_COLOR, font=font)
    return spot


Color = tuple[int, int, int]
Painter = Callable[[ImageDraw.ImageDraw, Box, Color, str | None], None]


def _detail_color(fill: Color) -> Color:
    """Colour for lines drawn on a shape: dark on light fills, light on dark ones."""
    red, green, blue = fill
    return (200, 200, 200) if 0.3 * red + 0.59 * green + 0.11 * blue < 70 else OUTLINE_COLOR


def _outline_width(box: Box) -> int:
    return 1 if min(box.w, box.h) < THIN_BOX else OUTLINE_WIDTH


def _at(box: Box, fraction_x: float, fraction_y: float) -> tuple[int, int]:
    """The point at the given fractions of the box's width and height."""
    return round(box.x + fraction_x * (box.w - 1)), round(box.y + fraction_y * (box.h - 1))


def _corners(box: Box, left: float, top: float, right: float, bottom: float) -> tuple[int, int, int, int]:
    """Corner coordinates of the part of the box between the given fractions."""
    x0, y0 = _at(box, left, top)
    x1, y1 = _at(box, right, bottom)
    return x0, y0, max(x0, x1), max(y0, y1)


def _rectangle(
    draw: ImageDraw.ImageDraw, box: Box, part: tuple[float, float, float, float], fill: Color
) -> None:
    draw.rectangle(_corners(box, *part), fill=fill, outline=OUTLINE_COLOR, width=_outline_width(box))


def _rounded(
    draw: ImageDraw.ImageDraw,
    box: Box,
    part: tuple[float, float, float, float],
    fill: Color,
    rounding: float = 0.25,
) -> None:
    corners = _corners(box, *part)
    radius = max(1, round(rounding * min(corners[2] - corners[0], corners[3] - corners[1])))
    draw.rounded_rectangle(
        corners, radius=radius, fill=fill, outline=OUTLINE_COLOR, width=_outline_width(box)
    )


def _ellipse(
    draw: ImageDraw.ImageDraw, box: Box, part: tuple[float, float, float, float], fill: Color
) -> None:
    draw.ellipse(_corners(box, *part), fill=fill, outline=OUTLINE_COLOR, width=_outline_width(box))


def _polygon(draw: ImageDraw.ImageDraw, box: Box, points: Iterable[tuple[float, float]], fill: Color) -> None:
    draw.polygon(
        [_at(box, x, y) for x, y in points], fill=fill, outline=OUTLINE_COLOR, width=_outline_width(box)
    )


def _line(
    draw: ImageDraw.ImageDraw, box: Box, points: Iterable[tuple[float, float]], fill: Color, width: int
) -> None:
    draw.line([_at(box, x, y) for x, y in points], fill=fill, width=width)


def _paint_table(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rectangle(draw, box, (0.08, 0.2, 0.17, 1), fill)
    _rectangle(draw, box, (0.83, 0.2, 0.92, 1), fill)
    _rectangle(draw, box, (0, 0, 1, 0.22), fill)


def _paint_chair(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rectangle(draw, box, (0.02, 0, 0.22, 0.6), fill)
    _rectangle(draw, box, (0.04, 0.6, 0.18, 1), fill)
    _rectangle(draw, box, (0.82, 0.6, 0.96, 1), fill)
    _rectangle(draw, box, (0, 0.5, 1, 0.64), fill)


def _paint_sofa(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rectangle(draw, box, (0.06, 0.88, 0.12, 1), OUTLINE_COLOR)
    _rectangle(draw, box, (0.88, 0.88, 0.94, 1), OUTLINE_COLOR)
    _rounded(draw, box, (0.06, 0, 0.94, 0.6), fill, 0.15)
    _rounded(draw, box, (0, 0.46, 1, 0.9), fill, 0.15)
    _rounded(draw, box, (0, 0.3, 0.13, 0.9), fill, 0.3)
    _rounded(draw, box, (0.87, 0.3, 1, 0.9), fill, 0.3)
    _line(draw, box, [(0.5, 0.48), (0.5, 0.88)], _detail_color(fill), 2)


def _paint_shelf(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rectangle(draw, box, (0, 0, 1, 1), fill)
    for level in (0.3, 0.55, 0.8):
        _line(draw, box, [(0.06, level), (0.94, level)], _detail_color(fill), 3)


def _paint_lamp(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rectangle(draw, box, (0.45, 0.34, 0.55, 0.92), OUTLINE_COLOR)
    _ellipse(draw, box, (0.1, 0.88, 0.9, 1), fill)
    _polygon(draw, box, [(0.22, 0), (0.78, 0), (1, 0.36), (0, 0.36)], fill)


def _paint_cup(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    handle = _corners(box, 0.5, 0.22, 1, 0.72)
    draw.ellipse(handle, outline=OUTLINE_COLOR, width=max(4, box.w // 7))
    draw.ellipse(_corners(box, 0.56, 0.3, 0.94, 0.64), outline=fill, width=max(2, box.w // 12))
    _rounded(draw, box, (0, 0.04, 0.74, 1), fill, 0.2)


def _paint_knife(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rounded(draw, box, (0, 0.2, 0.38, 0.8), fill, 0.4)
    _polygon(draw, box, [(0.36, 0), (0.88, 0), (1, 0.45), (0.36, 1)], fill)


def _paint_fork(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rectangle(draw, box, (0, 0.3, 0.6, 0.7), fill)
    for top in (0, 0.38, 0.76):
        _rectangle(draw, box, (0.66, top, 1, top + 0.24), fill)
    _rectangle(draw, box, (0.55, 0, 0.7, 1), fill)


def _paint_plate(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _ellipse(draw, box, (0, 0, 1, 1), fill)
    draw.ellipse(_corners(box, 0.18, 0.22, 0.82, 0.78), outline=_detail_color(fill), width=1)


def _paint_bottle(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rectangle(draw, box, (0.34, 0, 0.66, 0.1), OUTLINE_COLOR)
    _rectangle(draw, box, (0.34, 0.08, 0.66, 0.36), fill)
    _rounded(draw, box, (0, 0.3, 1, 1), fill, 0.3)


def _paint_laptop(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    if state == "closed":
        _rounded(draw, box, (0, 0, 1, 1), fill, 0.3)
        _line(draw, box, [(0.04, 0.5), (0.96, 0.5)], _detail_color(fill), 1)
        return
    _rectangle(draw, box, (0.1, 0, 0.9, 0.78), fill)
    draw.rectangle(_corners(box, 0.2, 0.12, 0.8, 0.64), fill=SCREEN_COLOR)
    _polygon(draw, box, [(0.08, 0.76), (0.92, 0.76), (1, 1), (0, 1)], fill)


def _paint_phone(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rounded(draw, box, (0, 0, 1, 1), fill, 0.25)
    draw.rectangle(_corners(box, 0.25, 0.18, 0.75, 0.72), fill=SCREEN_COLOR)


def _paint_book(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rectangle(draw, box, (0, 0, 1, 1), fill)
    _line(draw, box, [(0.16, 0), (0.16, 1)], _detail_color(fill), 2)
    draw.rectangle(_corners(box, 0.32, 0.2, 0.84, 0.36), fill=LABEL_BACKGROUND)


def _paint_clock(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _ellipse(draw, box, (0, 0, 1, 1), fill)
    _line(draw, box, [(0.5, 0.5), (0.5, 0.18)], _detail_color(fill), 2)
    _line(draw, box, [(0.5, 0.5), (0.74, 0.6)], _detail_color(fill), 2)


def _paint_apple(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _line(draw, box, [(0.5, 0.3), (0.56, 0)], TRUNK_COLOR, 2)
    draw.ellipse(_corners(box, 0.56, 0, 0.9, 0.2), fill=LEAF_COLOR)
    _ellipse(draw, box, (0, 0.16, 1, 1), fill)


def _paint_banana(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    # A thick lower arc of an ellipse centred on the box's top edge reads as a banana.
    outer = (box.x, box.y - box.h, box.right - 1, box.bottom - 1)
    thickness = max(4, round(box.h * 0.55))
    draw.arc(outer, 15, 165, fill=OUTLINE_COLOR, width=thickness)
    inner = (outer[0] + 2, outer[1] + 2, outer[2] - 2, outer[3] - 2)
    draw.arc(inner, 18, 162, fill=fill, width=thickness - 4)


def _paint_animal(
    draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None, *, pointed_ears: bool
) -> None:
    if state == "sitting":
        _rectangle(draw, box, (0.5, 0.6, 0.62, 1), fill)
        _ellipse(draw, box, (0.02, 0.36, 0.72, 1), fill)
        _ellipse(draw, box, (0.38, 0.06, 1, 0.5), fill)
        head = (0.38, 0.06, 1, 0.5)
    else:
        for left in (0.1, 0.24, 0.52, 0.64):
            _rectangle(draw, box, (left, 0.6, left + 0.09, 1), fill)
        _line(draw, box, [(0.06, 0.5), (0, 0.22)], OUTLINE_COLOR, 4)
        _ellipse(draw, box, (0.02, 0.3, 0.8, 0.8), fill)
        _ellipse(draw, box, (0.6, 0.02, 1, 0.52), fill)
        head = (0.6, 0.02, 1, 0.52)
    left, top, right, bottom = head
    width = right - left
    if pointed_ears:
        for start in (0.12, 0.58):
            ear_left = left + start * width
            _polygon(
                draw,
                box,
                [
                    (ear_left, top + 0.1),
                    (ear_left + 0.15 * width, top - 0.06),
                    (ear_left + 0.3 * width, top + 0.1),
                ],
                fill,
            )
    else:
        _ellipse(draw, box, (left - 0.04, top + 0.04, left + 0.22 * width, bottom - 0.1), OUTLINE_COLOR)
    eye = _at(box, left + 0.68 * width, top + 0.4 * (bottom - top))
    draw.ellipse((eye[0] - 2, eye[1] - 2, eye[0] + 2, eye[1] + 2), fill=_detail_color(fill))


def _paint_dog(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _paint_animal(draw, box, fill, state, pointed_ears=False)


def _paint_cat(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _paint_animal(draw, box, fill, state, pointed_ears=True)


def _paint_bird(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _line(draw, box, [(0.4, 0.8), (0.36, 1)], OUTLINE_COLOR, 2)
    _line(draw, box, [(0.55, 0.8), (0.52, 1)], OUTLINE_COLOR, 2)
    _polygon(draw, box, [(0.86, 0.22), (1, 0.34), (0.86, 0.42)], BEAK_COLOR)
    _ellipse(draw, box, (0, 0.28, 0.8, 0.9), fill)
    _ellipse(draw, box, (0.5, 0, 0.9, 0.56), fill)
    eye = _at(box, 0.74, 0.22)
    draw.ellipse((eye[0] - 1, eye[1] - 1, eye[0] + 1, eye[1] + 1), fill=OUTLINE_COLOR)


def _paint_ball(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _ellipse(draw, box, (0, 0, 1, 1), fill)
    draw.arc(_corners(box, -0.5, 0.1, 0.5, 0.9), -60, 60, fill=_detail_color(fill), width=1)
    draw.arc(_corners(box, 0.5, 0.1, 1.5, 0.9), 120, 240, fill=_detail_color(fill), width=1)


def _paint_backpack(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    draw.arc(_corners(box, 0.3, 0, 0.7, 0.3), 180, 360, fill=OUTLINE_COLOR, width=3)
    _rounded(draw, box, (0, 0.12, 1, 1), fill, 0.3)
    _rounded(draw, box, (0.18, 0.56, 0.82, 0.92), fill, 0.25)


def _paint_car(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _polygon(draw, box, [(0.2, 0.42), (0.3, 0.02), (0.7, 0.02), (0.84, 0.42)], fill)
    draw.polygon(
        [_at(box, x, y) for x, y in ((0.31, 0.38), (0.36, 0.1), (0.49, 0.1), (0.49, 0.38))], fill=WINDOW_COLOR
    )
    draw.polygon(
        [_at(box, x, y) for x, y in ((0.53, 0.38), (0.53, 0.1), (0.67, 0.1), (0.76, 0.38))], fill=WINDOW_COLOR
    )
    _rounded(draw, box, (0, 0.38, 1, 0.82), fill, 0.3)
    for center in (0.22, 0.78):
        wheel = _corners(box, center - 0.11, 0.6, center + 0.11, 1)
        draw.ellipse(wheel, fill=OUTLINE_COLOR)
        hub = _corners(box, center - 0.05, 0.72, center + 0.05, 0.88)
        draw.ellipse(hub, fill=COLORS["gray"])


def _paint_bicycle(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    wheel_height = 0.64
    wheel_width = wheel_height * box.h / box.w
    rear = (wheel_width / 2, 1 - wheel_height / 2)
    front = (1 - wheel_width / 2, 1 - wheel_height / 2)
    for hub_x, _ in (rear, front):
        corners = _corners(box, hub_x - wheel_width / 2, 1 - wheel_height, hub_x + wheel_width / 2, 1)
        draw.ellipse(corners, fill=fill, outline=OUTLINE_COLOR, width=5)
    pedal = (0.46, rear[1])
    seat = (0.36, 0.12)
    handle = (0.72, 0.06)
    for start, end in (
        (rear, seat),
        (seat, pedal),
        (rear, pedal),
        (pedal, handle),
        (handle, front),
        (seat, handle),
    ):
        _line(draw, box, [start, end], OUTLINE_COLOR, 7)
        _line(draw, box, [start, end], fill, 4)
    _rectangle(draw, box, (0.28, 0.04, 0.44, 0.14), OUTLINE_COLOR)
    _rectangle(draw, box, (0.66, 0, 0.8, 0.08), OUTLINE_COLOR)


def _paint_bench(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    for left in (0.06, 0.88):
        _rectangle(draw, box, (left, 0.5, left + 0.06, 1), fill)
        _rectangle(draw, box, (left, 0.1, left + 0.06, 0.42), fill)
    _rectangle(draw, box, (0, 0, 1, 0.24), fill)
    _rectangle(draw, box, (0, 0.4, 1, 0.56), fill)


def _paint_tree(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rectangle(draw, box, (0.42, 0.55, 0.58, 1), TRUNK_COLOR)
    _ellipse(draw, box, (0, 0, 1, 0.7), fill)


def _paint_umbrella(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    if state == "closed":
        _line(draw, box, [(0.5, 0), (0.5, 0.92)], OUTLINE_COLOR, 3)
        draw.arc(_corners(box, 0.1, 0.84, 0.5, 1), 0, 180, fill=OUTLINE_COLOR, width=3)
        _polygon(draw, box, [(0.5, 0.04), (0.96, 0.74), (0.04, 0.74)], fill)
        return
    _line(draw, box, [(0.5, 0.4), (0.5, 0.92)], OUTLINE_COLOR, 3)
    draw.arc(_corners(box, 0.36, 0.84, 0.5, 1), 0, 180, fill=OUTLINE_COLOR, width=3)
    canopy = _corners(box, 0, 0, 1, 0.9)
    draw.pieslice(canopy, 180, 360, fill=fill, outline=OUTLINE_COLOR, width=_outline_width(box))


SHAPE_PAINTERS: dict[str, Painter] = {
    "table": _paint_table,
    "chair": _paint_chair,
    "sofa": _paint_sofa,
    "shelf": _paint_shelf,
    "lamp": _paint_lamp,
    "cup": _paint_cup,
    "knife": _paint_knife,
    "fork": _paint_fork,
    "plate": _paint_plate,
    "bottle": _paint_bottle,
    "laptop": _paint_laptop,
    "phone": _paint_phone,
    "book": _paint_book,
    "clock": _paint_clock,
    "apple": _paint_apple,
    "banana": _paint_banana,
    "dog": _paint_dog,
    "cat": _paint_cat,
    "bird": _paint_bird,
    "ball": _paint_ball,
    "backpack": _paint_backpack,
    "car": _paint_car,
    "bicycle": _paint_bicycle,
    "bench": _paint_bench,
    "tree": _paint_tree,
    "umbrella": _paint_umbrella,
}


# --- Programs -----------------------------------------------------------------------------------


def _triplet_of(item: Mapping[str, Any] | Sequence[str]) -> Triplet:
    triplet = item["triplet"] if isinstance(item, Mapping) else item
    head, relation, tail = triplet
    return head, relation, tail


class ProgramExecutor:
    """Runs CRIC programs on one image's scene graph and a knowledge graph.

    A program is a list of steps ``{"function", "text_input"}`` (any ``output`` is ignored).
    Each step works on the object ids the previous step yielded and yields a new list:

    * ``Initial`` starts a branch with every object in the image; a second ``Initial`` starts
      another branch and keeps the first one's result for a later ``And``.
    * ``Find [name]`` keeps the objects with that name.
    * ``Relate [predicate]`` yields the objects the current ones point at with the predicate
      (subject -> object); ``Relate Reverse [predicate]`` yields the objects pointing at them.
    * ``Find KG [relation, tail]`` keeps objects whose name has the triplet (name, relation,
      tail); ``Find KG Reverse [head, relation]`` keeps those with (head, relation, name);
      ``Find Hypernym [hypernym]`` keeps those with (name, IsA, hypernym).
    * ``And`` intersects the current branch with the branch before it.
    * ``Verify [attribute, ...]`` keeps objects having all the attributes (with none it just
      checks that something is left): the answer is "yes" when its output is not empty.
    * ``Recognition [kind]`` keeps the objects; the answer is the one object's name (kind
      "name") or its attribute of that kind ("color", "material", "state").

    Outputs are sorted ascending, so programs can be compared as plain lists.
    """

    def __init__(
        self, scene_graph: Mapping[str, Any], knowledge: Iterable[Mapping[str, Any] | Sequence[str]]
    ):
        objects = scene_graph.get("objects", [])
        self.object_ids = sorted(obj["object_id"] for obj in objects)
        self.names = {obj["object_id"]: tuple(obj.get("names") or ()) for obj in objects}
        self.attributes = {obj["object_id"]: tuple(obj.get("attributes") or ()) for obj in objects}
        self.edges: dict[str, list[tuple[int, int]]] = collections.defaultdict(list)
        for relationship in scene_graph.get("relationships", []):
            self.edges[relationship["predicate"]].append(
                (relationship["subject_id"], relationship["object_id"])
            )
        self.triplets = {_triplet_of(item) for item in knowledge}

    def _has_triplet(self, object_id: int, make: Callable[[str], Triplet]) -> bool:
        return any(make(name) in self.triplets for name in self.names.get(object_id, ()))

    def _apply(self, function: str, arguments: Sequence[str], current: list[int]) -> list[int]:
        chosen = set(current)
        if function == "Find":
            (name,) = arguments
            return [object_id for object_id in current if name in self.names.get(object_id, ())]
        if function == "Relate":
            (predicate,) = arguments
            return sorted({target for source, target in self.edges.get(predicate, ()) if source in chosen})
        if function == "Relate Reverse":
            (predicate,) = arguments
            return sorted({source for source, target in self.edges.get(predicate, ()) if target in chosen})
        if function == "Find KG":
            relation, tail = arguments
            return [
                object_id
                for object_id in current
                if self._has_triplet(object_id, lambda name: (name, relation, tail))
            ]
        if function == "Find KG Reverse":
            head, relation = arguments
            return [
                object_id
                for object_id in current
                if self._has_triplet(object_id, lambda name: (head, relation, name))
            ]
        if function == "Find Hypernym":
            (hypernym,) = arguments
            return [
                object_id
                for object_id in current
                if self._has_triplet(object_id, lambda name: (name, "IsA", hypernym))
            ]
        if function == "Verify":
            return [
                object_id
                for object_id in current
                if set(arguments) <= set(self.attributes.get(object_id, ()))
            ]
        if function == "Recognition":
            return list(current)
        raise ValueError(f"unknown program function {function!r}")

    def run(self, program: Sequence[Mapping[str, Any]]) -> list[list[int]]:
        """The object ids each step yields, step by step."""
        outputs: list[list[int]] = []
        finished_branches: list[list[int]] = []
        current: list[int] = []
        for index, step in enumerate(program):
            function = step["function"]
            arguments = list(step.get("text_input") or ())
            if function == "Initial":
                if index:
                    finished_branches.append(current)
                current = list(self.object_ids)
            elif function == "And":
                if not finished_branches:
                    raise ValueError(f"step {index}: And needs two branches, each started by Initial")
                other = set(finished_branches.pop())
                current = [object_id for object_id in current if object_id in other]
            else:
                current = self._apply(function, arguments, current)
            outputs.append(current)
        return outputs

    def evidence(
        self, program: Sequence[Mapping[str, Any]], outputs: Sequence[Sequence[int]]
    ) -> dict[str, list]:
        """The scene-graph relations and attributes and the knowledge triplets the program
        relies on: its sub_graph.

        Each step's facts are limited to the objects that survive to the end (for a "no", to the
        last step that still had objects) where any do; otherwise every fact the step used is
        kept, which shows what was there instead.
        """
        # The objects the answer rests on: the final output, or for an empty one (a "no") the
        # last objects the program still had, such as the book whose colour was wrong.
        focus = next((set(output) for output in reversed(outputs) if output), set())
        relations: list[list] = []
        attributes: list[list] = []
        triplets: list[Triplet] = []
        for index, step in enumerate(program):
            function = step["function"]
            arguments = list(step.get("text_input") or ())
            output = set(outputs[index])
            inputs = set(outputs[index - 1]) if index else set()
            kept = sorted((output & focus) or output)
            if function in ("Relate", "Relate Reverse"):
                (predicate,) = arguments
                for source, target in self.edges.get(predicate, ()):
                    yielded, given = (target, source) if function == "Relate" else (source, target)
                    if yielded in kept and given in inputs:
                        relations.append([source, predicate, target])
            elif function in ("Find KG", "Find KG Reverse", "Find Hypernym"):
                for object_id in kept:
                    for name in self.names.get(object_id, ()):
                        if function == "Find KG":
                            triplet = (name, arguments[0], arguments[1])
                        elif function == "Find KG Reverse":
                            triplet = (arguments[0], arguments[1], name)
                        else:
                            triplet = (name, "IsA", arguments[0])
                        if triplet in self.triplets:
                            triplets.append(triplet)
            elif function == "Recognition" and arguments and arguments[0] != "name":
                for object_id in kept:
                    attributes += [
                        [object_id, value]
                        for value in self.attributes.get(object_id, ())
                        if ATTRIBUTE_KINDS.get(value) == arguments[0]
                    ]
            elif function == "Verify":
                kinds = {ATTRIBUTE_KINDS.get(value) for value in arguments}
                for object_id in sorted(inputs):
                    attributes += [
                        [object_id, value]
                        for value in self.attributes.get(object_id, ())
                        if ATTRIBUTE_KINDS.get(value) in kinds
                    ]
        return {
            "relations": _unique(relations),
            "attributes": _unique(attributes),
            "knowledge_items": [{"triplet": list(triplet)} for triplet in dict.fromkeys(triplets)],
        }


def _unique(rows: list[list]) -> list[list]:
    return [list(row) for row in dict.fromkeys(tuple(row) for row in rows)]


def execute_program(
    program: Sequence[Mapping[str, Any]],
    scene_graph: Mapping[str, Any],
    knowledge: Iterable[Mapping[str, Any] | Sequence[str]],
) -> list[list[int]]:
    """The object ids each step of `program` yields on this image (see `ProgramExecutor`).

    `knowledge` is the knowledge file's list of ``{"triplet": [head, relation, tail]}`` (bare
    triplets work too).  The generator fills every step's ``output`` with this, and the tests
    run it again, so recorded programs always agree with the scene graphs.
    """
    return ProgramExecutor(scene_graph, knowledge).run(program)


def derive_answer(
    program: Sequence[Mapping[str, Any]], outputs: Sequence[Sequence[int]], scene_graph: Mapping[str, Any]
) -> str:
    """The answer a program's final step gives: "yes"/"no" for Verify, else the recognised
    name or attribute of the single object left.  Raises ValueError when that is ambiguous."""
    last = program[-1]
    final = outputs[-1]
    if last["function"] == "Verify":
        return "yes" if final else "no"
    if last["function"] != "Recognition":
        raise ValueError(f"a program must end with Verify or Recognition, not {last['function']!r}")
    if len(final) != 1:
        raise ValueError(f"Recognition needs exactly one object, got {len(final)}")
    (kind,) = last["text_input"]
    obj = next(obj for obj in scene_graph["objects"] if obj["object_id"] == final[0])
    if kind == "name":
        return obj["names"][0]
    values = [value for value in obj.get("attributes") or () if ATTRIBUTE_KINDS.get(value) == kind]
    if len(values) != 1:
        raise ValueError(f"object {final[0]} has {len(values)} attributes of kind {kind!r}")
    return values[0]


# --- Questions ----------------------------------------------------------------------------------


def with_article(phrase: str) -> str:
    return f"{'an' if phrase[0] in 'aeiou' else 'a'} {phrase}"


def knowledge_phrase(relation: str, tail: str) -> str:
    """How "has the triplet (x, relation, tail)" reads in a question: "can be used for drinking"."""
    return KNOWLEDGE_PHRASES[relation].format(tail=tail, tail_with_article=with_article(tail))


def _hypernym_noun(hypernym: str) -> str:
    return HYPERNYM_NOUNS.get(hypernym, hypernym)


def _program(steps: Sequence[Step]) -> list[dict[str, Any]]:
    return [{"function": function, "text_input": list(arguments)} for function, arguments in steps]


INITIAL: Step = ("Initial", ())


@dataclasses.dataclass(frozen=True)
class Draft:
    """A question before its program is run: the runs fill in outputs, answer and evidence."""

    question_type: str
    text: str
    steps: tuple[Step, ...]
    wrong_part: str = ""


@dataclasses.dataclass(frozen=True)
class Scope:
    """Where a knowledge question looks: the whole image, the objects in a relation to a named
    object ("on the table"), or the members of a hypernym ("animal")."""

    group: str
    noun: str
    place: str
    steps: tuple[Step, ...]
    anchor: str = ""
    predicate: str = ""
    hypernym: str = ""


@dataclasses.dataclass(frozen=True)
class Reference:
    """A phrase that picks out exactly one object ("the cup next to the laptop") and the steps
    that find it."""

    group: str
    phrase: str
    steps: tuple[Step, ...]
    object_id: int


class QuestionContext:
    """Everything question builders need about one image, with the candidate scopes and
    referring expressions worked out once."""

    def __init__(
        self, scene_graph: Mapping[str, Any], knowledge: Iterable[Mapping[str, Any] | Sequence[str]]
    ):
        self.scene_graph = scene_graph
        self.executor = ProgramExecutor(scene_graph, knowledge)
        self.objects = {obj["object_id"]: obj for obj in scene_graph["objects"]}
        counts = collections.Counter(obj["names"][0] for obj in scene_graph["objects"])
        self.names = sorted(counts)
        self.unique_names = [name for name in self.names if counts[name] == 1]
        self.scopes = self._find_scopes()
        self.references = self._find_references()

    def members(self, steps: Sequence[Step]) -> list[int]:
        return self.executor.run(_program(steps))[-1]

    def name_of(self, object_id: int) -> str:
        return self.objects[object_id]["names"][0]

    def pairs_held(self, object_ids: Iterable[int]) -> dict[tuple[str, str], list[int]]:
        """For every (relation, tail) that some of the objects have, which of them have it."""
        holders: dict[tuple[str, str], list[int]] = {}
        for object_id in object_ids:
            for pair in CATEGORY_KNOWLEDGE.get(self.name_of(object_id), ()):
                holders.setdefault(pair, []).append(object_id)
        return holders

    def relation_steps(self, anchor: str, predicate: str) -> tuple[Step, ...]:
        return (INITIAL, ("Find", (anchor,)), ("Relate Reverse", (predicate,)))

    def _find_scopes(self) -> list[Scope]:
        scopes = [Scope("image", "object", "in the image", (INITIAL,))]
        for anchor in self.unique_names:
            for predicate in PREDICATES:
                steps = self.relation_steps(anchor, predicate)
                if self.members(steps):
                    place = f"{PREDICATE_PHRASES[predicate]} the {anchor}"
                    scopes.append(
                        Scope("relation", "object", place, steps, anchor=anchor, predicate=predicate)
                    )
        for hypernym in HYPERNYMS:
            steps = (INITIAL, ("Find Hypernym", (hypernym,)))
            scopes.append(
                Scope("hypernym", _hypernym_noun(hypernym), "in the image", steps, hypernym=hypernym)
            )
        return scopes

    def _find_references(self) -> list[Reference]:
        references = []
        for name in self.unique_names:
            steps = (INITIAL, ("Find", (name,)))
            references.append(Reference("name", f"the {name}", steps, self.members(steps)[0]))
        for scope in self.scopes:
            if scope.group != "relation":
                continue
            # Support and adjacency make more natural descriptions than left/right/near.
            group = "relation" if scope.predicate in ("on", "under", "next to") else "side"
            for name in self.names:
                steps = (*scope.steps, ("Find", (name,)))
                found = self.members(steps)
                if len(found) == 1:
                    references.append(Reference(group, f"the {name} {scope.place}", steps, found[0]))
        for pair, holders in self.pairs_held(self.objects).items():
            if len(holders) == 1:
                steps = (INITIAL, ("Find KG", pair))
                references.append(
                    Reference("knowledge", f"the object that {knowledge_phrase(*pair)}", steps, holders[0])
                )
        return references


def _pick_group(rng: random.Random, candidates: Sequence[Any], weights: Mapping[str, float]) -> Any | None:
    """A random candidate, first choosing among the groups present by weight, then uniformly,
    so that rare but interesting forms are not swamped by common ones."""
    groups: dict[str, list] = {}
    for candidate in candidates:
        groups.setdefault(candidate.group, []).append(candidate)
    if not groups:
        return None
    names = sorted(groups)
    group = rng.choices(names, weights=[weights.get(name, 1.0) for name in names])[0]
    return rng.choice(groups[group])


@dataclasses.dataclass(frozen=True)
class _Candidate:
    group: str
    draft: Draft
    predicate: str = ""


def build_query_object_knowledge(context: QuestionContext, rng: random.Random) -> Draft | None:
    """ "What object in the image can be used for cutting food?": one object, found through
    knowledge, in the image, in a relation to an object, or among a hypernym's members."""
    candidates = []
    for scope in context.scopes:
        members = context.members(scope.steps)
        for pair, holders in context.pairs_held(members).items():
            if len(holders) != 1:
                continue
            text = f"What {scope.noun} {scope.place} {knowledge_phrase(*pair)}?"
            steps = (*scope.steps, ("Find KG", pair), ("Recognition", ("name",)))
            candidates.append(_Candidate(scope.group, Draft("QueryObjKG", text, steps)))
    for head, relation, _tail in CONTENT_TRIPLETS:
        steps = (INITIAL, ("Find KG Reverse", (head, relation)), ("Recognition", ("name",)))
        if len(context.members(steps)) == 1:
            text = f"What object in the image would you usually find {head} in?"
            candidates.append(_Candidate("contents", Draft("QueryObjKG", text, steps)))
    chosen = _pick_group(rng, candidates, {"image": 3, "relation": 2, "hypernym": 1.5, "contents": 1})
    return chosen.draft if chosen else None


def build_query_object_scene_graph(context: QuestionContext, rng: random.Random) -> Draft | None:
    """ "What is on the table?" or "What is the dog next to?": one object, found by following a
    scene-graph relation from a uniquely named object (optionally narrowed by a hypernym)."""
    candidates = []
    recognise: Step = ("Recognition", ("name",))
    for anchor in context.unique_names:
        for predicate in PREDICATES:
            phrase = PREDICATE_PHRASES[predicate]
            steps = context.relation_steps(anchor, predicate)
            members = context.members(steps)
            if len(members) == 1:
                draft = Draft("QueryObjSG", f"What is {phrase} the {anchor}?", (*steps, recognise))
                candidates.append(_Candidate("reverse", draft, predicate))
            elif len(members) > 1:
                for hypernym in HYPERNYMS:
                    narrowed = (*steps, ("Find Hypernym", (hypernym,)))
                    if len(context.members(narrowed)) == 1:
                        text = f"What {_hypernym_noun(hypernym)} is {phrase} the {anchor}?"
                        candidates.append(
                            _Candidate(
                                "hypernym", Draft("QueryObjSG", text, (*narrowed, recognise)), predicate
                            )
                        )
            forward = (INITIAL, ("Find", (anchor,)), ("Relate", (predicate,)))
            if len(context.members(forward)) == 1:
                draft = Draft("QueryObjSG", f"What is the {anchor} {phrase}?", (*forward, recognise))
                candidates.append(_Candidate("forward", draft, predicate))
    # Prefer the support relations, which carry more meaning than left/right.
    supported = [candidate for candidate in candidates if candidate.predicate in ("on", "under")]
    if supported and rng.random() < 0.5:
        candidates = supported
    chosen = _pick_group(rng, candidates, {"reverse": 3, "forward": 2, "hypernym": 2})
    return chosen.draft if chosen else None


def _attribute_kinds(obj: Mapping[str, Any]) -> dict[str, str]:
    return {ATTRIBUTE_KINDS[value]: value for value in obj["attributes"]}


REFERENCE_WEIGHTS = {"name": 2, "relation": 2.5, "side": 1.5, "knowledge": 1}


def build_query_attribute(context: QuestionContext, rng: random.Random) -> Draft | None:
    """ "What color is the cup next to the laptop?": an attribute of one clearly described object."""
    reference = _pick_group(rng, context.references, REFERENCE_WEIGHTS)
    if reference is None:
        return None
    kinds = _attribute_kinds(context.objects[reference.object_id])
    kind = MATERIAL if MATERIAL in kinds and rng.random() < 0.35 else COLOR
    steps = (*reference.steps, ("Recognition", (kind,)))
    return Draft("QueryAtt", f"What {kind} is {reference.phrase}?", steps)


def build_verify_attribute(context: QuestionContext, rng: random.Random) -> Draft | None:
    """ "Is the car red?": checks an attribute of one clearly described object; for "no" the
    asked value is another one the category could have had."""
    reference = _pick_group(rng, context.references, REFERENCE_WEIGHTS)
    if reference is None:
        return None
    obj = context.objects[reference.object_id]
    category = CATEGORIES[obj["names"][0]]
    options = {COLOR: category.colors, MATERIAL: category.materials, STATE: category.states}
    kinds = _attribute_kinds(obj)
    kind = rng.choice(sorted(kinds))
    actual = kinds[kind]
    alternatives = [value for value in options[kind] if value != actual]
    if rng.random() < 0.5 or not alternatives:
        asked, wrong_part = actual, ""
    else:
        asked = rng.choice(alternatives)
        wrong_part = f"attribute: {asked}"
    steps = (*reference.steps, ("Verify", (asked,)))
    if kind == MATERIAL:
        text = f"Is {reference.phrase} made of {MATERIAL_NOUNS.get(asked, asked)}?"
    else:
        text = f"Is {reference.phrase} {asked}?"
    return Draft("VerifyAtt", text, steps, wrong_part)


def build_verify_knowledge(context: QuestionContext, rng: random.Random) -> Draft | None:
    """ "Is there an object on the table that can be used for drinking?": yes when some object
    in the scope has the knowledge.  Relation scopes join two branches with And.

    A "no" names the failing part: the relation when something elsewhere in the image has the
    knowledge, the hypernym when the image has no such member, otherwise the knowledge.
    """
    scope = _pick_group(rng, context.scopes, {"image": 1, "relation": 2, "hypernym": 1})
    if scope is None:
        return None
    holders = context.pairs_held(context.members(scope.steps))
    anywhere = context.pairs_held(context.objects)
    want_yes = rng.random() < 0.5
    if want_yes and holders:
        pair = rng.choice(sorted(holders))
    else:
        # Prefer plausible "no"s: knowledge something elsewhere in the image has, or that
        # another member of the hypernym would have ("Is there an animal ... that can fly?").
        missing = [pair for pair in KNOWLEDGE_PAIRS if pair not in holders]
        relatives = {head for head, _, hypernym in HYPERNYM_TRIPLETS if hypernym == scope.hypernym}
        near_misses = [
            pair
            for pair in missing
            if pair in anywhere or any(pair in CATEGORY_KNOWLEDGE[name] for name in relatives)
        ]
        pair = rng.choice(near_misses if near_misses and rng.random() < 0.7 else missing)
    relation, tail = pair
    if scope.group == "relation":
        steps = (*scope.steps, INITIAL, ("Find KG", pair), ("And", ()), ("Verify", ()))
    else:
        steps = (*scope.steps, ("Find KG", pair), ("Verify", ()))
    wrong_part = ""
    if pair not in holders:
        wrong_part = f"knowledge: {relation} {tail}"
        if scope.group == "relation" and pair in anywhere:
            wrong_part = f"relation: {scope.predicate} {scope.anchor}"
        elif scope.group == "hypernym" and not context.members(scope.steps):
            wrong_part = f"hypernym: {scope.hypernym}"
    text = f"Is there {with_article(scope.noun)} {scope.place} that {knowledge_phrase(relation, tail)}?"
    return Draft("VerifyKG", text, steps, wrong_part)


QUESTION_BUILDERS: dict[str, Callable[[QuestionContext, random.Random], Draft | None]] = {
    "QueryObjKG": build_query_object_knowledge,
    "QueryObjSG": build_query_object_scene_graph,
    "QueryAtt": build_query_attribute,
    "VerifyKG": build_verify_knowledge,
    "VerifyAtt": build_verify_attribute,
}


def ask_questions(
    rng: random.Random, scene_graph: Mapping[str, Any], knowledge: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Up to seven questions about one image: one of every type, plus one or two more of
    random types, never the same wording twice.

    Every program is run here to fill in its outputs; the answer is what the final step gives,
    the target is the final step's objects (empty for a "no"), and the sub-graph is the
    evidence the steps used.
    """
    context = QuestionContext(scene_graph, knowledge)
    plan = list(QUESTION_TYPES)
    rng.shuffle(plan)
    plan += [rng.choice(QUESTION_TYPES) for _ in range(rng.randint(1, 2))]
    records: list[dict[str, Any]] = []
    asked: set[str] = set()
    for question_type in plan:
        for _ in range(5):
            draft = QUESTION_BUILDERS[question_type](context, rng)
            if draft is None:
                break
            if draft.text in asked:
                continue
            asked.add(draft.text)
            records.append(_question_record(context, draft, len(records)))
            break
    return records


def _question_record(context: QuestionContext, draft: Draft, number: int) -> dict[str, Any]:
    program = _program(draft.steps)
    outputs = context.executor.run(program)
    for step, output in zip(program, outputs, strict=True):
        step["output"] = output
    image_id = context.scene_graph["image_id"]
    return {
        "image_id": image_id,
        "question_id": f"{image_id}_{number}",
        "question": draft.text,
        "answer": derive_answer(program, outputs, context.scene_graph),
        "question_type": draft.question_type,
        "target": list(outputs[-1]),
        "program": program,
        "sub_graph": context.executor.evidence(program, outputs),
        "wrong_part": draft.wrong_part,
    }
