"""Statistics of an annotated question-answer set, as the STE-VQA paper plots them (pure, no Django).

Two views, per language (the language of a pair is its question's, by the released evaluator's
rule: Chinese when it holds a character in U+4E00..U+9FA5):

* how questions begin: the most common first words (English: lower-cased whitespace words,
  punctuation trimmed from their ends; Chinese: jieba tokens), up to three of them;
* how long questions and answers are, in tokens: English whitespace words, Chinese jieba tokens,
  punctuation-only and space tokens left out ("9元/斤" is 3 tokens: 9, 元, 斤).

`statistics` gathers both; `first_words_plot` and `length_histograms_plot` draw them as PNG bytes
with matplotlib's object-oriented API (a `Figure` of its own, no pyplot state). Chinese labels
need a CJK font: the WenQuanYi Micro Hei file the demo images are painted with
(plugins.stevqa.demo.CHINESE_FONT_PATH, Debian package fonts-wqy-microhei), else any
common CJK family matplotlib knows; with none, Chinese characters show as boxes, without error.
"""

from __future__ import annotations

import io
import logging
import threading
import unicodedata
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from evaluation.plots import matplotlib_for_pages
from plugins.stevqa.formats import CHINESE, ENGLISH, language

#: The languages, in the order the plots show them.
LANGUAGES = (ENGLISH, CHINESE)
#: CJK font families tried, in order, when the demo images' font file is not installed.
CJK_FAMILIES = (
    "WenQuanYi Micro Hei",
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "Source Han Sans CN",
    "WenQuanYi Zen Hei",
    "Droid Sans Fallback",
    "AR PL UMing CN",
    "SimHei",
    "Microsoft YaHei",
    "PingFang SC",
)
#: The Latin font, tried first for every character (matplotlib falls back per glyph).
LATIN_FAMILY = "DejaVu Sans"
#: The words on the plots, as str.format templates; pass `labels=` to the plot functions to
#: replace any of them (translations).
LABELS = {
    ENGLISH: "English",
    CHINESE: "Chinese",
    "first_words": "{language}: first words of {count} questions",
    "question_lengths": "{language} questions ({count})",
    "answer_lengths": "{language} answers ({count})",
    "tokens": "Length (tokens)",
    "count": "Number",
    "mean": "mean {mean:.1f}",
    "none": "No questions",
}

_jieba_lock = threading.Lock()
_jieba_ready = False


def _jieba():
    """The jieba module, its dictionary loaded once and quietly (it logs its loading time)."""
    global _jieba_ready
    import jieba

    if not _jieba_ready:
        with _jieba_lock:
            if not _jieba_ready:
                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _jieba_ready = True
    return jieba


def _is_word(token: str) -> bool:
    """Whether a token holds a letter, a digit or a CJK character (not only punctuation or space)."""
    return any(character.isalnum() for character in token)


def _trim(token: str) -> str:
    """A token without the punctuation at its ends ("shop?" -> "shop", "what's" kept)."""
    start, end = 0, len(token)
    while start < end and unicodedata.category(token[start]).startswith("P"):
        start += 1
    while end > start and unicodedata.category(token[end - 1]).startswith("P"):
        end -= 1
    return token[start:end]


def tokens(text: str) -> list[str]:
    """The words of a text: whitespace words for English, jieba tokens for Chinese (by
    `language`), without punctuation-only or space tokens."""
    parts = _jieba().lcut(text) if language(text) == CHINESE else text.split()
    return [part.strip() for part in parts if _is_word(part)]


def first_words(questions: list[str], *, words: int = 3, top: int = 20) -> list[tuple[str, int]]:
    """How questions begin: each question counted once by its first `words` tokens (fewer when
    it is shorter), English ones lower-cased with punctuation trimmed; the `top` most common
    prefixes (tokens joined by a space) with their counts, most common first, ties in
    alphabetical order."""
    counts: Counter[str] = Counter()
    for question in questions:
        if not isinstance(question, str):
            continue
        parts = [_trim(token) for token in tokens(question)]
        if language(question) == ENGLISH:
            parts = [part.lower() for part in parts]
        prefix = " ".join([part for part in parts if part][:words])
        if prefix:
            counts[prefix] += 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:top]


def lengths(texts: list[str]) -> list[int]:
    """The length in tokens of each text (see `tokens`), in order; 0 for a non-text."""
    return [len(tokens(text)) if isinstance(text, str) else 0 for text in texts]


def statistics(pairs: Iterable[Mapping[str, Any]]) -> dict:
    """Per language ("en", "ch", by the question): {"questions": how many, "question_lengths":
    [...], "answer_lengths": [...], "first_words": [(prefix, count), ...]}. Pairs without a
    question are left out; an answer that is not text is left out of the answer lengths."""
    questions: dict[str, list[str]] = {code: [] for code in LANGUAGES}
    answers: dict[str, list[str]] = {code: [] for code in LANGUAGES}
    for pair in pairs:
        if not isinstance(pair, Mapping):
            continue
        question = pair.get("question")
        if not isinstance(question, str) or not question.strip():
            continue
        code = language(question)
        questions[code].append(question)
        answer = pair.get("answer")
        if isinstance(answer, str) and answer.strip():
            answers[code].append(answer)
    return {
        code: {
            "questions": len(questions[code]),
            "question_lengths": lengths(questions[code]),
            "answer_lengths": lengths(answers[code]),
            "first_words": first_words(questions[code]),
        }
        for code in LANGUAGES
    }


