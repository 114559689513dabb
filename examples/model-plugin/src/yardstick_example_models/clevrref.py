"""CLEVR-Ref+: the pixels of the first colour the expression names (an illustration, not a real model).

It reads the expression for the first CLEVR colour word ("the large red metal thing" -> red)
and answers with every pixel of the image showing that colour: their bounding box and their
mask. It understands nothing else of the expression: "the objects left of the red cube" gets
the red cube, and two red objects get one box around both. Without a colour word (or for gray,
which it cannot see) it answers every coloured pixel.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from inference.plugins import LoadContext, Model, ModelInput
from yardstick_example_models.colours import NO_COLOUR, PALETTE, ColourReader


def box_of(pixels: np.ndarray) -> list[int]:
    """[x, y, w, h] of the smallest box holding every True pixel (there is at least one)."""
    rows, columns = np.nonzero(pixels)
    left, top = int(columns.min()), int(rows.min())
    return [left, top, int(columns.max()) + 1 - left, int(rows.max()) + 1 - top]


def run_lengths(pixels: np.ndarray) -> str:
    """The mask as CLEVR-Ref+ writes it: the lengths of its runs, row by row, starting with a
    background run (0 when the top-left pixel is in the mask), separated by commas."""
    flat = pixels.ravel()
    edges = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    lengths = np.diff(np.concatenate(([0], edges, [flat.size])))
    if flat[0]:
        lengths = np.concatenate(([0], lengths))
    return ",".join(str(length) for length in lengths)


class ColourBox(Model):
    benchmark = "clevrref"
    name = "colour-box"
    title = "Colour box (example plug-in)"
    description = (
        "An illustration of the plug-in interface: the box and mask of the pixels showing the first "
        "colour the expression names."
    )
    uses = "the image and the expression's colour words"
    device = "cpu"
    batch_size = 16
    needs_images = True

    def files(self):
        return [PALETTE]

    def load(self, context: LoadContext) -> None:
        self.reader = ColourReader(PALETTE)

    def predict(self, batch: Sequence[ModelInput]) -> list[dict[str, Any]]:
        answers = []
        for unit in batch:
            classes = self.reader.classes(unit.images["image"])
            head = unit.payload["refexp"].lower().split(" that ")[0]  # "the red cube" that ...
            colour = next((word for word in re.findall(r"[a-z]+", head) if word in self.reader.names), None)
            pixels = classes == self.reader.names.index(colour) if colour else classes != NO_COLOUR
            answer: dict[str, Any] = {"refexp_index": int(unit.id)}
            if pixels.sum() >= self.reader.min_pixels:
                answer["box"] = box_of(pixels)
                answer["mask"] = run_lengths(pixels)
                answer["mask_size"] = list(pixels.shape)  # [height, width]: [320, 480], the full image
            answers.append(answer)  # no box and no mask: it found nothing, and scores 0
        return answers
