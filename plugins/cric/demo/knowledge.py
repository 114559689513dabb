"""What the CRIC demo world is made of: the indoor and outdoor scene kinds, the attributes
(colours with their RGB values, materials, states) and their kinds, the object categories with
their sizes, colours, materials, states and what may rest on them, and the commonsense
knowledge graph about the categories (hypernyms included), with the phrases questions word it in."""

from __future__ import annotations

import dataclasses

INDOOR = "indoor"
OUTDOOR = "outdoor"
SCENE_KINDS = (INDOOR, OUTDOOR)

# --- Attributes ---------------------------------------------------------------------------------

# Every colour differs clearly from every backdrop colour (painting.BACKDROP_COLORS), so an object
# always stands out from the wall, floor, sky, grass or road behind it.
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

Triplet = tuple[str, str, str]


def knowledge_graph() -> list[Triplet]:
    """Every triplet of the world's knowledge graph: commonsense, contents and hypernyms."""
    return [*COMMONSENSE_TRIPLETS, *CONTENT_TRIPLETS, *HYPERNYM_TRIPLETS]
