"""The rules a submission of STE-VQA question-answer pairs must keep (pure, no Django).

An annotator writes, for one image, a few bilingual (English or Chinese) question-answer pairs
whose answers are text in the image, and draws a quadrilateral around the text each answer was
read from (its *evidence*). `check_pairs` returns every rule a submission breaks, as `Problem`s
naming the pair and field at fault with a stable machine code; `MESSAGES` holds one English
message template per code (plain `str.format` templates, so the Django layer can wrap them for
translation). Bad input never raises: a missing field, a non-number, NaN, an infinite or huge
coordinate are all Problems.

Rules:

* at least one pair (``no_pairs``); a non-empty question and answer after stripping (``empty``);
* no yes/no question and no yes/no answer, in English or Chinese (``yes_no_question``,
  ``yes_no_answer``; see `is_yes_no_question` and `is_yes_no_answer` for what counts);
* evidence: present (``no_evidence``), exactly 8 finite numbers x1, y1, ..., x4, y4
  (``quad_points``), every corner inside the image, 0 <= x <= width and 0 <= y <= height
  (``quad_outside``), a simple quadrilateral (4 distinct corners, sides that do not cross:
  ``quad_not_simple``) of at least `MIN_QUAD_AREA` square pixels (``quad_too_small``);
* no question asked twice about one image, compared by `normalise_question`
  (``duplicate_question``, on the later pair, naming the first).

With ``fixed_questions`` (a second annotator answering questions somebody else wrote) every
question rule is skipped (empty, yes/no, duplicate): the questions are not theirs to change. The
answer and evidence rules still apply.

``ocr_mismatch`` and ``ocr_empty`` are not checked here (reading the image is evidence.py's
job); `ocr_mismatch` builds those Problems, which the annotator may confirm, so that they share
the catalogue.
"""

from __future__ import annotations

import math
import numbers
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from shapely.geometry import LineString, Polygon

from annotation.problems import Problem

#: Smallest evidence quadrilateral, in square image pixels.
MIN_QUAD_AREA = 4.0


def _(text: str) -> str:
    """Marks a message for the translation catalogue (`make messages`); the Django layer translates."""
    return text


#: code -> English message template, filled with the Problem's params by `message`.
MESSAGES: dict[str, str] = {
    "no_pairs": _("Write at least one question-answer pair."),
    "empty": _("This cannot be empty."),
    "yes_no_question": _(
        "Yes/no questions are not allowed: ask something whose answer is text in the image."
    ),
    "yes_no_answer": _("Yes/no answers are not allowed: the answer must be text read from the image."),
    "no_evidence": _("Draw a quadrilateral around the text the answer was read from."),
    "quad_points": _("The quadrilateral needs four corners, eight numbers x1, y1, ..., x4, y4."),
    "quad_not_simple": _("The quadrilateral's sides cross or two corners coincide: redraw it."),
    "quad_outside": _(
        "The quadrilateral goes outside the image: every corner must lie within "
        "0-{width} across and 0-{height} down."
    ),
    "quad_too_small": _("The quadrilateral is too small: draw it around the whole answer text."),
    "duplicate_question": _("The same question is already asked in pair {other_number}: ask something else."),
    "ocr_mismatch": _(
        'The text read inside the quadrilateral, "{recognised}", is far from the answer: check the '
        "answer and the quadrilateral, or confirm that they are right."
    ),
    "ocr_empty": _(
        "No text could be read inside the quadrilateral: check that it encloses the answer text, "
        "or confirm that it does."
    ),
}


def message(problem: Problem) -> str:
    """The English message of a Problem, its params filled in."""
    return MESSAGES[problem.code].format(**problem.params)


# --- yes/no questions and answers ---------------------------------------------------------------

