"""STE-VQA baselines: answer with text tokens read by OCR in the image (pure, no Django).

Each image is read once per run (several questions share an image): full-image text detection and
recognition with RapidOCR (plugins.stevqa.ocr: PP-OCRv4 Chinese + English, on the CPU, the
angle classifier off). A token is one detected text line: its text (NFKC-normalised, so that the
full-width "／" the Chinese recogniser writes becomes "/"), its quadrilateral (the detector's four
corners, clockwise from the top-left) and the recogniser's confidence.

Every baseline answers with a token's text and that token's quadrilateral as the evidence (the
OCR upper bound may combine tokens: their joined text and the rectangle covering them), so the
evidence metrics (LC, CLC) apply. An image where OCR finds nothing (or a question without an
image) is answered "" with a degenerate evidence of eight zeros (LC 0).

- `random`: a token drawn at random (the run's seed).
- `ocr-upper-bound`: the EST-VQA paper's OCR upper bound, the token or the combination of up to
  four tokens (in reading order) closest to the true answer (`OcrUpperBoundBaseline`); an upper
  bound on what answering from the OCR tokens can reach (it reads the truth).
- `ocr-upper-bound-1`: the single token closest to the true answer (ties: the one on the true
  evidence); an upper bound on choosing one token, so on the ranker and the random token.
- `ranker`: a question-aware heuristic ranker (rules in `RankerBaseline`).

On the demo street scenes (plugins.stevqa.demo) the OCR takes about a second per 640 x 480
image on one core; most signs are read exactly, but Latin text often loses its spaces ("MAIN
STREET" read as "MAINSTREET"), and neighbouring runs are sometimes read as one line ("OPEN6AM-2PM").
"""

from __future__ import annotations

import os
import re
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from inference.baselines import Baseline, RunChoices, Unit, gettext_noop
from plugins.stevqa.formats import is_chinese

#: The evidence of an answer that no token supports: a quadrilateral of zero area (LC 0).
NO_EVIDENCE = (0, 0, 0, 0, 0, 0, 0, 0)
IMAGE_ROLE = "image"


@dataclass(frozen=True)
class Token:
    """One text line read in an image: its text, its corners (x1, y1, ..., x4, y4 clockwise from
    the top-left, in image pixels) and the recogniser's confidence in [0, 1]."""

    text: str
    quad: tuple[float, ...]
    confidence: float = 1.0

    def corner(self, index: int) -> tuple[float, float]:
        return self.quad[2 * index], self.quad[2 * index + 1]

    @cached_property
    def centre(self) -> tuple[float, float]:
        return sum(self.quad[0::2]) / 4, sum(self.quad[1::2]) / 4

    @cached_property
    def height(self) -> float:
        """The mean length of the left and right sides: the text's height, in perspective too."""
        (x1, y1), (x2, y2), (x3, y3), (x4, y4) = (self.corner(index) for index in range(4))
        return (((x4 - x1) ** 2 + (y4 - y1) ** 2) ** 0.5 + ((x3 - x2) ** 2 + (y3 - y2) ** 2) ** 0.5) / 2

    def evidence(self) -> list[int]:
        """The quadrilateral as the prediction file holds it: 8 whole pixels."""
        return [round(value) for value in self.quad]

    def tail(self, start: int) -> Token:
        """The token of the text from character `start` on, its quadrilateral cut along the line
        in proportion to the characters' widths (a CJK character counts as about two Latin ones)."""
        widths = [character_width(character) for character in self.text]
        total = sum(widths) or 1.0
        share = sum(widths[:start]) / total
        (x1, y1), (x2, y2), (x3, y3), (x4, y4) = (self.corner(index) for index in range(4))
        top = (x1 + (x2 - x1) * share, y1 + (y2 - y1) * share)
        bottom = (x4 + (x3 - x4) * share, y4 + (y3 - y4) * share)
        return Token(self.text[start:].strip(), (*top, x2, y2, x3, y3, *bottom), self.confidence)


def character_width(character: str) -> float:
    return 1.0 if unicodedata.east_asian_width(character) in ("W", "F") else 0.55


