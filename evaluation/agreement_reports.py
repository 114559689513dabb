"""Agreement between people on a dataset: the statistics of evaluation/agreement.py over stored answers.

Raters are the dataset's human and annotator submissions (a tester's session, an annotator's
second opinion); each gives at most one answer per item. What is compared depends on the
benchmark: the answer as a category everywhere (percent agreement, Krippendorff's alpha,
nominal, and Fleiss' kappa when every item has the same number of raters), plus, for STE-VQA,
answer-text similarity and the IoU of the evidence quadrilaterals.
"""

from __future__ import annotations

import json
from typing import Any

from django.db.models import QuerySet

from benchmarks.models import Dataset
from evaluation import agreement
from evaluation.models import Prediction, Submission

HUMAN_KINDS = (Submission.Kind.HUMAN, Submission.Kind.ANNOTATOR)


def answer_label(benchmark: str, answer: Any) -> str:
    """The part of an answer people agree or disagree on, as one comparable category."""
    if benchmark == "stevqa":
        return str(answer.get("answer", "")).strip().lower()
    if benchmark == "cric":
        return json.dumps([answer.get("answer"), answer.get("object")])
    if benchmark == "clevrref":
        # People click objects (compare the sets); a box is what a model gives.
        return json.dumps(sorted(answer["objects"]) if "objects" in answer else answer.get("box"))
    return json.dumps([[step.get("obj_idx"), step.get("attr"), step.get("val")] for step in answer or []])


def question_key(external_id: str, answer: Any) -> str:
    """What was rated: the item, and which of its questions when it holds several (STE-VQA images)."""
    if isinstance(answer, dict) and "question_index" in answer:
        return f"{external_id}#{answer['question_index']}"
    return external_id


def human_raters(dataset: Dataset) -> QuerySet[Submission]:
    """The dataset's human and annotator submissions that hold answers of their own.

    A human test's pooled submission is left out: it holds no answers of its own, only its
    testers', who are raters themselves.
    """
    return dataset.submissions.filter(kind__in=HUMAN_KINDS, pooled_plan__isnull=True)


def ratings_of(
    dataset: Dataset, raters: QuerySet[Submission] | None = None
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """question -> {rater: answer}, over `raters` (by default every human and annotator submission)."""
    raters = human_raters(dataset) if raters is None else raters
    submissions = {s.pk: f"{s.name} #{s.pk}" for s in raters}
    ratings: dict[str, dict[str, Any]] = {}
    rows = Prediction.objects.filter(submission_id__in=submissions, answer__isnull=False).values_list(
        "submission_id", "item__external_id", "answer"
    )
    for submission_id, external_id, answer in rows.iterator(chunk_size=5000):
        ratings.setdefault(question_key(external_id, answer), {})[submissions[submission_id]] = answer
    return ratings, sorted(submissions.values())


def dataset_agreement(
    dataset: Dataset, *, raters: QuerySet[Submission] | None = None, resamples: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """Every agreement statistic that applies to the dataset's benchmark, with bootstrap intervals.

    `raters`: the submissions compared (default: every human and annotator submission).
    """
    ratings, raters = ratings_of(dataset, raters)
    labels = {
        item: {rater: answer_label(dataset.benchmark, a) for rater, a in by.items()}
        for item, by in ratings.items()
    }
    options = {"resamples": resamples, "seed": seed}
    results: list[agreement.Agreement] = [
        agreement.percent_agreement(labels, **options),
        agreement.krippendorff_alpha(labels, level="nominal", **options),
    ]
    counts = {len(by_rater) for by_rater in labels.values() if len(by_rater) > 1}
    if len(counts) == 1:
        # Over the items people rated together; an item only one person rated says nothing.
        results.append(agreement.fleiss_kappa({item: by for item, by in labels.items() if len(by) > 1}))
    if dataset.benchmark == "stevqa":
        texts = {item: {r: str(a.get("answer", "")) for r, a in by.items()} for item, by in ratings.items()}
        results.append(agreement.pairwise_text_similarity(texts, normalise=True, **options))
        quads = {
            item: {r: quad_points(a.get("evidence")) for r, a in by.items()} for item, by in ratings.items()
        }
        results.append(agreement.pairwise_polygon_iou(quads, **options))
    return {
        "dataset": {"id": dataset.pk, "benchmark": dataset.benchmark, "name": dataset.name},
        "raters": raters,
        "items_rated": len(ratings),
        "statistics": [result.to_dict() for result in results],
        "text": [str(result) for result in results],
    }


def quad_points(evidence: Any) -> list[tuple[float, float]] | None:
    if not evidence or len(evidence) != 8:
        return None
    values = [float(value) for value in evidence]
    return [(values[index], values[index + 1]) for index in range(0, 8, 2)]
