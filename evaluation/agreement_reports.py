"""Agreement between people on a dataset: the statistics of evaluation/agreement.py over stored answers.

Raters are the dataset's human and annotator submissions that hold answers of their own (a
tester's session, an annotator's second opinion); each gives at most one answer per scoring
unit. What is compared is the benchmark's declaration: every answer as a category
(`spec.answer_label`: percent agreement, Krippendorff's alpha, nominal, and Fleiss' kappa over
the units every rater of them answered), plus free text by edit-distance similarity
(`spec.answer_text`) and regions by polygon IoU (`spec.answer_region`) where answers hold them.

These are agreement statistics, not the benchmark's metric: text similarity is 1 - normalised
Levenshtein after case folding, and region IoU is the true polygon IoU, whatever the metric's
own rules (docs/statistics.md says which number uses which).
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from benchmarks.models import Dataset
from evaluation import agreement
from evaluation.models import Prediction, Submission

HUMAN_PRODUCERS = (Submission.Producer.HUMAN, Submission.Producer.ANNOTATOR)
#: How the page and the command name each statistic.
NAMES = {
    "percent_agreement": "percent agreement",
    "krippendorff_alpha_nominal": "Krippendorff's alpha (nominal)",
    "fleiss_kappa": "Fleiss' kappa",
    "pairwise_text_similarity": "answer text similarity (edit distance, case-folded; not the metric's score)",
    "pairwise_polygon_iou": "region IoU (true polygon union; not the metric's score)",
}


def human_raters(dataset: Dataset) -> QuerySet[Submission]:
    """The dataset's human and annotator submissions that hold answers of their own.

    A pool (a test plan's Human row) is left out: it holds no answers of its own, only its
    members', who are raters themselves.
    """
    return dataset.submissions.filter(producer__in=HUMAN_PRODUCERS).exclude(
        origin=Submission.Origin.TEST_PLAN
    )


def ratings_of(
    dataset: Dataset, raters: QuerySet[Submission] | None = None
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """unit id -> {rater: answer}, over `raters` (by default every human and annotator submission).

    What was rated is the scoring unit: an item, or one question of an image that holds several.
    """
    spec = dataset.spec
    raters = human_raters(dataset) if raters is None else raters
    submissions = {s.pk: f"{s.name} #{s.pk}" for s in raters}
    ratings: dict[str, dict[str, Any]] = {}
    rows = Prediction.objects.filter(submission_id__in=submissions, answer__isnull=False).values_list(
        "submission_id", "item__external_id", "item__payload", "part", "answer"
    )
    for submission_id, external_id, payload, part, answer in rows.iterator(chunk_size=5000):
        ratings.setdefault(spec.unit_id(external_id, payload, part), {})[submissions[submission_id]] = answer
    return ratings, sorted(submissions.values())


def dataset_agreement(
    dataset: Dataset, *, raters: QuerySet[Submission] | None = None, resamples: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """Every agreement statistic that applies to the dataset's answers, with bootstrap intervals.

    `raters`: the submissions compared (default: every human and annotator submission).
    """
    spec = dataset.spec
    ratings, raters = ratings_of(dataset, raters)
    labels = {unit: {rater: spec.answer_label(a) for rater, a in by.items()} for unit, by in ratings.items()}
    options = {"resamples": resamples, "seed": seed}
    results: list[agreement.Agreement] = [
        agreement.percent_agreement(labels, **options),
        agreement.krippendorff_alpha(labels, level="nominal", **options),
    ]
    counts = {len(by_rater) for by_rater in labels.values() if len(by_rater) > 1}
    if len(counts) == 1:
        # Over the units people rated together; a unit only one person rated says nothing.
        results.append(agreement.fleiss_kappa({unit: by for unit, by in labels.items() if len(by) > 1}))
    texts = {unit: {r: spec.answer_text(a) for r, a in by.items()} for unit, by in ratings.items()}
    if any(text is not None for by in texts.values() for text in by.values()):
        results.append(agreement.pairwise_text_similarity(texts, normalise=True, **options))
    regions = {unit: {r: spec.answer_region(a) for r, a in by.items()} for unit, by in ratings.items()}
    if any(region is not None for by in regions.values() for region in by.values()):
        results.append(agreement.pairwise_polygon_iou(regions, **options))
    return {
        "dataset": {"id": dataset.pk, "benchmark": dataset.benchmark, "name": dataset.name},
        "raters": raters,
        "items_rated": len(ratings),
        "statistics": [
            {**result.to_dict(), "name": NAMES.get(result.statistic, result.statistic)} for result in results
        ],
        "text": [str(result) for result in results],
    }
