"""CRIC baselines: a question-only prior and a program executor over the scene graph (pure, no Django).

A prediction is ``{"question_id", "answer", "object"}`` (plugins.cric.metric): the answer
string and the one object grounding it (None for none). The grounding rule decides what "no
object" earns: right for a verify question whose true answer is "no", wrong everywhere else.

- `prior`: the most frequent answer of the question's type, counted on the other questions of
  the dataset (leave-one-out), with no object: what the answer distribution alone gives away.
- `executor`: runs the question's program (its functions and arguments; the outputs recorded in
  the file are ignored) over the image's scene graph and a knowledge graph, as the paper's
  scene-graph upper bounds do: perfect perception and a perfect parse. The step semantics are
  those of `plugins.cric.demo.programs.ProgramExecutor`, the executor the demo generator
  fills its programs with.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from inference.baselines import Baseline, RunChoices, Unit, gettext_noop

VERIFY_FUNCTION = "Verify"
RECOGNITION_FUNCTION = "Recognition"
YES, NO = "yes", "no"


def most_frequent(counts: Counter, leave_out: str | None = None) -> str | None:
    """The most frequent answer once one occurrence of `leave_out` is taken away (None when no
    answer is left); ties go to the alphabetically first answer, so runs repeat exactly."""
    best: tuple[int, str] | None = None
    for answer, count in counts.items():
        if answer == leave_out:
            count -= 1
        if count <= 0:
            continue
        if best is None or count > best[0] or (count == best[0] and answer < best[1]):
            best = (count, answer)
    return best[1] if best else None


class PriorBaseline(Baseline):
    name = "prior"
    title = "Question-type prior"
    description = gettext_noop(
        "Answers every question with the most frequent answer of its question type among the other "
        "questions of the dataset, and grounds it in no object."
    )
    uses = gettext_noop(
        "The question type only, with the answers of every other question of the dataset (leave-one-out: "
        "no question sees its own answer)."
    )

    def load(self, units: Sequence[Unit], choices: RunChoices) -> None:
        super().load(units, choices)
        self.by_type: dict[str, Counter] = defaultdict(Counter)
        self.overall: Counter = Counter()
        self.counted: set[str] = set()
        for unit in units:
            answer = str(unit.record.get("answer", ""))
            self.by_type[question_type(unit)][answer] += 1
            self.overall[answer] += 1
            self.counted.add(unit.id)

    def predict(self, units: Sequence[Unit], inputs: Any) -> list[dict[str, Any]]:
        predictions = []
        for unit in units:
            own = str(unit.record.get("answer", "")) if unit.id in self.counted else None
            answer = most_frequent(self.by_type.get(question_type(unit), Counter()), own)
            if answer is None:  # the only question of its type: the most frequent answer overall
                answer = most_frequent(self.overall, own) or ""
            predictions.append({"question_id": unit.id, "answer": answer, "object": None})
        return predictions

    def parameters(self) -> dict[str, Any]:
        return {
            "leave_one_out": True,
            "grounding": "none",
            "question_types": len(getattr(self, "by_type", {})),
        }


def question_type(unit: Unit) -> str:
    return str(unit.record.get("question_type") or unit.payload.get("question_type") or "")


def knowledge_triplets(records: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, str]]:
    """Every knowledge triplet the questions' sub-graphs name, once each, in order of appearance."""
    found: dict[tuple[str, str, str], None] = {}
    for record in records:
        sub_graph = record.get("sub_graph") or {}
        for item in sub_graph.get("knowledge_items") or ():
            triplet = item.get("triplet") if isinstance(item, Mapping) else item
            if isinstance(triplet, Sequence) and len(triplet) == 3:
                found[(str(triplet[0]), str(triplet[1]), str(triplet[2]))] = None
    return list(found)


class ExecutorBaseline(Baseline):
    """Runs each question's program on its scene graph; see the module docstring.

    The knowledge graph is every triplet named in the sub-graphs of the dataset's questions (a
    dataset in Yardstick carries no separate knowledge file). The answer is the last step's
    verdict ("yes" when a Verify step keeps an object) or the recognised name or attribute of
    the object left; the grounding is the first object of the last step's output (none for a
    "no"). The prediction also carries every step's output, so the metric reports the step IoU.
    A program that cannot run (an unknown function, no scene graph) is answered "" with no object
    and counted in the run's parameters.
    """

    name = "executor"
    title = "Program executor on the scene graph"
    description = gettext_noop(
        "Executes the question's functional program on the image's scene graph and the knowledge "
        "triplets: the paper's upper bound with perfect perception and a perfect parse."
    )
    uses = gettext_noop(
        "The question's program (functions and arguments, not their recorded outputs), the image's scene "
        "graph and the knowledge triplets of the dataset's sub-graphs: an upper bound that reads the truth."
    )

    def load(self, units: Sequence[Unit], choices: RunChoices) -> None:
        super().load(units, choices)
        self.knowledge = knowledge_triplets([unit.record for unit in units])
        self.executors: dict[Any, Any] = {}
        self.failures: list[str] = []

    def executor_for(self, scene: Mapping[str, Any]):
        from plugins.cric.demo.programs import ProgramExecutor

        key = scene.get("image_id", id(scene))
        if key not in self.executors:
            self.executors[key] = ProgramExecutor(scene, self.knowledge)
        return self.executors[key]

    def predict(self, units: Sequence[Unit], inputs: Any) -> list[dict[str, Any]]:
        return [self.answer(unit) for unit in units]

    def answer(self, unit: Unit) -> dict[str, Any]:
        program = list(unit.record.get("program") or ())
        if unit.scene is None or not program:
            self.failures.append(unit.id)
            return {"question_id": unit.id, "answer": "", "object": None}
        try:
            outputs = self.executor_for(unit.scene).run(program)
        except (ValueError, KeyError, TypeError):
            self.failures.append(unit.id)
            return {"question_id": unit.id, "answer": "", "object": None}
        final = outputs[-1]
        return {
            "question_id": unit.id,
            "answer": final_answer(program, outputs, unit.scene),
            "object": final[0] if final else None,
            "program_outputs": [list(output) for output in outputs],
        }

    def parameters(self) -> dict[str, Any]:
        return {
            "knowledge_triplets": len(getattr(self, "knowledge", ())),
            "programs_failed": len(getattr(self, "failures", ())),
        }


def final_answer(
    program: Sequence[Mapping[str, Any]], outputs: Sequence[Sequence[int]], scene: Mapping[str, Any]
) -> str:
    """The answer the program's last step gives (plugins.cric.demo.programs.derive_answer), or
    when that is ambiguous (Recognition left several objects, or an attribute of an unknown kind),
    the name or the first attribute of the first object left; "" when nothing is left."""
    from plugins.cric.demo.programs import derive_answer

    last = program[-1].get("function")
    final = outputs[-1]
    if last == VERIFY_FUNCTION:
        return YES if final else NO
    try:
        return derive_answer(program, outputs, scene)
    except (ValueError, StopIteration):
        pass
    if last != RECOGNITION_FUNCTION or not final:
        return ""
    obj = next((obj for obj in scene.get("objects", ()) if obj.get("object_id") == final[0]), {})
    kind = (program[-1].get("text_input") or ["name"])[0]
    values = obj.get("names") if kind == "name" else obj.get("attributes")
    return str(values[0]) if values else ""
