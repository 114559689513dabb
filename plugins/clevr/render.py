"""A pure-numpy ray caster for CLEVR-style scenes that looks like the released renders.

Blender (Cycles, 512 samples) takes seconds per released image; this renderer makes a 320x240
image in tens of milliseconds on one core, close enough in framing, tones and materials to
generate practice and test items (docs/renders/ compares it with the released sample).

What is computed, and why:

- Geometry is exact. Rays are intersected analytically with spheres, finite capped cylinders,
  boxes turned about the vertical axis and the ground plane z = 0. A ray is only tested
  against an object inside that object's projected bounding rectangle, so the cost follows the
  objects' screen area rather than pixels times objects.
- Anti-aliasing is adaptive supersampling: every pixel gets supersample x supersample
  sub-pixel rays for visibility, but only pixels where those rays do not all see the same
  object (silhouettes, occlusion edges) shade every sub-pixel ray; the others are shaded once,
  from the pixel-centre ray. Edges are as smooth as with full supersampling at a fraction of
  the shading work. The object-id buffer comes from the pixel-centre rays.
- As in the released renders, objects outside the visible area [-20, 20]^2 are not rendered
  (the released generator sets Blender's hide_render on them) unless `hide_outside_visible_area=False`.
- Lighting was fitted to the released renders. The floor's brightness, read at the same floor
  points in the four sample images, is the same in every view (a matte floor) and is matched
  within about 5% (RMS) by two point lamps with inverse-square falloff (a large one high above
  the scene, a weak one low at the front left) plus two distant lights whose shadows are seen
  in the sample: a key light from the front right (its shadows take about 30% of the floor's
  light) and a back light from the back right (about 15%). Their directions were read off the
  shadows. The empty floor does not depend on the scene, so it is computed once per camera.
- Shadows on the floor are analytic soft shadows. For a distant light, the shadow of a
  vertical cylinder on the ground is a disc swept along a segment, that of a turned cube a
  square swept along a segment (a convex polygon), that of a sphere an ellipse; the light's
  visibility at a floor point is a smooth step of the signed distance to that shape, with a
  penumbra that widens with the height of the occluding part: sharp at the contact, soft at
  the tip, as with Blender's area lamps. This is exact in shape, free of noise, and costs a few
  array operations per object and light, where sampling an area light with shadow rays would
  need several ray casts per pixel and still show banding or noise. The overhead lamp's
  shadow is taken straight down with a wide penumbra, which gives the contact darkening
  (ambient occlusion) seen round the objects' bases. Shadows of objects on other objects are
  hard shadows of the two distant lights (one shadow ray each): rare, and small on screen.
- Materials follow CLEVR's: the palette colours are given to Blender as linear reflectances,
  and so they are here (the sample's metal cylinder confirms it). Rubber is Lambert with a
  faint broad highlight. Metal reflects the scene once (the reflected ray is intersected with
  objects and floor, else sees a grey sky), tinted by its colour, plus sharp highlights. Glass
  refracts the ray in and out of the object (Snell, index 1.5) and shows what the outgoing ray
  sees, absorbed more the longer the path inside, plus a Fresnel reflection; Blender's glass
  tints reflections by its colour too, which keeps the cubes dark and saturated as in the
  sample. Lighting is computed in linear light and converted to sRGB at the end.
- The outline of the visible area is a thin stripe of brighter floor, as faint as in the
  sample; the floor darkens towards the horizon by the lamps' falloff, and a slight vignette
  darkens the corners.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from plugins.clevr.camera import Camera
from plugins.clevr.world import COLORS, VISIBLE_MAX, VISIBLE_MIN, SceneObject, is_visible_position

# ---------------------------------------------------------------------------------------------
# Lights and materials. Radiance is linear; 1.0 is sRGB white.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DistantLight:
    """A light far away: the direction towards it, and how strongly and how softly it lights.

    `floor_radiance` is what it adds to the lit floor (so it reads directly off the images);
    `angular_radius` (radians) sets how fast its shadows soften away from the contact.
    """

    azimuth: float  # degrees, counter-clockwise from +x seen from above
    elevation: float  # degrees above the horizon
    floor_radiance: float
    angular_radius: float

    @property
    def direction(self) -> np.ndarray:
        azimuth, elevation = math.radians(self.azimuth), math.radians(self.elevation)
        return np.array(
            [
                math.cos(elevation) * math.cos(azimuth),
                math.cos(elevation) * math.sin(azimuth),
                math.sin(elevation),
            ]
        )

    @property
    def irradiance(self) -> float:
        """Irradiance on a surface facing the light (floor radiance / albedo / sin(elevation))."""
        return self.floor_radiance / FLOOR_ALBEDO / math.sin(math.radians(self.elevation))


@dataclass(frozen=True, slots=True)
class PointLamp:
    """A lamp at a position (grid units); irradiance = power * cosine / distance^2."""

    position: tuple[float, float, float]
    power: float


#: Reflectance of the floor. Light strengths are expressed through the floor radiance they give,
#: which the sample measures; the albedo itself it does not (no rubber object is visible in it),
#: so it was chosen to make matte objects about as bright as the floor, as in CLEVR's renders.
FLOOR_ALBEDO = 0.7
KEY_LIGHT = DistantLight(azimuth=58.0, elevation=43.0, floor_radiance=0.078, angular_radius=0.10)
BACK_LIGHT = DistantLight(azimuth=115.0, elevation=55.0, floor_radiance=0.05, angular_radius=0.12)
DISTANT_LIGHTS = (KEY_LIGHT, BACK_LIGHT)
OVERHEAD_LAMP = PointLamp(position=(-3.75, 2.66, 37.54), power=387.0 / FLOOR_ALBEDO)
FILL_LAMP = PointLamp(position=(38.0, -21.56, 22.08), power=85.0 / FLOOR_ALBEDO)
POINT_LAMPS = (OVERHEAD_LAMP, FILL_LAMP)
#: The overhead lamp's shadow, taken straight down: its width per unit of object height, and the
#: share of the lamp's light it takes at most (a large lamp is never wholly hidden).
CONTACT_SHADOW_SPREAD = 1.2
CONTACT_SHADOW_STRENGTH = 0.35
#: Radiance of the sky, seen in reflections; objects also get it as ambient light from above
#: and the floor's light from below.
SKY_RADIANCE = 0.14
FLOOR_BOUNCE = 0.07
#: The floor is very slightly warm in the real renders.
LAMP_TINT = np.array([1.0, 0.985, 0.955])

#: Outline of the visible area: half-width of the stripe (grid units) and its extra albedo,
#: matched to the sample, where it is 4 to 5 grey levels above the floor at 160x120.
OUTLINE_HALF_WIDTH = 0.12
OUTLINE_BOOST = 0.16
#: Fraction of light lost in the image corners.
VIGNETTE = 0.03

#: Glass transmits albedo ** (exponent * path / typical path) * Material.transmission; fitted to
#: the mean colours of the sample's glass cubes, much darker and more saturated than the palette.
GLASS_ABSORPTION_EXPONENT = 1.63
GLASS_TYPICAL_PATH = 0.8  # path length inside, as a fraction of the object's height
GLASS_REFRACTIVE_INDEX = 1.5


@dataclass(frozen=True, slots=True)
class Material:
    """Weights of the shading terms (linear)."""

    diffuse: float  # Lambert term
    specular: float  # Blinn-Phong highlights of the lights
    shininess: float  # Blinn-Phong exponent
    reflection: float  # mirror reflection of the scene (metal, glass)
    transmission: float  # what is seen through the object (glass)


MATERIALS: dict[str, Material] = {
    "rubber": Material(diffuse=1.0, specular=0.04, shininess=6.0, reflection=0.0, transmission=0.0),
    "metal": Material(diffuse=0.05, specular=0.5, shininess=90.0, reflection=0.72, transmission=0.0),
    "glass": Material(diffuse=0.0, specular=0.05, shininess=300.0, reflection=1.0, transmission=0.37),
}


_MATERIAL_CODES = {name: code for code, name in enumerate(MATERIALS)}


@dataclass(slots=True)
class Render:
    """A rendered image and, per pixel, the index into the objects of the one seen there (-1: none)."""

    image: np.ndarray  # (H, W, 3) uint8, sRGB
    object_ids: np.ndarray  # (H, W) int16, from the pixel-centre ray


# ---------------------------------------------------------------------------------------------
# Geometry
# ---------------------------------------------------------------------------------------------

_MISS = np.inf
_EPSILON = 1e-4


@dataclass(frozen=True, slots=True)
class _Solid:
    """An object reduced to what intersection and shading need."""

    index: int  # position in the caller's sequence
    shape: str
    x: float
    y: float
    radius: float  # sphere and cylinder radius; a cube's half side
    height: float
    cosine: float  # of the rotation about z (cubes)
    sine: float
    albedo: np.ndarray  # linear reflectance (3,)
    material: str

    @property
    def centre(self) -> np.ndarray:
        return np.array([self.x, self.y, self.height / 2.0])

    @property
    def bounding_radius(self) -> float:
        if self.shape == "sphere":
            return self.radius
        if self.shape == "cylinder":
            return math.hypot(self.radius, self.height / 2.0)
        return self.radius * math.sqrt(3.0)

    @property
    def footprint_reach(self) -> float:
        """Largest horizontal distance from the axis to the surface."""
        return self.radius * math.sqrt(2.0) if self.shape == "cube" else self.radius

    def corners(self) -> np.ndarray:
        """The 8 corners of an axis-aligned box around the object."""
        reach = self.footprint_reach
        return np.array(
            [
                (x, y, z)
                for x in (self.x - reach, self.x + reach)
                for y in (self.y - reach, self.y + reach)
                for z in (0.0, self.height)
            ]
        )


def _solids(objects: Sequence[SceneObject], hide_outside_visible_area: bool) -> list[_Solid]:
    solids = []
    for index, item in enumerate(objects):
        if hide_outside_visible_area and not is_visible_position(item.x, item.y):
            continue
        if item.shape not in ("sphere", "cylinder", "cube"):
            raise ValueError(f"unknown shape {item.shape!r}")
        if item.material not in MATERIALS:
            raise ValueError(f"unknown material {item.material!r}")
        if item.color not in COLORS:
            raise ValueError(f"unknown colour {item.color!r}")
        angle = math.radians(item.rotation)
        solids.append(
            _Solid(
                index=index,
                shape=item.shape,
                x=float(item.x),
                y=float(item.y),
                radius=item.radius / math.sqrt(2.0) if item.shape == "cube" else float(item.radius),
                height=2.0 * item.half_height,
                cosine=math.cos(angle),
                sine=math.sin(angle),
                albedo=np.asarray(COLORS[item.color], dtype=np.float64) / 255.0,
                material=item.material,
            )
        )
    return solids


def _intersect(solid: _Solid, origins: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """Distance along each ray to where it first meets the solid (inf where it misses).

    `origins` is (3,) or (N, 3), `directions` (N, 3) unit vectors. Hits nearer than a small
    epsilon are ignored, so a ray that starts on (or just inside) the surface finds the far side.
    """
    ox, oy, oz = origins[..., 0], origins[..., 1], origins[..., 2]
    dx, dy, dz = directions[:, 0], directions[:, 1], directions[:, 2]
    if solid.shape == "sphere":
        cx, cy, cz = ox - solid.x, oy - solid.y, oz - solid.radius
        half_b = cx * dx + cy * dy + cz * dz
        discriminant = half_b * half_b - (cx * cx + cy * cy + cz * cz - solid.radius * solid.radius)
        root = np.sqrt(np.maximum(discriminant, 0.0))
        near, far = -half_b - root, -half_b + root
        t = np.where(near > _EPSILON, near, far)
        return np.where((discriminant >= 0.0) & (t > _EPSILON), t, _MISS)
    if solid.shape == "cylinder":
        cx, cy = ox - solid.x, oy - solid.y
        a = np.maximum(dx * dx + dy * dy, 1e-12)
        half_b = cx * dx + cy * dy
        discriminant = half_b * half_b - a * (cx * cx + cy * cy - solid.radius * solid.radius)
        root = np.sqrt(np.maximum(discriminant, 0.0))
        best = np.full(directions.shape[0], _MISS)
        for t in ((-half_b - root) / a, (-half_b + root) / a):
            z = oz + t * dz
            valid = (discriminant >= 0.0) & (t > _EPSILON) & (z >= 0.0) & (z <= solid.height)
            best = np.where(valid & (t < best), t, best)
        safe_dz = np.where(np.abs(dz) > 1e-12, dz, 1e-12)
        for plane in (solid.height, 0.0):
            t = (plane - oz) / safe_dz
            px, py = cx + t * dx, cy + t * dy
            valid = (t > _EPSILON) & (px * px + py * py <= solid.radius * solid.radius)
            best = np.where(valid & (t < best), t, best)
        return best
    # Cube: the slab method in the cube's own frame (turned back by its rotation).
    cx, cy, cz = ox - solid.x, oy - solid.y, oz - solid.height / 2.0
    local_origin = (solid.cosine * cx + solid.sine * cy, -solid.sine * cx + solid.cosine * cy, cz)
    local_direction = (solid.cosine * dx + solid.sine * dy, -solid.sine * dx + solid.cosine * dy, dz)
    near = np.full(directions.shape[0], -np.inf)
    far = np.full(directions.shape[0], np.inf)
    for origin, direction in zip(local_origin, local_direction, strict=True):
        safe = np.where(np.abs(direction) > 1e-12, direction, 1e-12)
        t1 = (-solid.radius - origin) / safe
        t2 = (solid.radius - origin) / safe
        near = np.maximum(near, np.minimum(t1, t2))
        far = np.minimum(far, np.maximum(t1, t2))
    t = np.where(near > _EPSILON, near, far)
    return np.where((near <= far) & (t > _EPSILON), t, _MISS)


def _normals(solid: _Solid, points: np.ndarray) -> np.ndarray:
    """Outward unit normals at points on the solid's surface (N, 3)."""
    relative = points - np.array([solid.x, solid.y, 0.0])
    if solid.shape == "sphere":
        relative[:, 2] -= solid.radius
        return relative / np.linalg.norm(relative, axis=1, keepdims=True)
    if solid.shape == "cylinder":
        radial = np.hypot(relative[:, 0], relative[:, 1])
        # Which surface a point is on: compare how far inside the side and the caps it lies.
        to_side = solid.radius - radial
        to_cap = np.minimum(solid.height - relative[:, 2], relative[:, 2])
        on_side = to_side <= to_cap
        safe_radial = np.where(radial > 1e-9, radial, 1.0)
        normals = np.zeros_like(points)
        normals[:, 0] = np.where(on_side, relative[:, 0] / safe_radial, 0.0)
        normals[:, 1] = np.where(on_side, relative[:, 1] / safe_radial, 0.0)
        normals[:, 2] = np.where(on_side, 0.0, np.where(relative[:, 2] > solid.height / 2.0, 1.0, -1.0))
        return normals
    local = np.stack(
        [
            solid.cosine * relative[:, 0] + solid.sine * relative[:, 1],
            -solid.sine * relative[:, 0] + solid.cosine * relative[:, 1],
            relative[:, 2] - solid.height / 2.0,
        ],
        axis=1,
    )
    axis = np.argmax(np.abs(local), axis=1)
    rows = np.arange(len(points))
    local_normal = np.zeros_like(points)
    local_normal[rows, axis] = np.sign(local[rows, axis])
    normals = np.empty_like(points)
    normals[:, 0] = solid.cosine * local_normal[:, 0] - solid.sine * local_normal[:, 1]
    normals[:, 1] = solid.sine * local_normal[:, 0] + solid.cosine * local_normal[:, 1]
    normals[:, 2] = local_normal[:, 2]
    return normals


