"""CLEVR-Ref+ referring expressions: functional programs, their executor, and the data generator.

An expression is a program of steps ``{"type", "inputs", "value_inputs", "_output"}``; the
objects it refers to are the last step's output. ``execute`` runs a program on a scene record
and is the only place step semantics live: the generator uses it to fill ``_output``, and the
tests check its answers against an evaluator of their own.

Step types (object sets are sorted lists of 0-based indices):

- ``scene``: every object. ``filter_size/color/material/shape [value]``: the objects with it.
- ``unique``: the one object of a one-object set (anything else is an error), as an index.
- ``relate [left|right|front|behind]`` on an object: the scene's CLEVR relationships.
- ``same_size/color/material/shape`` on an object: the other objects sharing that attribute.
- ``intersect`` (AND) and ``union`` (OR) of two sets.
- ``filter_ordinal [k, left|right|front]``: order the set by pixel x (left: ascending, right:
  descending) or by depth (front: nearest first) and keep the k-th (k written "1", "2", ...).
- ``filter_visibleout [fully visible|partially visible]``: keep the objects of that occlusion
  class (see ``scenes.occlusion_fractions``: nothing of the box covered by nearer objects, or
  more than 20% of it covered).

Families follow CLEVR-Ref+'s template files (``refexp_family_index``: ``template_filename``):
0 zero_hop, 1 one_hop, 2 two_hop, 3 three_hop (relate chains), 4 single_and (two relations
intersected), 5 single_or (a union), 6 same_relate (same attribute as an object). Any noun
phrase may carry the ordinal or visibility module, as in CLEVR-Ref+. The generator keeps only
expressions whose answer is non-empty, whose ``unique`` inputs hold exactly one object, and
whose relate steps all matter (CLEVR's degeneracy test); about a third refer to one object.

False premises (off by default: ``false_premise_share`` 0): asked for a share of them, the
generator also writes expressions that refer to no object, as the paper's false-premise test
does. Two kinds, each written with the template file of its structure: a zero-hop phrase whose
attributes are each some object's but never together ("the large red cube" beside a large
sphere, a red sphere and a small cube; dropping any one attribute finds something), and a
one-hop phrase that matches objects of the scene, just none on the named side of the anchor
("the red cube left of the small sphere", with a red cube only on its right). Their last step's
``_output`` is empty; every word of them still matters.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plugins.clevr.render import save_png
from plugins.clevrref import formats, scenes

ATTRIBUTES = ("size", "color", "material", "shape")
RELATIONS = ("left", "right", "front", "behind")
ORDINAL_DIRECTIONS = ("left", "right", "front")
ORDINAL_WORDS = (
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
)
VISIBILITY_VALUES = (scenes.FULLY_VISIBLE, scenes.PARTIALLY_VISIBLE)

#: Share of expressions asked to refer to exactly one object (CLEVR-Ref+: about one third).
SINGLE_SHARE = 1 / 3
#: How often a noun phrase carries the ordinal or the visibility module.
ORDINAL_SHARE = 0.15
VISIBILITY_SHARE = 0.25
#: An ordinal pick must stand this far from its neighbours in the order, so people agree on it.
ORDINAL_PIXEL_GAP = 15
ORDINAL_DEPTH_GAP = 0.3
#: Tries per family for one expression before the next family is tried, and families tried
#: per expression before an image settles for fewer.
ATTEMPTS_PER_FAMILY = 12
FAMILY_ROUNDS = 2
#: Tries at a one-object phrase naming some other object than the one to avoid.
ANCHOR_ATTEMPTS = 8

ONE, SEVERAL, ANY = "one", "several", "any"
#: What a false-premise expression refers to: no object.
NOTHING = "nothing"

#: Words for attribute values; the first is the plain one, the others CLEVR's synonyms.
VALUE_WORDS: dict[str, tuple[str, ...]] = {
    "large": ("large", "big"),
    "small": ("small", "tiny"),
    "metal": ("metal", "metallic", "shiny"),
    "rubber": ("rubber", "matte"),
}
NOUNS: dict[str, tuple[tuple[str, str], ...]] = {
    "cube": (("cube", "cubes"), ("block", "blocks")),
    "sphere": (("sphere", "spheres"), ("ball", "balls")),
    "cylinder": (("cylinder", "cylinders"),),
    "": (("thing", "things"), ("object", "objects")),
}
RELATION_WORDS: dict[str, tuple[str, ...]] = {
    "left": ("left of", "to the left of"),
    "right": ("right of", "to the right of"),
    "front": ("in front of",),
    "behind": ("behind",),
}


class ProgramError(ValueError):
    """A program that cannot run on the scene (unique of a set that is not one object, ...)."""


# --- executor -----------------------------------------------------------------------------------


@dataclass
class SceneFacts:
    """What programs read from a scene record, gathered once (visibility decoded only if needed)."""

    scene: dict[str, Any]
    visibility_given: list[str | None] | None = None
    _visibility: list[str | None] | None = field(default=None, init=False, repr=False)

    @property
    def objects(self) -> list[dict[str, Any]]:
        return self.scene["objects"]

    @property
    def count(self) -> int:
        return len(self.scene["objects"])

    @property
    def visibility(self) -> list[str | None]:
        if self._visibility is None:
            given = self.visibility_given
            self._visibility = list(given) if given is not None else scenes.scene_visibility(self.scene)
        return self._visibility


def ordered_for_ordinal(objects: Sequence[int], direction: str, facts: SceneFacts) -> list[int]:
    """The set in the order an ordinal counts it: by pixel x (left/right) or by depth (front)."""
    if direction == "left":
        return sorted(objects, key=lambda index: (facts.objects[index]["pixel_coords"][0], index))
    if direction == "right":
        return sorted(objects, key=lambda index: (-facts.objects[index]["pixel_coords"][0], index))
    if direction == "front":
        return sorted(objects, key=lambda index: (facts.objects[index]["pixel_coords"][2], index))
    raise ProgramError(f"unknown ordinal direction {direction!r}")


def run_step(step_type: str, inputs: list[Any], values: Sequence[str], facts: SceneFacts) -> Any:
    """One step's output from its inputs' outputs."""
    if step_type == "scene":
        return list(range(facts.count))
    if step_type.startswith("filter_") and step_type[len("filter_") :] in ATTRIBUTES:
        attribute = step_type[len("filter_") :]
        return [index for index in inputs[0] if facts.objects[index][attribute] == values[0]]
    if step_type == "unique":
        if len(inputs[0]) != 1:
            raise ProgramError(f"unique needs exactly one object, got {len(inputs[0])}")
        return inputs[0][0]
    if step_type == "relate":
        return sorted(facts.scene["relationships"][values[0]][inputs[0]])
    if step_type.startswith("same_") and step_type[len("same_") :] in ATTRIBUTES:
        attribute = step_type[len("same_") :]
        own = facts.objects[inputs[0]][attribute]
        return [
            index
            for index in range(facts.count)
            if index != inputs[0] and facts.objects[index][attribute] == own
        ]
    if step_type == "intersect":
        return sorted(set(inputs[0]) & set(inputs[1]))
    if step_type == "union":
        return sorted(set(inputs[0]) | set(inputs[1]))
    if step_type == "filter_ordinal":
        position = int(values[0])
        ordered = ordered_for_ordinal(inputs[0], values[1], facts)
        if not 1 <= position <= len(ordered):
            raise ProgramError(f"no {position}th object in a set of {len(ordered)}")
        return [ordered[position - 1]]
    if step_type == "filter_visibleout":
        return [index for index in inputs[0] if facts.visibility[index] == values[0]]
    raise ProgramError(f"unknown step type {step_type!r}")


def execute(
    program: Sequence[dict[str, Any]],
    scene: dict[str, Any] | SceneFacts,
    *,
    visibility: Sequence[str | None] | None = None,
) -> list[Any]:
    """Every step's output, in order. `visibility` (per object) spares decoding the masks."""
    facts = scene if isinstance(scene, SceneFacts) else SceneFacts(scene, visibility_given=visibility)
    outputs: list[Any] = []
    for step in program:
        inputs = [outputs[index] for index in step["inputs"]]
        outputs.append(run_step(step["type"], inputs, step.get("value_inputs", []), facts))
    return outputs


