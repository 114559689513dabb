"""CLEVR-Ref+ validation: does the expression refer to exactly the marked objects?

Validators see the scene with the referred objects marked (every object's box drawn faintly),
the expression, and its program step by step (the objects each step outputs, where the file
keeps them). Strata: expression category (k-Relate, AND, OR, Same) and one object or several.
"""

from __future__ import annotations

from typing import Any

from django.db.models.fields.json import KeyTransform
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from plugins.clevrref import metric
from validation.checks import Check, Question, Stratifier


def step_label(step: dict[str, Any]) -> str:
    values = ", ".join(str(value) for value in step.get("value_inputs") or [])
    return f"{step.get('type', '?')}({values})" if values else str(step.get("type", "?"))


class ClevrRefCheck(Check):
    instructions = gettext_lazy(
        "Check a generated referring expression against its scene: does it refer to exactly the "
        "marked objects, no more and no fewer?"
    )
    stratifiers = (
        Stratifier(
            "category",
            gettext_lazy("Expression category"),
            lambda: {"program": KeyTransform("program", "ground_truth")},
            lambda row: metric.expression_category({"program": row["program"]}),
        ),
        Stratifier(
            "single",
            gettext_lazy("One object or several"),
            lambda: {"program": KeyTransform("program", "ground_truth")},
            lambda row: (
                "one object"
                if len(metric.referred_objects({"program": row["program"]})) == 1
                else "several objects"
            ),
        ),
    )
    questions = (
        Question(
            "refers_exactly",
            gettext_lazy("Does the expression refer to exactly the marked objects?"),
            "yesno",
            fails_on_no=True,
        ),
        Question(
            "natural",
            gettext_lazy("Is the expression grammatical and natural?"),
            "scale",
            help=gettext_lazy("1: not at all, 5: fully"),
        ),
        Question(
            "wrong_step",
            gettext_lazy("Which program step is wrong, if any?"),
            "step",
            help=gettext_lazy("select a step to see its output objects"),
        ),
        Question("comment", gettext_lazy("Comment"), "text", required=False),
    )

    def sampleable(self, items):
        return items.filter(scene__data__has_key="obj_bbox").exclude(scene__image="")

    def view(self, item) -> dict[str, Any]:
        scene = item.scene.data
        boxes = scene.get("obj_bbox", {})
        count = len(scene.get("objects", []))
        program = item.ground_truth.get("program") or []

        def outputs(step: dict[str, Any]) -> list[int]:
            values = step.get("_output")
            if not isinstance(values, list):
                return []
            return [value for value in values if type(value) is int and 0 <= value < count]

        return {
            "image": item.dataset.media_url(item.scene.image),
            "width": metric.DEFAULT_WIDTH,
            "height": metric.DEFAULT_HEIGHT,
            "facts": [{"label": _("Expression"), "text": item.payload.get("refexp", ""), "main": True}],
            "objects": [
                {"id": index, "box": boxes[str(index + 1)], "name": describe(obj)}
                for index, obj in enumerate(scene.get("objects", []))
                if str(index + 1) in boxes
            ],
            "marked": metric.referred_objects({"program": program}) if program else [],
            "marked_label": _("referred objects"),
            "steps": [{"label": step_label(step), "output": outputs(step)} for step in program],
        }

    def steps(self, item) -> list[str]:
        return [step_label(step) for step in item.ground_truth.get("program") or []]

    def step_kind(self, item, index: int) -> str:
        program = item.ground_truth.get("program") or []
        return str(program[index].get("type", "?")) if 0 <= index < len(program) else "?"

    def template_of(self, item) -> str:
        return metric.expression_family(item.ground_truth) or metric.expression_category(item.ground_truth)


def describe(obj: dict[str, Any]) -> str:
    return " ".join(str(obj.get(key, "")) for key in ("size", "color", "material", "shape")).strip()
