"""The trial clock: serving a trial starts it, the deadline closes it, the server decides.

A trial's start (`served_at`) and deadline are written once, by a conditional UPDATE, the first
time its page is sent; reloading finds them set and sends the same trial with the same deadline.
A trial whose deadline has passed is closed as timed out when the next one is served. Answers
and the browser's time-out requests are written by `humantest.answers`.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from django.utils import timezone

from humantest.browser import focus_losses, hidden_ms
from humantest.models import TestSession, Trial
from humantest.scoring import score_one, store_prediction
from humantest.sessions import finish_session, open_trials

#: Answers that arrive this long after the deadline still count (the request was in flight).
NETWORK_GRACE = timedelta(seconds=2)
#: A browser may ask to close a trial as timed out this early (its clock may run a little fast).
EARLY_TIMEOUT = timedelta(seconds=1)


def serve_current_trial(session: TestSession) -> tuple[Trial | None, list[Trial]]:
    """The trial to show now, its clock started (served) if it was not yet; and trials that expired.

    Trials whose deadline passed while the tester was away are closed as timed out on the way.
    Returns (None, expired) when the round or the test has no open trial left; a finished test
    marks the session finished.
    """
    expired: list[Trial] = []
    if session.status not in (TestSession.Status.PRACTICE, TestSession.Status.RUNNING):
        return None, expired
    while True:
        trial = open_trials(session).select_related("item__dataset", "item__scene").first()
        if trial is None:
            if session.status == TestSession.Status.RUNNING:
                finish_session(session)
            return None, expired
        now = timezone.now()
        if trial.status == Trial.Status.WAITING:
            limit = session.plan.time_limit_s
            deadline = now + timedelta(seconds=limit) if limit else None
            updated = Trial.objects.filter(pk=trial.pk, status=Trial.Status.WAITING).update(
                status=Trial.Status.SERVED, served_at=now, deadline=deadline
            )
            if updated:
                trial.status, trial.served_at, trial.deadline = Trial.Status.SERVED, now, deadline
            else:  # another request served it a moment ago: its times are the ones that count
                trial.refresh_from_db(fields=["status", "served_at", "deadline"])
        if trial.deadline is not None and now > trial.deadline + NETWORK_GRACE:
            close_timed_out(trial)
            expired.append(trial)
            continue
        return trial, expired


def remaining_ms(trial: Trial) -> int | None:
    if trial.deadline is None:
        return None
    return max(0, math.floor((trial.deadline - timezone.now()).total_seconds() * 1000))


def close_timed_out(trial: Trial, client: dict[str, Any] | None = None) -> None:
    updated = Trial.objects.filter(pk=trial.pk, status=Trial.Status.SERVED).update(
        status=Trial.Status.TIMED_OUT
    )
    if not updated:
        trial.refresh_from_db()
        return
    trial.status = Trial.Status.TIMED_OUT
    trial.result = score_one(trial, None)
    fields = ["result"]
    if client is not None:
        trial.client = client
        trial.focus_losses = focus_losses(client)
        trial.hidden_ms = hidden_ms(client)
        fields += ["client", "focus_losses", "hidden_ms"]
    trial.save(update_fields=fields)
    store_prediction(trial)
