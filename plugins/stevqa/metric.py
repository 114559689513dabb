"""STE-VQA (EST-VQA) metrics: answer score TC, evidence score LC, evidence-checked score CLC.

Pure Python, no Django. For one question with ground-truth answer g and predicted answer p::

    NL   = Levenshtein(norm(p), norm(g)) / max(len(norm(p)), len(norm(g)))   (on code points)
    TC   = 1 - NL   if NL < tau   else 0                                      (tau: strict "<")
    LC   = IoU(ground-truth quadrilateral, predicted quadrilateral)
    CLC  = TC       if LC >= 0.5  else 0                                      (inclusive)

and over a set of questions each score is the mean; the "reasonable score" is
Delta_r = mean(CLC) / mean(TC) (None when mean(TC) is 0). Means are reported over all
questions, per language ("en", "ch") and per answer length ("one word", "more").

Two variants, chosen with ``variant=``:

``official`` (default) reproduces the released evaluator (``eval.py`` of the EST-VQA release):

- norm(text) = lower-case, then zhconv's phrase-level conversion to simplified Chinese with the
  zh-cn tables (軟體 -> 软件, 滑鼠 -> 鼠标). Nothing else: no stripping, no whitespace folding, no
  punctuation removal, no Unicode normalisation, so full-width "ＫＦＣ" stays unlike "kfc".
- tau = 0.5.
- Evidence coordinates are parsed as integers (numbers are truncated toward zero, as Python's
  ``int`` does; the released code crashes on a string such as "12.5", which is truncated here
  too). Each quadrilateral is replaced by its convex hull, so vertex order and bow-ties do not
  matter. LC = 0 when the two hulls do not intersect (touching hulls give 0 as well); otherwise
  LC = area(hull1 ∩ hull2) / area(convex hull of all eight points). The denominator is not the
  true union: it is never smaller, so LC is at most the true IoU. A zero-area hull of all eight
  points gives 0.

``paper`` follows the paper's text:

- norm is the same as in ``official`` (the paper does not describe any normalisation, and
  comparing answers without the conversion would make traditional-script answers wrong).
- tau = 0.75 (strict "<" as well: the paper's definition is "1 - NL if NL < tau").
- LC is the true polygon IoU, area(A ∩ B) / (area(A) + area(B) - area(A ∩ B)), on the
  coordinates as real numbers. A quadrilateral that is not a valid simple polygon (a bow-tie
  whose vertices were listed in the wrong order, or one with a collapsed edge that makes it
  self-touch) is replaced by the convex hull of its four points: for four points in convex
  position that is the quadrilateral the annotator meant, and it is what the released code
  does for every quadrilateral. Valid non-convex quadrilaterals are kept as they are. A
  quadrilateral of zero area (all points on a line) gives LC = 0.

Both variants match ground truth and predictions by ``question_id`` (the released code pairs
them by position and asserts the ids agree). A question without a prediction scores 0 on TC,
LC and CLC and is listed in ``Scored.problems``; predictions for unknown ids are listed and
ignored. Two empty answers make NL undefined (the released code divides by zero): that is an
error naming the question.

Language, from the ground-truth question (released rule): Chinese ("ch") when any character is
in U+4E00..U+9FA5, otherwise English ("en"), including empty, kana-only and full-width-Latin
questions.

Answer length, from the ground-truth answer (the paper reports "one word" vs longer answers but
splits Chinese with jieba, which Yardstick does not use): an answer with more than one
whitespace-separated token is "more"; a single token is "one word", except that a token holding a
Chinese character (U+4E00..U+9FA5) and longer than ``CHINESE_WORD_CHARACTERS`` (2) characters is
"more". Two characters is the length of most Chinese words, so 补胎 and 佛山 are one word while
禾不锈钢 (a four-character shop name) counts as more. An empty answer counts as "one word".

Also here, for users comparing with related benchmarks: `anls` (ST-VQA's average normalised
Levenshtein similarity, per question) and `vqa_accuracy` (VQA / TextVQA soft accuracy with the
standard EvalAI answer normalisation).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import shapely
import zhconv
from rapidfuzz.distance import Levenshtein

from benchmarks.records import (
    RecordChecker,
    check_unique,
    indexed,
    load_json_list,
)
from evaluation.metrics.scored import Scored, describe_ids, mean_or_none, ratio_or_none
from plugins.stevqa import formats
from plugins.stevqa.formats import CHINESE, ENGLISH, check_evidence, is_chinese, language

METRIC = "STE-VQA"
#: Bump when a change to this module can change a number.
METRIC_VERSION = "1"

OFFICIAL = "official"
PAPER = "paper"
VARIANTS = (OFFICIAL, PAPER)
#: Answer threshold per variant: TC = 1 - NL only when NL < tau.
DEFAULT_TAU: dict[str, float] = {OFFICIAL: 0.5, PAPER: 0.75}
#: Evidence is "sufficient" (CLC = TC) when LC >= this (inclusive), in both variants.
EVIDENCE_THRESHOLD = 0.5

LANGUAGES = (ENGLISH, CHINESE)
ONE_WORD = "one word"
MORE = "more"
ANSWER_LENGTHS = (ONE_WORD, MORE)
#: A single-token Chinese answer of at most this many characters counts as one word.
CHINESE_WORD_CHARACTERS = 2

QUAD_VERTICES = 4


def check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"unknown STE-VQA variant {variant!r} (expected one of {', '.join(VARIANTS)})")


# --- answers -----------------------------------------------------------------------------------


def normalize_answer(text: str, variant: str = OFFICIAL) -> str:
    """The answer as the evaluator compares it: lower-cased, then converted to simplified Chinese.

    Both variants do the same (see the module docstring): ``zhconv.convert(text.lower(),
    "zh-cn")``, a phrase-level conversion (記憶體 -> 内存, not character by character). No
    stripping, whitespace folding, punctuation removal or Unicode normalisation.
    """
    check_variant(variant)
    return zhconv.convert(text.lower(), "zh-cn")


def normalized_levenshtein(first: str, second: str, *, where: str = "") -> float:
    """NL = Levenshtein distance on code points / length of the longer string, in [0, 1].

    Two empty strings have no defined NL (the released evaluator divides by zero): a ValueError
    naming `where` (e.g. "question 12") is raised instead.
    """
    longer = max(len(first), len(second))
    if longer == 0:
        place = f"{where}: " if where else ""
        raise ValueError(
            f"{place}the predicted and the ground-truth answers are both empty, so their normalised "
            "Levenshtein distance is undefined (the released STE-VQA evaluator divides by zero)"
        )
    return Levenshtein.distance(first, second) / longer


def answer_score(
    prediction: str, truth: str, *, variant: str = OFFICIAL, tau: float | None = None, where: str = ""
) -> float:
    """TC of one question: 1 - NL(norm(prediction), norm(truth)) when NL < tau (strict), else 0."""
    check_variant(variant)
    threshold = DEFAULT_TAU[variant] if tau is None else tau
    distance = normalized_levenshtein(
        normalize_answer(prediction, variant), normalize_answer(truth, variant), where=where
    )
    return 1.0 - distance if distance < threshold else 0.0


def answer_length(answer: str) -> str:
    """The length class of a ground-truth answer, ONE_WORD or MORE (rule in the module docstring)."""
    tokens = answer.split()
    if len(tokens) > 1:
        return MORE
    if tokens and is_chinese(tokens[0]) and len(tokens[0]) > CHINESE_WORD_CHARACTERS:
        return MORE
    return ONE_WORD


# --- evidence ----------------------------------------------------------------------------------


def parse_coordinate(value: int | float | str, variant: str) -> float:
    """One evidence coordinate as the variant reads it.

    official: an integer, like the released ``int(value)``: numbers are truncated toward zero;
    strings holding an integer are read as one, other numeric strings ("12.5") are truncated too
    (the released code would crash). paper: the real number.
    """
    if variant == PAPER:
        return float(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return int(float(value))
    return int(value)


def quad_array(quads: Sequence[Sequence[int | float | str]], variant: str) -> np.ndarray:
    """Quadrilaterals of 8 coordinates each as an (n, 4, 2) float array."""
    values = [[parse_coordinate(value, variant) for value in quad] for quad in quads]
    array = np.array(values, dtype=float).reshape(len(values), -1)
    if array.shape[1] != 2 * QUAD_VERTICES:
        raise ValueError(f"a quadrilateral needs 8 coordinates, got {array.shape[1]}")
    return array.reshape(len(values), QUAD_VERTICES, 2)


def official_ious(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Released evidence IoU for (n, 4, 2) arrays: hull intersection / hull of all eight points."""
    count = len(first)
    if count == 0:
        return np.zeros(0)
    first_hulls = shapely.convex_hull(shapely.multipoints(first))
    second_hulls = shapely.convex_hull(shapely.multipoints(second))
    enclosing_area = shapely.area(
        shapely.convex_hull(shapely.multipoints(np.concatenate([first, second], 1)))
    )
    overlapping = shapely.intersects(first_hulls, second_hulls) & (enclosing_area > 0)
    ious = np.zeros(count)
    if overlapping.any():
        intersection_area = shapely.area(
            shapely.intersection(first_hulls[overlapping], second_hulls[overlapping])
        )
        ious[overlapping] = intersection_area / enclosing_area[overlapping]
    return ious


