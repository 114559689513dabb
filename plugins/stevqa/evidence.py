"""Read the text inside an evidence quadrilateral, to warn when an answer does not match it (pure).

The annotator draws a quadrilateral around the text an answer was read from; the app reads
that text with an OCR engine (RapidOCR: PaddleOCR's PP-OCRv4 Chinese + English detection and
recognition models in ONNX, shipped inside the wheel, run on the CPU) and compares it with the
answer. A low similarity is a warning the annotator may confirm, never a refusal: OCR misreads,
and a right answer may differ from what it reads.

How a quadrilateral is read (`read_quad`):

1. its corners are put in clockwise order starting at the top-left one (the one with the
   smallest x + y), whatever order they were drawn in;
2. the quadrilateral, grown by a margin (`MARGIN` of its own width and height plus
   `CONTEXT` of its height on every side, so that text drawn tightly still has the background
   around it the text detector needs), is warped to an upright rectangle, scaled up so the
   quadrilateral is at least `MIN_HEIGHT` pixels high; the grown corners are clipped to the image;
3. the engine detects text lines in that rectangle and recognises them; lines lying mostly
   (`KEEP_INSIDE`) inside the annotator's own quadrilateral are kept, so that the margin does
   not bring in a neighbouring price or the pinyin under a street name, and joined by " " in
   reading order;
4. when no line is detected (or none lies inside), the quadrilateral alone is recognised as
   one line, kept when the recognition score is at least `MIN_SCORE`.

The engine's angle classifier is off: the warp already makes the text upright, and in a trial on
the demo images the classifier turned one price upside down ("$8.99" read as "66'8$").

`THRESHOLD` (0.5), measured on the demo street scenes of plugins.stevqa.demo (seeds 0 and 1,
40 images each, 144 QA pairs, English and Chinese signs, half of them in perspective): all 144
true answers are read exactly (similarity 1.0), and with the quadrilaterals drawn 4 px tighter
or 6 px looser than the generator's all still score 0.5 or more (142 to 144 exactly). Another
sign's answer scores 0.5 or more
for 5% of the (pair, wrong answer) combinations, nearly all prices one or two digits apart
("$11.95" against "$11.75": 0.83) that no threshold could tell apart; among answers without
digits, 1% (street names sharing "STREET": "LAKE STREET" against "MARKET STREET", 0.75). A
threshold of 0.7 would more than halve those (1.4-2.1%) and still pass every true answer on these
clean renders;
0.5 leaves room for real photos, which read worse.

Time, one CPU core: about 0.35 s to load the models (once per process, `engine`), then a median of
0.06-0.07 s per quadrilateral (p90 0.1 s); a quadrilateral over a whole 640 x 480 image takes
about 1.1 s.
"""

from __future__ import annotations

import os
import threading
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageOps

from plugins.stevqa.ocr import THREADS, new_engine

#: Similarity under which an answer is called far from the text read inside its quadrilateral.
THRESHOLD = 0.5
#: Margin added on every side of the quadrilateral before reading: a share of its own width
#: (left and right) or height (top and bottom)...
MARGIN = 0.08
#: ...plus this share of its height on every side, so that a tight quadrilateral keeps room
#: around the text (the text detector finds nothing in a crop the text fills).
CONTEXT = 0.25
#: The quadrilateral is scaled up to at least this height in pixels before reading.
MIN_HEIGHT = 48
#: The largest side, in pixels, of the rectangle the quadrilateral is warped to.
MAX_SIDE = 2048
#: A detected line is kept when at least this share of its area lies inside the quadrilateral.
KEEP_INSIDE = 0.5
#: The lowest recognition score kept (the engine's own default).
MIN_SCORE = 0.5

_engine: Any = None
_engine_lock = threading.Lock()


@dataclass(frozen=True)
class Reading:
    """What was read inside an answer's quadrilateral and how close it is to the answer.

    `text`: the recognised text ("" when nothing), lines joined by " ". `similarity`: 1 minus
    the normalised Levenshtein distance (rapidfuzz) between the answer and the text, both NFKC
    normalised, case folded and stripped of all whitespace (Chinese has no spaces and the OCR
    drops or adds some in Latin text), in [0, 1]. `seconds`: how long the reading took.
    """

    text: str
    similarity: float
    seconds: float

    @property
    def far(self) -> bool:
        """Whether the answer is far from the text read (similarity under `THRESHOLD`)."""
        return self.similarity < THRESHOLD


def engine():
    """The RapidOCR engine (plugins.stevqa.ocr), created on first use and shared by the
    process's threads.

    Loading the models takes about a second; a call on the engine is thread-safe as long as no
    per-call options are passed (they would change the shared detector's settings).
    """
    global _engine
    if _engine is None:
        with _engine_lock:
            if _engine is None:
                _engine = new_engine(threads=THREADS)
    return _engine


def _rgb_array(image: Any) -> np.ndarray:
    """An RGB uint8 array of a PIL image, a path, or an array (already RGB)."""
    if isinstance(image, np.ndarray):
        array = image
        if array.ndim == 2:
            array = np.stack([array] * 3, axis=-1)
        return np.ascontiguousarray(array[..., :3], dtype=np.uint8)
    if isinstance(image, (str, os.PathLike)):
        with Image.open(Path(image)) as opened:
            # Browsers show a photo turned as its EXIF orientation says; corners are drawn there.
            return np.asarray(ImageOps.exif_transpose(opened).convert("RGB"))
    if isinstance(image, Image.Image):
        return np.asarray(image.convert("RGB"))
    raise TypeError(f"expected a PIL image, a path or an array, got {type(image).__name__}")


