"""Reads of the evaluation engine: submissions a user may see, and a dataset's report table."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q, QuerySet

from benchmarks.models import Dataset
from evaluation.models import Prediction, Submission
from evaluation.reports import ScoredSubmission, Table, build_table


def submissions_for(user: Any) -> QuerySet[Submission]:
    if user.has_perm("evaluation.view_submission"):
        return Submission.objects.select_related("dataset")
    return Submission.objects.none()


def scored_submissions(dataset: Dataset) -> list[Submission]:
    """Scored submissions, each with `answered`: how many items it gave an answer for."""
    answered = Count("predictions", filter=Q(predictions__answer__isnull=False))
    submissions = dataset.submissions.filter(scored_at__isnull=False).annotate(answered=answered)
    return list(submissions.order_by("kind", "name", "setting"))


def report_table(dataset: Dataset) -> Table:
    """The dataset's side-by-side table, with intervals from the stored per-item rows."""
    submissions = scored_submissions(dataset)
    rows_by_submission: dict[int, list[dict]] = {submission.pk: [] for submission in submissions}
    scores = Prediction.objects.filter(submission__in=submissions).values_list("submission_id", "score")
    for submission_id, score in scores.iterator(chunk_size=5000):
        rows_by_submission[submission_id].append(score)
    return build_table(
        dataset.benchmark,
        [
            ScoredSubmission(
                kind=submission.kind,
                name=submission.name,
                setting=submission.setting,
                summary=submission.summary,
                item_rows=rows_by_submission[submission.pk],
            )
            for submission in submissions
        ],
    )
