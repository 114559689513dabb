"""The CLEVR world that the scene benchmarks' scenes live in (pure, no Django).

Units are grid units: objects stand on the ground plane z = 0 at integer (x, y) in
[-40, 40]; the visible area is [-20, 20]; one move step is 10 units. +x points toward the
Center camera (down the image), +y to the image's right, +z up. These are the conventions of
the released renders (see ../shared/FORMATS.md).

A shape's "radius" is the radius of the circle it occupies on the ground, which is what the
overlap rule uses. As in CLEVR's own renderer, a cube is scaled by 1/sqrt(2) so that its
footprint's circumscribed circle has that radius; spheres rest on the ground (centre at z = r),
cylinders are as tall as they are wide.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: sRGB colours of the CLEVR palette (from CLEVR's properties.json), 0-255.
COLORS: dict[str, tuple[int, int, int]] = {
    "gray": (87, 87, 87),
    "red": (173, 35, 35),
    "blue": (42, 75, 215),
    "green": (29, 105, 20),
    "brown": (129, 74, 25),
    "purple": (129, 38, 192),
    "cyan": (41, 208, 208),
    "yellow": (255, 238, 51),
}
SHAPES = ("cube", "sphere", "cylinder")
#: Three sizes and three materials, as the released renders have; CLEVR uses small/large and rubber/metal.
RADII: dict[str, float] = {"large": 6.0, "medium": 4.0, "small": 2.0}
MATERIALS = ("rubber", "metal", "glass")

GRID_MIN, GRID_MAX = -40, 40
VISIBLE_MIN, VISIBLE_MAX = -20, 20
MIN_GAP = 1.0
STEP_UNITS = 10


@dataclass(frozen=True, slots=True)
class SceneObject:
    """One object as the renderer needs it.

    `radius` is in grid units (RADII[size], or CLEVR's own sizes);
    `color` is a CLEVR colour name; `rotation` is about the vertical axis, in degrees.
    """

    shape: str
    radius: float
    color: str
    material: str
    x: float
    y: float
    rotation: float = 0.0

    @property
    def half_height(self) -> float:
        """Half the object's height: the centre's height above the ground."""
        return self.radius / math.sqrt(2) if self.shape == "cube" else self.radius


def is_visible_position(x: float, y: float) -> bool:
    """Inside the visible area [-20, 20] x [-20, 20], bounds included."""
    return VISIBLE_MIN <= x <= VISIBLE_MAX and VISIBLE_MIN <= y <= VISIBLE_MAX
