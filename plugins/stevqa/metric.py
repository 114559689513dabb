"""STE-VQA (EST-VQA) metrics: answer score TC, evidence score LC, evidence-checked score CLC.

Pure Python, no Django. For one question with ground-truth answer g and predicted answer p::

    NL   = Levenshtein(norm(p), norm(g)) / max(len(norm(p)), len(norm(g)))   (on code points)
    TC   = 1 - NL   if NL < tau   else 0                                      (tau: strict "<")
    LC   = IoU(ground-truth quadrilateral, predicted quadrilateral)
    CLC  = TC       if LC >= 0.5  else 0                                      (inclusive)

and over a set of questions each score is the mean; the "reasonable score" is
Delta_r = mean(CLC) / mean(TC) (None when mean(TC) is 0). Means are reported over all
questions, per language ("en", "ch") and per answer length ("one word", "more").

Two sets of rules, chosen with ``variant=`` (and two more variants that add OCR evidence, below):

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

Two more variants attach evidence from OCR to answer-only predictions, as the paper does for
models that give no evidence: ``ocr`` (the official rules) and ``paper-ocr`` (the paper's). A
prediction without evidence takes the quadrilateral of one of its question's OCR tokens (the
ground-truth record's ``ocr_tokens``: ``[{"text": str, "quad": [8 numbers]}, ...]``, written by
``manage.py stevqa_ocr`` with the project's RapidOCR): the first token whose text equals the
answer after `normalize_answer`, else the first of those nearest to it by NL. A prediction with
its own evidence keeps it. A question whose record has no ``ocr_tokens`` has no OCR: its answer
stays without evidence, and the summary's "ocr" entry counts it.

Answer-only predictions (no ``evidence``, or ``"evidence": null``) are accepted in every variant;
their TC is scored as usual. When no prediction carries evidence (an answer-only model), LC and
CLC are not computed: they are None in every row and group, and the summary says
``"evidence": "none"``. When only some do, a prediction without evidence scores LC = 0 and
CLC = 0, as a missing prediction does (``"evidence": "partial"``, with the count in
``predictions_without_evidence`` and the questions in the problems): CLC credits an answer only
with sufficient evidence, and averaging over the predictions with evidence alone would let a
model raise its CLC by leaving out the evidence it is unsure of.

All variants match ground truth and predictions by ``question_id`` (the released code pairs
them by position and asserts the ids agree). A question without a prediction scores 0 on TC,
LC and CLC and is listed in ``Scored.problems``; predictions for unknown ids are listed and
ignored. Two empty answers make NL undefined (the released code divides by zero): that is an
error naming the question.

Language, from the ground-truth question (released rule): Chinese ("ch") when any character is
in U+4E00..U+9FA5, otherwise English ("en"), including empty, kana-only and full-width-Latin
questions.

Answer length, from the ground-truth answer, by two rules (the released evaluator has no length
split; the paper reports short, one-word, answers against longer ones, splitting Chinese with jieba):

- ``answer_length`` (Yardstick's rule, no dictionary): an answer with more than one
  whitespace-separated token is "more"; a single token is "one word", except that a token
  holding a Chinese character (U+4E00..U+9FA5) and longer than ``CHINESE_WORD_CHARACTERS`` (2)
  characters is "more". Two characters is the length of most Chinese words, so 补胎 and 佛山 are
  one word while 禾不锈钢 (a four-character shop name) counts as more.
- ``answer_length_jieba`` (the paper's rule): the answer's words as the STE-VQA statistics count
  them (plugins.stevqa.textstats.tokens: jieba tokens for an answer holding a Chinese character,
  whitespace words otherwise; punctuation-only tokens left out); one word or none is "one word".
  So 麦当劳 (one jieba word) is one word here but "more" by the rule above, and 7号 is "more".

An empty answer counts as "one word" by both.

Diagnostics in the summary (see `score`): the evidence classes per language (incorrect LC = 0,
insufficient 0 < LC < 0.5, sufficient LC >= 0.5) and TC and CLC over a sweep of tau (``by_tau``,
0.00 to 1.00 by 0.05, recomputed from each row's NL and LC).

Also here, for users comparing with related benchmarks: `anls` (ST-VQA's average normalised
Levenshtein similarity, per question) and `vqa_accuracy` (VQA / TextVQA soft accuracy with the
standard EvalAI answer normalisation).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import IO, Any

import numpy as np
import shapely
import zhconv
from rapidfuzz.distance import Levenshtein

from benchmarks.records import (
    FormatError,
    RecordChecker,
    RecordErrors,
    check_unique,
    indexed,
    iter_converted,
    load_json_list,
    paused_gc,
    stream_json_list,
)
from evaluation.metrics.scored import Scored, describe_ids, mean_or_none, ratio_or_none
from plugins.stevqa import formats
from plugins.stevqa.formats import CHINESE, ENGLISH, check_evidence, is_chinese, language

METRIC = "STE-VQA"
#: Bump when a change to this module can change a number.
METRIC_VERSION = "2"

OFFICIAL = "official"
PAPER = "paper"
#: The official and the paper's rules, with evidence from OCR for answer-only predictions.
OFFICIAL_OCR = "ocr"
PAPER_OCR = "paper-ocr"
VARIANTS = (OFFICIAL, PAPER, OFFICIAL_OCR, PAPER_OCR)
#: The rules (answer threshold, coordinates, IoU) each variant scores by.
RULES: dict[str, str] = {OFFICIAL: OFFICIAL, PAPER: PAPER, OFFICIAL_OCR: OFFICIAL, PAPER_OCR: PAPER}
#: The variants that attach OCR evidence to answer-only predictions.
OCR_VARIANTS = (OFFICIAL_OCR, PAPER_OCR)
#: Answer threshold per variant: TC = 1 - NL only when NL < tau.
DEFAULT_TAU: dict[str, float] = {OFFICIAL: 0.5, PAPER: 0.75, OFFICIAL_OCR: 0.5, PAPER_OCR: 0.75}
#: Evidence is "sufficient" (CLC = TC) when LC >= this (inclusive), in every variant.
EVIDENCE_THRESHOLD = 0.5
#: The evidence classes of the paper, by LC: 0, between 0 and the threshold, at least the threshold.
INCORRECT, INSUFFICIENT, SUFFICIENT = "incorrect", "insufficient", "sufficient"
EVIDENCE_CLASSES = (INCORRECT, INSUFFICIENT, SUFFICIENT)
#: The per-unit 0/1 field of each evidence class (None where LC is not computed).
EVIDENCE_CLASS_FIELDS = {name: f"evidence_{name}" for name in EVIDENCE_CLASSES}
#: The tau values of the sweep (``by_tau``): 0.00, 0.05, ..., 1.00, as the paper's curve.
TAU_SWEEP = tuple(round(step * 0.05, 2) for step in range(21))
#: How much evidence the predictions carry (the summary's "evidence").
EVIDENCE_ALL, EVIDENCE_PARTIAL, EVIDENCE_NONE = "all", "partial", "none"

LANGUAGES = (ENGLISH, CHINESE)
ONE_WORD = "one word"
MORE = "more"
ANSWER_LENGTHS = (ONE_WORD, MORE)
#: A single-token Chinese answer of at most this many characters counts as one word.
CHINESE_WORD_CHARACTERS = 2

QUAD_VERTICES = 4
#: LC is computed this many questions at a time (vectorised), so that the evidence of a ground
#: truth read from a file is let go of as it is scored. Each pair's IoU is computed on its own:
#: the numbers do not depend on it (a test makes it small).
EVIDENCE_BATCH = 4096


def check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"unknown STE-VQA variant {variant!r} (expected one of {', '.join(VARIANTS)})")


def rules(variant: str) -> str:
    """OFFICIAL or PAPER: the rules `variant` scores answers and evidence by."""
    check_variant(variant)
    return RULES[variant]


def tau_key(tau: float) -> str:
    """A tau of the sweep as ``by_tau`` names it: "0.50"."""
    return f"{tau:.2f}"


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


@lru_cache(maxsize=65536)
def answer_length_jieba(answer: str) -> str:
    """The paper's length class of a ground-truth answer: ONE_WORD when it has at most one word
    (jieba tokens for Chinese, whitespace words otherwise; see the module docstring), else MORE.
    Cached: a dataset repeats its answers, and jieba is the slowest step of scoring."""
    from plugins.stevqa.textstats import tokens

    return ONE_WORD if len(tokens(answer)) <= 1 else MORE


# --- evidence ----------------------------------------------------------------------------------


def parse_coordinate(value: int | float | str, variant: str) -> float:
    """One evidence coordinate as the variant reads it.

    official: an integer, like the released ``int(value)``: numbers are truncated toward zero;
    strings holding an integer are read as one, other numeric strings ("12.5") are truncated too
    (the released code would crash). paper: the real number.
    """
    if rules(variant) == PAPER:
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
    return paper_ious(truth, predicted) if rules(variant) == PAPER else official_ious(truth, predicted)


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
    """{"question_id": int, "answer": str, "evidence": [8 numbers or numeric strings] or None}, or
    None when the record is bad. An answer-only record (no "evidence", or null) has evidence None."""
    if not checker.is_object(raw):
        return None
    before = len(checker.errors)
    question_id = checker.get(raw, "question_id", int)
    answer = checker.get(raw, "answer", str)
    evidence = check_evidence(checker, raw) if raw.get("evidence") is not None else None
    if len(checker.errors) > before:
        return None
    return {"question_id": question_id, "answer": answer, "evidence": evidence}


def check_prediction_records(
    labelled: Iterable[tuple[str, Any]], *, source: str = ""
) -> list[dict[str, Any]]:
    """Validate labelled prediction records; all faults (and duplicate ids) in one FormatError."""
    return check_unique(labelled, prediction_from_record, id_field="question_id", source=source)


def parse_predictions(data: bytes | str | list[Any] | IO[bytes], *, source: str = "") -> list[dict[str, Any]]:
    """A prediction file (the released ``pred_sample.json`` layout) as validated records; a file
    open for reading is read a record at a time, so that memory holds the checked records and
    never the parsed document beside them.

    The file is a JSON list of ``{"question_id": int, "answer": str, "evidence": [8 numbers or
    numeric strings]}``; extra fields are ignored. Every fault of every record is reported at
    once as a FormatError of RecordError("record N", field, message), N counting from 0;
    duplicate question ids are faults too.
    """
    if isinstance(data, bytes | str | list):
        labelled = indexed(load_json_list(data, source=source, what="predictions"))
    else:
        labelled = stream_json_list(data, source=source, what="predictions")
    return check_prediction_records(labelled, source=source)


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
    """count, mean TC / LC / CLC and Delta_r = mean CLC / mean TC (None when empty or TC is 0).

    LC and CLC are means over the rows that have them: None when evidence was not scored."""
    true_correct = mean_or_none(row["TC"] for row in rows)
    evidence_checked = mean_or_none(row["CLC"] for row in rows if row["CLC"] is not None)
    return {
        "count": len(rows),
        "TC": true_correct,
        "LC": mean_or_none(row["LC"] for row in rows if row["LC"] is not None),
        "CLC": evidence_checked,
        "Delta_r": ratio_or_none(evidence_checked, true_correct),
    }


def evidence_class(iou: float) -> str:
    """The paper's class of an evidence: incorrect (IoU 0), insufficient (below the threshold),
    sufficient (at least the threshold, inclusive as CLC's)."""
    if iou >= EVIDENCE_THRESHOLD:
        return SUFFICIENT
    return INSUFFICIENT if iou > 0 else INCORRECT


def class_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """How many rows with an LC fall in each evidence class ("counts") and their shares (None when
    no row has an LC); "count" is the number of rows with an LC."""
    scored = [row for row in rows if row["LC"] is not None]
    counts = {name: sum(row[EVIDENCE_CLASS_FIELDS[name]] for row in scored) for name in EVIDENCE_CLASSES}
    return {
        "count": len(scored),
        **{name: counts[name] / len(scored) if scored else None for name in EVIDENCE_CLASSES},
        "counts": counts,
    }


def tau_sweep(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float | None]]:
    """TC and CLC for every tau of TAU_SWEEP, from each row's NL (None: no prediction, TC 0) and LC
    (None: evidence not scored, CLC None), with the variant's other rules unchanged. The means are
    taken as `group_summary` takes them, so that the variant's own tau gives its TC and CLC exactly."""
    sweep: dict[str, dict[str, float | None]] = {}
    for tau in TAU_SWEEP:
        answer_scores = [
            1.0 - row["NL"] if row["NL"] is not None and row["NL"] < tau else 0.0 for row in rows
        ]
        sweep[tau_key(tau)] = {
            "TC": mean_or_none(answer_scores),
            "CLC": mean_or_none(
                answer_score if row["LC"] >= EVIDENCE_THRESHOLD else 0.0
                for answer_score, row in zip(answer_scores, rows, strict=True)
                if row["LC"] is not None
            ),
        }
    return sweep


