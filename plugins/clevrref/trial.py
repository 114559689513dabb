"""A CLEVR-Ref+ trial: a referring expression on a scene; the answer is the objects it refers to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from django.db.models import QuerySet
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from humantest.trials.base import AnswerRefused, BalanceField, BenchmarkTrial, TrialUnit


class ClevrRefTrial(BenchmarkTrial):
    balance_fields = {
        "category": BalanceField(gettext_lazy("Expression category")),
        "single": BalanceField(gettext_lazy("Single or several objects")),
    }
    headline = ("mean IoU", "mask_iou")

    def drawable(self, items: QuerySet) -> QuerySet:
        return items.filter(scene__data__has_key="obj_mask").exclude(scene__image="")

    def draw_fields(self, balance_by: str) -> dict[str, str]:
        return {"program": "ground_truth__program"} if balance_by else {}

    def balance_value(self, row: dict[str, Any], field: str, part: int) -> Any:
        from plugins.clevrref import metric

        if field == "category":
            return metric.expression_category(row)
        if field == "single":
            return len(metric.referred_objects(row)) == 1
        raise KeyError(field)

    @staticmethod
    def nothing_allowed(unit: TrialUnit) -> bool:
        """Whether testers may answer that nothing fits: on a dataset generated with false-premise
        expressions (its file says so: `false_premise_share`), whichever item this is, so that
        the choice tells nothing about the item."""
        return bool(unit.item.dataset.meta.get("false_premise_share"))

    def view(self, unit: TrialUnit) -> dict[str, Any]:
        from plugins.clevrref.metric import DEFAULT_HEIGHT, DEFAULT_WIDTH

        scene = unit.item.scene.data
        boxes = scene.get("obj_bbox", {})
        return {
            "refexp": unit.item.payload.get("refexp", ""),
            "nothing_allowed": self.nothing_allowed(unit),
            "image": unit.item.dataset.media_url(unit.item.scene.image),
            "width": DEFAULT_WIDTH,
            "height": DEFAULT_HEIGHT,
            "candidates": [
                {"id": index, "box": boxes[str(index + 1)]}
                for index in range(len(scene.get("objects", [])))
                if str(index + 1) in boxes
            ],
        }

    def read_answer(self, unit: TrialUnit, raw: Any) -> Any:
        chosen = raw.get("objects") if isinstance(raw, dict) else None
        if isinstance(chosen, list) and not chosen and raw.get("nothing") is True:
            if not self.nothing_allowed(unit):
                raise AnswerRefused("nothing", _("this test has no expression that refers to nothing"))
            return {"objects": []}
        if not isinstance(chosen, list) or not chosen:
            raise AnswerRefused("objects", _("click at least one object"))
        count = len(unit.item.scene.data.get("objects", []))
        for index, value in enumerate(chosen):
            if type(value) is not int or not 0 <= value < count:
                raise AnswerRefused(
                    f"objects[{index}]",
                    _("%(value)s is not an object of this image") % {"value": repr(value)},
                )
        return {"objects": sorted(set(chosen))}

    def prediction(self, unit: TrialUnit, answer: dict[str, Any]) -> dict[str, Any]:
        """Clicked objects as the prediction format: the union of their masks, and their box."""
        from plugins.clevrref.metric import DEFAULT_HEIGHT, DEFAULT_WIDTH
        from plugins.clevrref.scenes import decode_mask, encode_mask

        scene = unit.item.scene.data
        mask = np.zeros((DEFAULT_HEIGHT, DEFAULT_WIDTH), dtype=bool)
        if not answer["objects"]:
            # "Nothing fits": no box (one without area, as the metric reads it) and an empty mask.
            return {"box": [0, 0, 0, 0], "mask": encode_mask(mask)}
        for index in answer["objects"]:
            mask |= decode_mask(scene["obj_mask"][str(index + 1)], DEFAULT_WIDTH, DEFAULT_HEIGHT)
        boxes = [scene["obj_bbox"][str(index + 1)] for index in answer["objects"]]
        left = min(box[0] for box in boxes)
        top = min(box[1] for box in boxes)
        right = max(box[0] + box[2] for box in boxes)
        bottom = max(box[1] + box[3] for box in boxes)
        return {"box": [left, top, right - left, bottom - top], "mask": encode_mask(mask)}

    def stored_answer(self, unit: TrialUnit, answer: Any) -> Any:
        # The clicked objects, and the box and mask they make (what a model's prediction holds).
        return {**answer, **self.prediction(unit, answer)}

    def scenes(self, units: Sequence[TrialUnit]) -> list[dict[str, Any]]:
        return list({unit.item.scene_id: unit.item.scene.data for unit in units}.values())

    def truth(self, unit: TrialUnit) -> dict[str, Any]:
        from plugins.clevrref.metric import referred_objects

        objects = referred_objects(self.record(unit))
        boxes = unit.item.scene.data.get("obj_bbox", {})
        return {"objects": objects, "boxes": [{"id": i, "box": boxes.get(str(i + 1))} for i in objects]}

    def correct(self, row: dict[str, Any]) -> bool | None:
        if row.get("false_premise"):
            return row.get("false_premise_correct")
        iou = row.get("mask_iou")
        return None if iou is None else iou >= 0.999
