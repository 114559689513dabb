"""Drawing a CRIC demo scene: the empty room or street behind it, every object as a coloured
outlined shape (one painter per category shape) and the name labels next to them."""

from __future__ import annotations

import functools
import pathlib
from collections.abc import Callable, Iterable, Sequence

from PIL import Image, ImageDraw, ImageFont

from plugins.cric.demo.knowledge import COLORS, INDOOR, OUTDOOR
from plugins.cric.demo.layout import IMAGE_HEIGHT, IMAGE_WIDTH, Box, PlacedObject, Scene

LABEL_FONT_PATH = pathlib.Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
LABEL_FONT_SIZE = 11

WALL_COLOR = (214, 204, 182)
SKIRTING_COLOR = (150, 132, 110)
FLOOR_COLOR = (178, 142, 104)
SKY_COLOR = (164, 206, 238)
GRASS_COLOR = (122, 178, 96)
ROAD_COLOR = (92, 92, 98)
ROAD_MARKING_COLOR = (225, 225, 215)
BACKDROP_COLORS = (WALL_COLOR, FLOOR_COLOR, SKY_COLOR, GRASS_COLOR, ROAD_COLOR)
# Where the wall meets the floor (indoor) or the sky meets the grass (outdoor).
HORIZONS = {INDOOR: 190, OUTDOOR: 170}
ROAD_TOP = 205

OUTLINE_COLOR = (25, 25, 25)
OUTLINE_WIDTH = 2
# Boxes thinner than this get one-pixel outlines, so a fork is not all outline.
THIN_BOX = 24
SCREEN_COLOR = (45, 55, 75)
WINDOW_COLOR = (190, 220, 240)
TRUNK_COLOR = (110, 72, 40)
LEAF_COLOR = (60, 140, 50)
BEAK_COLOR = (245, 160, 20)
LABEL_BACKGROUND = (255, 255, 255)
LABEL_TEXT_COLOR = (20, 20, 20)


def render_backdrop(kind: str, width: int = IMAGE_WIDTH, height: int = IMAGE_HEIGHT) -> Image.Image:
    """The empty room (wall and floor) or street (sky, grass and road) behind every object.

    It has no randomness, so tests can render it again and compare it with a finished image.
    """
    image = Image.new("RGB", (width, height), WALL_COLOR if kind == INDOOR else SKY_COLOR)
    draw = ImageDraw.Draw(image)
    horizon = HORIZONS[kind]
    if kind == INDOOR:
        draw.rectangle((0, horizon, width - 1, height - 1), fill=FLOOR_COLOR)
        draw.rectangle((0, horizon - 6, width - 1, horizon - 1), fill=SKIRTING_COLOR)
    else:
        draw.rectangle((0, horizon, width - 1, height - 1), fill=GRASS_COLOR)
        draw.rectangle((0, ROAD_TOP, width - 1, height - 1), fill=ROAD_COLOR)
        marking_y = (ROAD_TOP + height) // 2
        for left in range(10, width, 60):
            draw.rectangle((left, marking_y - 2, left + 30, marking_y + 2), fill=ROAD_MARKING_COLOR)
    return image


def render_scene(scene: Scene, label_boxes: list[Box] | None = None) -> Image.Image:
    """The backdrop, then every object as a coloured outlined shape, then the name labels.

    Objects standing on the floor are drawn back to front (by the height of their base), and
    objects resting on others after all of them; labels come last so none is hidden.
    `label_boxes`, when given, receives where each name label went (the picture's text, which
    the trial's object numbers keep clear of).
    """
    image = render_backdrop(scene.kind)
    draw = ImageDraw.Draw(image)
    order = sorted(
        scene.objects, key=lambda placed: (placed.support is not None, placed.box.bottom, placed.object_id)
    )
    for placed in order:
        painter = SHAPE_PAINTERS[placed.category.shape]
        painter(draw, placed.box, COLORS[placed.color], placed.state)
    labels: list[Box] = []
    for placed in order:
        labels.append(_draw_label(draw, placed, labels, scene.objects))
    if label_boxes is not None:
        label_boxes.extend(labels)
    return image


@functools.lru_cache(maxsize=4)
def _label_font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.truetype(str(LABEL_FONT_PATH), size)
    except OSError:
        return ImageFont.load_default()


