"""Background work of the human-test app: refreshing a tester's and a plan's scores and agreement
(queued by humantest.rescoring)."""

from __future__ import annotations

from celery import shared_task
from django.core.cache import cache

from humantest.rescoring import pooled_key, session_key


# Both summaries are idempotent: acknowledged only once done, and handed to another worker when
# the one running them dies, so a killed worker leaves no summary stale.
@shared_task(acks_late=True, reject_on_worker_lost=True)
def rescore_session(session_pk: int) -> None:
    """Re-score the tester's own submission (their finished trials only: cheap)."""
    from humantest.models import TestSession
    from humantest.scoring import rescore_session as rescore

    cache.delete(session_key(session_pk))  # an answer arriving while this runs schedules the next run
    session = TestSession.objects.select_related("plan__dataset", "submission").filter(pk=session_pk).first()
    if session is not None:
        rescore(session)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def rescore_pooled(plan_pk: int) -> None:
    """Re-score the plan's pooled row (the report's human row) from every finished trial."""
    from humantest.models import TestPlan
    from humantest.scoring import refresh_plan_agreement, rescore_plan

    # Cleared first: an answer arriving while this runs schedules the next run.
    cache.delete(pooled_key(plan_pk))
    plan = TestPlan.objects.select_related("dataset").filter(pk=plan_pk).first()
    if plan is not None:
        rescore_plan(plan)
        refresh_plan_agreement(plan)
