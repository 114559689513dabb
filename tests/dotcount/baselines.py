"""Dot count's baselines (pure): what a benchmark added as a plug-in declares to be run as a model.

`blobs` counts the dark blobs of each image, left to right; `guess` answers a seeded random count.
Both wait `YARDSTICK_TEST_BASELINE_DELAY_S` seconds per batch when that is set, so that tests can
catch a run mid-way (to cancel it, or to kill its worker).
"""

from __future__ import annotations

import os
import time

import numpy as np
from PIL import Image

from inference.baselines import Baseline


def pause() -> None:
    delay = float(os.environ.get("YARDSTICK_TEST_BASELINE_DELAY_S", "0") or 0)
    if delay:
        time.sleep(delay)


def count_blobs(path: str) -> int:
    """Runs of columns holding a dark pixel: the dots, drawn apart on one row."""
    dark = (np.asarray(Image.open(path).convert("L")) < 128).any(axis=0)
    return int(np.count_nonzero(dark[1:] & ~dark[:-1]) + dark[0])


class Blobs(Baseline):
    name = "blobs"
    title = "Blob counter"
    description = "Counts the dark blobs in the image."
    uses = "the image"
    needs_images = True

    def predict(self, units, inputs):
        pause()
        return [{"id": unit.id, "answer": str(count_blobs(unit.images["image"]))} for unit in units]


class Guess(Baseline):
    name = "guess"
    title = "Random count"
    description = "A random count from 1 to 4."
    uses = "nothing"

    def predict(self, units, inputs):
        pause()
        return [{"id": unit.id, "answer": str(self.rng.randint(1, 4))} for unit in units]