def _draw_label(
    draw: ImageDraw.ImageDraw, placed: PlacedObject, taken: Sequence[Box], objects: Sequence[PlacedObject]
) -> Box:
    """Writes the object's name on white next to its box and returns where the label went.

    Labels go below the box, or above it for objects resting on something (below them is the
    surface, crowded with its own things).  Of those spots, the other side and small sideways
    shifts, the first that clears every earlier label and every other object wins (a label on
    its own support is fine), else the first that clears the labels, so that names never cover
    each other and rarely sit on a neighbour, where they would name the wrong thing.
    """
    font = _label_font(LABEL_FONT_SIZE)
    text = placed.category.name
    box = placed.box
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    width, height = right - left + 4, bottom - top + 2
    below = box.bottom + 2
    above = box.y - height - 2
    rows = [above, below] if placed.support is not None else [below, above]
    spots = []
    for shift in (0, width // 2 + 2, -(width // 2 + 2)):
        for row in rows:
            x = min(max(round(box.center_x - width / 2) + shift, 1), IMAGE_WIDTH - width - 1)
            y = min(max(row, 1), IMAGE_HEIGHT - height - 1)
            spots.append(Box(x, y, width, height))
    clear_of_labels = [spot for spot in spots if all(spot.overlap_area(label) == 0 for label in taken)]
    neighbours = [other.box for other in objects if other is not placed and other.object_id != placed.support]
    clear = [spot for spot in clear_of_labels if all(spot.overlap_area(other) == 0 for other in neighbours)]
    spot = (clear or clear_of_labels or spots)[0]
    draw.rectangle((spot.x, spot.y, spot.right - 1, spot.bottom - 1), fill=LABEL_BACKGROUND)
    draw.text((spot.x + 2 - left, spot.y + 1 - top), text, fill=LABEL_TEXT_COLOR, font=font)
    return spot


Color = tuple[int, int, int]
Painter = Callable[[ImageDraw.ImageDraw, Box, Color, str | None], None]


def _detail_color(fill: Color) -> Color:
    """Colour for lines drawn on a shape: dark on light fills, light on dark ones."""
    red, green, blue = fill
    return (200, 200, 200) if 0.3 * red + 0.59 * green + 0.11 * blue < 70 else OUTLINE_COLOR


def _outline_width(box: Box) -> int:
    return 1 if min(box.w, box.h) < THIN_BOX else OUTLINE_WIDTH


def _at(box: Box, fraction_x: float, fraction_y: float) -> tuple[int, int]:
    """The point at the given fractions of the box's width and height."""
    return round(box.x + fraction_x * (box.w - 1)), round(box.y + fraction_y * (box.h - 1))


def _corners(box: Box, left: float, top: float, right: float, bottom: float) -> tuple[int, int, int, int]:
    """Corner coordinates of the part of the box between the given fractions."""
    x0, y0 = _at(box, left, top)
    x1, y1 = _at(box, right, bottom)
    return x0, y0, max(x0, x1), max(y0, y1)


def _rectangle(
    draw: ImageDraw.ImageDraw, box: Box, part: tuple[float, float, float, float], fill: Color
) -> None:
    draw.rectangle(_corners(box, *part), fill=fill, outline=OUTLINE_COLOR, width=_outline_width(box))


def _rounded(
    draw: ImageDraw.ImageDraw,
    box: Box,
    part: tuple[float, float, float, float],
    fill: Color,
    rounding: float = 0.25,
) -> None:
    corners = _corners(box, *part)
    radius = max(1, round(rounding * min(corners[2] - corners[0], corners[3] - corners[1])))
    draw.rounded_rectangle(
        corners, radius=radius, fill=fill, outline=OUTLINE_COLOR, width=_outline_width(box)
    )


def _ellipse(
    draw: ImageDraw.ImageDraw, box: Box, part: tuple[float, float, float, float], fill: Color
) -> None:
    draw.ellipse(_corners(box, *part), fill=fill, outline=OUTLINE_COLOR, width=_outline_width(box))


def _polygon(draw: ImageDraw.ImageDraw, box: Box, points: Iterable[tuple[float, float]], fill: Color) -> None:
    draw.polygon(
        [_at(box, x, y) for x, y in points], fill=fill, outline=OUTLINE_COLOR, width=_outline_width(box)
    )


def _line(
    draw: ImageDraw.ImageDraw, box: Box, points: Iterable[tuple[float, float]], fill: Color, width: int
) -> None:
    draw.line([_at(box, x, y) for x, y in points], fill=fill, width=width)


def _paint_table(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rectangle(draw, box, (0.08, 0.2, 0.17, 1), fill)
    _rectangle(draw, box, (0.83, 0.2, 0.92, 1), fill)
    _rectangle(draw, box, (0, 0, 1, 0.22), fill)


def _paint_chair(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rectangle(draw, box, (0.02, 0, 0.22, 0.6), fill)
    _rectangle(draw, box, (0.04, 0.6, 0.18, 1), fill)
    _rectangle(draw, box, (0.82, 0.6, 0.96, 1), fill)
    _rectangle(draw, box, (0, 0.5, 1, 0.64), fill)


def _paint_sofa(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rectangle(draw, box, (0.06, 0.88, 0.12, 1), OUTLINE_COLOR)
    _rectangle(draw, box, (0.88, 0.88, 0.94, 1), OUTLINE_COLOR)
    _rounded(draw, box, (0.06, 0, 0.94, 0.6), fill, 0.15)
    _rounded(draw, box, (0, 0.46, 1, 0.9), fill, 0.15)
    _rounded(draw, box, (0, 0.3, 0.13, 0.9), fill, 0.3)
    _rounded(draw, box, (0.87, 0.3, 1, 0.9), fill, 0.3)
    _line(draw, box, [(0.5, 0.48), (0.5, 0.88)], _detail_color(fill), 2)


def _paint_shelf(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rectangle(draw, box, (0, 0, 1, 1), fill)
    for level in (0.3, 0.55, 0.8):
        _line(draw, box, [(0.06, level), (0.94, level)], _detail_color(fill), 3)


def _paint_lamp(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rectangle(draw, box, (0.45, 0.34, 0.55, 0.92), OUTLINE_COLOR)
    _ellipse(draw, box, (0.1, 0.88, 0.9, 1), fill)
    _polygon(draw, box, [(0.22, 0), (0.78, 0), (1, 0.36), (0, 0.36)], fill)


def _paint_cup(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    handle = _corners(box, 0.5, 0.22, 1, 0.72)
    draw.ellipse(handle, outline=OUTLINE_COLOR, width=max(4, box.w // 7))
    draw.ellipse(_corners(box, 0.56, 0.3, 0.94, 0.64), outline=fill, width=max(2, box.w // 12))
    _rounded(draw, box, (0, 0.04, 0.74, 1), fill, 0.2)


def _paint_knife(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rounded(draw, box, (0, 0.2, 0.38, 0.8), fill, 0.4)
    _polygon(draw, box, [(0.36, 0), (0.88, 0), (1, 0.45), (0.36, 1)], fill)


def _paint_fork(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rectangle(draw, box, (0, 0.3, 0.6, 0.7), fill)
    for top in (0, 0.38, 0.76):
        _rectangle(draw, box, (0.66, top, 1, top + 0.24), fill)
    _rectangle(draw, box, (0.55, 0, 0.7, 1), fill)


def _paint_plate(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _ellipse(draw, box, (0, 0, 1, 1), fill)
    draw.ellipse(_corners(box, 0.18, 0.22, 0.82, 0.78), outline=_detail_color(fill), width=1)


def _paint_bottle(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rectangle(draw, box, (0.34, 0, 0.66, 0.1), OUTLINE_COLOR)
    _rectangle(draw, box, (0.34, 0.08, 0.66, 0.36), fill)
    _rounded(draw, box, (0, 0.3, 1, 1), fill, 0.3)


def _paint_laptop(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    if state == "closed":
        _rounded(draw, box, (0, 0, 1, 1), fill, 0.3)
        _line(draw, box, [(0.04, 0.5), (0.96, 0.5)], _detail_color(fill), 1)
        return
    _rectangle(draw, box, (0.1, 0, 0.9, 0.78), fill)
    draw.rectangle(_corners(box, 0.2, 0.12, 0.8, 0.64), fill=SCREEN_COLOR)
    _polygon(draw, box, [(0.08, 0.76), (0.92, 0.76), (1, 1), (0, 1)], fill)


def _paint_phone(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rounded(draw, box, (0, 0, 1, 1), fill, 0.25)
    draw.rectangle(_corners(box, 0.25, 0.18, 0.75, 0.72), fill=SCREEN_COLOR)


def _paint_book(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rectangle(draw, box, (0, 0, 1, 1), fill)
    _line(draw, box, [(0.16, 0), (0.16, 1)], _detail_color(fill), 2)
    draw.rectangle(_corners(box, 0.32, 0.2, 0.84, 0.36), fill=LABEL_BACKGROUND)


def _paint_clock(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _ellipse(draw, box, (0, 0, 1, 1), fill)
    _line(draw, box, [(0.5, 0.5), (0.5, 0.18)], _detail_color(fill), 2)
    _line(draw, box, [(0.5, 0.5), (0.74, 0.6)], _detail_color(fill), 2)


def _paint_apple(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _line(draw, box, [(0.5, 0.3), (0.56, 0)], TRUNK_COLOR, 2)
    draw.ellipse(_corners(box, 0.56, 0, 0.9, 0.2), fill=LEAF_COLOR)
    _ellipse(draw, box, (0, 0.16, 1, 1), fill)


def _paint_banana(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    # A thick lower arc of an ellipse centred on the box's top edge reads as a banana.
    outer = (box.x, box.y - box.h, box.right - 1, box.bottom - 1)
    thickness = max(4, round(box.h * 0.55))
    draw.arc(outer, 15, 165, fill=OUTLINE_COLOR, width=thickness)
    inner = (outer[0] + 2, outer[1] + 2, outer[2] - 2, outer[3] - 2)
    draw.arc(inner, 18, 162, fill=fill, width=thickness - 4)


def _paint_animal(
    draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None, *, pointed_ears: bool
) -> None:
    if state == "sitting":
        _rectangle(draw, box, (0.5, 0.6, 0.62, 1), fill)
        _ellipse(draw, box, (0.02, 0.36, 0.72, 1), fill)
        _ellipse(draw, box, (0.38, 0.06, 1, 0.5), fill)
        head = (0.38, 0.06, 1, 0.5)
    else:
        for left in (0.1, 0.24, 0.52, 0.64):
            _rectangle(draw, box, (left, 0.6, left + 0.09, 1), fill)
        _line(draw, box, [(0.06, 0.5), (0, 0.22)], OUTLINE_COLOR, 4)
        _ellipse(draw, box, (0.02, 0.3, 0.8, 0.8), fill)
        _ellipse(draw, box, (0.6, 0.02, 1, 0.52), fill)
        head = (0.6, 0.02, 1, 0.52)
    left, top, right, bottom = head
    width = right - left
    if pointed_ears:
        for start in (0.12, 0.58):
            ear_left = left + start * width
            _polygon(
                draw,
                box,
                [
                    (ear_left, top + 0.1),
                    (ear_left + 0.15 * width, top - 0.06),
                    (ear_left + 0.3 * width, top + 0.1),
                ],
                fill,
            )
    else:
        _ellipse(draw, box, (left - 0.04, top + 0.04, left + 0.22 * width, bottom - 0.1), OUTLINE_COLOR)
    eye = _at(box, left + 0.68 * width, top + 0.4 * (bottom - top))
    draw.ellipse((eye[0] - 2, eye[1] - 2, eye[0] + 2, eye[1] + 2), fill=_detail_color(fill))


def _paint_dog(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _paint_animal(draw, box, fill, state, pointed_ears=False)


def _paint_cat(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _paint_animal(draw, box, fill, state, pointed_ears=True)


def _paint_bird(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _line(draw, box, [(0.4, 0.8), (0.36, 1)], OUTLINE_COLOR, 2)
    _line(draw, box, [(0.55, 0.8), (0.52, 1)], OUTLINE_COLOR, 2)
    _polygon(draw, box, [(0.86, 0.22), (1, 0.34), (0.86, 0.42)], BEAK_COLOR)
    _ellipse(draw, box, (0, 0.28, 0.8, 0.9), fill)
    _ellipse(draw, box, (0.5, 0, 0.9, 0.56), fill)
    eye = _at(box, 0.74, 0.22)
    draw.ellipse((eye[0] - 1, eye[1] - 1, eye[0] + 1, eye[1] + 1), fill=OUTLINE_COLOR)


def _paint_ball(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _ellipse(draw, box, (0, 0, 1, 1), fill)
    draw.arc(_corners(box, -0.5, 0.1, 0.5, 0.9), -60, 60, fill=_detail_color(fill), width=1)
    draw.arc(_corners(box, 0.5, 0.1, 1.5, 0.9), 120, 240, fill=_detail_color(fill), width=1)


def _paint_backpack(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    draw.arc(_corners(box, 0.3, 0, 0.7, 0.3), 180, 360, fill=OUTLINE_COLOR, width=3)
    _rounded(draw, box, (0, 0.12, 1, 1), fill, 0.3)
    _rounded(draw, box, (0.18, 0.56, 0.82, 0.92), fill, 0.25)


def _paint_car(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _polygon(draw, box, [(0.2, 0.42), (0.3, 0.02), (0.7, 0.02), (0.84, 0.42)], fill)
    draw.polygon(
        [_at(box, x, y) for x, y in ((0.31, 0.38), (0.36, 0.1), (0.49, 0.1), (0.49, 0.38))], fill=WINDOW_COLOR
    )
    draw.polygon(
        [_at(box, x, y) for x, y in ((0.53, 0.38), (0.53, 0.1), (0.67, 0.1), (0.76, 0.38))], fill=WINDOW_COLOR
    )
    _rounded(draw, box, (0, 0.38, 1, 0.82), fill, 0.3)
    for center in (0.22, 0.78):
        wheel = _corners(box, center - 0.11, 0.6, center + 0.11, 1)
        draw.ellipse(wheel, fill=OUTLINE_COLOR)
        hub = _corners(box, center - 0.05, 0.72, center + 0.05, 0.88)
        draw.ellipse(hub, fill=COLORS["gray"])


def _paint_bicycle(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    wheel_height = 0.64
    wheel_width = wheel_height * box.h / box.w
    rear = (wheel_width / 2, 1 - wheel_height / 2)
    front = (1 - wheel_width / 2, 1 - wheel_height / 2)
    for hub_x, _ in (rear, front):
        corners = _corners(box, hub_x - wheel_width / 2, 1 - wheel_height, hub_x + wheel_width / 2, 1)
        draw.ellipse(corners, fill=fill, outline=OUTLINE_COLOR, width=5)
    pedal = (0.46, rear[1])
    seat = (0.36, 0.12)
    handle = (0.72, 0.06)
    for start, end in (
        (rear, seat),
        (seat, pedal),
        (rear, pedal),
        (pedal, handle),
        (handle, front),
        (seat, handle),
    ):
        _line(draw, box, [start, end], OUTLINE_COLOR, 7)
        _line(draw, box, [start, end], fill, 4)
    _rectangle(draw, box, (0.28, 0.04, 0.44, 0.14), OUTLINE_COLOR)
    _rectangle(draw, box, (0.66, 0, 0.8, 0.08), OUTLINE_COLOR)


def _paint_bench(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    for left in (0.06, 0.88):
        _rectangle(draw, box, (left, 0.5, left + 0.06, 1), fill)
        _rectangle(draw, box, (left, 0.1, left + 0.06, 0.42), fill)
    _rectangle(draw, box, (0, 0, 1, 0.24), fill)
    _rectangle(draw, box, (0, 0.4, 1, 0.56), fill)


def _paint_tree(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    _rectangle(draw, box, (0.42, 0.55, 0.58, 1), TRUNK_COLOR)
    _ellipse(draw, box, (0, 0, 1, 0.7), fill)


def _paint_umbrella(draw: ImageDraw.ImageDraw, box: Box, fill: Color, state: str | None) -> None:
    if state == "closed":
        _line(draw, box, [(0.5, 0), (0.5, 0.92)], OUTLINE_COLOR, 3)
        draw.arc(_corners(box, 0.1, 0.84, 0.5, 1), 0, 180, fill=OUTLINE_COLOR, width=3)
        _polygon(draw, box, [(0.5, 0.04), (0.96, 0.74), (0.04, 0.74)], fill)
        return
    _line(draw, box, [(0.5, 0.4), (0.5, 0.92)], OUTLINE_COLOR, 3)
    draw.arc(_corners(box, 0.36, 0.84, 0.5, 1), 0, 180, fill=OUTLINE_COLOR, width=3)
    canopy = _corners(box, 0, 0, 1, 0.9)
    draw.pieslice(canopy, 180, 360, fill=fill, outline=OUTLINE_COLOR, width=_outline_width(box))


SHAPE_PAINTERS: dict[str, Painter] = {
    "table": _paint_table,
    "chair": _paint_chair,
    "sofa": _paint_sofa,
    "shelf": _paint_shelf,
    "lamp": _paint_lamp,
    "cup": _paint_cup,
    "knife": _paint_knife,
    "fork": _paint_fork,
    "plate": _paint_plate,
    "bottle": _paint_bottle,
    "laptop": _paint_laptop,
    "phone": _paint_phone,
    "book": _paint_book,
    "clock": _paint_clock,
    "apple": _paint_apple,
    "banana": _paint_banana,
    "dog": _paint_dog,
    "cat": _paint_cat,
    "bird": _paint_bird,
    "ball": _paint_ball,
    "backpack": _paint_backpack,
    "car": _paint_car,
    "bicycle": _paint_bicycle,
    "bench": _paint_bench,
    "tree": _paint_tree,
    "umbrella": _paint_umbrella,
}
