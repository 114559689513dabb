"""A working plug-in: counts the dots of a Dot count image from its pixels, with "weights" read
from a file (a threshold), so that the run's provenance has a file to hash."""

from pathlib import Path

import numpy as np
from PIL import Image

from inference.plugins import LoadContext, Model, ModelInput

WEIGHTS = Path(__file__).with_name("threshold.txt")


class DarkColumns(Model):
    benchmark = "dotcount"
    name = "darkness"
    title = "Dark columns"
    description = "Counts runs of columns holding a pixel darker than a learned threshold."
    uses = "the image"
    device = "cpu"
    batch_size = 3
    version = "2026.11"

    def files(self):
        return [WEIGHTS]

    def load(self, context: LoadContext) -> None:
        self.threshold = int(WEIGHTS.read_text())
        self.loaded_on = context.device

    def predict(self, batch: list[ModelInput]) -> list[dict]:
        answers = []
        for unit in batch:
            dark = (np.asarray(Image.open(unit.images["image"]).convert("L")) < self.threshold).any(axis=0)
            count = int(np.count_nonzero(dark[1:] & ~dark[:-1]) + dark[0])
            answers.append({"id": unit.id, "answer": str(count)})
        return answers

    def parameters(self) -> dict:
        return {"threshold": self.threshold}
