"""STE-VQA asked of a served chat model (pure): the image and the question in, the answer's text
read out. The answers carry no evidence, so they are scored as answer-only predictions: TC as
usual; LC and CLC not computed, or computed from OCR evidence under the OCR variants
(docs/metrics.md, "Answer-only predictions and evidence from OCR")."""

from __future__ import annotations

from typing import Any

from inference.plugins import ModelInput
from inference.served import ServedFormat, Unparsed, answer_text

IMAGE_ROLE = "image"


class SteVqaServed(ServedFormat):
    template = (
        "Answer the question about the image with text written in the image. Copy the text as the "
        "image writes it (Chinese or English); give only the answer, no explanation.\n"
        "Question: {question}"
    )

    def prompt(self, item: ModelInput) -> tuple[str, list[str]]:
        role = IMAGE_ROLE if IMAGE_ROLE in item.images else next(iter(sorted(item.images)), IMAGE_ROLE)
        return self.template.format(question=question_of(item)), [role]

    def parse(self, text: str, item: ModelInput) -> dict[str, Any]:
        answer = answer_text(text)
        if not answer:
            raise Unparsed("an empty reply")
        return {"question_id": int(item.id), "answer": answer}

    def unparsed(self, item: ModelInput) -> dict[str, Any]:
        return {"question_id": int(item.id), "answer": ""}


def question_of(item: ModelInput) -> str:
    """The unit's question: a test record's own, or in a training record (an image with several
    questions) the one whose id the unit has."""
    payload = item.payload
    if isinstance(payload.get("question"), str):
        return payload["question"]
    ids = [str(value) for value in payload.get("question_ids") or ()]
    questions = payload.get("questions") or ()
    if item.id in ids and ids.index(item.id) < len(questions):
        return str(questions[ids.index(item.id)] or "")
    return ""