#: English yes/no answers, compared after NFKC, case folding and dropping trailing punctuation.
ENGLISH_YES_NO_ANSWERS = frozenset(
    {"yes", "no", "yeah", "yep", "yup", "nope", "nah", "y", "n", "true", "false"}
)
#: Chinese yes/no answers, compared whole after dropping spaces and trailing punctuation. Only
#: exact answers count: 是非 ("right and wrong", also a name) is a word a sign may hold and is
#: allowed, as are 有限公司 or 不二家, which merely start with a listed word.
CHINESE_YES_NO_ANSWERS = frozenset(
    {
        "是", "否", "是的", "不是", "对", "不对", "有", "没有", "没", "不", "对的", "错", "错的",
        "可以", "不可以", "能", "不能", "会", "不会",
    }
)  # fmt: skip
#: English auxiliary and modal verbs: a question opening with one is a yes/no question
#: ("Is this a bank?", "Can you see a price?"), unless a wh-word follows (see below).
ENGLISH_AUXILIARIES = frozenset(
    {
        "am", "is", "are", "was", "were",
        "do", "does", "did",
        "has", "have", "had",
        "can", "could", "will", "would", "shall", "should", "may", "might", "must",
        "isn't", "aren't", "wasn't", "weren't", "ain't",
        "don't", "doesn't", "didn't",
        "hasn't", "haven't", "hadn't",
        "can't", "cannot", "couldn't", "won't", "wouldn't", "shan't", "shouldn't",
        "mayn't", "mightn't", "mustn't",
    }
)  # fmt: skip
#: English wh-words. A question holding one asks for content even when it opens with an
#: auxiliary ("Do you know what the shop is called?", "Can you read which street this is?"),
#: so it is not refused. The price: "Is the sign which is red a stop sign?" slips through.
ENGLISH_WH_WORDS = frozenset(
    {
        "what", "what's", "which", "who", "who's", "whom", "whose",
        "when", "where", "where's", "why", "how", "how's",
    }
)  # fmt: skip
#: Words that end an English tag question: "This is a bank, isn't it?", "..., right?".
ENGLISH_TAG_SUBJECTS = frozenset({"it", "he", "she", "they", "there", "this", "that", "you", "we", "i"})
ENGLISH_TAG_WORDS = frozenset({"right", "correct", "yes", "no"})
#: Chinese sentence-final particles of a yes/no question: 吗, 嘛, 么 ("这是银行吗？") and 吧,
#: which asks for confirmation ("这是银行吧？", "this is a bank, right?").
CHINESE_YES_NO_PARTICLES = ("吗", "嘛", "么", "吧")
#: Words ending in one of those particles that are not the particle: 什么 ("what"), 怎么
#: ("how"), 这么/那么/多么/要么, and 干吗/干嘛 ("why / what for").
CHINESE_PARTICLE_EXCEPTIONS = ("什么", "怎么", "这么", "那么", "多么", "要么", "干吗", "干嘛")
#: Chinese words that ask "whether" anywhere in the question: 是否 and its kin.
CHINESE_WHETHER_WORDS = ("是否", "能否", "可否", "与否", "有无")
#: A-not-A: a character, 不 or 没, the same character again: 是不是, 有没有, 能不能, 会不会,
#: 对不对, 可不可以, 好不好, 卖不卖...
CHINESE_A_NOT_A = re.compile(r"([\u4e00-\u9fff])[不没]\1")
#: Chinese question words. As in English, a question holding one asks for content even with a
#: yes/no form ("你知道这家店叫什么吗？", "do you know what this shop is called?").
CHINESE_WH_WORDS = (
    "什么", "啥", "哪", "谁", "几", "多少", "怎么", "怎样", "为什么", "为何", "如何",
    "何时", "何地", "何处", "多久", "多大", "多长", "多高", "多远",
)  # fmt: skip

#: Punctuation dropped from the end of questions and answers before they are compared.
TRAILING_PUNCTUATION = "?？.。!！,，;；:：…~～"
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def _plain(text: str) -> str:
    """NFKC (full-width letters and punctuation to plain ones), curly apostrophes straightened,
    case folded, whitespace collapsed, trailing punctuation and spaces dropped."""
    text = unicodedata.normalize("NFKC", text).replace("\u2019", "'").replace("\u2018", "'")
    text = " ".join(text.casefold().split())
    return text.rstrip(TRAILING_PUNCTUATION + " ")