def paper_ious(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """True polygon IoU for (n, 4, 2) arrays; invalid quadrilaterals become their convex hulls."""
    count = len(first)
    if count == 0:
        return np.zeros(0)
    first_polygons = valid_polygons(first)
    second_polygons = valid_polygons(second)
    first_area = shapely.area(first_polygons)
    second_area = shapely.area(second_polygons)
    both_solid = (first_area > 0) & (second_area > 0)
    ious = np.zeros(count)
    if both_solid.any():
        intersection_area = shapely.area(
            shapely.intersection(first_polygons[both_solid], second_polygons[both_solid])
        )
        # Both areas are positive, so the union is too.
        union_area = first_area[both_solid] + second_area[both_solid] - intersection_area
        ious[both_solid] = intersection_area / union_area
    return ious


def valid_polygons(points: np.ndarray) -> np.ndarray:
    """Each quadrilateral as a shapely polygon, or its convex hull when it is not a valid polygon."""
    polygons = shapely.polygons(points)
    invalid = ~shapely.is_valid(polygons)
    if invalid.any():
        polygons[invalid] = shapely.convex_hull(shapely.multipoints(points[invalid]))
    return polygons


def evidence_ious(
    truth_quads: Sequence[Sequence[int | float | str]],
    predicted_quads: Sequence[Sequence[int | float | str]],
    variant: str = OFFICIAL,
) -> np.ndarray:
    """LC for many pairs at once (vectorised over shapely); see `evidence_iou`."""
    check_variant(variant)
    if len(truth_quads) != len(predicted_quads):
        raise ValueError(
            f"{len(truth_quads)} ground-truth quadrilaterals but {len(predicted_quads)} predicted"
        )
    if not len(truth_quads):
        return np.zeros(0)
    truth = quad_array(truth_quads, variant)
    predicted = quad_array(predicted_quads, variant)
    return official_ious(truth, predicted) if variant == OFFICIAL else paper_ious(truth, predicted)


def evidence_iou(
    truth_quad: Sequence[int | float | str],
    predicted_quad: Sequence[int | float | str],
    variant: str = OFFICIAL,
) -> float:
    """LC of one question: the IoU of two quadrilaterals of 8 coordinates (x1, y1, ..., x4, y4).

    official: integer coordinates; convex hulls; 0 unless the hulls intersect (touching gives 0);
    area(hull1 ∩ hull2) / area(hull of all 8 points); 0 when that hull has zero area.
    paper: true polygon IoU; an invalid (self-intersecting) quadrilateral is replaced by its
    convex hull; 0 when either has zero area. Coordinates may be numbers or numeric strings.
    """
    return float(evidence_ious([truth_quad], [predicted_quad], variant)[0])


# --- predictions -------------------------------------------------------------------------------


def prediction_from_record(raw: Any, checker: RecordChecker) -> dict[str, Any] | None:
    """{"question_id": int, "answer": str, "evidence": [8 numbers or numeric strings]}, or None."""
    if not checker.is_object(raw):
        return None
    before = len(checker.errors)
    question_id = checker.get(raw, "question_id", int)
    answer = checker.get(raw, "answer", str)
    evidence = check_evidence(checker, raw)
    if len(checker.errors) > before:
        return None
    return {"question_id": question_id, "answer": answer, "evidence": evidence}


def check_prediction_records(labelled: list[tuple[str, Any]], *, source: str = "") -> list[dict[str, Any]]:
    """Validate labelled prediction records; all faults (and duplicate ids) in one FormatError."""
    return check_unique(labelled, prediction_from_record, id_field="question_id", source=source)


def parse_predictions(data: bytes | str | list[Any], *, source: str = "") -> list[dict[str, Any]]:
    """A prediction file (the released ``pred_sample.json`` layout) as validated records.

    The file is a JSON list of ``{"question_id": int, "answer": str, "evidence": [8 numbers or
    numeric strings]}``; extra fields are ignored. Every fault of every record is reported at
    once as a FormatError of RecordError("record N", field, message), N counting from 0;
    duplicate question ids are faults too.
    """
    document = load_json_list(data, source=source, what="predictions")
    return check_prediction_records(indexed(document), source=source)


def predictions_as_records(
    predictions: Sequence[Mapping[str, Any]] | Mapping[Any, Any],
) -> list[dict[str, Any]]:
    """Validated records from a list of predictions or a mapping question_id -> prediction.

    In a mapping, keys are question ids (integers, or strings of digits as JSON object keys are);
    values hold "answer" and "evidence".
    """
    if isinstance(predictions, Mapping):
        labelled = []
        for key, value in predictions.items():
            question_id = int(key) if isinstance(key, str) and key.strip().lstrip("-").isdigit() else key
            record = dict(value, question_id=question_id) if isinstance(value, Mapping) else value
            labelled.append((f"prediction {key!r}", record))
        return check_prediction_records(labelled)
    return check_prediction_records(indexed(list(predictions)))


# --- scoring -----------------------------------------------------------------------------------


def group_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """count, mean TC / LC / CLC and Delta_r = mean CLC / mean TC (None when empty or TC is 0)."""
    true_correct = mean_or_none(row["TC"] for row in rows)
    evidence_checked = mean_or_none(row["CLC"] for row in rows)
    return {
        "count": len(rows),
        "TC": true_correct,
        "LC": mean_or_none(row["LC"] for row in rows),
        "CLC": evidence_checked,
        "Delta_r": ratio_or_none(evidence_checked, true_correct),
    }


def parameters(variant: str, tau: float) -> dict[str, Any]:
    return {
        "metric": METRIC,
        "metric_version": METRIC_VERSION,
        "variant": variant,
        "tau": tau,
        "answer_rule": "TC = 1 - NL if NL < tau else 0",
        "answer_normalisation": "lower-case, then zhconv zh-cn (phrase level)",
        "evidence_threshold": EVIDENCE_THRESHOLD,
        "evidence_rule": "CLC = TC if LC >= evidence_threshold else 0",
        "evidence_iou": (
            "integer coordinates, convex hulls, intersection / hull of all eight points"
            if variant == OFFICIAL
            else "polygon IoU (invalid quadrilaterals replaced by their convex hull)"
        ),
    }


def score_records(
    ground_truth: Sequence[Mapping[str, Any]],
    predictions: list[dict[str, Any]],
    *,
    variant: str,
    tau: float | None,
) -> Scored:
    """`score` on validated predictions (the work shared by `score` and `score_file`)."""
    check_variant(variant)
    threshold = DEFAULT_TAU[variant] if tau is None else float(tau)
    params = parameters(variant, threshold)
    by_id = {prediction["question_id"]: prediction for prediction in predictions}

    rows: list[dict[str, Any]] = []
    missing: list[Any] = []
    seen: set[Any] = set()
    truth_quads: list[Sequence[Any]] = []
    predicted_quads: list[Sequence[Any]] = []
    scored_rows: list[dict[str, Any]] = []
    for truth in ground_truth:
        question_id = truth["question_id"]
        if question_id in seen:
            raise ValueError(f"question {question_id}: the ground truth holds this question_id twice")
        seen.add(question_id)
        prediction = by_id.get(question_id)
        row = {
            "question_id": question_id,
            "lang": language(truth["question"]),
            "answer_length": answer_length(truth["answer"]),
            "TC": 0.0,
            "LC": 0.0,
            "CLC": 0.0,
            "missing": prediction is None,
        }
        rows.append(row)
        if prediction is None:
            missing.append(question_id)
            continue
        row["TC"] = answer_score(
            prediction["answer"],
            truth["answer"],
            variant=variant,
            tau=threshold,
            where=f"question {question_id}",
        )
        truth_quads.append(truth["evidence"])
        predicted_quads.append(prediction["evidence"])
        scored_rows.append(row)

    for row, iou in zip(scored_rows, evidence_ious(truth_quads, predicted_quads, variant), strict=True):
        row["LC"] = float(iou)
        row["CLC"] = row["TC"] if iou >= EVIDENCE_THRESHOLD else 0.0

    extra = [question_id for question_id in by_id if question_id not in seen]
    problems = []
    if missing:
        problems.append(
            f"{len(missing)} question{'s have' if len(missing) != 1 else ' has'} no prediction and "
            f"score{'' if len(missing) != 1 else 's'} 0 on TC, LC and CLC: question_id {describe_ids(missing)}"
        )
    if extra:
        problems.append(
            f"{len(extra)} prediction{'s are' if len(extra) != 1 else ' is'} for question ids not in the "
            f"ground truth and {'were' if len(extra) != 1 else 'was'} ignored: question_id {describe_ids(extra)}"
        )
    summary = {
        "parameters": params,
        "overall": group_summary(rows),
        "by_language": {
            name: group_summary([row for row in rows if row["lang"] == name]) for name in LANGUAGES
        },
        "by_answer_length": {
            name: group_summary([row for row in rows if row["answer_length"] == name])
            for name in ANSWER_LENGTHS
        },
        "missing_predictions": len(missing),
        "extra_predictions": len(extra),
    }
    return Scored(items=rows, summary=summary, params=params, problems=problems)


def score(
    ground_truth: list[dict[str, Any]],
    predictions: list[dict[str, Any]] | dict[Any, Any],
    *,
    variant: str = OFFICIAL,
    tau: float | None = None,
) -> Scored:
    """Score STE-VQA predictions against the released test ground truth.

    `ground_truth`: records ``{"question_id", "question", "answer", "evidence"}`` as in the
    released test file. `predictions`: a list of ``{"question_id", "answer", "evidence"}`` or a
    mapping question_id -> ``{"answer", "evidence"}``; they are validated first (a FormatError
    lists every bad record). `tau` overrides the variant's answer threshold.

    Items: one row per ground-truth question, in its order: question_id, lang, answer_length,
    TC, LC, CLC and ``missing`` (no prediction: all three scores 0). Summary: "overall",
    "by_language" (en, ch), "by_answer_length" (one word, more), each with count, TC, LC, CLC
    and Delta_r, plus the parameters and the counts of missing and extra predictions.
    """
    return score_records(ground_truth, predictions_as_records(predictions), variant=variant, tau=tau)


def score_file(
    gt_data: bytes,
    pred_data: bytes,
    *,
    variant: str = OFFICIAL,
    tau: float | None = None,
    gt_source: str = "ground truth",
    pred_source: str = "predictions",
) -> Scored:
    """Score a prediction file against an STE-VQA ground-truth file (both raw JSON bytes).

    The ground truth is read and checked by the STE-VQA format module, in either layout: a test
    file's questions carry their question_id; a training file's QA pairs are numbered in file
    order (see `formats.question_records`), and predictions name them by that number.
    """
    parsed = formats.parse(gt_data, source=gt_source)
    ground_truth = [
        question
        for record in parsed.records
        for question in formats.question_records(record.payload, record.ground_truth)
    ]
    predictions = parse_predictions(pred_data, source=pred_source)
    return score_records(ground_truth, predictions, variant=variant, tau=tau)


# --- related metrics: ANLS (ST-VQA) and VQA accuracy (VQA, TextVQA) ------------------------------

#: ANLS keeps a similarity 1 - NL only when it is at least this (inclusive).
ANLS_THRESHOLD = 0.5


def anls(prediction: str, answers: Sequence[str], *, threshold: float = ANLS_THRESHOLD) -> float:
    """ST-VQA's per-question ANLS: max over ground-truth answers a of s(a), where

        s(a) = 1 - NL(p, a)  if 1 - NL(p, a) >= threshold (0.5, inclusive)  else 0,

    with p and a stripped and lower-cased (nothing else) and NL as in `normalized_levenshtein`.
    Two equal strings score 1 (two empty strings included). The dataset score is the mean over
    questions. An empty list of answers is an error.
    """
    if not answers:
        raise ValueError("ANLS needs at least one ground-truth answer")
    predicted = prediction.strip().lower()
    best = 0.0
    for answer in answers:
        truth = answer.strip().lower()
        similarity = 1.0 if truth == predicted else 1.0 - normalized_levenshtein(predicted, truth)
        if similarity >= threshold:
            best = max(best, similarity)
    return best


#: The standard VQA answer normalisation, as the EvalAI answer processor used by the VQA and
#: TextVQA evaluators (VQA's vqaEval.py; mmf/pythia's EvalAIAnswerProcessor) applies it.
VQA_CONTRACTIONS: dict[str, str] = {
    "aint": "ain't", "arent": "aren't", "cant": "can't", "couldve": "could've", "couldnt": "couldn't",
    "couldn'tve": "couldn't've", "couldnt've": "couldn't've", "didnt": "didn't", "doesnt": "doesn't",
    "dont": "don't", "hadnt": "hadn't", "hadnt've": "hadn't've", "hadn'tve": "hadn't've",
    "hasnt": "hasn't", "havent": "haven't", "hed": "he'd", "hed've": "he'd've", "he'dve": "he'd've",
    "hes": "he's", "howd": "how'd", "howll": "how'll", "hows": "how's", "isnt": "isn't", "itd": "it'd",
    "itd've": "it'd've", "it'dve": "it'd've", "itll": "it'll", "let's": "let's", "maam": "ma'am",
    "mightnt": "mightn't", "mightnt've": "mightn't've", "mightn'tve": "mightn't've",
    "mightve": "might've", "mustnt": "mustn't", "mustve": "must've", "neednt": "needn't",
    "notve": "not've", "oclock": "o'clock", "oughtnt": "oughtn't", "ow's'at": "'ow's'at",
    "'ows'at": "'ow's'at", "'ow'sat": "'ow's'at", "shant": "shan't", "shed've": "she'd've",
    "she'dve": "she'd've", "she's": "she's", "shouldve": "should've", "shouldnt": "shouldn't",
    "shouldnt've": "shouldn't've", "shouldn'tve": "shouldn't've", "somebody'd": "somebodyd",
    "somebodyd've": "somebody'd've", "somebody'dve": "somebody'd've", "somebodyll": "somebody'll",
    "somebodys": "somebody's", "someoned": "someone'd", "someoned've": "someone'd've",
    "someone'dve": "someone'd've", "someonell": "someone'll", "someones": "someone's",
    "somethingd": "something'd", "somethingd've": "something'd've", "something'dve": "something'd've",
    "somethingll": "something'll", "thats": "that's", "thered": "there'd", "thered've": "there'd've",
    "there'dve": "there'd've", "therere": "there're", "theres": "there's", "theyd": "they'd",
    "theyd've": "they'd've", "they'dve": "they'd've", "theyll": "they'll", "theyre": "they're",
    "theyve": "they've", "twas": "'twas", "wasnt": "wasn't", "wed've": "we'd've", "we'dve": "we'd've",
    "weve": "we've", "werent": "weren't", "whatll": "what'll", "whatre": "what're", "whats": "what's",
    "whatve": "what've", "whens": "when's", "whered": "where'd", "wheres": "where's",
    "whereve": "where've", "whod": "who'd", "whod've": "who'd've", "who'dve": "who'd've",
    "wholl": "who'll", "whos": "who's", "whove": "who've", "whyll": "why'll", "whyre": "why're",
    "whys": "why's", "wont": "won't", "wouldve": "would've", "wouldnt": "wouldn't",
    "wouldnt've": "wouldn't've", "wouldn'tve": "wouldn't've", "yall": "y'all", "yall'll": "y'all'll",
    "y'allll": "y'all'll", "yall'd've": "y'all'd've", "y'alld've": "y'all'd've",
    "y'all'dve": "y'all'd've", "youd": "you'd", "youd've": "you'd've", "you'dve": "you'd've",
    "youll": "you'll", "youre": "you're", "youve": "you've",
}  # fmt: skip
VQA_NUMBER_WORDS: dict[str, str] = {
    "none": "0", "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
    "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10",
}  # fmt: skip
VQA_ARTICLES = frozenset({"a", "an", "the"})
VQA_PUNCTUATION = (";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@", "`", ",", "?", "!")  # fmt: skip
#: A comma between two digits ("1,000"): when present, every punctuation mark is deleted, not spaced.
VQA_DIGIT_COMMA = re.compile(r"(?<=\d)(,)+(?=\d)")
#: A period not followed by a digit. (The original pattern "(?!<=\d)(\.)(?!\d)" means the same:
#: its first group is a look-ahead for the text "<=digit", which never follows a period.)
VQA_PERIOD = re.compile(r"\.(?!\d)")
#: The original passes re.UNICODE (32) where re.sub expects its count, so at most 32 periods go.
VQA_PERIOD_REMOVALS = 32


def normalize_vqa_answer(text: str) -> str:
    """The standard VQA answer normalisation, step by step as the EvalAI answer processor does it.

    1. Lower-case; delete "," and "?"; write "'s" as " 's"; strip.
    2. Turn newlines and tabs into spaces; strip.
    3. Punctuation: for each mark in ``; / [ ] " { } ( ) = + \\ _ - > < @ ` , ? !``, delete it if
       the text (as it was before this step) has the mark followed or preceded by a space, or has
       a comma between two digits; otherwise replace it with a space. Then delete each period
       that is not followed by a digit (at most 32 of them, as the original does).
    4. Split on whitespace; map number words "none"/"zero" .. "ten" to digits; drop the articles
       a, an, the; expand contractions written without apostrophe ("dont" -> "don't"); join
       with single spaces.
    """
    text = text.lower().replace(",", "").replace("?", "").replace("'s", " 's").strip()
    text = text.replace("\n", " ").replace("\t", " ").strip()
    before = text
    delete_marks = VQA_DIGIT_COMMA.search(before) is not None
    for mark in VQA_PUNCTUATION:
        if delete_marks or f"{mark} " in before or f" {mark}" in before:
            text = text.replace(mark, "")
        else:
            text = text.replace(mark, " ")
    text = VQA_PERIOD.sub("", text, count=VQA_PERIOD_REMOVALS)
    words = []
    for word in text.lower().split():
        word = VQA_NUMBER_WORDS.get(word, word)
        if word not in VQA_ARTICLES:
            words.append(VQA_CONTRACTIONS.get(word, word))
    return " ".join(words)


def vqa_accuracy(prediction: str, answers: Sequence[str]) -> float:
    """VQA soft accuracy of one prediction against the human answers (10 in VQA and TextVQA).

    Both sides go through `normalize_vqa_answer`. For each of the n leave-one-out subsets of the
    answers (n - 1 answers each), acc = min(#answers in the subset equal to the prediction / 3, 1);
    the result is the mean over the n subsets. With 10 answers of which m match, this gives 0,
    0.3, 0.6, 0.9 and 1 for m = 0, 1, 2, 3 and 4 or more. An empty list is an error.
    """
    if not answers:
        raise ValueError("VQA accuracy needs at least one human answer")
    predicted = normalize_vqa_answer(prediction)
    normalized = [normalize_vqa_answer(answer) for answer in answers]
    total = 0.0
    for left_out in range(len(normalized)):
        matches = sum(
            1 for index, answer in enumerate(normalized) if index != left_out and answer == predicted
        )
        total += min(matches / 3, 1.0)
    return total / len(normalized)
