"""Background work of the human-test app: refreshing a tester's and a plan's scores."""

from __future__ import annotations

from celery import shared_task


@shared_task
def summarize(plan_pk: int, session_pk: int) -> None:
    """Re-score the tester's submission and the plan's pooled human row after an answer."""
    from humantest.models import TestPlan, TestSession
    from humantest.services import summarize_plan, summarize_session

    session = TestSession.objects.select_related("plan__dataset", "submission").filter(pk=session_pk).first()
    if session is not None:
        summarize_session(session)
    plan = TestPlan.objects.select_related("dataset").filter(pk=plan_pk).first()
    if plan is not None:
        summarize_plan(plan)