def _corners(evidence: Any) -> np.ndarray:
    """The 4 corners as a float array, clockwise (on screen) from the top-left one."""
    try:
        points = np.asarray([float(value) for value in evidence], dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as error:
        raise ValueError(f"evidence must be 8 numbers, got {evidence!r}") from error
    if points.shape != (8,) or not np.all(np.isfinite(points)):
        raise ValueError(f"evidence must be 8 finite numbers, got {evidence!r}")
    points = points.reshape(4, 2)
    centre = points.mean(axis=0)
    # y grows downwards, so increasing atan2 angles go clockwise on screen.
    order = np.argsort(np.arctan2(points[:, 1] - centre[1], points[:, 0] - centre[0]), kind="stable")
    points = points[order]
    start = int(np.argmin(points.sum(axis=1)))
    return np.roll(points, -start, axis=0)


def _warp(image: np.ndarray, corners: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The grown quadrilateral warped upright, and where the quadrilateral itself lies in it.

    None when the quadrilateral is under a pixel wide or high (nothing to read).
    """
    import cv2

    top_left, top_right, bottom_right, bottom_left = corners
    width = (np.linalg.norm(top_right - top_left) + np.linalg.norm(bottom_right - bottom_left)) / 2
    height = (np.linalg.norm(bottom_left - top_left) + np.linalg.norm(bottom_right - top_right)) / 2
    if width < 1 or height < 1:
        return None
    scale = max(1.0, MIN_HEIGHT / height)
    width, height = width * scale, height * scale
    margin_x = MARGIN * width + CONTEXT * height
    margin_y = (MARGIN + CONTEXT) * height
    shrink = min(1.0, MAX_SIDE / (width + 2 * margin_x), MAX_SIDE / (height + 2 * margin_y))
    width, height, margin_x, margin_y = (value * shrink for value in (width, height, margin_x, margin_y))

    upright = np.array([[0, 0], [width, 0], [width, height], [0, height]], dtype=np.float32)
    to_image = cv2.getPerspectiveTransform(upright, corners.astype(np.float32))
    grown = np.array(
        [
            [-margin_x, -margin_y],
            [width + margin_x, -margin_y],
            [width + margin_x, height + margin_y],
            [-margin_x, height + margin_y],
        ],
        dtype=np.float32,
    )
    source = cv2.perspectiveTransform(grown[None], to_image)[0]
    image_height, image_width = image.shape[:2]
    source[:, 0] = source[:, 0].clip(0, image_width)
    source[:, 1] = source[:, 1].clip(0, image_height)
    out_width = max(1, round(width + 2 * margin_x))
    out_height = max(1, round(height + 2 * margin_y))
    target = np.array([[0, 0], [out_width, 0], [out_width, out_height], [0, out_height]], dtype=np.float32)
    try:
        to_crop = cv2.getPerspectiveTransform(source, target)
    except cv2.error:
        return None  # the clipped corners collapsed: the quadrilateral lies outside the image
    crop = cv2.warpPerspective(
        image, to_crop, (out_width, out_height), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE
    )
    inside = cv2.perspectiveTransform(corners.astype(np.float32)[None], to_crop)[0]
    return crop, inside


def _read_crop(crop: np.ndarray, inside: np.ndarray) -> str:
    from shapely.geometry import Polygon

    bgr = np.ascontiguousarray(crop[..., ::-1])  # the models were trained on OpenCV's BGR
    ocr = engine()
    lines, _ = ocr(bgr, use_cls=False)
    quad = Polygon(inside)
    if not quad.is_valid:
        quad = quad.buffer(0)
    kept = []
    for box, text, _score in lines or ():
        line = Polygon(box)
        if line.is_valid and line.area > 0 and line.intersection(quad).area / line.area >= KEEP_INSIDE:
            kept.append(text.strip())
    kept = [text for text in kept if text]
    if kept:
        return " ".join(kept)
    # Nothing detected inside: read the quadrilateral itself as a single line.
    left, top = np.floor(inside.min(axis=0)).clip(0).astype(int)
    right, bottom = np.ceil(inside.max(axis=0)).astype(int)
    single = bgr[top:bottom, left:right]
    if single.size == 0:
        return ""
    recognised, _ = ocr(np.ascontiguousarray(single), use_det=False, use_cls=False)
    if recognised and recognised[0][1] >= MIN_SCORE:
        return recognised[0][0].strip()
    return ""


def read_quad(image, evidence: list[float]) -> str:
    """The text inside the quadrilateral `evidence` (x1, y1, ..., x4, y4 in image pixels) of
    `image` (a PIL image or a path): "" when nothing is read. See the module's docstring.

    Raises ValueError when evidence is not 8 finite numbers (rules.py reports those).
    """
    corners = _corners(evidence)
    warped = _warp(_rgb_array(image), corners)
    if warped is None:
        return ""
    return _read_crop(*warped)


def _plain(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


def similarity(answer: str, text: str) -> float:
    """1 - normalised Levenshtein distance of the answer and the text read, both NFKC normalised,
    case folded and stripped of whitespace; 1.0 for identical, 0.0 for nothing in common."""
    from rapidfuzz.distance import Levenshtein

    return float(Levenshtein.normalized_similarity(_plain(answer), _plain(text)))


def check_answer(image, evidence, answer) -> Reading:
    """Reads the quadrilateral and compares the text with the answer (see `Reading`)."""
    started = time.perf_counter()
    text = read_quad(image, evidence)
    return Reading(text=text, similarity=similarity(answer, text), seconds=time.perf_counter() - started)
