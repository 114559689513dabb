"""An STE-VQA trial: one question on a photo; the answer is the text read and its evidence quadrilateral.

Only training-layout files name images, so trials draw from them: an image holds several
questions, and each trial asks one (`part`), never the same image twice to one tester.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from humantest.trials.base import AnswerRefused, BalanceField, BenchmarkTrial, TrialUnit, first_problem, media
from plugins.stevqa.formats import language


class SteVqaTrial(BenchmarkTrial):
    # The monolingual and bilingual settings are about models; people answer in both languages.
    settings = ("",)
    balance_fields = {"language": BalanceField(gettext_lazy("Question language"))}
    headline = ("CLC", "CLC")

    def drawable(self, items: QuerySet) -> QuerySet:
        return items.filter(media__has_key="image")

    def draw_fields(self, balance_by: str) -> dict[str, str]:
        return {"questions": "payload__questions"}

    def parts(self, row: dict[str, Any]) -> int:
        return len(row["questions"] or ())

    def eligible(self, row: dict[str, Any], setting: str) -> bool:
        return self.parts(row) > 0

    def balance_value(self, row: dict[str, Any], field: str, part: int) -> Any:
        if field == "language":
            return language(row["questions"][part])
        raise KeyError(field)

    def view(self, unit: TrialUnit) -> dict[str, Any]:
        return {"question": unit.item.payload["questions"][unit.part], "image": media(unit.item, "image")}

    def read_answer(self, unit: TrialUnit, raw: Any) -> Any:
        from plugins.stevqa.metric import prediction_from_record

        if not isinstance(raw, dict):
            raise AnswerRefused("answer", _("expected an object with answer and evidence"))
        if raw.get("answer") is None or (isinstance(raw["answer"], str) and not raw["answer"].strip()):
            raise AnswerRefused("answer", _("type the answer"))
        if not isinstance(raw.get("evidence"), list) or len(raw["evidence"]) != 8:
            raise AnswerRefused("evidence", _("draw the evidence quadrilateral (4 corners)"))
        # The metric's own check of a prediction: the answer a string, the evidence 8 numbers.
        first_problem(prediction_from_record, {**raw, "question_id": unit.key})
        return {
            "answer": raw["answer"].strip(),
            "evidence": [round(float(value), 1) for value in raw["evidence"]],
        }

    def truth(self, unit: TrialUnit) -> dict[str, Any]:
        qa = unit.item.ground_truth["annotation"][unit.part]
        return {"answer": qa["answer"], "evidence": [float(value) for value in qa["evidence"]]}

    def correct(self, row: dict[str, Any]) -> bool | None:
        return bool(row.get("CLC"))