def plain(text: str) -> str:
    """Upper-cased, NFKC-normalised, without whitespace: how texts are matched against each other."""
    return "".join(unicodedata.normalize("NFKC", text).upper().split())


#: Tokens of images this process has read, by (path, size, modification time): the OCR
#: baselines run one after the other on the same images (the demo, a researcher comparing them)
#: read each image once. Oldest first out past READ_BEFORE_LIMIT images.
READ_BEFORE: OrderedDict[tuple[str, int, int], list[Token]] = OrderedDict()
READ_BEFORE_LIMIT = 20_000


def file_key(path: str) -> tuple[str, int, int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (os.path.abspath(path), status.st_size, status.st_mtime_ns)


class SceneText:
    """Reads every image once and keeps its tokens (the run's OCR cache, keyed by image path).

    The engine is built on first use. `seconds` and `images_read` add up the OCR time.
    """

    def __init__(self, engine: Any = None):
        self.engine = engine
        self.cache: dict[str, list[Token]] = {}
        self.seconds = 0.0
        self.images_read = 0
        self.missing: list[str] = []

    def tokens(self, path: str | None) -> list[Token]:
        if not path:
            return []
        if path not in self.cache:
            key = file_key(path)
            known = READ_BEFORE.get(key) if key else None
            if known is None:
                known = self.read(path)
                if key:
                    READ_BEFORE[key] = known
                    while len(READ_BEFORE) > READ_BEFORE_LIMIT:
                        READ_BEFORE.popitem(last=False)
            self.cache[path] = known
        return self.cache[path]

    def read(self, path: str) -> list[Token]:
        import numpy as np
        from PIL import Image, ImageOps

        if not Path(path).is_file():
            self.missing.append(path)
            return []
        if self.engine is None:
            from plugins.stevqa.ocr import new_engine

            self.engine = new_engine()
        started = time.perf_counter()
        with Image.open(path) as opened:
            rgb = np.asarray(ImageOps.exif_transpose(opened).convert("RGB"))
        bgr = np.ascontiguousarray(rgb[..., ::-1])  # the models were trained on OpenCV's BGR
        lines, _ = self.engine(bgr, use_cls=False)
        tokens = []
        for box, text, confidence in lines or ():
            text = unicodedata.normalize("NFKC", str(text)).strip()
            if text:
                quad = tuple(float(value) for point in box for value in point)
                tokens.append(Token(text, quad, float(confidence)))
        self.seconds += time.perf_counter() - started
        self.images_read += 1
        return tokens


class OcrBaseline(Baseline):
    """A baseline that answers each question with one token of its image (see the module)."""

    def load(self, units: Sequence[Unit], choices: RunChoices) -> None:
        super().load(units, choices)
        self.reader = SceneText()

    def predict(self, units: Sequence[Unit], inputs: Any) -> list[dict[str, Any]]:
        predictions = []
        for unit in units:
            path = unit.images.get(IMAGE_ROLE) or next(iter(unit.images.values()), None)
            tokens = self.reader.tokens(path)
            chosen = self.choose(unit, tokens) if tokens else None
            predictions.append(
                {
                    "question_id": int(unit.id),
                    "answer": chosen.text if chosen else "",
                    "evidence": chosen.evidence() if chosen else list(NO_EVIDENCE),
                }
            )
        return predictions

    def choose(self, unit: Unit, tokens: list[Token]) -> Token | None:
        raise NotImplementedError

    def parameters(self) -> dict[str, Any]:
        from plugins.stevqa.ocr import DETECTION_LIMIT

        reader = getattr(self, "reader", None)
        read = reader.images_read if reader else 0
        return {
            "ocr": "RapidOCR (rapidocr-onnxruntime, PP-OCRv4 Chinese + English), full image, no angle classifier",
            "ocr_detection_limit": DETECTION_LIMIT,
            "images_read": read,
            "images_missing": len(reader.missing) if reader else 0,
            "ocr_seconds_per_image": round(reader.seconds / read, 3) if read else None,
        }


class RandomTokenBaseline(OcrBaseline):
    name = "random"
    title = "Random OCR token"
    description = gettext_noop(
        "Answers with a token drawn at random among the text OCR reads in the image, and its quadrilateral."
    )
    uses = gettext_noop("The image only (its OCR tokens), and the run's seed.")

    def choose(self, unit: Unit, tokens: list[Token]) -> Token | None:
        return self.rng.choice(tokens)


class SingleTokenUpperBoundBaseline(OcrBaseline):
    """The best single token: `ocr-upper-bound-1` (see the module)."""

    name = "ocr-upper-bound-1"
    title = "OCR upper bound, one token"
    description = gettext_noop(
        "Answers with the one OCR token closest to the true answer (the metric's normalised edit "
        "distance): the best that choosing a single token can reach. It chooses among the ranker's "
        "candidates (a token, or its rest after a leading label or the item the question names), so it "
        "bounds the ranker; among equally close tokens, the one overlapping the true evidence most."
    )
    uses = gettext_noop(
        "The question, the image's OCR tokens and the true answer, with the true evidence to choose "
        "between equally close tokens (it reads the truth: an upper bound)."
    )

    def choose(self, unit: Unit, tokens: list[Token]) -> Token | None:
        offered = candidates(question_of(unit), tokens)
        texts = [token.text for token in offered]
        return closest(texts, [1] * len(offered), offered.__getitem__, unit.record)


class OcrUpperBoundBaseline(OcrBaseline):
    """The paper's OCR upper bound: the best answer made of up to four OCR tokens.

    The candidates are the single-token bound's (every token, and a token's rest after a
    leading label or the question's item) and every combination of 2, 3 or 4 distinct tokens,
    written in reading order (`reading_order`) and joined by `join_texts`: a space between
    Latin pieces, nothing where either side of the join is a CJK character ("东风" + "路" is
    "东风路", "MAIN" + "STREET" is "MAIN STREET"). The answer is the candidate closest to the true
    answer by the metric's own similarity, 1 - NL of the texts as the metric normalises them
    (lower-cased, simplified Chinese); among equally close ones, the one whose evidence
    overlaps the true evidence most, then the one of fewer tokens, then the first in reading
    order. Combining tokens never makes the bound worse than the single token's.

    The evidence of a combination is the rectangle covering the combined tokens' corners along
    their text direction (`covering_quad`): for level text the axis-aligned box of all their
    corners, for tilted text a box tilted with it; 8 numbers clockwise from the top-left.

    The search is bounded: only the tokens whose text could be part of the answer take part in
    combinations (more than half of a token's characters match, in order, characters of the
    answer: its longest common subsequence with the answer), at most COMBINED_POOL of them, those
    matching most first. So an image with 60 tokens is searched over at most 2,500 combinations.
    """

    name = "ocr-upper-bound"
    title = "OCR upper bound"
    description = gettext_noop(
        "Answers with the OCR token, or the combination of up to four OCR tokens in reading order, "
        "closest to the true answer (the metric's normalised edit distance): the EST-VQA paper's OCR "
        "upper bound. A combination's evidence is the rectangle covering its tokens."
    )
    uses = gettext_noop(
        "The question, the image's OCR tokens and the true answer, with the true evidence to choose "
        "between equally close answers (it reads the truth: an upper bound)."
    )

    def choose(self, unit: Unit, tokens: list[Token]) -> Token | None:
        singles = candidates(question_of(unit), tokens)
        combined = combinations(tokens, str(unit.record.get("answer", "")))
        texts = [token.text for token in singles] + [join_texts([t.text for t in c]) for c in combined]
        sizes = [1] * len(singles) + [len(tokens) for tokens in combined]

        def offered(index: int) -> Token:
            return singles[index] if index < len(singles) else combine(combined[index - len(singles)])

        return closest(texts, sizes, offered, unit.record)

    def parameters(self) -> dict[str, Any]:
        return {
            **super().parameters(),
            "combined_tokens_at_most": COMBINED_TOKENS,
            "combined_pool": COMBINED_POOL,
            "combination": "reading order; a space between Latin pieces, none next to a CJK character",
            "combination_evidence": "rectangle covering the tokens' corners along their text direction",
        }


#: The paper's OCR upper bound combines at most this many tokens into an answer.
COMBINED_TOKENS = 4
#: At most this many tokens of an image take part in combinations (bounds the search: C(16, 2) +
#: C(16, 3) + C(16, 4) = 2,500 combinations).
COMBINED_POOL = 16


def closeness(texts: Sequence[str], truth: str) -> list[float]:
    """1 - NL of each text and the truth as the metric normalises them (lower-cased, simplified
    Chinese): the metric's TC before its threshold."""
    from rapidfuzz.distance import Levenshtein

    from plugins.stevqa.metric import normalize_answer

    normalized = normalize_answer(truth)
    return [Levenshtein.normalized_similarity(normalize_answer(text), normalized) for text in texts]


def closest(texts: list[str], sizes: list[int], offered: Callable[[int], Token], record: Any) -> Token:
    """The candidate (`offered(index)`, its text `texts[index]`) closest to the record's answer;
    among equally close ones, the one overlapping the record's evidence most (when it has one),
    then the one of fewer tokens (`sizes`), then the first."""
    scores = closeness(texts, str(record.get("answer", "")))
    best = max(scores)
    tied = [index for index, value in enumerate(scores) if value == best]
    overlaps = dict.fromkeys(tied, 0.0)
    evidence = record.get("evidence")
    if len(tied) > 1 and evidence and len(evidence) == 8:
        # The same text read twice ("2.5元" on two rows): the one on the true evidence.
        from plugins.stevqa.metric import evidence_ious

        ious = evidence_ious([evidence] * len(tied), [offered(index).evidence() for index in tied])
        overlaps.update(zip(tied, (float(iou) for iou in ious), strict=True))
    return offered(min(tied, key=lambda index: (-overlaps[index], sizes[index], index)))


def combinations(tokens: Sequence[Token], truth: str) -> list[tuple[Token, ...]]:
    """The combinations of 2 to COMBINED_TOKENS distinct tokens that may spell `truth`, each in
    reading order. Only tokens more than half of whose characters match the answer's in order
    (`matched_characters`) take part, at most COMBINED_POOL of them: the largest shares matched
    first, then the most characters matched, then the first read."""
    from itertools import combinations as subsets

    answer = compact(truth)
    if not answer:
        return []
    matching = []
    for index, token in enumerate(tokens):
        text = compact(token.text)
        matched = matched_characters(text, answer)
        if text and matched / len(text) > 0.5:
            matching.append((-matched / len(text), -matched, index))
    chosen = sorted(index for *_, index in sorted(matching)[:COMBINED_POOL])
    return [
        tuple(reading_order([tokens[index] for index in indices]))
        for size in range(2, COMBINED_TOKENS + 1)
        for indices in subsets(chosen, size)
    ]


def compact(text: str) -> str:
    """The text as the metric normalises it, without whitespace: how a token is found in the answer."""
    from plugins.stevqa.metric import normalize_answer

    return "".join(normalize_answer(text).split())


def matched_characters(text: str, answer: str) -> int:
    """How many characters of `text` match characters of `answer` in order (both `compact`):
    the length of their longest common subsequence."""
    from rapidfuzz.distance import LCSseq

    return LCSseq.similarity(text, answer)


def join_texts(texts: Sequence[str]) -> str:
    """Texts joined as one answer: a space between two pieces, none where the character on either
    side of the join is a CJK (wide) character ("东风" + "路", "46" + "元")."""
    joined = ""
    for text in texts:
        text = text.strip()
        if joined and text and not (is_wide(joined[-1]) or is_wide(text[0])):
            joined += " "
        joined += text
    return joined


def is_wide(character: str) -> bool:
    return unicodedata.east_asian_width(character) in ("W", "F")


def text_direction(tokens: Sequence[Token]) -> tuple[float, float]:
    """The unit vector along the tokens' top edges (longer edges weigh more); (1, 0) if none."""
    dx = sum(token.quad[2] - token.quad[0] for token in tokens)
    dy = sum(token.quad[3] - token.quad[1] for token in tokens)
    length = (dx * dx + dy * dy) ** 0.5
    return (dx / length, dy / length) if length > 0 else (1.0, 0.0)


def reading_order(tokens: Sequence[Token]) -> list[Token]:
    """The tokens as they are read: in rows down the page, left to right in a row, both along the
    tokens' common text direction (so a tilted sign reads along its tilt). A token starts a new
    row when its centre is more than half the tokens' mean height below the row's first token."""
    ux, uy = text_direction(tokens)
    height = sum(token.height for token in tokens) / len(tokens) or 1.0

    def along(token: Token) -> float:
        return token.centre[0] * ux + token.centre[1] * uy

    def across(token: Token) -> float:
        return token.centre[1] * ux - token.centre[0] * uy

    rows: list[list[Token]] = []
    for token in sorted(tokens, key=across):
        if rows and across(token) - across(rows[-1][0]) <= height / 2:
            rows[-1].append(token)
        else:
            rows.append([token])
    return [token for row in rows for token in sorted(row, key=along)]


def covering_quad(tokens: Sequence[Token]) -> tuple[float, ...]:
    """The rectangle covering every corner of the tokens, its sides along and across their text
    direction (`text_direction`): the axis-aligned box of all corners for level text. Its corners
    clockwise from the top-left, as 8 numbers."""
    ux, uy = text_direction(tokens)
    points = [token.corner(index) for token in tokens for index in range(4)]
    along = [x * ux + y * uy for x, y in points]
    across = [y * ux - x * uy for x, y in points]
    low_u, high_u, low_v, high_v = min(along), max(along), min(across), max(across)
    corners = ((low_u, low_v), (high_u, low_v), (high_u, high_v), (low_u, high_v))
    # Back from (along, across) to the image: x = u * ux - v * uy, y = u * uy + v * ux.
    return tuple(value for u, v in corners for value in (u * ux - v * uy, u * uy + v * ux))


def combine(tokens: Sequence[Token]) -> Token:
    """The tokens (in reading order) as one: their joined text, the rectangle covering them and
    the lowest of their confidences."""
    return Token(
        join_texts([token.text for token in tokens]),
        covering_quad(tokens),
        min(token.confidence for token in tokens),
    )


# --- the ranker ----------------------------------------------------------------------------------

PRICE, HOURS, STREET, NAME, OTHER = "price", "hours", "street", "name", "other"

#: What a question asks for, from its words (the first kind that matches wins).
QUESTION_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (PRICE, re.compile(r"\b(price|cost|costs|how much)\b|价格|价钱|售价|多少钱", re.IGNORECASE)),
    (HOURS, re.compile(r"\b(hours?|open|opening|close|closing|when)\b|营业时间|几点|时间", re.IGNORECASE)),
    (STREET, re.compile(r"\b(street|road|avenue|boulevard|lane)\b|路|街", re.IGNORECASE)),
    (NAME, re.compile(r"\b(name|called|shop|store|restaurant|brand)\b|名字|名称|店|叫什么", re.IGNORECASE)),
)
#: The thing a price question is about: "What is the price of the muffin?", "苹果的价格是多少?".
PRICE_ITEM = (
    re.compile(r"\b(?:price|cost) of (?:the |a |an )?(.+?)\s*[?？.]*$", re.IGNORECASE),
    re.compile(r"\bhow much (?:is|are|does|do) (?:the |a |an )?(.+?)(?: cost)?\s*[?？.]*$", re.IGNORECASE),
    re.compile(r"^(.+?)的?(?:价格|价钱|售价|多少钱)"),
)
#: Labels written before the value on the same line, which OCR may read together with it.
LABELS = ("OPENINGHOURS", "OPENING", "HOURS", "OPEN", "营业时间", "时间")
STREET_TOKEN = re.compile(
    r"(STREET|ROAD|AVENUE|BOULEVARD|BLVD|LANE|DRIVE|BROADWAY|(^|[^A-Z])(ST|RD|AVE|DR|LN)\b)|[路街巷]|大道"
)
TIME_TOKEN = re.compile(r"\d{1,2}(:\d{2})?\s*(AM|PM)|\d{1,2}:\d{2}|24\s*HOURS|小时", re.IGNORECASE)
PRICE_TOKEN = re.compile(r"[$¥￥€£元]|\d+[.,]\d{2}\b")
DIGIT = re.compile(r"\d")
LATIN = re.compile(r"[A-Za-z0-9]")