# --- plots --------------------------------------------------------------------------------------


@cache
def cjk_family() -> str | None:
    """The CJK font family the plots use, or None when no CJK font is installed."""
    from matplotlib import font_manager

    from plugins.stevqa.demo import CHINESE_FONT_PATH

    if CHINESE_FONT_PATH.is_file():
        try:
            font_manager.fontManager.addfont(str(CHINESE_FONT_PATH))
            return font_manager.FontProperties(fname=str(CHINESE_FONT_PATH)).get_name()
        except (OSError, RuntimeError, ValueError):
            pass
    installed = {font.name for font in font_manager.fontManager.ttflist}
    return next((family for family in CJK_FAMILIES if family in installed), None)


def _font(size: float | None = None):
    from matplotlib.font_manager import FontProperties

    family = [LATIN_FAMILY, cjk_family()] if cjk_family() else [LATIN_FAMILY, "sans-serif"]
    return FontProperties(family=family, size=size)


def _png(figure) -> bytes:
    output = io.BytesIO()
    with warnings.catch_warnings():
        # Without a CJK font every Chinese glyph warns; the plot is still drawn.
        warnings.filterwarnings("ignore", message="Glyph .* missing from")
        figure.savefig(output, format="png")
    return output.getvalue()


def _labels(labels: Mapping[str, str] | None) -> dict[str, str]:
    return {**LABELS, **(labels or {})}


def _empty(axes, text: str) -> None:
    axes.text(0.5, 0.5, text, ha="center", va="center", transform=axes.transAxes, fontproperties=_font(11))
    axes.set_xticks([])
    axes.set_yticks([])


def first_words_plot(stats: Mapping[str, Any], *, labels: Mapping[str, str] | None = None) -> bytes:
    """PNG: horizontal bars of the most common question beginnings, English and Chinese side by
    side, the most common at the top, each bar labelled with its count."""
    from matplotlib.figure import Figure

    matplotlib_for_pages()

    words = _labels(labels)
    rows = max([len((stats.get(code) or {}).get("first_words") or []) for code in LANGUAGES] + [6])
    figure = Figure(figsize=(12, max(4.5, 1.2 + 0.32 * rows)), dpi=100, layout="constrained")
    for axes, code in zip(figure.subplots(1, 2), LANGUAGES, strict=True):
        part = stats.get(code) or {}
        pairs = [(str(prefix), int(count)) for prefix, count in part.get("first_words") or []]
        name = words[code]
        axes.set_title(
            words["first_words"].format(language=name, count=part.get("questions", 0)),
            fontproperties=_font(12),
        )
        if not pairs:
            _empty(axes, words["none"])
            continue
        positions = range(len(pairs))
        bars = axes.barh(
            positions, [count for _, count in pairs], color="#4C72B0" if code == ENGLISH else "#C44E52"
        )
        axes.set_yticks(list(positions), [prefix for prefix, _ in pairs], fontproperties=_font(10))
        axes.set_ylim(rows - 0.5, -0.5)  # the most common at the top, bars as thick in both panels
        axes.bar_label(bars, padding=3, fontproperties=_font(9))
        axes.set_xlabel(words["count"], fontproperties=_font(10))
        axes.set_xlim(0, max(count for _, count in pairs) * 1.15)
        axes.xaxis.get_major_locator().set_params(integer=True)
        axes.spines[["top", "right"]].set_visible(False)
    return _png(figure)


def length_histograms_plot(stats: Mapping[str, Any], *, labels: Mapping[str, str] | None = None) -> bytes:
    """PNG: 2 x 2 histograms of question (left) and answer (right) lengths in tokens, English on
    the top row and Chinese below, one bar per length, the mean marked with a dashed line."""
    from matplotlib.figure import Figure

    matplotlib_for_pages()

    words = _labels(labels)
    figure = Figure(figsize=(11, 7), dpi=100, layout="constrained")
    grid = figure.subplots(2, 2)
    for row, code in enumerate(LANGUAGES):
        part = stats.get(code) or {}
        for column, key in enumerate(("question_lengths", "answer_lengths")):
            axes = grid[row][column]
            values = [int(value) for value in part.get(key) or []]
            axes.set_title(
                words[key].format(language=words[code], count=len(values)), fontproperties=_font(12)
            )
            if not values:
                _empty(axes, words["none"])
                continue
            counts = Counter(values)
            span = range(min(1, min(values)), max(values) + 1)
            axes.bar(
                list(span),
                [counts.get(length, 0) for length in span],
                width=0.85,
                color="#4C72B0" if column == 0 else "#55A868",
            )
            mean = sum(values) / len(values)
            axes.axvline(mean, color="#333333", linestyle="--", linewidth=1)
            axes.text(
                mean,
                0.97,
                " " + words["mean"].format(mean=mean),
                transform=axes.get_xaxis_transform(),
                va="top",
                fontproperties=_font(9),
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1},
            )
            axes.set_xlabel(words["tokens"], fontproperties=_font(10))
            axes.set_ylabel(words["count"], fontproperties=_font(10))
            axes.xaxis.get_major_locator().set_params(integer=True)
            axes.yaxis.get_major_locator().set_params(integer=True)
            axes.spines[["top", "right"]].set_visible(False)
    return _png(figure)