def is_degenerate(program: Sequence[dict[str, Any]], facts: SceneFacts) -> bool:
    """CLEVR's test: some relate step can be replaced by the whole scene without changing the answer."""
    answer = execute(program, facts)[-1]
    for position, step in enumerate(program):
        if step["type"] != "relate":
            continue
        replaced = list(program)
        replaced[position] = {"type": "scene", "inputs": [], "value_inputs": []}
        try:
            if execute(replaced, facts)[-1] == answer:
                return True
        except ProgramError:
            continue
    return False


# --- noun phrases ---------------------------------------------------------------------------------


#: Attribute filters as (name, value) pairs in ATTRIBUTES order: (("size", "large"), ("shape", "cube")).
AttributeFilter = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Description:
    """A noun phrase's meaning: attribute filters, then an optional visibility and ordinal module."""

    attributes: AttributeFilter
    result: tuple[int, ...]
    visibility: str | None = None
    ordinal: tuple[int, str] | None = None


def filter_by(objects: Sequence[int], attributes: Sequence[tuple[str, str]], facts: SceneFacts) -> list[int]:
    """The objects having every (name, value) of `attributes`."""
    return [
        index for index in objects if all(facts.objects[index][name] == value for name, value in attributes)
    ]


def meets(result: Sequence[int], need: str) -> bool:
    """Whether a result has the number of objects asked for: ONE, SEVERAL, ANY (at least one) or
    NOTHING (a false premise)."""
    if need == ONE:
        return len(result) == 1
    if need == SEVERAL:
        return len(result) >= 2
    if need == NOTHING:
        return not result
    return len(result) >= 1


