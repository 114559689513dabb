"""The CRIC program executor: runs a question's functional program (Find, Relate, Find KG, ...)
on one image's scene graph and a knowledge graph, collects the facts the program relies on (its
sub_graph) and derives the answer its last step gives. The demo generator fills its programs
with it; plugins.cric.baselines runs it as the scene-graph baseline."""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from plugins.cric.demo.knowledge import ATTRIBUTE_KINDS, Triplet


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