#: Weights of the ranker's rules (see `RankerBaseline`).
LANGUAGE_WEIGHT = 2.0
KIND_WEIGHT = 3.0
ROW_WEIGHT = 4.0
ECHO_PENALTY = 3.0
SIZE_WEIGHT = 1.0
CONFIDENCE_WEIGHT = 0.5
TOP_WEIGHT = 0.5
REST_BONUS = 1.0
#: A token matches the item a price question names when their plain texts are this similar.
ITEM_SIMILARITY = 0.7


def question_kind(question: str) -> str:
    for kind, pattern in QUESTION_KINDS:
        if pattern.search(question):
            return kind
    return OTHER


def question_of(unit: Unit) -> str:
    return str(unit.record.get("question") or unit.payload.get("question") or "")


def question_item(question: str) -> str:
    """The item a price question names, as a `plain` text ("" for other questions)."""
    return plain(price_item(question)) if question_kind(question) == PRICE else ""


def candidates(question: str, tokens: list[Token]) -> list[Token]:
    """The tokens, each followed by its rest after a leading label (OPEN, 营业时间...) or the item
    the question names, when there is more after it: OCR reads neighbouring runs on one line as
    one token ("猪肉46元" offers "46元", "OPEN6AM-2PM" offers "6AM-2PM")."""
    return [token for token, _ in candidates_marked(question, tokens)]


