"""CRIC as Yardstick serves it (pure): one declaration the apps look up."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.spec import (
    BenchmarkSpec,
    BreakdownPlot,
    Choice,
    Column,
    DemoData,
    DiagnosticTable,
    ItemSection,
    Region,
    ScoringFiles,
    ScoringInput,
    as_text,
    rectangle,
)
from plugins.cric.formats import FUNCTION_NAMES, QUESTION_TYPES, object_box
from plugins.cric.metric import FUNCTION_BUCKETS, LENGTH_BUCKETS, SIZE_BUCKETS, function_iou_key

DEMO_IMAGES = 30


def _(text: str) -> str:
    """Marks the item page's words for the translation catalogue (`make messages`); the page
    (benchmarks/views.py) translates them."""
    return text


def in_group(field: str, value: Any, row: dict[str, Any]) -> bool:
    """Whether a per-question row is in a group (its `field` is `value`): bound with
    functools.partial as a column's item_filter."""
    return row.get(field) == value


#: The breakdowns' buckets (plugins.cric.metric defines them), with their labels.
LENGTH_GROUPS = tuple(
    Choice(key, label)
    for (key, _most), label in zip(
        LENGTH_BUCKETS,
        (_("≤ 6 words"), _("7–9 words"), _("10–12 words"), _("≥ 13 words")),
        strict=True,
    )
)
FUNCTION_GROUPS = tuple(
    Choice(key, label)
    for (key, _most), label in zip(
        FUNCTION_BUCKETS,
        (_("≤ 3 functions"), _("4–5 functions"), _("6–7 functions"), _("≥ 8 functions")),
        strict=True,
    )
)
SIZE_GROUPS = tuple(
    Choice(key, label)
    for key, label in zip(
        SIZE_BUCKETS, (_("small objects"), _("medium objects"), _("large objects")), strict=True
    )
)
#: The headline metrics, each with the per-question field its interval is drawn from.
HEADLINE = (("Ans", "answer_correct"), ("Grd", "grounding_correct"), ("Final", "final_correct"))


def accuracy_columns(summary_key: str, field: str, groups: tuple[Choice, ...]) -> tuple[Column, ...]:
    """Ans, Grd and Final of each group of a breakdown, with intervals from its questions' rows."""
    return tuple(
        Column(
            group.label,
            name,
            "",
            (summary_key, group.value, name),
            item_key,
            partial(in_group, field, group.value),
        )
        for group in groups
        for name, item_key in HEADLINE
    )


def function_columns() -> tuple[Column, ...]:
    """Each function's mean set IoU (from predictions that give program outputs; a column no row
    has is dropped), then recognition accuracy."""
    return tuple(
        Column(
            _("Set IoU per function"),
            function,
            "",
            ("by_function", function, "set_iou"),
            function_iou_key(function),
            proportion=False,
        )
        for function in FUNCTION_NAMES
    ) + (
        Column(
            _("Recognition"),
            "Ans",
            "",
            ("recognition", "Ans"),
            "answer_correct",
            partial(in_group, "recognition_step", True),
        ),
    )