def attribute_choices(
    candidates: Sequence[int], facts: SceneFacts, *, excluded: str | None
) -> list[AttributeFilter]:
    """Every attribute filter (as (name, value) pairs, the empty one first) some candidate satisfies."""
    names = [name for name in ATTRIBUTES if name != excluded]
    choices: set[AttributeFilter] = set()
    for size in range(len(names) + 1):
        for subset in itertools.combinations(names, size):
            for index in candidates:
                choices.add(tuple((name, facts.objects[index][name]) for name in subset))
    return sorted(choices)


def plain_options(
    candidates: Sequence[int],
    facts: SceneFacts,
    need: str,
    choices: Sequence[AttributeFilter],
    bare_allowed: bool,
) -> list[Description]:
    """Attribute filters alone; no attribute at all ('the things') only where `bare_allowed`."""
    options = []
    for attributes in choices:
        if not attributes and not bare_allowed:
            continue
        result = filter_by(candidates, attributes, facts)
        if meets(result, need):
            options.append(Description(attributes, tuple(result)))
    return options


def visibility_options(
    candidates: Sequence[int],
    facts: SceneFacts,
    need: str,
    choices: Sequence[AttributeFilter],
    bare_allowed: bool,
) -> list[Description]:
    """Visibility filters that change their input, on inputs whose objects all have a clear class."""
    options = []
    for attributes in choices:
        base = filter_by(candidates, attributes, facts)
        if not base or any(facts.visibility[index] is None for index in base):
            continue
        for value in VISIBILITY_VALUES:
            result = [index for index in base if facts.visibility[index] == value]
            if result and len(result) < len(base) and meets(result, need):
                options.append(Description(attributes, tuple(result), visibility=value))
    return options


def clearly_ordered(ordered: Sequence[int], position: int, direction: str, facts: SceneFacts) -> bool:
    """The k-th object stands clearly apart from its neighbours in the order.

    For "from front" the depth order of centres must also agree with the order on the ground
    (a large object's centre sits higher, so it can seem nearer than a small one just in front).
    """
    axis, gap = (2, ORDINAL_DEPTH_GAP) if direction == "front" else (0, ORDINAL_PIXEL_GAP)
    here = facts.objects[ordered[position]]["pixel_coords"][axis]
    for neighbour in (position - 1, position + 1):
        if not 0 <= neighbour < len(ordered):
            continue
        other = ordered[neighbour]
        if abs(facts.objects[other]["pixel_coords"][axis] - here) < gap:
            return False
        if direction == "front" and "directions" in facts.scene:
            nearer, farther = sorted((ordered[position], other), key=ordered.index)
            if ground_front(facts, nearer) <= ground_front(facts, farther):
                return False
    return True


def ground_front(facts: SceneFacts, index: int) -> float:
    """How far toward the camera an object stands on the ground (CLEVR's front direction)."""
    vector = facts.scene["directions"]["front"]
    return sum(value * axis for value, axis in zip(facts.objects[index]["3d_coords"], vector, strict=True))


def ordinal_options(
    candidates: Sequence[int],
    facts: SceneFacts,
    need: str,
    choices: Sequence[AttributeFilter],
    bare_allowed: bool,
) -> list[Description]:
    """'the k-th one of the ... from left/right/front' over sets of two or more objects."""
    if need == SEVERAL:
        return []
    options = []
    for attributes in choices:
        base = filter_by(candidates, attributes, facts)
        if len(base) < 2 or len(base) > len(ORDINAL_WORDS):
            continue
        for direction in ORDINAL_DIRECTIONS:
            ordered = ordered_for_ordinal(base, direction, facts)
            for position in range(len(ordered)):
                if clearly_ordered(ordered, position, direction, facts):
                    options.append(
                        Description(attributes, (ordered[position],), ordinal=(position + 1, direction))
                    )
    return options


