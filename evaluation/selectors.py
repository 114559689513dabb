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
    """Scored submissions, each with `answered`: how many items it gave an answer for.

    A tester's own submission is left out: the report's human row is the test plan's pooled
    submission, which answers through its testers' predictions (see `prediction_rows`).
    """
    answered = Count("predictions", filter=Q(predictions__answer__isnull=False))
    submissions = (
        dataset.submissions.filter(scored_at__isnull=False, test_session__isnull=True)
        .annotate(answered=answered)
        .order_by("kind", "name", "setting")
    )
    submissions = list(submissions)
    for submission in submissions:
        members = submission.parameters.get("pooled_from") or []
        if members:
            submission.answered = Prediction.objects.filter(
                submission__in=members, answer__isnull=False
            ).count()
    return submissions


def prediction_rows(submissions: list[Submission]) -> dict[int, list[dict]]:
    """Per-item score rows of each submission; a pooled one gets its member submissions' rows."""
    owners: dict[int, list[int]] = {}
    for submission in submissions:
        for member in submission.parameters.get("pooled_from") or [submission.pk]:
            owners.setdefault(member, []).append(submission.pk)
    rows: dict[int, list[dict]] = {submission.pk: [] for submission in submissions}
    scores = Prediction.objects.filter(submission__in=list(owners)).values_list("submission_id", "score")
    for submission_id, score in scores.iterator(chunk_size=5000):
        for owner in owners[submission_id]:
            rows[owner].append(score)
    return rows


def report_table(dataset: Dataset) -> Table:
    """The dataset's side-by-side table, with intervals from the stored per-item rows."""
    submissions = scored_submissions(dataset)
    rows_by_submission = prediction_rows(submissions)
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