class CricSpec(BenchmarkSpec):
    name = "cric"
    title = "CRIC"
    formats_module = "plugins.cric.formats"
    unit_id_field = "question_id"
    scores_streamed_files = True
    # The object-size breakdown reads the scene graphs, where the dataset has them.
    scenes_read_to_score = True
    region_kind = "box"
    trial = "plugins.cric.trial:CricTrial"
    validation = "plugins.cric.check:CricCheck"
    comparison_strata = (Choice("question_type", _("question type")),)
    baselines = ("plugins.cric.baselines:PriorBaseline", "plugins.cric.baselines:ExecutorBaseline")
    served = "plugins.cric.served:CricServed"
    plots = (
        BreakdownPlot(
            _("Final accuracy by question type"),
            ("by_question_type",),
            "Final",
            tuple(Choice(question_type, question_type) for question_type in QUESTION_TYPES),
            ylabel="Final",
        ),
        BreakdownPlot(
            _("Final accuracy by question length"),
            ("by_question_length",),
            "Final",
            LENGTH_GROUPS,
            ylabel="Final",
            kind="line",
        ),
        BreakdownPlot(
            _("Final accuracy by number of program functions"),
            ("by_functions",),
            "Final",
            FUNCTION_GROUPS,
            ylabel="Final",
            kind="line",
        ),
        BreakdownPlot(
            _("Final accuracy by size of the target object"),
            ("by_object_size",),
            "Final",
            SIZE_GROUPS,
            ylabel="Final",
            xlabel=_("target box area over image area: small < 0.01 ≤ medium < 0.1 ≤ large"),
        ),
    )
    diagnostics = (
        DiagnosticTable(
            "by-function",
            _("Intermediate steps by function"),
            function_columns(),
            note=_(
                "Mean set IoU |P ∩ G| / |P ∪ G| of the objects each step outputs, over every step of "
                "each function, for submissions that give program outputs. Recognition Ans: answer "
                "accuracy on the questions whose program has a Recognition step."
            ),
            caption="CRIC: set IoU of the intermediate outputs of each function, and recognition accuracy.",
        ),
        DiagnosticTable(
            "by-length",
            _("Accuracy by question length"),
            accuracy_columns("by_question_length", "length_bucket", LENGTH_GROUPS),
            note=_("Ans, Grd and Final over the questions of each length in words."),
            caption="CRIC: accuracy by question length in words.",
        ),
        DiagnosticTable(
            "by-functions",
            _("Accuracy by number of program functions"),
            accuracy_columns("by_functions", "functions_bucket", FUNCTION_GROUPS),
            note=_("Ans, Grd and Final over the questions whose program has that many steps."),
            caption="CRIC: accuracy by number of functions in the question's program.",
        ),
        DiagnosticTable(
            "by-size",
            _("Accuracy by size of the target object"),
            accuracy_columns("by_object_size", "size_bucket", SIZE_GROUPS),
            note=_(
                "Size: the largest target object's box area over the image's, from the dataset's scene "
                "graphs: small below 0.01, large from 0.1, medium between. "
                "Questions whose right grounding is no object are in no column."
            ),
            caption="CRIC: accuracy by size of the target object (box area over image area).",
        ),
    )

    # --- the catalog ---------------------------------------------------------------------------

    def summary(self, payload: dict[str, Any], ground_truth: dict[str, Any]) -> str:
        return str(payload.get("question", ""))

    def regions(self, ground_truth: dict[str, Any], scene: dict[str, Any] | None) -> list[Region]:
        """The target objects' boxes, from the scene graph."""
        if not scene:
            return []
        objects = {obj.get("object_id"): obj for obj in scene.get("objects", [])}
        return [
            rectangle(*object_box(objects[target]), label=(objects[target].get("names") or ["object"])[0])
            for target in ground_truth.get("target", [])
            if target in objects
        ]

    def shown_sections(self, payload: dict[str, Any], scene: dict[str, Any] | None) -> list[ItemSection]:
        return [
            ItemSection(
                facts=(
                    (_("Question"), str(payload.get("question", ""))),
                    (_("Question type"), str(payload.get("question_type", ""))),
                ),
                note=_(
                    "Testers see the image with every object boxed (no names), type the answer and "
                    "choose the object it is about."
                ),
            )
        ]

    def truth_sections(
        self, payload: dict[str, Any], ground_truth: dict[str, Any], scene: dict[str, Any] | None
    ) -> list[ItemSection]:
        """The answer and the objects it is about, the program that finds them, and the scene-graph
        facts and commonsense it rests on; objects named as the scene graph names them."""
        names = {
            obj.get("object_id"): (obj.get("names") or ["object"])[0]
            for obj in (scene or {}).get("objects", [])
        }

        def named(object_id: Any) -> str:
            return f"{names[object_id]} {object_id}" if object_id in names else str(object_id)

        def objects(ids: Any) -> str:
            if not isinstance(ids, list):
                return as_text(ids)
            if len(ids) > 6:
                return f"{len(ids)} objects"
            return ", ".join(named(object_id) for object_id in ids) or "nothing"

        facts = [
            (_("Answer"), as_text(ground_truth.get("answer", ""))),
            (_("About"), objects(ground_truth.get("target"))),
        ]
        if ground_truth.get("wrong_part"):
            facts.append((_("Wrong part"), str(ground_truth["wrong_part"])))
        program = tuple(
            f"{step.get('function', '?')} {', '.join(map(str, step.get('text_input') or []))}".rstrip()
            + f" → {objects(step.get('output'))}"
            for step in ground_truth.get("program", [])
        )
        sub_graph = ground_truth.get("sub_graph") or {}
        evidence = tuple(
            [
                f"{named(fact[0])} {fact[1]} {named(fact[2])}"
                if isinstance(fact, list) and len(fact) == 3
                else as_text(fact)
                for fact in sub_graph.get("relations", [])
            ]
            + [
                f"{named(fact[0])} is {fact[1]}"
                if isinstance(fact, list) and len(fact) == 2
                else as_text(fact)
                for fact in sub_graph.get("attributes", [])
            ]
            + [
                " ".join(map(str, item["triplet"]))
                if isinstance(item, dict) and "triplet" in item
                else as_text(item)
                for item in sub_graph.get("knowledge_items", [])
            ]
        )
        sections = [ItemSection(facts=tuple(facts)), ItemSection(_("Program"), lines=program)]
        if evidence:
            sections.append(ItemSection(_("Facts and knowledge it rests on"), lines=evidence, numbered=False))
        return sections

    # --- scoring -------------------------------------------------------------------------------

    def read_predictions(self, data: bytes, *, source: str = "") -> dict[str, Any]:
        from plugins.cric import metric

        return {
            record["question_id"]: {key: value for key, value in record.items() if key != "question_id"}
            for record in metric.parse_predictions(data, source=source)
        }

    def score(self, given: ScoringInput):
        from plugins.cric import metric

        predictions = [{**answer, "question_id": key} for key, answer in given.answers.items()]
        return metric.score(given.records, predictions, scenes=given.scenes or None)

    def score_files(self, files: ScoringFiles):
        from plugins.cric import metric

        return metric.score_file(
            files.ground_truth,
            files.predictions,
            scenes_data=files.scenes,
            questions_source=files.ground_truth_source,
            predictions_source=files.predictions_source,
        )

    # --- reports -------------------------------------------------------------------------------

    def report_columns(self) -> list[Column]:
        columns = []
        for path, group, row_filter in (
            (("by_kind", "verify"), _("Verify"), partial(in_group, "kind", "verify")),
            (("by_kind", "recognize"), _("Recognize"), partial(in_group, "kind", "recognize")),
            (("overall",), _("Overall"), None),
        ):
            for name, key in HEADLINE:
                columns.append(Column(group, name, "", (*path, name), key, row_filter))
        return columns

    # --- agreement -----------------------------------------------------------------------------

    answer_compared = "the answer with its object"

    def answer_lines(self, answer: Any) -> list[str]:
        """The answer, and the object it is about (none for a "no" to a verify question)."""
        chosen = answer.get("object")
        return [f"“{answer['answer']}”", f"object {chosen}" if chosen is not None else "no object"]

    def answer_label(self, answer: Any) -> str:
        """The answer with the object it is about."""
        return json.dumps([answer.get("answer"), answer.get("object")])

    # --- demo ----------------------------------------------------------------------------------

    def demo(self, folder: Path, seed: int) -> DemoData:
        from plugins.cric.demo import generate_demo

        folder.mkdir(parents=True, exist_ok=True)
        files = generate_demo(folder, images=DEMO_IMAGES, seed=seed)
        return DemoData(
            data=files.questions,
            split="val",
            source="generated by load_demo",
            images=files.images_dir,
            scenes=files.scene_graphs,
        )


SPEC = CricSpec()