def pick_description(rng: random.Random, options: list[Description]) -> Description:
    """Choose the number of attributes first, so short phrases are as common as long ones."""
    sizes = sorted({len(option.attributes) for option in options})
    size = rng.choice(sizes)
    return rng.choice([option for option in options if len(option.attributes) == size])


def choose_description(
    rng: random.Random,
    facts: SceneFacts,
    candidates: Sequence[int],
    need: str,
    *,
    bare_allowed: bool = False,
    excluded: str | None = None,
    modules: bool = True,
    differ_on: Sequence[Sequence[int]] = (),
) -> Description | None:
    """A noun phrase picking `need` objects out of `candidates`, or None when there is none.

    `differ_on` lists other sets the phrase must pick differently from: the phrase after a
    relation must not mean the same on the whole scene, or the relation would be idle (CLEVR
    calls such expressions degenerate and drops them).
    """
    if not candidates:
        return None
    choices = attribute_choices(candidates, facts, excluded=excluded)
    roll = rng.random()
    kinds: list[Callable[..., list[Description]]] = [plain_options]
    if modules and roll < ORDINAL_SHARE:
        kinds.insert(0, ordinal_options)
    elif modules and roll < ORDINAL_SHARE + VISIBILITY_SHARE:
        kinds.insert(0, visibility_options)
    for kind in kinds:
        options = [
            option
            for option in kind(candidates, facts, need, choices, bare_allowed)
            if all(apply_description(option, other, facts) != list(option.result) for other in differ_on)
        ]
        if options:
            return pick_description(rng, options)
    return None


def apply_description(
    description: Description, objects: Sequence[int], facts: SceneFacts
) -> list[int] | None:
    """What the phrase picks out of another set (None where its ordinal has no k-th object)."""
    result = filter_by(objects, description.attributes, facts)
    if description.visibility is not None:
        result = [index for index in result if facts.visibility[index] == description.visibility]
    if description.ordinal is not None:
        position, direction = description.ordinal
        ordered = ordered_for_ordinal(result, direction, facts)
        return [ordered[position - 1]] if position <= len(ordered) else None
    return result


def value_word(rng: random.Random, value: str) -> str:
    return rng.choice(VALUE_WORDS.get(value, (value,)))


def noun_words(rng: random.Random, description: Description, plural: bool) -> str:
    """'partially visible large red metal cubes': visibility, size, color, material, noun."""
    values = dict(description.attributes)
    words = [description.visibility] if description.visibility else []
    words += [value_word(rng, values[name]) for name in ("size", "color", "material") if name in values]
    singular_noun, plural_noun = rng.choice(NOUNS[values.get("shape", "")])
    words.append(plural_noun if plural else singular_noun)
    return " ".join(words)


def phrase(rng: random.Random, description: Description, clause: Callable[[bool], str] | None = None) -> str:
    """The noun phrase's text; `clause(plural)` gives a relative clause such as 'that are left of ...'."""
    if description.ordinal is not None:
        position, direction = description.ordinal
        ordinal = ORDINAL_WORDS[position - 1]
        core = noun_words(rng, description, plural=True)
        if clause is None:
            return f"the {ordinal} one of the {core} from {direction}"
        return f"the {ordinal} one from {direction} among the {core} {clause(True)}"
    plural = len(description.result) > 1
    text = f"the {noun_words(rng, description, plural)}"
    return f"{text} {clause(plural)}" if clause is not None else text


def verb(plural: bool) -> str:
    return "are" if plural else "is"


# --- program drafts -----------------------------------------------------------------------------


