"""Background work of the human-test app: refreshing a tester's and a plan's scores and agreement."""

from __future__ import annotations

from celery import shared_task
from django.core.cache import cache

#: The pooled row is re-scored at most once per this many seconds per plan: it scores every
#: finished trial of the plan, so doing it after every answer would cost the square of the plan.
POOLED_DELAY_S = 15


#: A tester's own row is re-scored at most once per this many seconds: under load, one task per
#: answer flooded the queue (2,569 waiting after 10 minutes of 40 testers, perf/results/mixed_load.md).
SESSION_DELAY_S = 5


def pooled_key(plan_pk: int) -> str:
    return f"humantest:pooled-scheduled:{plan_pk}"


def session_key(session_pk: int) -> str:
    return f"humantest:session-scheduled:{session_pk}"


def schedule_session(session_pk: int) -> None:
    """Queue one re-scoring of the tester's own row, unless one is already waiting."""
    if cache.add(session_key(session_pk), 1, timeout=SESSION_DELAY_S * 10):
        summarize_session.apply_async((session_pk,), countdown=SESSION_DELAY_S)


def schedule_pooled(plan_pk: int) -> None:
    """Queue one re-scoring of the plan's pooled row, unless one is already waiting."""
    if cache.add(pooled_key(plan_pk), 1, timeout=POOLED_DELAY_S * 10):
        summarize_pooled.apply_async((plan_pk,), countdown=POOLED_DELAY_S)


# Both summaries are idempotent: acknowledged only once done, and handed to another worker when
# the one running them dies, so a killed worker leaves no summary stale.
@shared_task(acks_late=True, reject_on_worker_lost=True)
def summarize_session(session_pk: int) -> None:
    """Re-score the tester's own submission (their finished trials only: cheap)."""
    from humantest.models import TestSession
    from humantest.scoring import summarize_session as summarize

    cache.delete(session_key(session_pk))  # an answer arriving while this runs schedules the next run
    session = TestSession.objects.select_related("plan__dataset", "submission").filter(pk=session_pk).first()
    if session is not None:
        summarize(session)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def summarize_pooled(plan_pk: int) -> None:
    """Re-score the plan's pooled row (the report's human row) from every finished trial."""
    from humantest.models import TestPlan
    from humantest.scoring import refresh_plan_agreement, summarize_plan

    # Cleared first: an answer arriving while this runs schedules the next run.
    cache.delete(pooled_key(plan_pk))
    plan = TestPlan.objects.select_related("dataset").filter(pk=plan_pk).first()
    if plan is not None:
        summarize_plan(plan)
        refresh_plan_agreement(plan)