def _trace(
    solids: Sequence[_Solid], origins: np.ndarray, directions: np.ndarray, skip: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Nearest solid along arbitrary rays (N, 3): distance and position in `solids` (-1: none).

    A ray is tested against a solid only if it passes through the solid's bounding sphere.
    `skip` (N,) names, per ray, a solid to ignore (the one the ray starts from), or -1.
    """
    nearest = np.full(len(directions), _MISS)
    which = np.full(len(directions), -1, dtype=np.intp)
    for position, solid in enumerate(solids):
        offset = origins - solid.centre
        half_b = np.einsum("ij,ij->i", offset, directions)
        reach = solid.bounding_radius
        discriminant = half_b * half_b - np.einsum("ij,ij->i", offset, offset) + reach * reach
        candidates = (discriminant >= 0.0) & (np.sqrt(np.maximum(discriminant, 0.0)) > half_b)
        if skip is not None:
            candidates &= skip != position
        rows = np.flatnonzero(candidates)
        if rows.size == 0:
            continue
        t = _intersect(solid, origins[rows], directions[rows])
        closer = t < nearest[rows]
        nearest[rows[closer]] = t[closer]
        which[rows[closer]] = position
    return nearest, which


# ---------------------------------------------------------------------------------------------
# Analytic soft shadows on the floor
# ---------------------------------------------------------------------------------------------


def _smoothstep(signed_distance: np.ndarray, half_width: np.ndarray) -> np.ndarray:
    """0 inside a shadow (negative distance), 1 outside, with a smooth ramp across the edge."""
    x = np.clip((signed_distance + half_width) / (2.0 * half_width), 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def _convex_hull(points: np.ndarray) -> np.ndarray:
    """Counter-clockwise convex hull of a few 2D points (Andrew's monotone chain)."""
    ordered = sorted({(float(x), float(y)) for x, y in np.round(points, 9)})

    def turn(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    def chain(sequence: list[tuple[float, float]]) -> list[tuple[float, float]]:
        kept: list[tuple[float, float]] = []
        for point in sequence:
            while len(kept) >= 2 and turn(kept[-2], kept[-1], point) <= 0:
                kept.pop()
            kept.append(point)
        return kept

    lower, upper = chain(ordered), chain(ordered[::-1])
    return np.array(lower[:-1] + upper[:-1])


def _polygon_signed_distance(px: np.ndarray, py: np.ndarray, polygon: np.ndarray) -> np.ndarray:
    """Signed distance from points to a counter-clockwise convex polygon (negative inside)."""
    distance = np.full(px.shape, np.inf)
    inside = np.ones(px.shape, dtype=bool)
    for k in range(len(polygon)):
        ax, ay = polygon[k]
        bx, by = polygon[(k + 1) % len(polygon)]
        ex, ey = bx - ax, by - ay
        rx, ry = px - ax, py - ay
        along = np.clip((rx * ex + ry * ey) / (ex * ex + ey * ey), 0.0, 1.0)
        distance = np.minimum(distance, np.hypot(rx - along * ex, ry - along * ey))
        inside &= ex * ry - ey * rx >= 0.0
    return np.where(inside, -distance, distance)


@dataclass(frozen=True, slots=True)
class _ShadowCaster:
    """One solid's shadow from one distant light: its sweep on the floor and penumbra growth."""

    solid: _Solid
    direction: np.ndarray  # unit vector towards the light
    spread: float  # penumbra half-width per unit of distance to the occluder
    slot: int  # which visibility buffer it darkens
    strength: float = 1.0  # share of the light the solid can block

    @property
    def sweep(self) -> np.ndarray:
        """Horizontal offset of the shadow of the solid's top from its base."""
        return -self.direction[:2] / max(self.direction[2], 1e-3) * self.solid.height

    def floor_bounds(self) -> tuple[float, float, float, float]:
        """(x0, y0, x1, y1) on the floor outside which the shadow cannot fall."""
        sweep = self.sweep
        margin = (
            self.solid.footprint_reach + 0.3 + self.spread * self.solid.height / max(self.direction[2], 1e-3)
        )
        return (
            self.solid.x + min(0.0, sweep[0]) - margin,
            self.solid.y + min(0.0, sweep[1]) - margin,
            self.solid.x + max(0.0, sweep[0]) + margin,
            self.solid.y + max(0.0, sweep[1]) + margin,
        )

    def visibility(self, px: np.ndarray, py: np.ndarray) -> np.ndarray:
        """Fraction of the light reaching floor points (x, y) past this solid."""
        blocked = 1.0 - self._unblocked(px, py)
        return 1.0 - self.strength * blocked if self.strength != 1.0 else 1.0 - blocked

    def _unblocked(self, px: np.ndarray, py: np.ndarray) -> np.ndarray:
        """Visibility of a point light in the shadow's direction, softened by the penumbra."""
        solid, light = self.solid, self.direction
        if solid.shape == "sphere":
            # Closest approach of the ray from the floor point towards the light to the centre.
            cx, cy, cz = solid.x - px, solid.y - py, solid.radius
            along = cx * light[0] + cy * light[1] + cz * light[2]
            mx, my, mz = cx - along * light[0], cy - along * light[1], cz - along * light[2]
            miss = np.sqrt(mx * mx + my * my + mz * mz) - solid.radius
            visible = _smoothstep(miss, 0.15 + self.spread * np.maximum(along, 0.0))
            return np.where(along > 0.0, visible, 1.0)
        sweep = self.sweep
        rx, ry = px - solid.x, py - solid.y
        length_squared = float(sweep @ sweep)
        if length_squared > 1e-12:
            fraction = np.clip((rx * sweep[0] + ry * sweep[1]) / length_squared, 0.0, 1.0)
        else:
            fraction = np.ones_like(rx)
        if solid.shape == "cylinder":
            miss = np.hypot(rx - fraction * sweep[0], ry - fraction * sweep[1]) - solid.radius
        else:
            half = solid.radius
            square = np.array([[half, half], [-half, half], [-half, -half], [half, -half]])
            turned = square @ np.array([[solid.cosine, solid.sine], [-solid.sine, solid.cosine]])
            miss = _polygon_signed_distance(rx, ry, _convex_hull(np.concatenate([turned, turned + sweep])))
        occluder_distance = fraction * solid.height / max(light[2], 1e-3)
        return _smoothstep(miss, 0.15 + self.spread * occluder_distance)


_STRAIGHT_UP = np.array([0.0, 0.0, 1.0])
#: Visibility buffers: one per distant light, then the overhead lamp's contact shadow.
_CONTACT_SLOT = len(DISTANT_LIGHTS)


def _shadow_casters(solids: Sequence[_Solid]) -> list[_ShadowCaster]:
    casters = []
    for solid in solids:
        for slot, light in enumerate(DISTANT_LIGHTS):
            casters.append(_ShadowCaster(solid, light.direction, light.angular_radius, slot))
        casters.append(
            _ShadowCaster(solid, _STRAIGHT_UP, CONTACT_SHADOW_SPREAD, _CONTACT_SLOT, CONTACT_SHADOW_STRENGTH)
        )
    return casters


def _floor_visibility_at(solids: Sequence[_Solid], px: np.ndarray, py: np.ndarray) -> np.ndarray:
    """Visibility of each shadowing light at arbitrary floor points: (slots, N)."""
    visibility = np.ones((_CONTACT_SLOT + 1, len(px)))
    for caster in _shadow_casters(solids):
        x0, y0, x1, y1 = caster.floor_bounds()
        rows = np.flatnonzero((px >= x0) & (px <= x1) & (py >= y0) & (py <= y1))
        if rows.size:
            visibility[caster.slot, rows] *= caster.visibility(px[rows], py[rows])
    return visibility


def _lamp_irradiance(lamp: PointLamp, points: np.ndarray, normals: np.ndarray) -> np.ndarray:
    """Irradiance from a point lamp (inverse square, cosine) at points (N, 3) with normals (N, 3)."""
    to_lamp = np.asarray(lamp.position) - points
    distance_squared = np.einsum("ij,ij->i", to_lamp, to_lamp)
    cosine = np.einsum("ij,ij->i", to_lamp, normals) / np.sqrt(distance_squared)
    return lamp.power * np.maximum(cosine, 0.0) / distance_squared


def _floor_irradiance_parts(px: np.ndarray, py: np.ndarray) -> np.ndarray:
    """Floor irradiance per light before shadows, (slots + 1, N): distant lights, overhead, fill.

    Slot order matches the visibility buffers; the last row (the fill lamp) casts no shadow.
    """
    points = np.stack([px, py, np.zeros_like(px)], axis=1)
    up = np.broadcast_to(_STRAIGHT_UP, points.shape)
    parts = [np.full(len(px), light.floor_radiance / FLOOR_ALBEDO) for light in DISTANT_LIGHTS]
    parts.append(_lamp_irradiance(OVERHEAD_LAMP, points, up))
    parts.append(_lamp_irradiance(FILL_LAMP, points, up))
    return np.stack(parts)


def _outline_coverage(px: np.ndarray, py: np.ndarray) -> np.ndarray:
    """1 on the thin outline of the visible area, 0 elsewhere."""
    low, high = VISIBLE_MIN - OUTLINE_HALF_WIDTH, VISIBLE_MAX + OUTLINE_HALF_WIDTH
    within_x = (px >= low) & (px <= high)
    within_y = (py >= low) & (py <= high)
    on_x_edge = np.minimum(np.abs(px - VISIBLE_MIN), np.abs(px - VISIBLE_MAX)) <= OUTLINE_HALF_WIDTH
    on_y_edge = np.minimum(np.abs(py - VISIBLE_MIN), np.abs(py - VISIBLE_MAX)) <= OUTLINE_HALF_WIDTH
    return ((on_x_edge & within_y) | (on_y_edge & within_x)).astype(np.float64)


def _floor_radiance_at(solids: Sequence[_Solid], points: np.ndarray, draw_visible_area: bool) -> np.ndarray:
    """Radiance (N, 3) of the floor at floor points (N, 3), shadows included."""
    px, py = points[:, 0], points[:, 1]
    parts = _floor_irradiance_parts(px, py)
    visibility = _floor_visibility_at(solids, px, py)
    irradiance = (parts[:-1] * visibility).sum(axis=0) + parts[-1]
    albedo = (
        FLOOR_ALBEDO * (1.0 + OUTLINE_BOOST * _outline_coverage(px, py))
        if draw_visible_area
        else FLOOR_ALBEDO
    )
    return (albedo * irradiance)[:, None] * LAMP_TINT


def _sky_radiance(directions: np.ndarray) -> np.ndarray:
    """What a ray leaving the scene sees: grey sky, brighter upwards and towards the lights."""
    base = SKY_RADIANCE * (0.8 + 0.6 * np.clip(directions[:, 2], 0.0, 1.0))
    overhead = np.asarray(OVERHEAD_LAMP.position) / np.linalg.norm(OVERHEAD_LAMP.position)
    glow = 0.6 * np.maximum(directions @ overhead, 0.0) ** 24
    glow += 0.8 * np.maximum(directions @ KEY_LIGHT.direction, 0.0) ** 48
    return (base + glow)[:, None] * LAMP_TINT


# ---------------------------------------------------------------------------------------------
# Per camera: rays and the empty floor do not depend on the scene, so they are cached.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _CameraSetup:
    origin: np.ndarray  # (3,)
    sample_directions: np.ndarray  # (H * s, W * s, 3) sub-pixel rays
    centre_directions: np.ndarray  # (H, W, 3) pixel-centre rays
    floor_x: np.ndarray  # (H, W) floor point seen at each pixel centre; far away above the horizon
    floor_y: np.ndarray
    floor_albedo: np.ndarray  # (H, W), with the anti-aliased outline; 0 above the horizon
    floor_parts: np.ndarray  # (slots + 1, H, W) irradiance per light, see _floor_irradiance_parts
    sky: np.ndarray  # (H, W, 3) radiance where no floor is seen, else 0
    vignette: np.ndarray  # (H, W)


@functools.lru_cache(maxsize=12)
def _camera_setup(camera: Camera, supersample: int, draw_visible_area: bool) -> _CameraSetup:
    origin = np.asarray(camera.position, dtype=np.float64)
    height, width = camera.height, camera.width

    def floor_points(directions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        downwards = directions[..., 2] < -1e-9
        t = np.where(downwards, -origin[2] / np.where(downwards, directions[..., 2], -1.0), 0.0)
        far = 1e7  # above the horizon: a point far outside every shadow
        x = np.where(downwards, origin[0] + t * directions[..., 0], far)
        y = np.where(downwards, origin[1] + t * directions[..., 1], far)
        return x, y, downwards

    centre_directions = _centre_directions(camera)
    floor_x, floor_y, on_floor = floor_points(centre_directions)
    parts = _floor_irradiance_parts(floor_x.ravel(), floor_y.ravel()).reshape(-1, height, width)
    if draw_visible_area:
        # The outline is thinner than a pixel: average its coverage over 4 x 4 samples.
        fine_x, fine_y, fine_on_floor = floor_points(camera.rays(supersample=4))
        coverage = np.where(fine_on_floor, _outline_coverage(fine_x, fine_y), 0.0)
        coverage = coverage.reshape(height, 4, width, 4).mean(axis=(1, 3))
    else:
        coverage = np.zeros((height, width))
    sky = _sky_radiance(centre_directions.reshape(-1, 3)).reshape(height, width, 3)
    rows = (np.arange(height) + 0.5) / height - 0.5
    columns = (np.arange(width) + 0.5) / width - 0.5
    return _CameraSetup(
        origin=origin,
        sample_directions=camera.rays(supersample=supersample) if supersample > 1 else centre_directions,
        centre_directions=centre_directions,
        floor_x=floor_x,
        floor_y=floor_y,
        floor_albedo=np.where(on_floor, FLOOR_ALBEDO * (1.0 + OUTLINE_BOOST * coverage), 0.0),
        floor_parts=np.where(on_floor, parts, 0.0),
        sky=np.where(on_floor[..., None], 0.0, sky),
        vignette=1.0 - VIGNETTE * 2.0 * (rows[:, None] ** 2 + columns[None, :] ** 2),
    )


@functools.lru_cache(maxsize=12)
def _centre_directions(camera: Camera) -> np.ndarray:
    return camera.rays(supersample=1)


def _screen_rectangle(camera: Camera, points: np.ndarray) -> tuple[int, int, int, int] | None:
    """Pixel rectangle (x0, y0, x1, y1), end exclusive, containing the image of a convex set."""
    projected = camera.project(points)
    if (projected[:, 2] <= 1e-6).any():
        return 0, 0, camera.width, camera.height
    x0 = max(math.floor(projected[:, 0].min()) - 1, 0)
    y0 = max(math.floor(projected[:, 1].min()) - 1, 0)
    x1 = min(math.ceil(projected[:, 0].max()) + 1, camera.width)
    y1 = min(math.ceil(projected[:, 1].max()) + 1, camera.height)
    return (x0, y0, x1, y1) if x0 < x1 and y0 < y1 else None


def _nearest_hits(
    camera: Camera, solids: Sequence[_Solid], origin: np.ndarray, directions: np.ndarray, scale: int
) -> tuple[np.ndarray, np.ndarray]:
    """For a grid of primary rays (scale rays per pixel side): distance and solid position (-1: none)."""
    distance = np.full(directions.shape[:2], _MISS)
    which = np.full(directions.shape[:2], -1, dtype=np.int16)
    for position, solid in enumerate(solids):
        rectangle = _screen_rectangle(camera, solid.corners())
        if rectangle is None:
            continue
        x0, y0, x1, y1 = (value * scale for value in rectangle)
        block = directions[y0:y1, x0:x1]
        t = _intersect(solid, origin, block.reshape(-1, 3)).reshape(block.shape[:2])
        region = distance[y0:y1, x0:x1]
        closer = t < region
        region[closer] = t[closer]
        which[y0:y1, x0:x1][closer] = position
    return distance, which


def _floor_visibility_on_screen(camera: Camera, setup: _CameraSetup, solids: Sequence[_Solid]) -> np.ndarray:
    """Visibility of each shadowing light at the floor point of every pixel: (slots, H, W)."""
    visibility = np.ones((_CONTACT_SLOT + 1, camera.height, camera.width))
    for caster in _shadow_casters(solids):
        x0, y0, x1, y1 = caster.floor_bounds()
        corners = np.array([[x0, y0, 0.0], [x0, y1, 0.0], [x1, y0, 0.0], [x1, y1, 0.0]])
        rectangle = _screen_rectangle(camera, corners)
        if rectangle is None:
            continue
        left, top, right, bottom = rectangle
        px, py = setup.floor_x[top:bottom, left:right], setup.floor_y[top:bottom, left:right]
        inside = (px >= x0) & (px <= x1) & (py >= y0) & (py <= y1)
        if inside.any():
            region = visibility[caster.slot, top:bottom, left:right]
            region[inside] *= caster.visibility(px[inside], py[inside])
    return visibility


# ---------------------------------------------------------------------------------------------
# Shading
# ---------------------------------------------------------------------------------------------


def _distant_light_visibility(solids: Sequence[_Solid], points: np.ndarray, owners: np.ndarray) -> np.ndarray:
    """Hard shadows of the distant lights cast by other objects onto object points: (lights, N)."""
    visibility = np.ones((len(DISTANT_LIGHTS), len(points)))
    if len(solids) < 2:
        return visibility
    for slot, light in enumerate(DISTANT_LIGHTS):
        directions = np.ascontiguousarray(np.broadcast_to(light.direction, points.shape))
        distance, _ = _trace(solids, points + 1e-3 * light.direction, directions, skip=owners)
        visibility[slot] = np.where(np.isfinite(distance), 0.0, 1.0)
    return visibility


def _direct_light(
    points: np.ndarray, normals: np.ndarray, view: np.ndarray, visibility: np.ndarray, shininess: float
) -> tuple[np.ndarray, np.ndarray]:
    """Diffuse irradiance (N,) and Blinn-Phong highlight radiance (N,) from all lights.

    The ambient part is the sky from above and the floor's light from below.
    """
    diffuse = SKY_RADIANCE * (0.75 + 0.25 * normals[:, 2]) + FLOOR_BOUNCE * (1.0 - normals[:, 2])
    specular = np.zeros(len(points))
    normalisation = (shininess + 8.0) / (8.0 * math.pi)

    def add_highlight(towards: np.ndarray, strength: np.ndarray | float) -> None:
        halfway = towards - view
        halfway /= np.linalg.norm(halfway, axis=1, keepdims=True)
        facing = np.einsum("ij,ij->i", normals, towards) > 0.0
        lobe = np.maximum(np.einsum("ij,ij->i", normals, halfway), 0.0) ** shininess
        specular[:] += np.where(facing, strength * normalisation * lobe, 0.0)

    for slot, light in enumerate(DISTANT_LIGHTS):
        strength = light.irradiance * visibility[slot]
        diffuse += strength * np.maximum(normals @ light.direction, 0.0)
        add_highlight(np.broadcast_to(light.direction, points.shape), strength)
    for lamp in POINT_LAMPS:
        towards = np.asarray(lamp.position) - points
        distance_squared = np.einsum("ij,ij->i", towards, towards)
        towards = towards / np.sqrt(distance_squared)[:, None]
        diffuse += lamp.power * np.maximum(np.einsum("ij,ij->i", normals, towards), 0.0) / distance_squared
        add_highlight(towards, lamp.power / distance_squared)
    return diffuse, specular


def _scene_radiance(
    solids: Sequence[_Solid],
    origins: np.ndarray,
    directions: np.ndarray,
    skip: np.ndarray,
    draw_visible_area: bool,
) -> np.ndarray:
    """Radiance seen along secondary rays (reflections, through glass): objects shaded simply, floor, sky."""
    distance, which = _trace(solids, origins, directions, skip=skip)
    downwards = directions[:, 2] < -1e-9
    floor_t = np.where(downwards, -origins[:, 2] / np.where(downwards, directions[:, 2], -1.0), np.inf)
    floor_first = downwards & (floor_t < distance)
    object_first = np.isfinite(distance) & ~floor_first
    radiance = _sky_radiance(directions)
    if floor_first.any():
        points = (
            origins[floor_first] + np.maximum(floor_t[floor_first], 0.0)[:, None] * directions[floor_first]
        )
        radiance[floor_first] = _floor_radiance_at(solids, points, draw_visible_area)
    rows = np.flatnonzero(object_first)
    points = origins[rows] + distance[rows, None] * directions[rows]
    for position in np.unique(which[rows]):
        solid = solids[position]
        mine = which[rows] == position
        normals = _normals(solid, points[mine])
        visibility = np.ones((len(DISTANT_LIGHTS), int(mine.sum())))
        diffuse, specular = _direct_light(points[mine], normals, directions[rows[mine]], visibility, 40.0)
        # One bounce only: an object seen in a reflection or through glass is shaded as matte;
        # metal and glass are darkened for the reflections and absorption not followed.
        if solid.material == "rubber":
            tint = solid.albedo
        elif solid.material == "metal":
            tint = 0.7 * solid.albedo
        else:
            tint = 0.7 * solid.albedo**GLASS_ABSORPTION_EXPONENT
        highlight = 0.3 * MATERIALS[solid.material].specular * specular
        radiance[rows[mine]] = tint * diffuse[:, None] + highlight[:, None]
    return radiance


def _refract(directions: np.ndarray, normals: np.ndarray, ratio: float) -> np.ndarray:
    """Snell refraction of unit directions at surfaces whose unit normals face the incoming ray.

    `ratio` is n1 / n2. Where the light would be totally internally reflected, the direction is kept.
    """
    cosine = -np.einsum("ij,ij->i", normals, directions)
    k = 1.0 - ratio * ratio * (1.0 - cosine * cosine)
    bent = ratio * directions + (ratio * cosine - np.sqrt(np.maximum(k, 0.0)))[:, None] * normals
    return np.where((k > 0.0)[:, None], bent, directions)


def _through_glass(
    solids: Sequence[_Solid],
    points: np.ndarray,
    directions: np.ndarray,
    normals: np.ndarray,
    which: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Refract rays into their glass object and out again.

    Returns where they leave it, in which direction, and the path length inside as a fraction
    of the object's height.
    """
    inside = _refract(directions, normals, 1.0 / GLASS_REFRACTIVE_INDEX)
    exits = points.copy()
    leaving = directions.copy()
    path = np.full(len(points), GLASS_TYPICAL_PATH)
    for position in np.unique(which):
        mine = which == position
        solid = solids[position]
        start = points[mine] + 1e-3 * inside[mine]
        length = _intersect(solid, start, inside[mine])
        length = np.where(np.isfinite(length), length, 0.0)
        exits[mine] = start + length[:, None] * inside[mine]
        leaving[mine] = _refract(inside[mine], -_normals(solid, exits[mine]), GLASS_REFRACTIVE_INDEX)
        path[mine] = np.clip(length / solid.height, 0.5, 1.8)
    return exits + 1e-3 * leaving, leaving, path


def _shade(
    solids: Sequence[_Solid],
    points: np.ndarray,
    directions: np.ndarray,
    which: np.ndarray,
    draw_visible_area: bool,
) -> np.ndarray:
    """Radiance (N, 3) of primary rays that hit objects at `points`."""
    normals = np.empty_like(points)
    for position in np.unique(which):
        mine = which == position
        normals[mine] = _normals(solids[position], points[mine])
    visibility = _distant_light_visibility(solids, points, which)
    albedo = np.stack([solid.albedo for solid in solids])[which]
    material_codes = np.array([_MATERIAL_CODES[solid.material] for solid in solids])[which]
    cosine = np.clip(-np.einsum("ij,ij->i", normals, directions), 0.0, 1.0)
    reflected = directions + 2.0 * cosine[:, None] * normals
    # All secondary rays (metal and glass reflections, rays leaving glass) are traced together.
    shiny = np.flatnonzero(material_codes != _MATERIAL_CODES["rubber"])
    glass = np.flatnonzero(material_codes == _MATERIAL_CODES["glass"])
    exits, leaving, path = _through_glass(
        solids, points[glass], directions[glass], normals[glass], which[glass]
    )
    seen = _scene_radiance(
        solids,
        np.concatenate([points[shiny], exits]),
        np.concatenate([reflected[shiny], leaving]),
        np.concatenate([which[shiny], which[glass]]),
        draw_visible_area,
    )
    mirrored = np.zeros_like(points)
    mirrored[shiny] = seen[: shiny.size]
    behind = np.zeros_like(points)
    behind[glass] = seen[shiny.size :]
    path_length = np.zeros(len(points))
    path_length[glass] = path
    radiance = np.zeros_like(points)
    for name, material in MATERIALS.items():
        mine = np.flatnonzero(material_codes == _MATERIAL_CODES[name])
        if mine.size == 0:
            continue
        diffuse, specular = _direct_light(
            points[mine], normals[mine], directions[mine], visibility[:, mine], material.shininess
        )
        colour = material.diffuse * albedo[mine] * diffuse[:, None]
        if name == "rubber":
            colour += material.specular * specular[:, None]
        elif name == "metal":
            colour += material.reflection * albedo[mine] * mirrored[mine]
            colour += material.specular * (0.35 + 0.65 * albedo[mine]) * specular[:, None]
        else:
            fresnel = 0.04 + 0.96 * (1.0 - cosine[mine]) ** 5
            exponent = GLASS_ABSORPTION_EXPONENT * path_length[mine] / GLASS_TYPICAL_PATH
            transmittance = albedo[mine] ** exponent[:, None]
            colour += (1.0 - fresnel)[:, None] * material.transmission * transmittance * behind[mine]
            # Blender's glass tints its reflections too, which keeps the cubes dark and saturated.
            colour += (fresnel * material.reflection)[:, None] * albedo[mine] * mirrored[mine]
            colour += material.specular * albedo[mine] * specular[:, None]
        radiance[mine] = colour
    return radiance


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------

_LOOKUP_SIZE = 4096


@functools.cache
def _srgb_lookup() -> np.ndarray:
    linear = np.linspace(0.0, 1.0, _LOOKUP_SIZE)
    srgb = np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1.0 / 2.4) - 0.055)
    return np.round(srgb * 255.0).astype(np.uint8)


def _to_srgb8(linear: np.ndarray) -> np.ndarray:
    """Linear radiance to 8-bit sRGB, clipping above 1 (a table lookup, much faster than a power)."""
    indices = np.clip(linear * (_LOOKUP_SIZE - 1) + 0.5, 0, _LOOKUP_SIZE - 1).astype(np.intp)
    return _srgb_lookup()[indices]


def _caller_indices(solids: Sequence[_Solid], which: np.ndarray) -> np.ndarray:
    """Turn positions in `solids` (-1: none) into indices into the caller's objects."""
    lookup = np.array([solid.index for solid in solids] + [-1], dtype=np.int16)
    return lookup[which]


def _floor_with_shadows(camera: Camera, setup: _CameraSetup, solids: Sequence[_Solid]) -> np.ndarray:
    """Linear radiance (H, W, 3) of the floor (and sky) with this scene's shadows."""
    if solids:
        visibility = _floor_visibility_on_screen(camera, setup, solids)
        irradiance = (setup.floor_parts[:-1] * visibility).sum(axis=0) + setup.floor_parts[-1]
    else:
        irradiance = setup.floor_parts.sum(axis=0)
    return (setup.floor_albedo * irradiance)[..., None] * LAMP_TINT + setup.sky


def _sub_pixel_indices(pixels: np.ndarray, width: int, scale: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns, in the supersampled grid, of the scale x scale rays of each pixel (flat index)."""
    rows, columns = np.divmod(pixels, width)
    within_rows, within_columns = np.meshgrid(np.arange(scale), np.arange(scale), indexing="ij")
    sample_rows = rows[:, None, None] * scale + within_rows[None]
    sample_columns = columns[:, None, None] * scale + within_columns[None]
    return sample_rows.reshape(-1), sample_columns.reshape(-1)


def _draw_objects(
    camera: Camera,
    setup: _CameraSetup,
    solids: Sequence[_Solid],
    background: np.ndarray,
    centre_distance: np.ndarray,
    centre_which: np.ndarray,
    scale: int,
    draw_visible_area: bool,
) -> np.ndarray:
    """The image with the objects over the floor, anti-aliased by adaptive supersampling.

    Pixels whose sub-pixel rays all see what the pixel-centre ray sees are shaded once, from
    the centre ray; the others (silhouettes, occlusion edges) are shaded per sub-pixel ray and
    averaged, sub-pixel rays that miss every object counting as the floor behind.
    """
    height, width = camera.height, camera.width
    if scale > 1:
        sample_distance, sample_which = _nearest_hits(
            camera, solids, setup.origin, setup.sample_directions, scale
        )
        blocks = sample_which.reshape(height, scale, width, scale)
        uniform = (blocks == centre_which[:, None, :, None]).all(axis=(1, 3)).ravel()
    else:
        uniform = np.ones(height * width, dtype=bool)
    solid_pixels = np.flatnonzero(uniform & (centre_which.ravel() >= 0))
    directions = setup.centre_directions.reshape(-1, 3)[solid_pixels]
    which = centre_which.ravel()[solid_pixels].astype(np.intp)
    points = setup.origin + centre_distance.ravel()[solid_pixels, None] * directions
    edge_pixels = np.flatnonzero(~uniform)
    if edge_pixels.size:
        sample_rows, sample_columns = _sub_pixel_indices(edge_pixels, width, scale)
        sample_hit = sample_which[sample_rows, sample_columns].astype(np.intp)
        hits = np.flatnonzero(sample_hit >= 0)
        sample_rows, sample_columns = sample_rows[hits], sample_columns[hits]
        edge_directions = setup.sample_directions[sample_rows, sample_columns]
        edge_points = setup.origin + sample_distance[sample_rows, sample_columns, None] * edge_directions
        directions = np.concatenate([directions, edge_directions])
        points = np.concatenate([points, edge_points])
        which = np.concatenate([which, sample_hit[hits]])
    radiance = _shade(solids, points, directions, which, draw_visible_area)
    image = background.reshape(-1, 3).copy()
    image[solid_pixels] = radiance[: solid_pixels.size]
    if edge_pixels.size:
        samples = np.repeat(image[edge_pixels], scale * scale, axis=0)
        samples[hits] = radiance[solid_pixels.size :]
        image[edge_pixels] = samples.reshape(-1, scale * scale, 3).mean(axis=1)
    return image.reshape(height, width, 3)


def render(
    objects: Sequence[SceneObject],
    camera: Camera,
    *,
    supersample: int = 2,
    draw_visible_area: bool = True,
    hide_outside_visible_area: bool = True,
) -> Render:
    """Render a scene seen by `camera`: the sRGB image and the per-pixel object ids.

    `supersample` is the number of visibility rays per pixel side (anti-aliasing; 1 is
    fastest). `draw_visible_area` draws the outline of [-20, 20]^2 on the floor;
    `hide_outside_visible_area` leaves out objects outside it, as the released generator does.
    """
    if supersample < 1:
        raise ValueError("supersample must be at least 1")
    setup = _camera_setup(camera, supersample, draw_visible_area)
    solids = _solids(objects, hide_outside_visible_area)
    image = _floor_with_shadows(camera, setup, solids)
    centre_distance, centre_which = _nearest_hits(camera, solids, setup.origin, setup.centre_directions, 1)
    if solids:
        image = _draw_objects(
            camera, setup, solids, image, centre_distance, centre_which, supersample, draw_visible_area
        )
    image = image * setup.vignette[..., None]
    return Render(image=_to_srgb8(image), object_ids=_caller_indices(solids, centre_which))


def render_ids(
    objects: Sequence[SceneObject], camera: Camera, *, hide_outside_visible_area: bool = True
) -> np.ndarray:
    """The object-id buffer of `render` alone, (H, W) int16, -1 where no object is seen: no shading."""
    solids = _solids(objects, hide_outside_visible_area)
    origin = np.asarray(camera.position, dtype=np.float64)
    _, which = _nearest_hits(camera, solids, origin, _centre_directions(camera), 1)
    return _caller_indices(solids, which)


def visible_pixel_counts(object_ids: np.ndarray, count: int) -> np.ndarray:
    """Number of pixels where each of `count` objects is seen (the released generator calls fewer than 150 occluded)."""
    ids = object_ids[object_ids >= 0].astype(np.intp)
    return np.bincount(ids, minlength=count)[:count]


def bounding_boxes(object_ids: np.ndarray, count: int) -> list[tuple[int, int, int, int] | None]:
    """Per object, the (x, y, width, height) box around its visible pixels, or None if unseen."""
    boxes: list[tuple[int, int, int, int] | None] = []
    for index in range(count):
        mask = object_ids == index
        rows = np.flatnonzero(mask.any(axis=1))
        if rows.size == 0:
            boxes.append(None)
            continue
        columns = np.flatnonzero(mask.any(axis=0))
        boxes.append(
            (int(columns[0]), int(rows[0]), int(columns[-1] - columns[0] + 1), int(rows[-1] - rows[0] + 1))
        )
    return boxes


def object_mask(object_ids: np.ndarray, index: int) -> np.ndarray:
    """Boolean (H, W) mask of the pixels where object `index` is seen."""
    return object_ids == index


def save_png(image: np.ndarray, path: str | Path) -> None:
    """Write an (H, W, 3) uint8 sRGB image as a PNG file."""
    Image.fromarray(np.ascontiguousarray(image, dtype=np.uint8)).save(path, format="PNG")
