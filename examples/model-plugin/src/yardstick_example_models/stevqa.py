"""STE-VQA: an answer looked up by the question's keywords (an illustration, not a real model).

It cannot read: the answer comes from a small table (stevqa_answers.json) that gives one answer
per kind of question (a price, a street, opening hours, a name) and language, fitted on other
generated images. Its evidence is the whole image, which says honestly that it does not know
where the answer is written (so its LC is the text's share of the image, and its CLC is 0).
`KeywordAnswerOnly` gives the same answers without evidence: an answer-only model, scored for
TC alone (LC and CLC show "–").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from inference.plugins import LoadContext, Model, ModelInput

ANSWERS = Path(__file__).with_name("stevqa_answers.json")


def question_of(unit: ModelInput) -> str:
    """The unit's question. A training-layout item is an image with several questions: its
    payload lists them all ("questions", "question_ids"), and the unit is the one its id names.
    A test-layout item is one question ("question_id", "question")."""
    payload = unit.payload
    if "questions" in payload:
        return payload["questions"][payload["question_ids"].index(int(unit.id))]
    return payload["question"]


def language(text: str) -> str:
    """ "zh" when the text holds a Chinese character, as the metric splits questions."""
    return "zh" if any("\u4e00" <= character <= "\u9fa5" for character in text) else "en"


class KeywordAnswer(Model):
    benchmark = "stevqa"
    name = "keyword-answer"
    title = "Keyword answer, whole-image evidence (example plug-in)"
    description = (
        "An illustration of the plug-in interface: the answer a table gives for the question's "
        "kind and language; the whole image as evidence."
    )
    uses = "the question, and the image's size"
    device = "cpu"
    batch_size = 32
    needs_images = True
    with_evidence = True

    def files(self):
        return [ANSWERS]

    def load(self, context: LoadContext) -> None:
        self.table = json.loads(ANSWERS.read_text(encoding="utf-8"))

    def answer(self, question: str) -> str:
        lang, lowered = language(question), question.lower()
        for kind in self.table["kinds"]:
            if any(word in lowered for word in kind["words"]):
                return kind["answers"][lang]
        return self.table["otherwise"][lang]

    def predict(self, batch: Sequence[ModelInput]) -> list[dict[str, Any]]:
        answers = []
        for unit in batch:
            record: dict[str, Any] = {"question_id": int(unit.id), "answer": self.answer(question_of(unit))}
            if self.with_evidence:
                with Image.open(unit.images["image"]) as image:
                    width, height = image.size
                # A quadrilateral: x1, y1, ..., x4, y4, in any vertex order.
                record["evidence"] = [0, 0, width, 0, width, height, 0, height]
            answers.append(record)
        return answers


class KeywordAnswerOnly(KeywordAnswer):
    name = "keyword-answer-only"
    title = "Keyword answer, no evidence (example plug-in)"
    description = "The same answers as keyword-answer, without evidence: an answer-only model."
    uses = "the question"
    needs_images = False  # so it also runs on a dataset imported without its images
    with_evidence = False
