"""Dot count as a human trial: the image and the question; the tester types the count."""

from __future__ import annotations

from typing import Any

from humantest.trials import AnswerRefused, BenchmarkTrial, TrialUnit
from humantest.trials.base import media


class DotCountTrial(BenchmarkTrial):
    headline = ("MAE", "abs_error")
    widget_template = "dotcount/widget.html"
    brief_template = "dotcount/brief.html"
    widget_script = "dotcount/widget.js"

    def view(self, unit: TrialUnit) -> dict[str, Any]:
        return {"question": unit.item.payload["question"], "image": media(unit.item, "image")}

    def read_answer(self, unit: TrialUnit, raw: Any) -> Any:
        text = raw.get("answer") if isinstance(raw, dict) else None
        if not isinstance(text, str) or not text.strip().isdigit():
            raise AnswerRefused("answer", "type the number of dots")
        return {"answer": text.strip()}

    def truth(self, unit: TrialUnit) -> dict[str, Any]:
        return {"answer": unit.item.ground_truth["answer"]}

    def correct(self, row: dict[str, Any]) -> bool | None:
        return bool(row.get("correct"))
