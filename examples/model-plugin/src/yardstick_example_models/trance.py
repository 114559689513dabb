"""TRANCE: guesses one colour change from the renders (an illustration, not a real model).

TRANCE asks which steps turned the initial scene into the final one. This model only ever
answers one colour change: it counts the pixels of each CLEVR colour in the initial render and
in the final one; the colour that gained the most pixels is the new colour, and the colour that
lost the most names the object (the first initial object of that colour). It never answers a
move or a change of shape, size or material, it cannot see gray objects, and two objects of one
colour confuse it. When no colour gained enough pixels it answers no step at all.

In Basic and Event it compares the two Center renders. In View it answers once per final
camera, from that camera's render, as the released View evaluator scores answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from inference.plugins import LoadContext, Model, ModelInput
from yardstick_example_models.colours import PALETTE, ColourReader

FINAL_CAMERAS = ("Camera_Left", "Camera_Center", "Camera_Right")


class ColourCount(Model):
    benchmark = "trance"
    name = "colour-count"
    title = "Colour count (example plug-in)"
    description = (
        "An illustration of the plug-in interface: one colour change, guessed from how many pixels "
        "of each colour the initial and final renders show."
    )
    uses = "the initial Center render, the final render (each final camera's in View), the initial objects"
    device = "cpu"  # numpy only; a network would declare "auto" and use context.device
    batch_size = 8
    needs_images = True

    def files(self):
        return [PALETTE]  # hashed into the run's provenance

    def load(self, context: LoadContext) -> None:
        self.reader = ColourReader(PALETTE)  # read once per run, not once per batch

    def predict(self, batch: Sequence[ModelInput]) -> list[Any]:
        answers = []
        for unit in batch:
            objects = unit.payload["initial"]["objects"]  # the 10 objects people are shown
            before = self.reader.counts(unit.images["init.Camera_Center"])
            if unit.setting == "view":
                answers.append(
                    {
                        camera: self.steps(objects, before, unit.images[f"fin.{camera}"])
                        for camera in FINAL_CAMERAS
                        if f"fin.{camera}" in unit.images
                    }
                )
            else:
                answers.append(self.steps(objects, before, unit.images["fin.Camera_Center"]))
        return answers

    def steps(self, objects: list[dict], before: np.ndarray, final_render: str) -> list[dict]:
        """The answer: a list of steps in the released format. A move would be written
        {"obj_idx": 3, "attr": "position", "val": ["behind", 2]} ([direction, 1 or 2 steps])."""
        change = self.reader.counts(final_render) - before
        gained, lost = int(change.argmax()), int(change.argmin())
        if change[gained] < self.reader.min_pixels:
            return []
        new = self.reader.names[gained]
        old = self.reader.names[lost] if change[lost] <= -self.reader.min_pixels else "gray"
        candidates = [index for index, obj in enumerate(objects) if obj["color"] == old and old != new]
        candidates = candidates or [index for index, obj in enumerate(objects) if obj["color"] != new]
        if not candidates:
            return []
        return [{"obj_idx": candidates[0], "attr": "color", "val": new}]

    def parameters(self) -> dict[str, Any]:
        return {"min_pixels": self.reader.min_pixels}


# Where a real network goes (a sketch: this example needs no torch). `load` puts the weights on
# the device the run chose, once; `predict` answers a whole batch in one forward pass:
#
#     def load(self, context):
#         import torch
#         torch.manual_seed(context.seed)
#         self.device = torch.device(context.device)  # "cuda" when the worker has a GPU and
#         self.net = MyNet().to(self.device).eval()   # the model declares device = "auto"
#         self.net.load_state_dict(torch.load(WEIGHTS, map_location=self.device))
#
#     def predict(self, batch):
#         import torch
#         pixels = torch.stack([read_pair(unit.images) for unit in batch]).to(self.device)
#         with torch.inference_mode():
#             objects, pairs = self.net(pixels)
#         return [decode(o, p) for o, p in zip(objects.cpu(), pairs.cpu())]