class Draft:
    """A program being written; each step runs as it is added so choices can see its output."""

    def __init__(self, facts: SceneFacts):
        self.facts = facts
        self.steps: list[dict[str, Any]] = []
        self.outputs: list[Any] = []

    def add(self, step_type: str, inputs: Sequence[int] = (), values: Sequence[str] = ()) -> int:
        step = {"type": step_type, "inputs": list(inputs), "value_inputs": list(values)}
        output = run_step(
            step_type, [self.outputs[index] for index in inputs], step["value_inputs"], self.facts
        )
        self.steps.append(step)
        self.outputs.append(output)
        return len(self.steps) - 1

    def describe(self, source: int, description: Description) -> int:
        """Add the description's filter steps after step `source`; the last step's index."""
        current = source
        for name, value in description.attributes:
            current = self.add(f"filter_{name}", [current], [value])
        if description.visibility is not None:
            current = self.add("filter_visibleout", [current], [description.visibility])
        if description.ordinal is not None:
            position, direction = description.ordinal
            current = self.add("filter_ordinal", [current], [str(position), direction])
        return current

    def anchor(self, rng: random.Random, avoid: int | None = None) -> tuple[int, Description] | None:
        """A fresh scene step, a phrase naming one object (not `avoid`) and its unique step.

        Returns (index of the unique step, the phrase).
        """
        everything = list(range(self.facts.count))
        for _attempt in range(ANCHOR_ATTEMPTS):
            description = choose_description(rng, self.facts, everything, ONE)
            if description is None:
                return None
            if description.result[0] != avoid:
                start = self.add("scene")
                return self.add("unique", [self.describe(start, description)]), description
        return None


@dataclass(frozen=True)
class Expression:
    """A generated expression: its text, its program (with outputs) and its family."""

    text: str
    program: list[dict[str, Any]]
    family_index: int
    template_filename: str


# --- templates ----------------------------------------------------------------------------------


def zero_hop(rng: random.Random, draft: Draft, need: str) -> str | None:
    start = draft.add("scene")
    description = choose_description(rng, draft.facts, draft.outputs[start], need)
    if description is None:
        return None
    draft.describe(start, description)
    return phrase(rng, description)


def relate_chain(hops: int) -> Callable[[random.Random, Draft, str], str | None]:
    """n-hop template: an anchor object, then n relations, each through a one-object phrase."""

    def build(rng: random.Random, draft: Draft, need: str) -> str | None:
        anchored = draft.anchor(rng)
        if anchored is None:
            return None
        current, anchor_description = anchored
        text = phrase(rng, anchor_description)
        for hop in range(hops):
            relation = pick_relation(rng, draft, current)
            if relation is None:
                return None
            related = draft.add("relate", [current], [relation])
            last_hop = hop == hops - 1
            description = choose_description(
                rng,
                draft.facts,
                draft.outputs[related],
                need if last_hop else ONE,
                bare_allowed=True,
                differ_on=[range(draft.facts.count)],
            )
            if description is None:
                return None
            current = draft.describe(related, description)
            relation_text = rng.choice(RELATION_WORDS[relation])
            text = phrase(
                rng,
                description,
                lambda plural, words=relation_text, inner=text: f"that {verb(plural)} {words} {inner}",
            )
            if not last_hop:
                current = draft.add("unique", [current])
        return text

    return build


def pick_relation(rng: random.Random, draft: Draft, anchor_step: int) -> str | None:
    """A relation, at random, that holds for at least one object from the anchor."""
    anchor = draft.outputs[anchor_step]
    relations = [name for name in RELATIONS if draft.facts.scene["relationships"][name][anchor]]
    return rng.choice(relations) if relations else None


def single_and(rng: random.Random, draft: Draft, need: str) -> str | None:
    """'the ... that are left of A and behind B': two relations intersected."""
    first = draft.anchor(rng)
    if first is None:
        return None
    first_step, first_description = first
    first_relation = pick_relation(rng, draft, first_step)
    if first_relation is None:
        return None
    first_related = draft.add("relate", [first_step], [first_relation])
    second = draft.anchor(rng, avoid=draft.outputs[first_step])
    if second is None:
        return None
    second_step, second_description = second
    first_set = set(draft.outputs[first_related])
    relations = [
        name
        for name in RELATIONS
        if distinct_sets(first_set, draft.facts.scene["relationships"][name][draft.outputs[second_step]])
        and first_set & set(draft.facts.scene["relationships"][name][draft.outputs[second_step]])
    ]
    if not relations:
        return None
    second_relation = rng.choice(relations)
    second_related = draft.add("relate", [second_step], [second_relation])
    both = draft.add("intersect", [first_related, second_related])
    description = choose_description(
        rng,
        draft.facts,
        draft.outputs[both],
        need,
        bare_allowed=True,
        differ_on=[draft.outputs[first_related], draft.outputs[second_related]],
    )
    if description is None:
        return None
    draft.describe(both, description)
    first_text = f"{rng.choice(RELATION_WORDS[first_relation])} {phrase(rng, first_description)}"
    second_text = f"{rng.choice(RELATION_WORDS[second_relation])} {phrase(rng, second_description)}"
    return phrase(rng, description, lambda plural: f"that {verb(plural)} {first_text} and {second_text}")


