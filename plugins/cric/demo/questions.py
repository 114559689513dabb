"""Questions about one CRIC demo image, of all five CRIC types: the scopes and referring
expressions the scene graph allows, one builder per question type, and the question records,
whose outputs, answer, target and sub_graph the program executor fills in."""

from __future__ import annotations

import collections
import dataclasses
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from plugins.cric.demo.knowledge import (
    ATTRIBUTE_KINDS,
    CATEGORIES,
    CATEGORY_KNOWLEDGE,
    COLOR,
    CONTENT_TRIPLETS,
    HYPERNYM_NOUNS,
    HYPERNYM_TRIPLETS,
    HYPERNYMS,
    KNOWLEDGE_PAIRS,
    KNOWLEDGE_PHRASES,
    MATERIAL,
    MATERIAL_NOUNS,
    STATE,
)
from plugins.cric.demo.layout import PREDICATE_PHRASES, PREDICATES
from plugins.cric.demo.programs import ProgramExecutor, derive_answer
from plugins.cric.formats import QUESTION_TYPES

Step = tuple[str, tuple[str, ...]]


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
