"""Pinhole cameras in the world's grid units, and the three named cameras of the released renders.

A camera is a position, a point it looks at, an up direction and a vertical field of view;
the image is `width` x `height` pixels. Pixel coordinates are continuous: pixel (i, j) covers
[i, i + 1) x [j, j + 1), so its centre is (i + 0.5, j + 0.5) and the optical axis meets the
image at (width / 2, height / 2). Image x grows to the right, image y downwards.

"Camera_Center", "Camera_Left" and "Camera_Right" were fitted by least squares to a released
sample's renders, seven parameters each; how, on what, and how closely they match: docs/scene-engine.md,
*The fitted cameras*.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

Vector = tuple[float, float, float]


@dataclass(frozen=True, slots=True)
class Camera:
    """A pinhole camera; `vertical_fov` is the full vertical field of view in degrees.

    Vectors are tuples, so a camera is hashable: the renderer caches its rays per camera.
    """

    position: Vector
    look_at: Vector
    up: Vector = (0.0, 0.0, 1.0)
    vertical_fov: float = 40.0
    width: int = 320
    height: int = 240

    def basis(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Unit vectors (right, down, forward) of the camera frame, in world coordinates.

        Right and down follow the image axes, so a point's camera coordinates are directly
        proportional to its pixel offset from the image centre.
        """
        return _basis(self.position, self.look_at, self.up)

    @property
    def focal_length_pixels(self) -> float:
        """Distance from the pinhole to the image plane, in pixels of this camera's image."""
        return (self.height / 2.0) / math.tan(math.radians(self.vertical_fov) / 2.0)

    def project(self, points: np.ndarray) -> np.ndarray:
        """Project world points (N, 3) to (N, 3): pixel x, pixel y and depth along the axis.

        Depth is the distance in front of the camera along its viewing direction; points
        behind the camera (depth <= 0) get meaningless pixel coordinates, so check depth.
        """
        points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        right, down, forward = self.basis()
        relative = points - np.asarray(self.position, dtype=np.float64)
        depth = relative @ forward
        safe_depth = np.where(np.abs(depth) < 1e-12, 1e-12, depth)
        focal = self.focal_length_pixels
        pixel_x = self.width / 2.0 + focal * (relative @ right) / safe_depth
        pixel_y = self.height / 2.0 + focal * (relative @ down) / safe_depth
        return np.stack([pixel_x, pixel_y, depth], axis=1)

    def rays(self, width: int | None = None, height: int | None = None, supersample: int = 1) -> np.ndarray:
        """Unit directions (height * supersample, width * supersample, 3) of rays through the image.

        Every pixel is split into supersample x supersample cells and one ray goes through
        each cell's centre (supersample 1: the pixel centre). `width` and `height` default to
        the camera's; another size keeps the vertical field of view and the aspect of the
        new size. All rays start at `position`.
        """
        width = self.width if width is None else width
        height = self.height if height is None else height
        right, down, forward = self.basis()
        focal = (height / 2.0) / math.tan(math.radians(self.vertical_fov) / 2.0)
        columns = (np.arange(width * supersample) + 0.5) / supersample - width / 2.0
        rows = (np.arange(height * supersample) + 0.5) / supersample - height / 2.0
        directions = (
            forward[None, None, :] * focal
            + columns[None, :, None] * right[None, None, :]
            + rows[:, None, None] * down[None, None, :]
        )
        directions /= np.linalg.norm(directions, axis=2, keepdims=True)
        return directions

    def resized(self, width: int, height: int) -> Camera:
        """The same camera with another image size (same vertical field of view)."""
        return replace(self, width=width, height=height)

    def rotated_about_vertical(self, degrees: float) -> Camera:
        """This camera carried around the vertical axis through the origin, counter-clockwise seen from above."""
        angle = math.radians(degrees)
        cosine, sine = math.cos(angle), math.sin(angle)

        def turn(vector: Vector) -> Vector:
            x, y, z = vector
            return (cosine * x - sine * y, sine * x + cosine * y, z)

        return replace(self, position=turn(self.position), look_at=turn(self.look_at), up=turn(self.up))


@functools.lru_cache(maxsize=64)
def _basis(position: Vector, look_at: Vector, up: Vector) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Camera frame, cached: the renderer projects a few points per object for every image."""
    forward = np.subtract(look_at, position).astype(np.float64)
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, np.asarray(up, dtype=np.float64))
    norm = np.linalg.norm(right)
    if norm < 1e-12:
        raise ValueError("the camera's up vector is parallel to its viewing direction")
    right /= norm
    down = np.cross(forward, right)
    for vector in (right, down, forward):
        vector.flags.writeable = False
    return right, down, forward


# The cameras fitted to the released sample's four renders (see the module docstring): position
# in grid units; look_at, where the optical axis meets the ground; `up`, the camera's own up
# direction, which carries the fitted roll; vertical field of view in degrees. Fitted yaw
# (azimuth of the viewing direction), pitch (downwards) and roll, in degrees: Center 181.9,
# 32.2, -0.2; Left 137.2, 35.0, -0.1; Right 224.7, 32.9, 0.1.
_FITTED: dict[str, tuple[Vector, Vector, Vector, float]] = {
    "Camera_Center": ((63.68, 2.12, 40.33), (-0.29, -0.03, 0.0), (-0.5327, -0.0217, 0.8461), 37.52),
    "Camera_Left": ((46.32, -42.80, 44.24), (0.00, 0.01, 0.0), (-0.4226, 0.3887, 0.8187), 38.65),
    "Camera_Right": ((46.18, 45.63, 41.87), (0.20, 0.18, 0.0), (-0.3880, -0.3807, 0.8394), 38.61),
}
CAMERA_NAMES = tuple(_FITTED)


def fitted_camera(name: str, width: int = 320, height: int = 240) -> Camera:
    """The fitted camera "Camera_Center", "Camera_Left" or "Camera_Right" at a given size.

    Another size keeps the vertical field of view; the released renders are 4:3 (320x240).
    """
    if name not in _FITTED:
        raise ValueError(f"unknown camera {name!r}; expected one of {', '.join(CAMERA_NAMES)}")
    position, look_at, up, vertical_fov = _FITTED[name]
    return Camera(
        position=position, look_at=look_at, up=up, vertical_fov=vertical_fov, width=width, height=height
    )


CAMERA_CENTER = fitted_camera("Camera_Center")
CAMERA_LEFT = fitted_camera("Camera_Left")
CAMERA_RIGHT = fitted_camera("Camera_Right")