def single_or(rng: random.Random, draft: Draft, need: str) -> str | None:
    """A union: 'all things that are either red or metal', or two phrases: 'the red cube and the balls'."""
    if rng.random() < 0.5:
        return adjective_or(rng, draft, need)
    if need == ONE:
        return None
    first_start = draft.add("scene")
    first = choose_description(rng, draft.facts, draft.outputs[first_start], ANY, modules=False)
    if first is None:
        return None
    first_step = draft.describe(first_start, first)
    second_start = draft.add("scene")
    second = choose_description(rng, draft.facts, draft.outputs[second_start], ANY, modules=False)
    if second is None or not distinct_sets(first.result, second.result):
        return None
    second_step = draft.describe(second_start, second)
    union = draft.add("union", [first_step, second_step])
    if len(draft.outputs[union]) == draft.facts.count:
        return None
    return f"{phrase(rng, first)} and {phrase(rng, second)}"


def distinct_sets(first: Sequence[int], second: Sequence[int]) -> bool:
    """Both parts of a union matter: neither set contains the other."""
    return bool(set(first) - set(second)) and bool(set(second) - set(first))


def adjective_or(rng: random.Random, draft: Draft, need: str) -> str | None:
    """'all cubes that are either red or metal': two one-attribute sets, optionally narrowed by shape."""
    pairs = sorted(
        {(name, obj[name]) for obj in draft.facts.objects for name in ("size", "color", "material")}
    )
    rng.shuffle(pairs)
    for first, second in itertools.combinations(pairs, 2):
        first_set = filter_by(range(draft.facts.count), [first], draft.facts)
        second_set = filter_by(range(draft.facts.count), [second], draft.facts)
        if distinct_sets(first_set, second_set):
            break
    else:
        return None
    first_start = draft.add("scene")
    first_step = draft.add(f"filter_{first[0]}", [first_start], [first[1]])
    second_start = draft.add("scene")
    second_step = draft.add(f"filter_{second[0]}", [second_start], [second[1]])
    union = draft.add("union", [first_step, second_step])
    shape = None
    if need == ONE or rng.random() < 0.5:
        shapes = sorted({draft.facts.objects[index]["shape"] for index in draft.outputs[union]})
        rng.shuffle(shapes)
        for candidate in shapes:
            result = set(filter_by(draft.outputs[union], [("shape", candidate)], draft.facts))
            # The shape narrows the union, yet each adjective still names part of the answer.
            narrows = len(result) < len(draft.outputs[union])
            if narrows and meets(result, need) and result & set(first_set) and result & set(second_set):
                shape = candidate
                break
        if shape is None and need == ONE:
            return None
    if shape is not None:
        union = draft.add("filter_shape", [union], [shape])
    elif need == ONE:
        return None
    if len(draft.outputs[union]) == draft.facts.count:
        return None  # 'all things that are either rubber or metal' is just everything
    plural = len(draft.outputs[union]) > 1
    singular_noun, plural_noun = rng.choice(NOUNS[shape or ""])
    adjectives = f"either {value_word(rng, first[1])} or {value_word(rng, second[1])}"
    if plural:
        return f"all {plural_noun} that are {adjectives}"
    return f"the {singular_noun} that is {adjectives}"


SAME_WORDS = {
    "size": lambda plural: f"that {verb(plural)} the same size as",
    "color": lambda plural: f"that {verb(plural)} the same color as",
    "material": lambda plural: f"that {verb(plural)} made of the same material as",
    "shape": lambda plural: f"that {'have' if plural else 'has'} the same shape as",
}


def same_relate(rng: random.Random, draft: Draft, need: str) -> str | None:
    """'the spheres that are the same color as the large cube'."""
    anchored = draft.anchor(rng)
    if anchored is None:
        return None
    anchor_step, anchor_description = anchored
    attributes = [
        name for name in ATTRIBUTES if run_step(f"same_{name}", [draft.outputs[anchor_step]], [], draft.facts)
    ]
    if not attributes:
        return None
    attribute = rng.choice(attributes)
    same = draft.add(f"same_{attribute}", [anchor_step])
    description = choose_description(
        rng, draft.facts, draft.outputs[same], need, bare_allowed=True, excluded=attribute
    )
    if description is None:
        return None
    draft.describe(same, description)
    anchor_text = phrase(rng, anchor_description)
    return phrase(rng, description, lambda plural: f"{SAME_WORDS[attribute](plural)} {anchor_text}")


# --- false premises --------------------------------------------------------------------------------


