"""CRIC: the most frequent answer of the question's type (an illustration, not a real model).

The answer comes from a table of one answer per question type (cric_answers.json), counted on
other generated questions: what the answer distribution alone gives away. It grounds nothing
(`"object": null`), which is right only for a verify question whose answer is "no": an object
is named by its scene-graph id, and a plug-in is given the question and the image, not the
scene graph (docs/models.md, "What a model is given").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inference.plugins import LoadContext, Model, ModelInput

ANSWERS = Path(__file__).with_name("cric_answers.json")


class TypeAnswer(Model):
    benchmark = "cric"
    name = "type-answer"
    title = "Answer by question type (example plug-in)"
    description = (
        "An illustration of the plug-in interface: the most frequent answer of the question's type "
        "(counted on other questions), no grounding."
    )
    uses = "the question type"
    device = "cpu"
    batch_size = 64
    needs_images = False

    def files(self):
        return [ANSWERS]

    def load(self, context: LoadContext) -> None:
        table = json.loads(ANSWERS.read_text(encoding="utf-8"))
        self.answers, self.otherwise = table["answers"], table["otherwise"]

    def predict(self, batch: Sequence[ModelInput]) -> list[dict[str, Any]]:
        # unit.payload holds what people read: image_id, question_id, question, question_type.
        return [
            {
                "question_id": unit.id,  # CRIC's ids are strings ("1_0")
                "answer": self.answers.get(unit.payload["question_type"], self.otherwise),
                "object": None,  # or the scene-graph id of the one object grounding the answer
            }
            for unit in batch
        ]