def candidates_marked(question: str, tokens: list[Token]) -> list[tuple[Token, bool]]:
    """`candidates`, each with whether it is the rest of a token after a label or the item."""
    prefixes = tuple(prefix for prefix in (question_item(question), *LABELS) if prefix)
    found = []
    for token in tokens:
        found.append((token, False))
        for prefix in prefixes:
            start = leading_prefix_length(token.text, prefix)
            if start and token.text[start:].strip():
                found.append((token.tail(start), True))
                break
    return found


def price_item(question: str) -> str:
    for pattern in PRICE_ITEM:
        found = pattern.search(question.strip())
        if found:
            return found.group(1).strip()
    return ""


class RankerBaseline(OcrBaseline):
    """Scores every token against the question and answers with the best one.

    The rules, each adding to a token's score (weights in the constants above):

    1. Language: a question holding a Chinese character (U+4E00..U+9FA5) prefers tokens with
       one, any other question tokens written in Latin letters or digits (+2).
    2. What is asked, from the question's words (the first match wins):
       price ("price", "cost", "how much", 价格, 多少钱) prefers tokens with a currency sign or a
       decimal price (+3, +1 for other digits); hours ("hours", "open", 营业时间, 几点) prefers
       times ("9AM", "8:30", "24 HOURS", 小时) (+3); street ("street", "road", 路, 街) prefers
       street names (STREET, ST, RD, AVENUE, BLVD..., or 路, 街, 巷, 大道) (+3); name ("name",
       "shop", 名字, 店) prefers large text near the top (+1.5 for the largest) and avoids digits
       and street names (-2 each).
    3. Same row: for a price question naming an item ("the price of the muffin", "苹果的价格"),
       the token read as that item anchors a row; tokens to its right on that row (measured
       along the item's own baseline, so tilted signs work) get up to +4.
    4. Echo: a token that is just a word of the question (the item itself) is never the answer
       (-3).
    5. Size and confidence: taller text (+1 for the image's tallest), higher OCR confidence
       (+0.5 at 1.0), and text nearer the top (+0.5 at the top edge) break the remaining ties.

    Before scoring, a token that starts with the question's item or with a label (OPEN,
    HOURS, 营业时间) followed by more text also offers that rest as a candidate, its
    quadrilateral cut to the rest ("猪肉46元" offers "46元", "OPEN6AM-2PM" offers "6AM-2PM"):
    OCR reads neighbouring runs on one line as one token. A label or the item is never part of
    the answer, so such a rest scores 1 more than its whole token.
    """

    name = "ranker"
    title = "Question-aware OCR ranker"
    description = gettext_noop(
        "Ranks the OCR tokens by hand-written rules on the question (what it asks for, its language, "
        "the item a price question names) and the tokens' kind, row, size and confidence."
    )
    uses = gettext_noop("The question and the image's OCR tokens.")

    def choose(self, unit: Unit, tokens: list[Token]) -> Token | None:
        return max(self.rank(question_of(unit), tokens), key=lambda scored: scored[0])[1]

    def rank(self, question: str, tokens: list[Token]) -> list[tuple[float, Token]]:
        """(score, token) of every candidate, in reading order (ties go to the first)."""
        kind = question_kind(question)
        chinese = is_chinese(question)
        item = question_item(question)
        anchor = self.item_token(item, tokens) if item else None
        marked = candidates_marked(question, tokens)
        tallest = max(token.height for token, _ in marked) or 1.0
        lowest = max(max(token.quad[1::2]) for token, _ in marked) or 1.0
        question_words = {plain(word) for word in re.split(r"[\s?？,.!]+", question) if word}
        scored = []
        for token, rest in marked:
            text = plain(token.text)
            score = REST_BONUS if rest else 0.0
            if token_language_matches(token.text, chinese):
                score += LANGUAGE_WEIGHT
            score += KIND_WEIGHT * self.kind_match(kind, token, tallest)
            if anchor is not None and token is not anchor:
                score += ROW_WEIGHT * row_alignment(anchor, token)
            if text and (text == item or text in question_words):
                score -= ECHO_PENALTY
            score += SIZE_WEIGHT * token.height / tallest
            score += CONFIDENCE_WEIGHT * token.confidence
            score += TOP_WEIGHT * (1 - token.centre[1] / lowest)
            scored.append((score, token))
        return scored

    @staticmethod
    def kind_match(kind: str, token: Token, tallest: float) -> float:
        """How well the token fits what is asked, about 0 to 1 (negative: it fits something else)."""
        text = plain(token.text)
        if kind == PRICE:
            return 1.0 if PRICE_TOKEN.search(text) else 1 / 3 if DIGIT.search(text) else 0.0
        if kind == HOURS:
            return 1.0 if TIME_TOKEN.search(text) else 0.0
        if kind == STREET:
            return 1.0 if STREET_TOKEN.search(text) else 0.0
        if kind == NAME:
            penalty = (2 / 3 if DIGIT.search(text) else 0.0) + (2 / 3 if STREET_TOKEN.search(text) else 0.0)
            return 0.5 * token.height / tallest - penalty
        return 0.0

    @staticmethod
    def item_token(item: str, tokens: list[Token]) -> Token | None:
        """The token read as the item a price question names (None when none is close enough)."""
        from rapidfuzz.distance import Levenshtein

        best, best_similarity = None, ITEM_SIMILARITY
        for token in tokens:
            text = plain(token.text)
            similarity = 1.0 if text.startswith(item) else Levenshtein.normalized_similarity(text, item)
            if similarity >= best_similarity:
                best, best_similarity = token, similarity
        return best


