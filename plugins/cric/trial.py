"""A CRIC trial: a question on an image; the answer is a text and the object it is about."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from humantest.trials.base import AnswerRefused, BalanceField, BenchmarkTrial, TrialUnit, first_problem
from plugins.cric.formats import object_box


def candidate(obj: dict[str, Any]) -> dict[str, Any]:
    """A scene-graph object as the widget draws it: its id and [x, y, w, h] in pixels."""
    return {"id": obj["object_id"], "box": object_box(obj)}


class CricTrial(BenchmarkTrial):
    balance_fields = {"question_type": BalanceField(gettext_lazy("Question type"))}
    headline = ("Final", "final_correct")

    def drawable(self, items: QuerySet) -> QuerySet:
        return items.filter(scene__isnull=False).exclude(scene__image="")

    def draw_fields(self, balance_by: str) -> dict[str, str]:
        return {"question_type": "payload__question_type"} if balance_by else {}

    def balance_value(self, row: dict[str, Any], field: str, part: int) -> Any:
        if field == "question_type":
            return row["question_type"]
        raise KeyError(field)

    def view(self, unit: TrialUnit) -> dict[str, Any]:
        scene = unit.item.scene
        objects = scene.data.get("objects", [])
        return {
            "question": unit.item.payload.get("question", ""),
            "question_type": unit.item.payload.get("question_type", ""),
            "image": unit.item.dataset.media_url(scene.image),
            "width": scene.data.get("width"),
            "height": scene.data.get("height"),
            # Every object of the image is a candidate, in scene order; names are not shown.
            "candidates": [candidate(obj) for obj in objects],
            # Text painted on the image (the demo's object names): the numbers keep clear of it.
            "keep_clear": scene.data.get("text_regions", []),
        }

    def read_answer(self, unit: TrialUnit, raw: Any) -> Any:
        from plugins.cric.metric import prediction_from_record

        if not isinstance(raw, dict):
            raise AnswerRefused("answer", _("expected an object with answer and object"))
        if raw.get("answer") is None or (isinstance(raw["answer"], str) and not raw["answer"].strip()):
            raise AnswerRefused("answer", _("type an answer"))
        # The metric's own check of a prediction's types, then what only a trial can check.
        first_problem(prediction_from_record, {**raw, "question_id": str(unit.key)})
        text = raw["answer"].strip()
        chosen = raw.get("object")
        if chosen is not None and chosen not in {
            obj["object_id"] for obj in unit.item.scene.data.get("objects", [])
        }:
            raise AnswerRefused(
                "object", _("%(value)s is not an object of this image") % {"value": repr(chosen)}
            )
        return {"answer": text, "object": chosen}

    def truth(self, unit: TrialUnit) -> dict[str, Any]:
        truth = unit.item.ground_truth
        targets = set(truth.get("target") or [])
        boxes = [
            candidate(obj) for obj in unit.item.scene.data.get("objects", []) if obj["object_id"] in targets
        ]
        return {"answer": truth.get("answer"), "target": sorted(targets), "boxes": boxes}

    def correct(self, row: dict[str, Any]) -> bool | None:
        return bool(row.get("final_correct"))
