"""When a tester's own row and a plan's pooled row are scored again: after an answer, at most once
per few seconds each (the tasks in humantest.tasks do it; they are queued here by name, at once:
the callers run after their answer's transaction committed, or on a page that only reads)."""

from __future__ import annotations

from django.core.cache import cache

from jobs import services as jobs

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
        jobs.enqueue(
            "humantest.tasks.rescore_session", session_pk, countdown=SESSION_DELAY_S, at_commit=False
        )


def schedule_pooled(plan_pk: int) -> None:
    """Queue one re-scoring of the plan's pooled row, unless one is already waiting."""
    if cache.add(pooled_key(plan_pk), 1, timeout=POOLED_DELAY_S * 10):
        jobs.enqueue("humantest.tasks.rescore_pooled", plan_pk, countdown=POOLED_DELAY_S, at_commit=False)