def pick_by_size(rng: random.Random, options: Sequence[AttributeFilter]) -> AttributeFilter:
    """Choose the number of attributes first, then a filter of that many (as `pick_description`)."""
    size = rng.choice(sorted({len(option) for option in options}))
    return rng.choice([option for option in options if len(option) == size])


def zero_hop_nothing(rng: random.Random, draft: Draft, need: str) -> str | None:
    """'the large red cube' in a scene with large things, red things and cubes, none all three.

    Two or three attributes, each value some object's, and dropping any one of them finds an object:
    every word is needed to see that nothing fits.
    """
    facts = draft.facts
    everything = range(facts.count)
    values = {name: sorted({obj[name] for obj in facts.objects}) for name in ATTRIBUTES}
    options = []
    for size in (2, 3):
        for names in itertools.combinations(ATTRIBUTES, size):
            for chosen in itertools.product(*(values[name] for name in names)):
                attributes = tuple(zip(names, chosen, strict=True))
                if filter_by(everything, attributes, facts):
                    continue
                if all(
                    filter_by(everything, attributes[:left] + attributes[left + 1 :], facts)
                    for left in range(size)
                ):
                    options.append(attributes)
    if not options:
        return None
    description = Description(pick_by_size(rng, options), ())
    draft.describe(draft.add("scene"), description)
    return phrase(rng, description)


def one_hop_nothing(rng: random.Random, draft: Draft, need: str) -> str | None:
    """'the red cube left of the small sphere' where red cubes stand only elsewhere in the scene.

    The phrase after the relation (one or two attributes) picks something out of the scene other
    than the anchor, so the relation is what leaves nothing (the expression is not degenerate).
    """
    anchored = draft.anchor(rng)
    if anchored is None:
        return None
    anchor_step, anchor_description = anchored
    relation = pick_relation(rng, draft, anchor_step)
    if relation is None:
        return None
    related = draft.add("relate", [anchor_step], [relation])
    others = [index for index in range(draft.facts.count) if index != draft.outputs[anchor_step]]
    options = [
        attributes
        for attributes in attribute_choices(others, draft.facts, excluded=None)
        if 1 <= len(attributes) <= 2 and not filter_by(draft.outputs[related], attributes, draft.facts)
    ]
    if not options:
        return None
    description = Description(pick_by_size(rng, options), ())
    draft.describe(related, description)
    relation_text = rng.choice(RELATION_WORDS[relation])
    anchor_text = phrase(rng, anchor_description)
    return phrase(rng, description, lambda plural: f"that {verb(plural)} {relation_text} {anchor_text}")


@dataclass(frozen=True)
class Family:
    index: int
    template_filename: str
    build: Callable[[random.Random, Draft, str], str | None]


FAMILIES = (
    Family(0, "zero_hop.json", zero_hop),
    Family(1, "one_hop.json", relate_chain(1)),
    Family(2, "two_hop.json", relate_chain(2)),
    Family(3, "three_hop.json", relate_chain(3)),
    Family(4, "single_and.json", single_and),
    Family(5, "single_or.json", single_or),
    Family(6, "same_relate.json", same_relate),
)
#: The false-premise templates, under the template file of their structure.
FALSE_PREMISE_FAMILIES = (
    Family(0, "zero_hop.json", zero_hop_nothing),
    Family(1, "one_hop.json", one_hop_nothing),
)


def generate_expressions(
    rng: random.Random,
    scene: dict[str, Any],
    count: int,
    *,
    visibility: Sequence[str | None] | None = None,
    false_premise_share: float = 0.0,
) -> list[Expression]:
    """Up to `count` distinct expressions for one scene, families drawn at random; about
    `false_premise_share` of them refer to no object (see the module docstring)."""
    facts = SceneFacts(scene, visibility_given=list(visibility) if visibility is not None else None)
    expressions: list[Expression] = []
    texts: set[str] = set()
    # Families take turns, in an order shuffled per image, so hard ones (three hops, AND) get
    # their share instead of losing out to ones that rarely fail.
    order = rng.sample(FAMILIES, len(FAMILIES))

    def draw_need() -> str:
        # No draw at all without false premises: the same seed gives the same files as before.
        if false_premise_share and rng.random() < false_premise_share:
            return NOTHING
        return ONE if rng.random() < SINGLE_SHARE else SEVERAL

    # The number of referred objects is drawn once per wanted expression and kept through
    # failures: redrawing it would favour whichever number is easier to satisfy.
    need = draw_need()
    turn = 0
    while len(expressions) < count and turn < (count + len(FAMILIES)) * FAMILY_ROUNDS:
        if need == NOTHING:
            family = FALSE_PREMISE_FAMILIES[turn % len(FALSE_PREMISE_FAMILIES)]
        else:
            family = order[turn % len(order)]
        turn += 1
        expression = try_family(rng, family, facts, texts, need)
        if expression is not None:
            texts.add(expression.text)
            expressions.append(expression)
            need = draw_need()
    return expressions


