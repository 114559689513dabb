"""Top-down diagram of a TRANCE scene, as SVG for the web (pure, no Django).

The paper's human test system shows testers a "visualization of the initial objects" beside
the images. This diagram is that view, drawn in the Center camera's orientation so that
directions read the same way as in the picture: +x (toward the camera, "behind" in TRANCE's
words) points down, +y points right. A tester who sees an object move down in the diagram
answers "behind", exactly as the released data would; the diagram writes each direction word on
its side of the plane, with its arrow, so that nobody has to guess it.

Every object is drawn, visible or not: objects outside the visible area (the dashed square) can
still be the subject of an "in" move. Shapes are told apart by outline (sphere: circle,
cube: square, cylinder: circle with an inner ring), materials by finish (rubber: flat,
metal: a white glint, glass: translucent with a dashed outline), and each object carries its index, which is how
answers name objects.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from plugins.clevr.world import COLORS, GRID_MAX, GRID_MIN, RADII, VISIBLE_MAX, VISIBLE_MIN

#: Margin around the plane, in grid units, so objects on the edge are drawn whole.
MARGIN = 8


def to_diagram(x: float, y: float) -> tuple[float, float]:
    """Grid (x, y) to SVG (horizontal, vertical): y runs right, x runs down."""
    return y, x


def _(text: str) -> str:
    """Marks the diagram's words for the translation catalogue; pages translate them (`words`)."""
    return text


#: The diagram's words, in English; a page passes them in the reader's language.
WORDS = {
    "title": _("Top view of the initial objects"),
    "camera": _("camera"),
    # TRANCE's direction words where they point in this view: "behind" toward the camera.
    "front": _("front"),
    "behind": _("behind"),
    "left": _("left"),
    "right": _("right"),
}


def scene_diagram_svg(
    objects: Sequence[dict[str, Any]],
    *,
    pixels: int = 320,
    highlight: int | None = None,
    title: str = "",
    words: Mapping[str, str] | None = None,
) -> str:
    """The SVG text of a diagram of `objects` (official-format dicts), `pixels` wide and high.

    `highlight` marks one object index with a ring (for example, the row being edited). `words`:
    WORDS's keys in the reader's language.
    """
    words = {**WORDS, **(words or {})}
    title = escape(title or words["title"])
    low, high = GRID_MIN - MARGIN, GRID_MAX + MARGIN
    span = high - low
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="scene-diagram" width="{pixels}" height="{pixels}" '
        f'viewBox="{low} {low} {span} {span}" role="img" aria-label="{title}">',
        f"<title>{title}</title>",
        f'<rect class="plane" x="{GRID_MIN}" y="{GRID_MIN}" width="{GRID_MAX - GRID_MIN}" '
        f'height="{GRID_MAX - GRID_MIN}" fill="#eceef2" stroke="#b9bfca" stroke-width="0.4"/>',
        grid_lines(),
        f'<rect class="visible-area" x="{VISIBLE_MIN}" y="{VISIBLE_MIN}" width="{VISIBLE_MAX - VISIBLE_MIN}" '
        f'height="{VISIBLE_MAX - VISIBLE_MIN}" fill="#ffffff" stroke="#5b6b8c" stroke-width="0.5" '
        'stroke-dasharray="1.5 1"/>',
        camera_marker(words["camera"]),
    ]
    for index, obj in enumerate(objects):
        parts.append(object_symbol(index, obj, highlighted=index == highlight))
    parts.append(compass(words))  # over the objects: one at the plane's edge may reach the margin
    parts.append("</svg>")
    return "".join(parts)


def grid_lines() -> str:
    """Light lines every step (10 units), so move lengths can be read off the diagram."""
    lines = []
    for value in range(GRID_MIN + 10, GRID_MAX, 10):
        lines.append(f'<line x1="{value}" y1="{GRID_MIN}" x2="{value}" y2="{GRID_MAX}"/>')
        lines.append(f'<line x1="{GRID_MIN}" y1="{value}" x2="{GRID_MAX}" y2="{value}"/>')
    return '<g class="grid" stroke="#d5d9e0" stroke-width="0.25">' + "".join(lines) + "</g>"


