"""Dot count asked of a served chat model (pure): the question in, a whole number read out."""

from __future__ import annotations

import re
from typing import Any

from inference.plugins import ModelInput
from inference.served import ServedFormat, Unparsed, answer_text

COUNT = re.compile(r"\d+")


class DotCountServed(ServedFormat):
    template = "{question} Answer with a whole number only."

    def prompt(self, item: ModelInput) -> tuple[str, list[str]]:
        return self.template.format(question=item.payload.get("question", "How many dots?")), ["image"]

    def parse(self, text: str, item: ModelInput) -> dict[str, Any]:
        found = COUNT.search(answer_text(text))
        if found is None:
            raise Unparsed("no whole number in the reply")
        return {"id": item.id, "answer": str(int(found.group()))}

    def unparsed(self, item: ModelInput) -> dict[str, Any]:
        return {"id": item.id, "answer": ""}