def try_family(
    rng: random.Random, family: Family, facts: SceneFacts, texts: set[str], need: str
) -> Expression | None:
    """A new expression of `family` referring to `need` objects, or None after ATTEMPTS_PER_FAMILY failures."""
    for _attempt in range(ATTEMPTS_PER_FAMILY):
        draft = Draft(facts)
        text = family.build(rng, draft, need)
        if text is None or text in texts:
            continue
        outputs = execute(draft.steps, facts)
        if not meets(outputs[-1], need) or is_degenerate(draft.steps, facts):
            continue
        program = [dict(step, _output=output) for step, output in zip(draft.steps, outputs, strict=True)]
        return Expression(text, program, family.index, family.template_filename)
    return None


# --- files --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GeneratedFiles:
    """Where `generate` wrote its output, and how much."""

    images_dir: Path
    scenes_file: Path
    refexps_file: Path
    image_count: int
    refexp_count: int
    #: How many of the expressions refer to no object.
    false_premise_count: int = 0


def image_rng(seed: int, image_index: int) -> random.Random:
    """One generator per image, so image k is the same whatever the number of images asked for."""
    return random.Random(f"clevrref:{seed}:{image_index}")


def generate(
    out_dir: Path,
    *,
    images: int,
    seed: int,
    expressions_per_image: int = 5,
    split: str = "val",
    progress: Callable[[int, int], None] | None = None,
    false_premise_share: float = 0.0,
) -> GeneratedFiles:
    """Render `images` scenes into out_dir/images and write the scenes and refexp files.

    The same arguments give byte-identical files. `progress(done, total)` is called per image.
    `false_premise_share` (0 to 1, default 0: none): the share of expressions asked to refer to no
    object; with 0 the files are those generated before the option existed.
    """
    if not 0 <= false_premise_share <= 1:
        raise ValueError(f"false_premise_share must be between 0 and 1, got {false_premise_share}")
    out_dir = Path(out_dir)
    images_dir = out_dir / "images"
    images_dir.mkdir(parents=True, exist_ok=True)
    camera = scenes.clevr_camera()
    scene_records: list[dict[str, Any]] = []
    refexps: list[dict[str, Any]] = []
    for image_index in range(images):
        rng = image_rng(seed, image_index)
        generated = scenes.generate_scene(rng, camera, image_index=image_index, split=split)
        record = generated.record
        save_png(generated.image, images_dir / record["image_filename"])
        scene_records.append(record)
        for expression in generate_expressions(
            rng,
            record,
            expressions_per_image,
            visibility=generated.visibility,
            false_premise_share=false_premise_share,
        ):
            refexps.append(
                {
                    "split": split,
                    "image_filename": record["image_filename"],
                    "image_index": image_index,
                    "image": Path(record["image_filename"]).stem,
                    "refexp": expression.text,
                    "program": expression.program,
                    "template_filename": expression.template_filename,
                    "refexp_family_index": expression.family_index,
                    "refexp_index": len(refexps),
                }
            )
        if progress is not None:
            progress(image_index + 1, images)
    info = {
        "split": split,
        "version": "1.0",
        "generator": "yardstick plugins.clevrref",
        "seed": seed,
        "image_width": scenes.IMAGE_WIDTH,
        "image_height": scenes.IMAGE_HEIGHT,
        "units": "3d_coords in CLEVR units (1 = 10 grid units); +x toward the camera, +y right, +z up",
        "mask_encoding": "comma-separated run lengths over the row-major image, background run first",
    }
    if false_premise_share:
        info["false_premise_share"] = false_premise_share
    scenes_file = out_dir / "clevrref_scenes.json"
    refexps_file = out_dir / "clevrref_refexps.json"
    scenes_file.write_bytes(b"".join(formats.serialize_scenes(info, scene_records)))
    refexps_file.write_bytes(b"".join(formats.serialize(info, refexps)))
    false_premises = sum(1 for refexp in refexps if not refexp["program"][-1]["_output"])
    return GeneratedFiles(images_dir, scenes_file, refexps_file, images, len(refexps), false_premises)