def normalise_question(text: str) -> str:
    """A question as duplicates are compared: NFKC, case folded, runs of whitespace made one
    space, trailing ? ？ . 。 ! ！ (and the like) and spaces dropped."""
    if not isinstance(text, str):
        return ""
    text = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return text.rstrip(TRAILING_PUNCTUATION + " ")


def _is_english_yes_no(text: str) -> bool:
    words = _WORD.findall(text)
    if not words or any(word in ENGLISH_WH_WORDS for word in words):
        return False
    if words[0] in ENGLISH_AUXILIARIES:
        return True
    # "According to the sign, is this a bank?": the clause after a leading phrase.
    clauses = [clause for clause in re.split(r"[,;:]", text) if clause.strip()]
    if len(clauses) > 1:
        after = _WORD.findall(clauses[1])
        if after and after[0] in ENGLISH_AUXILIARIES:
            return True
        tag = _WORD.findall(clauses[-1])
        if tag and (
            (len(tag) == 1 and tag[0] in ENGLISH_TAG_WORDS)
            or (len(tag) == 2 and tag[0] in ENGLISH_AUXILIARIES and tag[1] in ENGLISH_TAG_SUBJECTS)
        ):
            return True
    return False


def _is_chinese_yes_no(text: str) -> bool:
    compact = "".join(text.split())
    if any(word in compact for word in CHINESE_WH_WORDS):
        return False
    if compact.endswith(CHINESE_YES_NO_PARTICLES) and not compact.endswith(CHINESE_PARTICLE_EXCEPTIONS):
        return True
    return any(word in compact for word in CHINESE_WHETHER_WORDS) or bool(CHINESE_A_NOT_A.search(compact))


def is_yes_no_question(text: str) -> bool:
    """Whether a question (English or Chinese) can be answered with yes or no.

    English: it opens with an auxiliary or modal verb (`ENGLISH_AUXILIARIES`: "Is this a
    bank?"), or the clause after a leading phrase does ("According to the sign, is it open?"),
    or it ends with a tag ("..., isn't it?", "..., right?"); and it holds no wh-word
    (`ENGLISH_WH_WORDS`), so "What is the name of the shop?" and "Do you know what the shop is
    called?" are fine. Alternative questions ("Is it red or blue?") are refused too.

    Chinese: it ends (trailing ？?。 and spaces aside) in 吗, 嘛, 么 or 吧 (but not in 什么,
    怎么...), or holds 是否/能否/可否 or an A-not-A form (是不是, 有没有, 能不能, 可不可以...);
    and it holds no question word (`CHINESE_WH_WORDS`), so "这家店叫什么名字？" is fine.
    """
    if not isinstance(text, str):
        return False
    plain = _plain(text)
    return _is_english_yes_no(plain) or _is_chinese_yes_no(plain)


def is_yes_no_answer(text: str) -> bool:
    """Whether an answer is yes or no: the whole answer, after NFKC, case folding and dropping
    trailing punctuation, is one of `ENGLISH_YES_NO_ANSWERS` ("Yes.", "NO!") or, spaces
    dropped, of `CHINESE_YES_NO_ANSWERS` ("是", "不是。"). "No Parking" and "是非" are fine."""
    if not isinstance(text, str):
        return False
    plain = _plain(text)
    return plain in ENGLISH_YES_NO_ANSWERS or "".join(plain.split()) in CHINESE_YES_NO_ANSWERS


# --- evidence -----------------------------------------------------------------------------------


def _corners(evidence: Any) -> list[tuple[float, float]] | None:
    """The four corners of evidence holding exactly 8 finite real numbers, else None."""
    if not isinstance(evidence, (list, tuple)) or len(evidence) != 8:
        return None
    values = []
    for value in evidence:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return None
        try:
            number = float(value)
        except (OverflowError, ValueError, TypeError):
            return None
        if not math.isfinite(number):
            return None
        values.append(number)
    return [(values[index], values[index + 1]) for index in range(0, 8, 2)]