def ocr_evidence(
    answer: str, tokens: Sequence[Mapping[str, Any]], variant: str
) -> tuple[list[Any], str] | None:
    """The OCR token an answer-only prediction takes its evidence from, as (its quad, "exact" or
    "nearest"); None when there is no token.

    The first token whose text equals the answer after `normalize_answer`; else the first of the
    tokens nearest to it by NL (on the normalised texts). The ground truth plays no part.
    """
    if not tokens:
        return None
    wanted = normalize_answer(answer, variant)
    texts = [normalize_answer(token["text"], variant) for token in tokens]
    for token, text in zip(tokens, texts, strict=True):
        if text == wanted:
            return token["quad"], "exact"
    # Texts that differ have a non-empty longer one, so NL is defined; min keeps the first of ties.
    nearest = min(range(len(tokens)), key=lambda index: normalized_levenshtein(texts[index], wanted))
    return tokens[nearest]["quad"], "nearest"


def parameters(variant: str, tau: float) -> dict[str, Any]:
    official = rules(variant) == OFFICIAL
    params = {
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
            if official
            else "polygon IoU (invalid quadrilaterals replaced by their convex hull)"
        ),
    }
    if variant in OCR_VARIANTS:
        params["ocr_evidence"] = (
            "an answer-only prediction takes the quad of its question's OCR token equal to the answer "
            "(normalised), else the nearest by NL"
        )
    return params


def plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def score_evidence(
    rows: list[dict[str, Any]],
    truth_quads: list[Sequence[Any]],
    predicted_quads: list[Sequence[Any]],
    variant: str,
) -> None:
    """Set LC and CLC on rows whose evidence pairs are given, in one vectorised call."""
    for row, iou in zip(rows, evidence_ious(truth_quads, predicted_quads, variant), strict=True):
        row["LC"] = float(iou)
        row["CLC"] = row["TC"] if iou >= EVIDENCE_THRESHOLD else 0.0


def score_records(
    ground_truth: Iterable[Mapping[str, Any]],
    predictions: list[dict[str, Any]],
    *,
    variant: str,
    tau: float | None,
) -> Scored:
    """`score` on validated predictions (the work shared by `score` and `score_file`)."""
    by_id = {prediction["question_id"]: prediction for prediction in predictions}
    return score_matched(ground_truth, by_id, variant=variant, tau=tau)


def score_matched(
    ground_truth: Iterable[Mapping[str, Any]],
    by_id: dict[Any, dict[str, Any]],
    *,
    variant: str,
    tau: float | None,
) -> Scored:
    """Score validated predictions, by question_id (`by_id`), against the ground-truth questions.

    `ground_truth` is gone through once, in order, and no question is kept once its row is made
    (a file being read, see `score_file`): evidence pairs are held only until the next
    EVIDENCE_BATCH of them is scored. `by_id` is emptied of the predictions that are scored, so
    that memory lets go of each as its row is made; what is left in it are the extra ones.
    """
    check_variant(variant)
    threshold = DEFAULT_TAU[variant] if tau is None else float(tau)
    params = parameters(variant, threshold)
    attaches_ocr = variant in OCR_VARIANTS

    rows: list[dict[str, Any]] = []
    missing: list[Any] = []
    seen: set[Any] = set()
    truth_quads: list[Sequence[Any]] = []
    predicted_quads: list[Sequence[Any]] = []
    scored_rows: list[dict[str, Any]] = []
    without_evidence: list[dict[str, Any]] = []
    ocr_counts = {"exact": 0, "nearest": 0, "no_text": 0, "unavailable": 0}
    ocr_unavailable: list[Any] = []
    for truth in ground_truth:
        question_id = truth["question_id"]
        if question_id in seen:
            raise ValueError(f"question {question_id}: the ground truth holds this question_id twice")
        seen.add(question_id)
        prediction = by_id.pop(question_id, None)
        row = {
            "question_id": question_id,
            "lang": language(truth["question"]),
            "answer_length": answer_length(truth["answer"]),
            "answer_length_jieba": answer_length_jieba(truth["answer"]),
            "NL": None,
            "TC": 0.0,
            "LC": 0.0,
            "CLC": 0.0,
            "evidence_from": None,
            "missing": prediction is None,
        }
        rows.append(row)
        if prediction is None:
            missing.append(question_id)
            continue
        where = f"question {question_id}"
        distance = normalized_levenshtein(
            normalize_answer(prediction["answer"], variant),
            normalize_answer(truth["answer"], variant),
            where=where,
        )
        row["NL"] = distance
        row["TC"] = 1.0 - distance if distance < threshold else 0.0
        evidence = prediction["evidence"]
        if evidence is not None:
            row["evidence_from"] = "prediction"
        elif attaches_ocr:
            tokens = truth.get(formats.OCR_TOKENS)
            if tokens is None:
                ocr_counts["unavailable"] += 1
                ocr_unavailable.append(question_id)
            else:
                problem = formats.ocr_tokens_problem(tokens)
                if problem is not None:
                    raise ValueError(f"{where}: {formats.OCR_TOKENS}{problem[0]}: {problem[1]}")
                found = ocr_evidence(prediction["answer"], tokens, variant)
                if found is None:
                    ocr_counts["no_text"] += 1
                else:
                    evidence, how = found
                    ocr_counts[how] += 1
                    row["evidence_from"] = "ocr"
        if evidence is None:
            without_evidence.append(row)
            continue
        truth_quads.append(truth["evidence"])
        predicted_quads.append(evidence)
        scored_rows.append(row)
        if len(scored_rows) >= EVIDENCE_BATCH:
            score_evidence(scored_rows, truth_quads, predicted_quads, variant)
            truth_quads, predicted_quads, scored_rows = [], [], []
    score_evidence(scored_rows, truth_quads, predicted_quads, variant)

    # Answer-only predictions: no evidence at all leaves LC and CLC uncomputed; some without it
    # score 0 on both, as missing predictions do (see the module docstring).
    answered = len(rows) - len(missing)
    if answered and len(without_evidence) == answered:
        evidence_state = EVIDENCE_NONE
        for row in rows:
            row["LC"] = row["CLC"] = None
    else:
        evidence_state = EVIDENCE_PARTIAL if without_evidence else EVIDENCE_ALL
    for row in rows:
        named = evidence_class(row["LC"]) if row["LC"] is not None else None
        for name, field in EVIDENCE_CLASS_FIELDS.items():
            row[field] = None if named is None else int(named == name)

    extra = list(by_id)  # the scored ones were taken out
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
    if evidence_state == EVIDENCE_NONE:
        problems.append(
            "no prediction carries evidence: TC is scored, LC and CLC are not"
            + ("" if attaches_ocr else " (the ocr variants take evidence from OCR tokens)")
        )
    elif evidence_state == EVIDENCE_PARTIAL:
        ids = [row["question_id"] for row in without_evidence]
        problems.append(
            f"{plural(len(ids), 'prediction has', 'predictions have')} no evidence and "
            f"score{'s' if len(ids) == 1 else ''} 0 on LC and CLC (TC is scored): question_id {describe_ids(ids)}"
        )
    if ocr_unavailable:
        problems.append(
            f"OCR is unavailable for {plural(len(ocr_unavailable), 'question', 'questions')} (no "
            f"{formats.OCR_TOKENS} in the ground truth), so no evidence was attached to "
            f"{'its answer' if len(ocr_unavailable) == 1 else 'their answers'}: "
            f"question_id {describe_ids(ocr_unavailable)}"
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
        "by_answer_length_jieba": {
            name: group_summary([row for row in rows if row["answer_length_jieba"] == name])
            for name in ANSWER_LENGTHS
        },
        "evidence": evidence_state,
        "predictions_without_evidence": len(without_evidence),
        "evidence_classes": {
            "overall": class_summary(rows),
            **{name: class_summary([row for row in rows if row["lang"] == name]) for name in LANGUAGES},
        },
        "by_tau": tau_sweep(rows),
        "missing_predictions": len(missing),
        "extra_predictions": len(extra),
    }
    if attaches_ocr:
        summary["ocr"] = {"attached": ocr_counts["exact"] + ocr_counts["nearest"], **ocr_counts}
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
    answer_length_jieba, NL (None without a prediction), TC, LC, CLC (LC and CLC None when no
    prediction has evidence), evidence_from ("prediction", "ocr" or None), the 0/1 fields
    evidence_incorrect / evidence_insufficient / evidence_sufficient (None without LC) and
    ``missing`` (no prediction: all three scores 0). Summary: "overall", "by_language" (en, ch),
    "by_answer_length" and "by_answer_length_jieba" (one word, more), each with count, TC, LC,
    CLC and Delta_r; "evidence" ("all", "partial", "none") and "predictions_without_evidence";
    "evidence_classes" (overall, en, ch: count, the share of each class, "counts"); "by_tau"
    ("0.00" .. "1.00": TC, CLC); "ocr" (OCR variants: attached, exact, nearest, no_text,
    unavailable); the parameters and the counts of missing and extra predictions.
    """
    return score_records(ground_truth, predictions_as_records(predictions), variant=variant, tau=tau)


def score_file(
    gt_data: bytes | IO[bytes],
    pred_data: bytes | IO[bytes],
    *,
    variant: str = OFFICIAL,
    tau: float | None = None,
    gt_source: str = "ground truth",
    pred_source: str = "predictions",
) -> Scored:
    """Score a prediction file against an STE-VQA ground-truth file: raw JSON bytes, or files open
    for reading. An open ground-truth file is read a question at a time as it is scored, so that
    memory holds the predictions and one row per question, never the parsed documents (a full
    split, or ten, in bounded memory); the numbers, rows and problems are the same either way.

    The ground truth is read and checked by the STE-VQA format module, in either layout: a test
    file's questions carry their question_id; a training file's QA pairs are numbered in file
    order (see `formats.question_records`), and predictions name them by that number. A fault of
    the ground truth is reported before one of the predictions, and before a question that cannot
    be scored (two empty answers), whichever way the files come.
    """
    with paused_gc():
        if isinstance(gt_data, bytes | bytearray | str):
            parsed = formats.parse(gt_data, source=gt_source)
            ground_truth = [
                question
                for record in parsed.records
                for question in formats.question_records(record.payload, record.ground_truth)
            ]
            del parsed
            predictions = parse_predictions(pred_data, source=pred_source)
            return score_records(ground_truth, predictions, variant=variant, tau=tau)
        questions = stream_questions(gt_data, source=gt_source)
        try:
            by_id = {
                prediction["question_id"]: prediction
                for prediction in parse_predictions(pred_data, source=pred_source)
            }
        except FormatError:
            read_to_the_end(questions)  # the ground truth's own faults first, as from bytes
            raise
        try:
            return score_matched(questions, by_id, variant=variant, tau=tau)
        except ValueError:
            read_to_the_end(questions)
            raise


def read_to_the_end(questions: Iterator[dict[str, Any]]) -> None:
    """Read the rest of a streamed ground truth, only to raise its FormatError if it has faults."""
    for _ in questions:
        pass


def stream_questions(stream: IO[bytes], *, source: str) -> Iterator[dict[str, Any]]:
    """The questions of an STE-VQA ground-truth file open for reading, one at a time, each checked
    and in the test layout (`formats.question_records`): the records are read one by one
    (`stream_json_list`) and converted by the format module's own converters, so that every fault
    is named by record and field as `formats.parse` names it. Once a record is bad no question is
    yielded; the rest is still checked and one FormatError at the end names every fault, so a
    caller never gets a result from a faulty file.

    The layout is told by the first record that is an object (as `formats.detect_layout` does):
    records before it, which are not objects and so faults in either layout, are held until then.
    A training file's pairs are numbered as `formats.numbered_images` numbers them, counting the
    pairs of bad records too.
    """
    records = stream_json_list(stream, source=source, what="STE-VQA records")
    errors = RecordErrors()
    try:
        held: list[tuple[str, Any]] = []
        for label, raw in records:
            held.append((label, raw))
            if isinstance(raw, dict):
                break
        training = bool(held) and isinstance(held[-1][1], dict) and "annotation" in held[-1][1]
        labelled = itertools.chain(held, records)
        if training:
            converted = iter_converted(numbered(labelled), formats.numbered_image_to_catalog, errors)
        else:
            converted = iter_converted(
                labelled, formats.question_record_to_catalog, errors, id_field="question_id"
            )
        for record in converted:
            if not errors:
                yield from formats.question_records(record.payload, record.ground_truth)
    except FormatError as error:
        errors.extend(error.errors)
    if errors:
        raise FormatError(errors, source=source)


def numbered(labelled: Iterable[tuple[str, Any]]) -> Iterator[tuple[str, tuple[Any, int]]]:
    """Training records with the question id of their first pair, as `formats.numbered_images`
    labels a whole document, one record at a time."""
    next_id = 0
    for label, raw in labelled:
        yield label, (raw, next_id)
        annotation = raw.get("annotation") if isinstance(raw, dict) else None
        next_id += len(annotation) if isinstance(annotation, list) else 0


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