def token_language_matches(text: str, chinese: bool) -> bool:
    """Chinese questions want tokens with a Chinese character; others tokens in Latin letters or digits."""
    if chinese:
        return is_chinese(text)
    return bool(LATIN.search(text)) and not is_chinese(text)


def leading_prefix_length(text: str, prefix: str) -> int:
    """How many characters of `text` spell `prefix` (compared as `plain` texts) at its start; 0
    when it does not start with it."""
    spelled = ""
    for index, character in enumerate(text):
        spelled += plain(character)
        if spelled == prefix:
            return index + 1
        if not prefix.startswith(spelled):
            return 0
    return 0


def row_alignment(anchor: Token, token: Token) -> float:
    """1 for a token on the anchor's row to its right, falling to 0 a text height off the row.

    The row is the line through the anchor's centre along its top edge, so a sign in perspective
    keeps its rows; distances are in the anchor's heights.
    """
    (x1, y1), (x2, y2) = anchor.corner(0), anchor.corner(1)
    length = ((x2 - x1) ** 2 + (y2 - y1) ** 2) ** 0.5 or 1.0
    direction = ((x2 - x1) / length, (y2 - y1) / length)
    (ax, ay), (tx, ty) = anchor.centre, token.centre
    along = (tx - ax) * direction[0] + (ty - ay) * direction[1]
    across = abs(-(tx - ax) * direction[1] + (ty - ay) * direction[0])
    if along <= 0:
        return 0.0
    return max(0.0, 1.0 - across / (anchor.height or 1.0))
