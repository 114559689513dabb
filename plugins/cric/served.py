"""CRIC asked of a served chat model (pure): the image, the question and its type in, a short
answer read out. The model is not asked to ground its answer, so every answer names no object:
Grd and Final then credit only the verify questions whose answer is "no"."""

from __future__ import annotations

import re
from typing import Any

from inference.plugins import ModelInput
from inference.served import ServedFormat, Unparsed, answer_text
from plugins.cric.formats import VERIFY_TYPES

IMAGE_ROLE = "image"
ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.I)
YES_NO = re.compile(r"^(yes|no)\b", re.I)


class CricServed(ServedFormat):
    template = (
        "Answer the question about the image with a single word or a short phrase{hint}, in lower "
        "case, with no explanation.\nQuestion: {question}"
    )

    def prompt(self, item: ModelInput) -> tuple[str, list[str]]:
        hint = ": yes or no" if is_verify(item) else ""
        role = IMAGE_ROLE if IMAGE_ROLE in item.images else next(iter(sorted(item.images)), IMAGE_ROLE)
        return self.template.format(hint=hint, question=item.payload.get("question", "")), [role]

    def parse(self, text: str, item: ModelInput) -> dict[str, Any]:
        answer = ARTICLE.sub("", answer_text(text).lower()).strip()
        if is_verify(item):
            verdict = YES_NO.match(answer)
            if verdict is None:
                raise Unparsed("a verify question's reply that is neither yes nor no")
            answer = verdict.group(1).lower()
        if not answer:
            raise Unparsed("an empty reply")
        return {"question_id": item.id, "answer": answer, "object": None}

    def unparsed(self, item: ModelInput) -> dict[str, Any]:
        return {"question_id": item.id, "answer": "", "object": None}


def is_verify(item: ModelInput) -> bool:
    return item.payload.get("question_type") in VERIFY_TYPES