def camera_marker(word: str) -> str:
    """A small camera glyph below the plane, left of centre: the Center camera looks up the diagram."""
    y = GRID_MAX + MARGIN * 0.55
    return (
        f'<g class="camera" fill="#5b6b8c"><path d="M -27 {y + 2} L -21 {y + 2} L -24 {y - 2} Z"/>'
        f'<text x="-19" y="{y + 1.6}" font-size="4" font-family="sans-serif">{escape(word)}</text></g>'
    )


def compass(words: Mapping[str, str]) -> str:
    """TRANCE's direction words around the plane, each with its arrow as it points in this view:
    "front" up, away from the camera, "left" and "right" as the camera sees them (above the
    plane), and "behind" down, toward the camera (below it, beside the camera): the released
    data's convention, which reads the other way from what a viewer expects."""
    top, bottom = GRID_MIN - MARGIN * 0.35, GRID_MAX + MARGIN * 0.55 + 1.6
    text = (
        'font-size="4" font-family="sans-serif" font-weight="700" fill="#1d5fbf" '
        'stroke="#ffffff" stroke-width="1.2" stroke-linejoin="round" paint-order="stroke"'
    )
    labels = (
        ("left", GRID_MIN, top, "start", f"← {escape(words['left'])}"),
        ("front", 0, top, "middle", f"↑ {escape(words['front'])}"),
        ("right", GRID_MAX, top, "end", f"{escape(words['right'])} →"),
        ("behind", 14, bottom, "middle", f"↓ {escape(words['behind'])}"),
    )
    return (
        '<g class="compass">'
        + "".join(
            f'<text class="direction" data-direction="{name}" x="{x:g}" y="{y:g}" text-anchor="{anchor}" '
            f"{text}>{label}</text>"
            for name, x, y, anchor, label in labels
        )
        + "</g>"
    )


def object_symbol(index: int, obj: dict[str, Any], *, highlighted: bool) -> str:
    cx, cy = to_diagram(*obj["position"])
    radius = RADII[obj["size"]]
    red, green, blue = COLORS[obj["color"]]
    fill = f"rgb({red},{green},{blue})"
    material = obj["material"]
    opacity = "0.5" if material == "glass" else "1"
    dash = ' stroke-dasharray="1 0.6"' if material == "glass" else ""
    common = f'fill="{fill}" fill-opacity="{opacity}" stroke="#20242c" stroke-width="0.35"{dash}'
    shape = obj["shape"]
    if shape == "cube":
        half = radius / math.sqrt(2)
        body = (
            f'<rect x="{cx - half:g}" y="{cy - half:g}" width="{2 * half:g}" height="{2 * half:g}" {common}/>'
        )
    else:
        body = f'<circle cx="{cx:g}" cy="{cy:g}" r="{radius:g}" {common}/>'
        if shape == "cylinder":
            body += (
                f'<circle cx="{cx:g}" cy="{cy:g}" r="{radius * 0.6:g}" fill="none" stroke="#20242c" '
                f'stroke-width="0.3"/>'
            )
    if material == "metal":
        # A specular glint, as on the shiny objects in the renders.
        body += (
            f'<ellipse class="glint" cx="{cx - radius * 0.4:g}" cy="{cy - radius * 0.4:g}" rx="{radius * 0.28:g}" '
            f'ry="{radius * 0.18:g}" fill="#ffffff" fill-opacity="0.85"/>'
        )
    ring = ""
    if highlighted:
        ring = f'<circle class="highlight" cx="{cx:g}" cy="{cy:g}" r="{radius + 2:g}" fill="none" stroke="#f5a400" stroke-width="0.9"/>'
    label_color = "#000" if sum(COLORS[obj["color"]]) > 400 else "#fff"
    label = (
        f'<text x="{cx:g}" y="{cy:g}" dy="0.35em" text-anchor="middle" font-size="{max(radius, 3.2):g}" '
        f'font-family="sans-serif" font-weight="700" fill="{label_color}">{index}</text>'
    )
    x, y = obj["position"]
    description = f"{index}: {obj['size']} {obj['color']} {obj['material']} {shape} at x={x}, y={y}"
    return (
        f'<g class="object" data-index="{index}" data-x="{obj["position"][0]}" data-y="{obj["position"][1]}">'
        f"<title>{description}</title>{ring}{body}{label}</g>"
    )
