"""Synthetic sample data for the STE-VQA benchmark.

STE-VQA (Scene Text Evidence VQA) asks bilingual English/Chinese questions whose
answers have to be read from text in a photo, and every answer comes with an
"evidence" quadrilateral around the text it was read from.  The real data set
cannot ship with the app, so this module paints street/shop-front scenes with
signboards, street signs and price boards, and writes them in the official
training format.  That gives the benchmark's loaders, metrics and UI something
realistic to run on: Chinese and Latin glyphs, signs in perspective (so the
evidence boxes are genuine quadrilaterals, not rectangles) and distractor text
that does not answer anything.

The module is deliberately free of Django so it can run in scripts and tests.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import pathlib
import random
from collections.abc import Callable, Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFont

IMAGE_WIDTH = 640
IMAGE_HEIGHT = 480

CHINESE_FONT_PATH = pathlib.Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc")
ENGLISH_FONT_PATH = pathlib.Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf")
# The Debian packages that install the fonts, named in the error when one is missing.
FONT_PACKAGES = {
    CHINESE_FONT_PATH: "fonts-wqy-microhei",
    ENGLISH_FONT_PATH: "fonts-dejavu-core",
}

ANNOTATION_FILE_NAME = "stevqa_train.json"
IMAGES_FOLDER_NAME = "images"

# Pixels added around the text's ink before it becomes the evidence quadrilateral,
# measured on the flat sign (before the perspective warp).  Bicubic resampling
# smears glyph edges by a pixel or two, so the box needs some slack to enclose them.
EVIDENCE_PADDING = 4
# Fraction of signs drawn in perspective rather than facing the camera.
PERSPECTIVE_PROBABILITY = 0.5
# Gap kept between signs so that no sign covers text on another one.
SIGN_GAP = 6
IMAGE_MARGIN = 6

ENGLISH = "en"
CHINESE = "zh"

SHOP_SIGN = "shop"
STREET_SIGN = "street"
PRICE_BOARD = "price"

# --- Vocabularies ---------------------------------------------------------------

ENGLISH_SHOP_NAMES = (
    "GOLDEN BAKERY",
    "CITY PHARMACY",
    "SUNRISE CAFE",
    "BLUE OCEAN SEAFOOD",
    "GREEN LEAF GROCERY",
    "MOONLIGHT BOOKS",
    "STAR HARDWARE",
    "HAPPY NOODLE HOUSE",
    "PARK VIEW DENTAL",
    "LUCKY DRAGON",
    "RED APPLE MARKET",
    "SILVER SCISSORS",
    "URBAN FITNESS",
    "CORNER DELI",
    "ROYAL TAILOR",
    "FRESH FLOWERS",
    "PIXEL PHONES",
    "MAPLE DINER",
    "OCEAN TRAVEL",
    "BRIGHT OPTICS",
    "PET PALACE",
    "SWEET TOOTH CANDY",
    "NORTH STAR LAUNDRY",
    "ACE SHOES",
    "VILLAGE PIZZA",
    "HOME CHEF KITCHEN",
    "JADE GARDEN",
    "TIMELESS WATCHES",
    "KIDS TOY WORLD",
    "QUICK PRINT",
    "SUNSET BAR",
    "LITTLE ITALY",
)
ENGLISH_STREET_NAMES = (
    "MAIN STREET",
    "OAK AVENUE",
    "ELM STREET",
    "PARK ROAD",
    "KING STREET",
    "HIGH STREET",
    "RIVER ROAD",
    "MAPLE AVENUE",
    "CHURCH LANE",
    "MARKET STREET",
    "STATION ROAD",
    "BROADWAY",
    "5TH AVENUE",
    "PINE STREET",
    "CEDAR LANE",
    "MILL ROAD",
    "HARBOR DRIVE",
    "SUNSET BLVD",
    "LAKE STREET",
    "BRIDGE STREET",
)
ENGLISH_OPENING_HOURS = (
    "24 HOURS",
    "7AM - 10PM",
    "9AM - 6PM",
    "8AM - 8PM",
    "10AM - 9PM",
    "6AM - 2PM",
    "11AM - 11PM",
    "8:30AM - 5:30PM",
)
ENGLISH_MENU_ITEMS = (
    "COFFEE",
    "TEA",
    "LATTE",
    "DONUT",
    "BAGEL",
    "SANDWICH",
    "MUFFIN",
    "JUICE",
    "SOUP",
    "SALAD",
    "CROISSANT",
    "HOT DOG",
    "MILKSHAKE",
    "PANCAKES",
)
ENGLISH_PRICE_HEADERS = ("MENU", "TODAY'S SPECIALS", "PRICES", "DAILY MENU")
ENGLISH_SHOP_TAGLINES = ("SINCE 1987", "EST. 2004", "TEL 555-0147", "FAMILY OWNED", "WELCOME")
ENGLISH_DISTRACTORS = (
    "EXIT",
    "NO PARKING",
    "SALE",
    "FREE WIFI",
    "PUSH",
    "STOP",
    "ONE WAY",
    "50% OFF",
    "NEW",
    "PULL",
    "NO SMOKING",
    "LOADING ZONE",
)

CHINESE_SHOP_NAMES = (
    "小颜家电维修",
    "潮尚剪艺",
    "华为专卖店",
    "鲜果超市",
    "老王牛肉面",
    "好邻居便利店",
    "阳光药房",
    "新华书店",
    "金牌烤鸭",
    "丽人美发",
    "百姓大药房",
    "四季花店",
    "东方眼镜",
    "永和豆浆",
    "快乐童装",
    "兴隆五金",
    "福满楼酒家",
    "小明手机维修",
    "川味小厨",
    "红星茶庄",
    "美味面包坊",
    "张记饺子馆",
    "海鲜大排档",
    "时尚鞋城",
    "绿色蔬菜店",
    "天天洗衣",
    "宏达电脑城",
    "幸福母婴店",
    "聚福火锅",
    "平安诊所",
    "书香文具店",
    "星光影楼",
)
# Chinese street signs carry the pinyin under the name; the pinyin is a distractor.
CHINESE_STREET_NAMES = (
    ("中山路", "ZHONGSHAN RD"),
    ("人民路", "RENMIN RD"),
    ("解放路", "JIEFANG RD"),
    ("建设路", "JIANSHE RD"),
    ("和平街", "HEPING ST"),
    ("长江路", "CHANGJIANG RD"),
    ("黄河路", "HUANGHE RD"),
    ("南京东路", "NANJING RD (E)"),
    ("北京西路", "BEIJING RD (W)"),
    ("文化路", "WENHUA RD"),
    ("幸福街", "XINGFU ST"),
    ("青年路", "QINGNIAN RD"),
    ("朝阳路", "CHAOYANG RD"),
    ("新华街", "XINHUA ST"),
    ("友谊路", "YOUYI RD"),
    ("光明街", "GUANGMING ST"),
    ("胜利路", "SHENGLI RD"),
    ("东风路", "DONGFENG RD"),
    ("学府路", "XUEFU RD"),
    ("滨江大道", "BINJIANG AVE"),
)
CHINESE_OPENING_HOURS = (
    "9:00-21:00",
    "8:00-22:00",
    "10:00-22:00",
    "7:00-19:00",
    "24小时",
    "8:30-20:30",
    "10:00-21:30",
)
CHINESE_PRICE_ITEMS = (
    "苹果",
    "香蕉",
    "西瓜",
    "橙子",
    "葡萄",
    "草莓",
    "牛奶",
    "面包",
    "鸡蛋",
    "大米",
    "猪肉",
    "白菜",
    "豆浆",
    "包子",
)
CHINESE_PRICE_HEADERS = ("价目表", "今日价格", "特价商品", "本店价格")
CHINESE_SHOP_TAGLINES = ("欢迎光临", "电话 0571-8826", "诚信经营", "老字号", "新店开业")
CHINESE_DISTRACTORS = (
    "出口",
    "入口",
    "禁止停车",
    "推",
    "拉",
    "特价",
    "优惠",
    "小心地滑",
    "请勿吸烟",
    "新品上市",
    "营业中",
    "停车场",
)

# --- Colours ----------------------------------------------------------------------

Color = tuple[int, int, int]

# (board, text, border) triples chosen for strong contrast, so the text stays legible.
SHOP_SIGN_PALETTES: tuple[tuple[Color, Color, Color], ...] = (
    ((178, 34, 34), (255, 236, 160), (250, 220, 120)),
    ((20, 40, 90), (255, 255, 255), (200, 170, 80)),
    ((250, 246, 235), (30, 30, 30), (120, 90, 60)),
    ((240, 200, 40), (20, 20, 20), (40, 40, 40)),
    ((25, 25, 25), (230, 190, 90), (230, 190, 90)),
    ((20, 110, 70), (255, 255, 255), (230, 230, 230)),
    ((120, 30, 90), (255, 255, 255), (240, 200, 230)),
    ((255, 255, 255), (200, 20, 30), (200, 20, 30)),
)
DISTRACTOR_PALETTES: tuple[tuple[Color, Color, Color], ...] = (
    ((255, 255, 255), (200, 20, 30), (200, 20, 30)),
    ((200, 20, 30), (255, 255, 255), (255, 255, 255)),
    ((250, 220, 0), (20, 20, 20), (20, 20, 20)),
    ((30, 30, 30), (255, 255, 255), (120, 120, 120)),
    ((0, 90, 170), (255, 255, 255), (255, 255, 255)),
)
ENGLISH_STREET_SIGN_COLORS = ((0, 110, 60), (255, 255, 255))
CHINESE_STREET_SIGN_COLORS = ((20, 60, 160), (255, 255, 255))
PRICE_BOARD_PALETTES: tuple[tuple[Color, Color, Color], ...] = (
    ((40, 48, 42), (245, 245, 235), (120, 80, 40)),
    ((250, 250, 245), (180, 20, 20), (60, 60, 60)),
    ((20, 30, 60), (255, 220, 80), (200, 200, 200)),
)
SKY_COLORS: tuple[tuple[Color, Color], ...] = (
    ((110, 160, 225), (200, 225, 245)),
    ((150, 185, 230), (225, 235, 245)),
    ((170, 175, 185), (215, 215, 220)),
    ((90, 120, 190), (245, 200, 160)),
)
WALL_COLORS: tuple[Color, ...] = (
    (165, 85, 60),
    (215, 200, 170),
    (180, 180, 175),
    (235, 225, 205),
    (140, 130, 120),
    (200, 160, 120),
    (120, 140, 150),
    (225, 215, 190),
)
WINDOW_COLORS: tuple[Color, ...] = ((70, 95, 120), (120, 150, 175), (50, 60, 70), (160, 185, 200))


# --- Data structures --------------------------------------------------------------

Point = tuple[float, float]


@dataclasses.dataclass(frozen=True)
class TextRun:
    """One piece of text on a sign: a question may be asked about it, or not.

    Runs are the unit of evidence: the answer of a question is always the full
    text of one run, and its quadrilateral is computed from that run alone.
    """

    text: str
    font: ImageFont.FreeTypeFont
    question: str | None = None


@dataclasses.dataclass(frozen=True)
class SignDesign:
    """What a sign looks like when seen flat: its rows of text and its colours."""

    kind: str
    rows: tuple[tuple[TextRun, ...], ...]
    board_color: Color
    text_color: Color
    border_color: Color
    # Rows with two runs spread them to both edges (item ... price), others are centred.
    justify_pairs: bool = False
    padding: int = 14
    row_spacing: int = 8
    border_width: int = 3


@dataclasses.dataclass(frozen=True)
class FlatSign:
    """A sign rendered facing the camera, with the ink extent and mask of every run."""

    layer: Image.Image
    runs: tuple[TextRun, ...]
    ink_boxes: tuple[tuple[int, int, int, int], ...]
    ink_masks: tuple[Image.Image, ...]


@dataclasses.dataclass(frozen=True)
class PlacedSign:
    """A flat sign together with where its four corners land in the scene."""

    design: SignDesign
    flat: FlatSign
    corners: tuple[Point, Point, Point, Point]

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        xs = [x for x, _ in self.corners]
        ys = [y for _, y in self.corners]
        return min(xs), min(ys), max(xs), max(ys)


@dataclasses.dataclass(frozen=True)
class SceneQuestion:
    """A question about the scene, with its evidence and the answer text's ink mask.

    `evidence` is the quadrilateral (clockwise from top-left) in image pixels.
    `text_mask` is an "L" image the size of the scene holding only the answer
    text's ink, warped exactly like the sign, so tests can check that the
    evidence really encloses the answer.
    """

    question: str
    answer: str
    evidence: tuple[tuple[int, int], tuple[int, int], tuple[int, int], tuple[int, int]]
    text_mask: Image.Image


@dataclasses.dataclass(frozen=True)
class ComposedScene:
    """One synthetic image and the questions asked about it."""

    image: Image.Image
    questions: tuple[SceneQuestion, ...]


# --- Fonts ------------------------------------------------------------------------


def require_fonts() -> None:
    """Fail early, with the Debian package to install, when a font is missing.

    Pillow's own error for a missing font file ("cannot open resource") does not
    say which font or how to get it.
    """
    for font_path, package in FONT_PACKAGES.items():
        if not font_path.is_file():
            raise FileNotFoundError(
                f"Font {font_path.name} not found at {font_path}; "
                f"install the Debian package {package} (apt-get install {package})."
            )


@functools.lru_cache(maxsize=128)
def _load_font(font_path: pathlib.Path, size: int) -> ImageFont.FreeTypeFont:
    """Loads (once per size) a TrueType font; index 0 of the WQY collection is Micro Hei."""
    if not font_path.is_file():
        require_fonts()
    return ImageFont.truetype(str(font_path), size, index=0)


def _font_for(language: str, size: int) -> ImageFont.FreeTypeFont:
    return _load_font(CHINESE_FONT_PATH if language == CHINESE else ENGLISH_FONT_PATH, size)


# --- Geometry ---------------------------------------------------------------------


def solve_homography(source: Sequence[Point], target: Sequence[Point]) -> np.ndarray:
    """Returns the 3x3 projective matrix mapping the 4 source points onto the 4 targets.

    With h33 fixed to 1 each correspondence gives two linear equations in the other
    eight entries; least squares solves the resulting 8x8 system (and would also
    take more than four points).
    """
    equations = []
    values = []
    for (x, y), (u, v) in zip(source, target, strict=True):
        equations.append([x, y, 1.0, 0.0, 0.0, 0.0, -x * u, -y * u])
        values.append(u)
        equations.append([0.0, 0.0, 0.0, x, y, 1.0, -x * v, -y * v])
        values.append(v)
    solution, *_ = np.linalg.lstsq(np.array(equations), np.array(values), rcond=None)
    return np.append(solution, 1.0).reshape(3, 3)


def apply_homography(matrix: np.ndarray, points: Sequence[Point]) -> list[Point]:
    """Maps points through a projective matrix (dividing by the homogeneous coordinate)."""
    homogeneous = np.column_stack([np.asarray(points, dtype=float), np.ones(len(points))])
    mapped = homogeneous @ matrix.T
    return [(float(x / w), float(y / w)) for x, y, w in mapped]


def pillow_perspective_coefficients(forward: np.ndarray) -> tuple[float, ...]:
    """Turns a layer-to-scene matrix into the 8 coefficients Image.transform expects.

    Pillow's PERSPECTIVE transform maps each OUTPUT pixel back to the INPUT image,
    so it needs the inverse of the matrix used to map points forward.
    """
    inverse = np.linalg.inv(forward)
    inverse = inverse / inverse[2, 2]
    return tuple(float(value) for value in inverse.flatten()[:8])


def _perspective_outline(rng: random.Random, width: int, height: int) -> list[Point]:
    """Corners of a width x height board as seen from off to one side, above or below.

    One edge of the board is shortened (the far edge looks smaller), the board is
    foreshortened along that direction, and the whole thing is tilted a little.
    """
    shrink = rng.uniform(0.62, 0.85)
    foreshortening = rng.uniform(0.78, 0.95)
    view = rng.choice(("left", "right", "below", "above"))
    if view in ("left", "right"):
        near, far = 0.0, width * foreshortening
        inset = height * (1 - shrink) / 2
        corners = [(near, 0.0), (far, inset), (far, height - inset), (near, float(height))]
        if view == "right":
            corners = [(far - x, y) for x, y in corners]
            corners = [corners[1], corners[0], corners[3], corners[2]]
    else:
        new_height = height * foreshortening
        inset = width * (1 - shrink) / 2
        corners = [(inset, 0.0), (width - inset, 0.0), (float(width), new_height), (0.0, new_height)]
        if view == "above":
            corners = [(x, new_height - y) for x, y in corners]
            corners = [corners[3], corners[2], corners[1], corners[0]]
    angle = math.radians(rng.uniform(-7.0, 7.0))
    centre_x = sum(x for x, _ in corners) / 4
    centre_y = sum(y for _, y in corners) / 4
    cosine, sine = math.cos(angle), math.sin(angle)
    return [
        (
            centre_x + (x - centre_x) * cosine - (y - centre_y) * sine,
            centre_y + (x - centre_x) * sine + (y - centre_y) * cosine,
        )
        for x, y in corners
    ]


def _rectangles_overlap(
    first: tuple[float, float, float, float], second: tuple[float, float, float, float], gap: float
) -> bool:
    return not (
        first[2] + gap <= second[0]
        or second[2] + gap <= first[0]
        or first[3] + gap <= second[1]
        or second[3] + gap <= first[1]
    )


# --- Sign designs -----------------------------------------------------------------


def _design_shop_sign(rng: random.Random, language: str) -> SignDesign:
    """A shop signboard: the name in large letters, optionally opening hours or a tagline."""
    board_color, text_color, border_color = rng.choice(SHOP_SIGN_PALETTES)
    if language == ENGLISH:
        name = rng.choice(ENGLISH_SHOP_NAMES)
        name_size = rng.randint(30, 40) if len(name) > 14 else rng.randint(34, 46)
        rows = [(TextRun(name, _font_for(ENGLISH, name_size), "What is the name of this shop?"),)]
        small_font = _font_for(ENGLISH, rng.randint(15, 19))
        extra = rng.random()
        if extra < 0.45:
            hours = rng.choice(ENGLISH_OPENING_HOURS)
            rows.append(
                (
                    TextRun("OPEN", small_font),
                    TextRun(hours, small_font, "What are the opening hours?"),
                )
            )
        elif extra < 0.75:
            rows.append((TextRun(rng.choice(ENGLISH_SHOP_TAGLINES), small_font),))
    else:
        name = rng.choice(CHINESE_SHOP_NAMES)
        rows = [(TextRun(name, _font_for(CHINESE, rng.randint(38, 52)), "这家店的名字是什么?"),)]
        small_font = _font_for(CHINESE, rng.randint(17, 21))
        extra = rng.random()
        if extra < 0.45:
            hours = rng.choice(CHINESE_OPENING_HOURS)
            rows.append(
                (
                    TextRun("营业时间", small_font),
                    TextRun(hours, small_font, "这家店的营业时间是什么?"),
                )
            )
        elif extra < 0.75:
            rows.append((TextRun(rng.choice(CHINESE_SHOP_TAGLINES), small_font),))
    return SignDesign(
        kind=SHOP_SIGN,
        rows=tuple(rows),
        board_color=board_color,
        text_color=text_color,
        border_color=border_color,
        padding=rng.randint(12, 20),
        border_width=rng.randint(2, 5),
    )


def _design_street_sign(rng: random.Random, language: str) -> SignDesign:
    """A street name sign: green with white letters in English, blue with pinyin in Chinese."""
    if language == ENGLISH:
        board_color, text_color = ENGLISH_STREET_SIGN_COLORS
        name = rng.choice(ENGLISH_STREET_NAMES)
        rows = [(TextRun(name, _font_for(ENGLISH, rng.randint(24, 32)), "What street is this?"),)]
    else:
        board_color, text_color = CHINESE_STREET_SIGN_COLORS
        name, pinyin = rng.choice(CHINESE_STREET_NAMES)
        rows = [
            (TextRun(name, _font_for(CHINESE, rng.randint(30, 40)), "这条路叫什么名字?"),),
            (TextRun(pinyin, _font_for(ENGLISH, rng.randint(12, 15))),),
        ]
    return SignDesign(
        kind=STREET_SIGN,
        rows=tuple(rows),
        board_color=board_color,
        text_color=text_color,
        border_color=text_color,
        padding=rng.randint(10, 14),
        row_spacing=4,
        border_width=2,
    )


def _format_english_price(rng: random.Random) -> str:
    return f"${rng.randint(1, 12)}.{rng.choice((0, 25, 49, 50, 75, 95, 99)):02d}"


def _format_chinese_price(rng: random.Random) -> str:
    if rng.random() < 0.3:
        # Market produce is priced per jin (500 g), and cheaply.
        return f"{rng.randint(2, 25)}元/斤"
    return f"{rng.choice((str(rng.randint(2, 68)), f'{rng.randint(1, 9)}.5'))}元"


def _design_price_board(rng: random.Random, language: str) -> SignDesign:
    """A menu or market price board: a header and 2-4 item/price rows."""
    board_color, text_color, border_color = rng.choice(PRICE_BOARD_PALETTES)
    item_count = rng.randint(2, 4)
    if language == ENGLISH:
        header_font = _font_for(ENGLISH, rng.randint(20, 24))
        item_font = _font_for(ENGLISH, rng.randint(16, 20))
        rows = [(TextRun(rng.choice(ENGLISH_PRICE_HEADERS), header_font),)]
        for item in rng.sample(ENGLISH_MENU_ITEMS, item_count):
            question = f"What is the price of the {item.lower()}?"
            rows.append((TextRun(item, item_font), TextRun(_format_english_price(rng), item_font, question)))
    else:
        header_font = _font_for(CHINESE, rng.randint(22, 26))
        item_font = _font_for(CHINESE, rng.randint(18, 22))
        rows = [(TextRun(rng.choice(CHINESE_PRICE_HEADERS), header_font),)]
        for item in rng.sample(CHINESE_PRICE_ITEMS, item_count):
            question = f"{item}的价格是多少?"
            rows.append((TextRun(item, item_font), TextRun(_format_chinese_price(rng), item_font, question)))
    return SignDesign(
        kind=PRICE_BOARD,
        rows=tuple(rows),
        board_color=board_color,
        text_color=text_color,
        border_color=border_color,
        justify_pairs=True,
        padding=rng.randint(12, 16),
        row_spacing=6,
        border_width=rng.randint(4, 7),
    )


def _design_distractor(rng: random.Random, language: str, used_texts: set[str]) -> SignDesign:
    """A small plate ("EXIT", "禁止停车", ...) whose text answers no question.

    Texts already in `used_texts` are skipped so one street does not repeat a plate.
    """
    board_color, text_color, border_color = rng.choice(DISTRACTOR_PALETTES)
    vocabulary = ENGLISH_DISTRACTORS if language == ENGLISH else CHINESE_DISTRACTORS
    text = rng.choice([text for text in vocabulary if text not in used_texts])
    used_texts.add(text)
    font = _font_for(language, rng.randint(14, 22))
    return SignDesign(
        kind="distractor",
        rows=((TextRun(text, font),),),
        board_color=board_color,
        text_color=text_color,
        border_color=border_color,
        padding=rng.randint(5, 8),
        border_width=rng.randint(1, 2),
    )


SIGN_DESIGNERS: dict[str, Callable[[random.Random, str], SignDesign]] = {
    SHOP_SIGN: _design_shop_sign,
    STREET_SIGN: _design_street_sign,
    PRICE_BOARD: _design_price_board,
}
# Vertical band (fractions of the image height) where each kind of sign is tried first:
# shop signs hang high on the facades, price boards stand near the pavement.
PREFERRED_BANDS = {
    SHOP_SIGN: (0.03, 0.55),
    STREET_SIGN: (0.05, 0.75),
    PRICE_BOARD: (0.35, 0.98),
    "distractor": (0.2, 0.95),
}


# --- Rendering --------------------------------------------------------------------


def _text_size(run: TextRun) -> tuple[int, int]:
    """Advance width and line height, so rows line up regardless of which glyphs they hold."""
    ascent, descent = run.font.getmetrics()
    return math.ceil(run.font.getlength(run.text)), ascent + descent


def render_flat_sign(design: SignDesign) -> FlatSign:
    """Draws the board and its text facing the camera, on a transparent RGBA layer.

    Every run is also drawn alone onto its own mask, and the extent of that mask's
    ink becomes the run's box: the evidence then follows the glyphs actually
    drawn, not the font's nominal line box.
    """
    gap = round(design.rows[0][0].font.size * 0.5)
    row_sizes = []
    for row in design.rows:
        sizes = [_text_size(run) for run in row]
        width = sum(size[0] for size in sizes) + gap * (len(row) - 1)
        if design.justify_pairs and len(row) == 2:
            width += gap * 2
        row_sizes.append((sizes, width, max(size[1] for size in sizes)))
    inner_width = max(width for _, width, _ in row_sizes)
    board_width = inner_width + 2 * design.padding
    board_height = (
        sum(height for _, _, height in row_sizes)
        + design.row_spacing * (len(design.rows) - 1)
        + 2 * design.padding
    )

    layer = Image.new("RGBA", (board_width, board_height), (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    radius = min(board_width, board_height) // 8
    draw.rounded_rectangle(
        (0, 0, board_width - 1, board_height - 1), radius=radius, fill=design.board_color + (255,)
    )
    inset = design.border_width + 2
    draw.rounded_rectangle(
        (inset, inset, board_width - 1 - inset, board_height - 1 - inset),
        radius=max(radius - inset, 0),
        outline=design.border_color + (255,),
        width=design.border_width,
    )

    runs: list[TextRun] = []
    ink_boxes: list[tuple[int, int, int, int]] = []
    ink_masks: list[Image.Image] = []
    top = design.padding
    for row, (sizes, row_width, row_height) in zip(design.rows, row_sizes, strict=True):
        if design.justify_pairs and len(row) == 2:
            positions = [design.padding, board_width - design.padding - sizes[1][0]]
        else:
            left = design.padding + (inner_width - row_width) // 2
            positions = []
            for width, _ in sizes:
                positions.append(left)
                left += width + gap
        for run, left, (_, height) in zip(row, positions, sizes, strict=True):
            origin = (left, top + (row_height - height) // 2)
            draw.text(origin, run.text, font=run.font, fill=design.text_color + (255,))
            mask = Image.new("L", layer.size, 0)
            ImageDraw.Draw(mask).text(origin, run.text, font=run.font, fill=255)
            runs.append(run)
            ink_boxes.append(mask.getbbox() or (left, top, left + 1, top + 1))
            ink_masks.append(mask)
        top += row_height + design.row_spacing
    return FlatSign(layer=layer, runs=tuple(runs), ink_boxes=tuple(ink_boxes), ink_masks=tuple(ink_masks))


def _place_sign(
    rng: random.Random,
    design: SignDesign,
    occupied: list[tuple[float, float, float, float]],
    perspective: bool,
) -> PlacedSign | None:
    """Finds a spot for the sign that stays inside the image and clear of other signs.

    Returns None when no free spot turns up, in which case the caller leaves the
    sign out rather than letting it cover text already placed.
    """
    flat = render_flat_sign(design)
    width, height = flat.layer.size
    if perspective:
        outline = _perspective_outline(rng, width, height)
    else:
        outline = [(0.0, 0.0), (float(width), 0.0), (float(width), float(height)), (0.0, float(height))]
    outline_width = max(x for x, _ in outline) - min(x for x, _ in outline)
    outline_height = max(y for _, y in outline) - min(y for _, y in outline)
    scale = min(
        1.0,
        (IMAGE_WIDTH - 2 * IMAGE_MARGIN - 2) / outline_width,
        (IMAGE_HEIGHT * 0.45) / outline_height,
    )
    left = min(x for x, _ in outline)
    top = min(y for _, y in outline)
    outline = [((x - left) * scale, (y - top) * scale) for x, y in outline]
    outline_width *= scale
    outline_height *= scale

    band_top, band_bottom = PREFERRED_BANDS[design.kind]
    for attempt in range(80):
        if attempt < 40:
            lowest_top = band_top * IMAGE_HEIGHT
            highest_top = band_bottom * IMAGE_HEIGHT - outline_height
        else:
            lowest_top = IMAGE_MARGIN
            highest_top = IMAGE_HEIGHT - IMAGE_MARGIN - outline_height
        lowest_top = max(lowest_top, IMAGE_MARGIN)
        highest_top = min(highest_top, IMAGE_HEIGHT - IMAGE_MARGIN - outline_height)
        highest_left = IMAGE_WIDTH - IMAGE_MARGIN - outline_width
        if highest_top < lowest_top or highest_left < IMAGE_MARGIN:
            continue
        # Whole pixels keep a flat sign's warp a pure translation, so it stays crisp.
        offset_x = rng.randint(IMAGE_MARGIN, math.floor(highest_left))
        offset_y = rng.randint(math.ceil(lowest_top), math.floor(highest_top))
        corners = tuple((x + offset_x, y + offset_y) for x, y in outline)
        bounds = (offset_x, offset_y, offset_x + outline_width, offset_y + outline_height)
        if any(_rectangles_overlap(bounds, other, SIGN_GAP) for other in occupied):
            continue
        occupied.append(bounds)
        return PlacedSign(design=design, flat=flat, corners=corners)
    return None


def _paint_background(rng: random.Random, ground_line: int) -> Image.Image:
    """Sky gradient, a row of building facades with windows and doors, and a pavement."""
    sky_top, sky_bottom = rng.choice(SKY_COLORS)
    fraction = np.linspace(0.0, 1.0, IMAGE_HEIGHT)[:, None]
    column = np.array(sky_top) * (1 - fraction) + np.array(sky_bottom) * fraction
    pixels = np.repeat(column[:, None, :], IMAGE_WIDTH, axis=1)
    image = Image.fromarray(pixels.round().astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(image)

    left = -rng.randint(0, 60)
    while left < IMAGE_WIDTH:
        width = rng.randint(130, 260)
        roof = rng.randint(15, 190)
        base_color = rng.choice(WALL_COLORS)
        wall = tuple(max(0, min(255, channel + rng.randint(-12, 12))) for channel in base_color)
        draw.rectangle((left, roof, left + width, ground_line), fill=wall)
        # A darker band down one side gives the block a little depth.
        shade = tuple(int(channel * 0.8) for channel in wall)
        draw.rectangle((left + width - 8, roof, left + width, ground_line), fill=shade)
        draw.rectangle((left, roof, left + width, roof + 6), fill=tuple(int(c * 0.7) for c in wall))

        window_color = rng.choice(WINDOW_COLORS)
        window_width, window_height = rng.randint(18, 30), rng.randint(24, 40)
        spacing_x, spacing_y = window_width + rng.randint(14, 26), window_height + rng.randint(16, 26)
        for window_top in range(roof + 20, ground_line - 110, spacing_y):
            for window_left in range(left + 14, left + width - window_width - 14, spacing_x):
                draw.rectangle(
                    (window_left, window_top, window_left + window_width, window_top + window_height),
                    fill=window_color,
                    outline=shade,
                    width=2,
                )
        door_left = left + rng.randint(15, max(16, width - 60))
        draw.rectangle(
            (door_left, ground_line - rng.randint(60, 80), door_left + 36, ground_line),
            fill=(60, 45, 35),
        )
        left += width + rng.randint(0, 12)

    pavement_top = np.array((150, 150, 148))
    pavement_bottom = np.array((105, 105, 108))
    for y in range(ground_line, IMAGE_HEIGHT):
        share = (y - ground_line) / max(1, IMAGE_HEIGHT - ground_line)
        color = pavement_top * (1 - share) + pavement_bottom * share
        draw.line((0, y, IMAGE_WIDTH, y), fill=tuple(int(c) for c in color))
    draw.line((0, ground_line, IMAGE_WIDTH, ground_line), fill=(90, 90, 90), width=3)
    return image


def _warp(layer: Image.Image, coefficients: tuple[float, ...]) -> Image.Image:
    return layer.transform(
        (IMAGE_WIDTH, IMAGE_HEIGHT), Image.Transform.PERSPECTIVE, coefficients, Image.Resampling.BICUBIC
    )


def _evidence_for(
    ink_box: tuple[int, int, int, int], forward: np.ndarray
) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int], tuple[int, int]]:
    """The padded ink box of a run, mapped into the scene, clockwise from top-left."""
    left, top, right, bottom = ink_box
    padded = [
        (left - EVIDENCE_PADDING, top - EVIDENCE_PADDING),
        (right + EVIDENCE_PADDING, top - EVIDENCE_PADDING),
        (right + EVIDENCE_PADDING, bottom + EVIDENCE_PADDING),
        (left - EVIDENCE_PADDING, bottom + EVIDENCE_PADDING),
    ]
    corners = [
        (
            min(max(round(x), 0), IMAGE_WIDTH - 1),
            min(max(round(y), 0), IMAGE_HEIGHT - 1),
        )
        for x, y in apply_homography(forward, padded)
    ]
    return corners[0], corners[1], corners[2], corners[3]


def compose_scene(rng: random.Random) -> ComposedScene:
    """Paints one street scene with 1-3 answerable signs, a few distractors and 1-3 questions.

    The sign kinds in one image are all different (at most one shop sign, one
    street sign, one price board), so "this shop" or "this street" is never
    ambiguous.  Each sign is drawn flat and then warped into the scene by a
    homography; evidence corners and answer-text masks go through the very same
    homography, which is what keeps the evidence on the text.
    """
    kind_count = rng.choices((1, 2, 3), weights=(3, 4, 3))[0]
    kinds = rng.sample((SHOP_SIGN, STREET_SIGN, PRICE_BOARD), kind_count)
    occupied: list[tuple[float, float, float, float]] = []
    placed: list[PlacedSign] = []
    for kind in kinds:
        design = SIGN_DESIGNERS[kind](rng, rng.choice((ENGLISH, CHINESE)))
        sign = _place_sign(rng, design, occupied, rng.random() < PERSPECTIVE_PROBABILITY)
        if sign is not None:
            placed.append(sign)
    if not placed:
        # The first sign goes onto an empty image and always fits; this guards changes.
        raise RuntimeError("no sign could be placed")
    used_distractor_texts: set[str] = set()
    for _ in range(rng.randint(1, 3)):
        design = _design_distractor(rng, rng.choice((ENGLISH, CHINESE)), used_distractor_texts)
        sign = _place_sign(rng, design, occupied, rng.random() < 0.3)
        if sign is not None:
            placed.append(sign)

    ground_line = rng.randint(round(IMAGE_HEIGHT * 0.8), round(IMAGE_HEIGHT * 0.9))
    image = _paint_background(rng, ground_line)
    draw = ImageDraw.Draw(image)
    for sign in placed:
        # Street signs hang on a pole that runs down to the pavement, behind any sign.
        if sign.design.kind == STREET_SIGN:
            left, _, right, bottom = sign.bounds
            centre = (left + right) / 2
            if bottom < ground_line:
                draw.rectangle((centre - 3, bottom - 4, centre + 3, ground_line + 6), fill=(80, 85, 90))

    candidates: list[SceneQuestion] = []
    image = image.convert("RGBA")
    for sign in placed:
        width, height = sign.flat.layer.size
        layer_corners = [(0.0, 0.0), (float(width), 0.0), (float(width), float(height)), (0.0, float(height))]
        forward = solve_homography(layer_corners, sign.corners)
        coefficients = pillow_perspective_coefficients(forward)
        # Premultiplied alpha stops the transparent surroundings bleeding dark fringes in.
        warped = _warp(sign.flat.layer.convert("RGBa"), coefficients).convert("RGBA")
        image.alpha_composite(warped)
        for run, ink_box, ink_mask in zip(
            sign.flat.runs, sign.flat.ink_boxes, sign.flat.ink_masks, strict=True
        ):
            if run.question is None:
                continue
            candidates.append(
                SceneQuestion(
                    question=run.question,
                    answer=run.text,
                    evidence=_evidence_for(ink_box, forward),
                    text_mask=_warp(ink_mask, coefficients),
                )
            )
    question_count = rng.randint(1, min(3, len(candidates)))
    questions = rng.sample(candidates, question_count)
    return ComposedScene(image=image.convert("RGB"), questions=tuple(questions))


# --- Public entry point -----------------------------------------------------------


def generate_demo(out_dir: pathlib.Path, *, count: int = 40, seed: int = 0) -> pathlib.Path:
    """Writes `count` PNG images into out_dir/images/ and a training-format JSON file
    out_dir/stevqa_train.json; returns the JSON path.

    The JSON is a list of records shaped like the released STE-VQA training file:
    `{"id", "image", "annotation": [{"question", "answer", "evidence"}]}`, where
    evidence holds the quadrilateral's eight coordinates as strings of integers,
    because that is how the released data stores them and the loaders must cope.

    Each image gets its own random stream seeded from `seed`, so the same seed
    always gives byte-identical files, and no global random state is touched.
    """
    if count < 0:
        raise ValueError(f"count must not be negative, got {count}")
    require_fonts()
    out_dir = pathlib.Path(out_dir)
    images_dir = out_dir / IMAGES_FOLDER_NAME
    images_dir.mkdir(parents=True, exist_ok=True)

    seeds = random.Random(seed)
    digits = max(3, len(str(max(count - 1, 0))))
    records = []
    for image_id in range(count):
        scene = compose_scene(random.Random(seeds.getrandbits(64)))
        file_name = f"stevqa_{image_id:0{digits}d}.png"
        scene.image.save(images_dir / file_name, format="PNG")
        records.append(
            {
                "id": image_id,
                "image": file_name,
                "annotation": [
                    {
                        "question": question.question,
                        "answer": question.answer,
                        "evidence": [str(value) for point in question.evidence for value in point],
                    }
                    for question in scene.questions
                ],
            }
        )
    annotation_path = out_dir / ANNOTATION_FILE_NAME
    # One record per line: still a single JSON list, but easy to read and to diff.
    lines = ",\n".join(json.dumps(record, ensure_ascii=False) for record in records)
    annotation_path.write_text(f"[\n{lines}\n]\n" if records else "[]\n", encoding="utf-8")
    return annotation_path
