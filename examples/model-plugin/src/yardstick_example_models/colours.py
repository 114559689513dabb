"""Which CLEVR colour each pixel of a render shows (shared by the TRANCE and CLEVR-Ref+ examples).

A pixel bright and saturated enough takes the palette colour of the nearest hue; every other
pixel (the gray floor, shadows, highlights, gray objects) takes none. So gray objects are
invisible to it, and a metal object's reflections may count for a neighbour's colour.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image

PALETTE = Path(__file__).with_name("palette.json")
#: The class of a pixel that shows no palette colour.
NO_COLOUR = -1


class ColourReader:
    def __init__(self, path: Path = PALETTE):
        palette = json.loads(path.read_text(encoding="utf-8"))
        chromatic = {name: rgb for name, rgb in palette["colours"].items() if max(rgb) - min(rgb) > 40}
        #: The colours it can see, in the palette's order (gray is not among them).
        self.names = list(chromatic)
        swatch = Image.new("RGB", (len(chromatic), 1))
        swatch.putdata([tuple(rgb) for rgb in chromatic.values()])
        self.hues = np.asarray(swatch.convert("HSV"))[0, :, 0].astype(np.int16)
        self.min_saturation = palette["min_saturation"]
        self.min_brightness = palette["min_brightness"]
        #: Fewer pixels than this are noise, not an object.
        self.min_pixels = palette["min_pixels"]

    def classes(self, path: str) -> np.ndarray:
        """The image's pixels (height x width): each one's index in `names`, or NO_COLOUR."""
        with Image.open(path) as image:
            hsv = np.asarray(image.convert("RGB").convert("HSV")).astype(np.int16)
        hue, saturation, brightness = hsv[..., 0], hsv[..., 1], hsv[..., 2]
        distance = np.abs(hue[..., None] - self.hues)
        distance = np.minimum(distance, 256 - distance)  # PIL's hue is a circle of 256 steps
        coloured = (saturation >= self.min_saturation) & (brightness >= self.min_brightness)
        return np.where(coloured, distance.argmin(axis=-1), NO_COLOUR)

    def counts(self, path: str) -> np.ndarray:
        """How many pixels of the image show each colour of `names`."""
        classes = self.classes(path)
        return np.bincount(classes[classes != NO_COLOUR], minlength=len(self.names))