def _crosses(corners: Sequence[tuple[float, float]]) -> bool:
    """Whether opposite sides of the quadrilateral meet (a bow tie)."""
    a, b, c, d = corners
    return LineString([a, b]).intersects(LineString([c, d])) or LineString([b, c]).intersects(
        LineString([d, a])
    )


def check_evidence(evidence: Any, *, width: float, height: float, pair: int | None = None) -> list[Problem]:
    """The evidence rules for one quadrilateral (see the module's docstring)."""
    if evidence is None:
        return [Problem(pair, "evidence", "no_evidence")]
    corners = _corners(evidence)
    if corners is None:
        return [Problem(pair, "evidence", "quad_points")]
    problems = []
    if not all(0 <= x <= width and 0 <= y <= height for x, y in corners):
        problems.append(Problem(pair, "evidence", "quad_outside", {"width": width, "height": height}))
    polygon = Polygon(corners)
    # A click without a drag, or corners on one line, is too small rather than crossed.
    # (`not >=` also catches NaN, which huge coordinates can give.)
    if not polygon.convex_hull.area >= MIN_QUAD_AREA:
        problems.append(Problem(pair, "evidence", "quad_too_small"))
    elif len(set(corners)) < 4 or _crosses(corners) or not polygon.is_valid:
        problems.append(Problem(pair, "evidence", "quad_not_simple"))
    elif not polygon.area >= MIN_QUAD_AREA:
        problems.append(Problem(pair, "evidence", "quad_too_small"))
    return problems


# --- the submission -----------------------------------------------------------------------------


def _text(pair: Any, key: str) -> str:
    value = pair.get(key) if isinstance(pair, dict) else None
    return value.strip() if isinstance(value, str) else ""


def check_pairs(
    pairs: list[dict], *, width: int, height: int, fixed_questions: bool = False
) -> list[Problem]:
    """Every rule the submitted pairs break, in pair order (pair by pair: question, answer,
    evidence), then ``no_pairs`` when there is none. An empty list means the submission is fine.

    `pairs`: dicts with "question", "answer" and "evidence" (8 numbers in image pixels, or None
    or missing); anything else where a dict, a string or a number is wanted is a Problem.
    `width` and `height`: the image's size in pixels. `fixed_questions`: the questions were
    given (a second annotator's round), so no question rule applies.
    """
    if not isinstance(pairs, (list, tuple)) or not pairs:
        return [Problem(None, "pairs", "no_pairs")]
    problems: list[Problem] = []
    first_asked: dict[str, int] = {}
    for index, pair in enumerate(pairs):
        question, answer = _text(pair, "question"), _text(pair, "answer")
        if not fixed_questions:
            if not question:
                problems.append(Problem(index, "question", "empty"))
            else:
                if is_yes_no_question(question):
                    problems.append(Problem(index, "question", "yes_no_question"))
                key = normalise_question(question)
                if key in first_asked:
                    other = first_asked[key]
                    problems.append(
                        Problem(
                            index,
                            "question",
                            "duplicate_question",
                            {"other": other, "other_number": other + 1},
                        )
                    )
                else:
                    first_asked[key] = index
        if not answer:
            problems.append(Problem(index, "answer", "empty"))
        elif is_yes_no_answer(answer):
            problems.append(Problem(index, "answer", "yes_no_answer"))
        evidence = pair.get("evidence") if isinstance(pair, dict) else None
        problems.extend(check_evidence(evidence, width=width, height=height, pair=index))
    return problems


def ocr_mismatch(pair: int, recognised: str) -> Problem:
    """The confirmable Problem for an answer far from the text read inside its quadrilateral:
    ``ocr_mismatch`` naming what was read, or ``ocr_empty`` when nothing was."""
    if not recognised.strip():
        return Problem(pair, "answer", "ocr_empty", confirmable=True)
    return Problem(pair, "answer", "ocr_mismatch", {"recognised": recognised}, confirmable=True)
