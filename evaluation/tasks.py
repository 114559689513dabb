"""Background work of the evaluation app: the report's table of every pair of rows, and scoring
large uploads.

Comparing every pair of rows resamples each pair's units a thousand times: seconds on a demo
report, a minute and more on 60,000 items with five rows (perf/results/compare_rows.md). The report
page therefore never computes it in the request: it shows the table kept for the submissions'
current versions, or asks a worker for it and shows it when it is there.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.core.cache import cache

logger = logging.getLogger(__name__)

#: While one computation of a dataset's table is queued or running, no second one is queued; the
#: flag expires in case a worker dies without clearing it.
SCHEDULED_TIMEOUT_S = 15 * 60


def scheduled_key(dataset_pk: int, key: str) -> str:
    return f"evaluation:pairwise-scheduled:{dataset_pk}:{key}"


def schedule_pairwise(dataset) -> bool:
    """Queue the computation of the dataset's table of every pair for its submissions' current
    versions, unless one is already waiting or running; True when this call queued it."""
    from evaluation.selectors import pairwise_key

    key = pairwise_key(dataset)
    if not cache.add(scheduled_key(dataset.pk, key), 1, timeout=SCHEDULED_TIMEOUT_S):
        return False
    compute_pairwise.delay(dataset.pk, key)
    return True


def current_pairwise(dataset) -> dict | None:
    """The dataset's table of every pair for its submissions as they are now, or None after asking
    a worker for it (a worker that runs tasks in-process has computed it by the time this returns)."""
    from evaluation.selectors import cached_pairwise

    result = cached_pairwise(dataset)
    if result is None:
        schedule_pairwise(dataset)
        result = cached_pairwise(dataset)
    return result


# Idempotent: acknowledged only once done, handed to another worker when the one running it dies.
@shared_task(acks_late=True, reject_on_worker_lost=True)
def compute_pairwise(dataset_pk: int, key: str) -> None:
    from benchmarks.models import Dataset
    from evaluation.selectors import pairwise_report, report_table

    try:
        dataset = Dataset.objects.filter(pk=dataset_pk).first()
        if dataset is not None:
            pairwise_report(dataset)
            # The report's own cells, kept under the same versions: the page that polls for the
            # table then reads no per-unit row either.
            report_table(dataset)
    except Exception:
        # pairwise_report keeps the error for the page to show; retrying would fail the same way.
        logger.exception("the table of every pair of dataset %s could not be computed", dataset_pk)
    finally:
        cache.delete(scheduled_key(dataset_pk, key))


def comparison_scheduled_key(dataset_pk: int, *choices) -> str:
    from evaluation.selectors import hashlib_of

    return f"evaluation:compare-scheduled:{dataset_pk}:{hashlib_of(choices)}"


def current_comparison(dataset, label_a: str, label_b: str, *, metric=None, by=None) -> dict | None:
    """Two report rows compared, as kept for the submissions' current versions, or None after
    asking a worker for it (one that runs tasks in-process has computed it by the time this
    returns). RowNotFound or ComparisonInputError when the rows cannot be compared."""
    from evaluation.selectors import compare_report_rows

    choices = (label_a, label_b, metric, by)
    result = compare_report_rows(dataset, label_a, label_b, metric=metric, by=by, compute=False)
    if result is None and cache.add(
        comparison_scheduled_key(dataset.pk, *choices), 1, timeout=SCHEDULED_TIMEOUT_S
    ):
        compute_comparison.delay(dataset.pk, *choices)
        result = compare_report_rows(dataset, label_a, label_b, metric=metric, by=by, compute=False)
    return result


@shared_task(acks_late=True, reject_on_worker_lost=True)
def compute_comparison(dataset_pk: int, label_a: str, label_b: str, metric, by) -> None:
    """Compare two report rows and keep the result (or why they cannot be compared) for the page."""
    from benchmarks.models import Dataset
    from evaluation.comparison import ComparisonInputError
    from evaluation.selectors import RowNotFound, compare_report_rows

    try:
        dataset = Dataset.objects.filter(pk=dataset_pk).first()
        if dataset is not None:
            compare_report_rows(dataset, label_a, label_b, metric=metric, by=by)
    except (RowNotFound, ComparisonInputError):
        pass  # kept as the comparison's error, which the page shows
    except Exception:
        logger.exception("rows %r and %r of dataset %s could not be compared", label_a, label_b, dataset_pk)
    finally:
        cache.delete(comparison_scheduled_key(dataset_pk, label_a, label_b, metric, by))


# Acknowledged only once done: a job whose worker dies is declared lost by its heartbeat, and the
# second delivery finds it no longer pending and does nothing.
@shared_task(name="evaluation.score_upload", acks_late=True, reject_on_worker_lost=True)
def score_upload(job_id: int) -> str:
    """Score an uploaded prediction file queued by the report page; the job row records the outcome."""
    from evaluation.models import ScoringJob
    from evaluation.services import run_scoring_job

    job = ScoringJob.objects.filter(pk=job_id).first()
    return run_scoring_job(job).status if job is not None else "gone"
