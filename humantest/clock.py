"""The trial clock: serving a trial starts it, an answer or a time-out ends it, the server decides.

A trial's start (`served_at`) and deadline are written once, by a conditional UPDATE, the first
time its page is sent; reloading finds them set and sends the same trial with the same deadline.
An answer is accepted only while the trial is open (status "served") and before its deadline
plus a small network grace; a second answer to the same trial, or one after it was closed as
timed out, is refused (stale writes are refused, never merged).
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

import orjson
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from humantest.models import TestSession, Trial
from humantest.scoring import score_one, store_prediction, unit_for
from humantest.sessions import TrialClosed, finish_session, open_trials
from humantest.trials import AnswerRefused, trial_for

#: Answers that arrive this long after the deadline still count (the request was in flight).
NETWORK_GRACE = timedelta(seconds=2)
#: A browser may ask to close a trial as timed out this early (its clock may run a little fast).
EARLY_TIMEOUT = timedelta(seconds=1)
CLIENT_EVENT_TYPES = ("blur", "focus", "hidden", "visible")
MAX_CLIENT_EVENTS = 2000
#: The largest answer a trial keeps, in bytes of JSON (a TRANCE answer of 10 steps is ~400).
MAX_ANSWER_BYTES = 16 * 1024
#: Browser timings are milliseconds since the page was loaded: none is negative or over a week.
MAX_CLIENT_MS = 7 * 24 * 3600 * 1000


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


def clean_client(raw: Any) -> dict[str, Any]:
    """The browser's timings and focus events, checked; AnswerRefused names a bad field."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise AnswerRefused("client", "expected an object of timings")
    clean: dict[str, Any] = {}
    for key in ("shown_ms", "first_input_ms", "submit_ms"):
        value = raw.get(key)
        if value is not None:
            clean[key] = milliseconds(value, f"client.{key}")
    events = raw.get("events", [])
    if not isinstance(events, list) or len(events) > MAX_CLIENT_EVENTS:
        raise AnswerRefused("client.events", f"expected a list of at most {MAX_CLIENT_EVENTS} events")
    clean_events = []
    for index, event in enumerate(events):
        event_type = event.get("type") if isinstance(event, dict) else None
        moment = event.get("t") if isinstance(event, dict) else None
        if event_type not in CLIENT_EVENT_TYPES:
            raise AnswerRefused(
                f"client.events[{index}].type", f"expected one of {', '.join(CLIENT_EVENT_TYPES)}"
            )
        clean_events.append({"type": event_type, "t": milliseconds(moment, f"client.events[{index}].t")})
    clean["events"] = clean_events
    return clean


def milliseconds(value: Any, field: str) -> float:
    """A browser timing, checked: milliseconds from 0 to MAX_CLIENT_MS (AnswerRefused otherwise)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise AnswerRefused(field, f"expected milliseconds (a number), got {value!r}")
    if not 0 <= value <= MAX_CLIENT_MS:
        raise AnswerRefused(field, f"expected milliseconds from 0 to {MAX_CLIENT_MS}, got {value!r}")
    return round(float(value), 1)


def focus_losses(client: dict[str, Any]) -> int:
    return sum(1 for event in client.get("events", ()) if event["type"] in ("blur", "hidden"))


def lock_open_trial(trial_pk: int, tester, raw_client: Any) -> tuple[Trial, dict[str, Any]]:
    """The tester's open trial, locked until the transaction ends, and the checked client data.

    Only the trial's row is locked (PostgreSQL cannot lock the nullable side of the outer join to
    the item's scene). PermissionDenied for another tester's trial, TrialClosed for a closed one.
    """
    trial = (
        Trial.objects.select_for_update(of=("self",))
        .select_related("session__plan", "session__submission", "item__dataset", "item__scene")
        .get(pk=trial_pk)
    )
    if trial.session.tester_id != tester.pk:
        raise PermissionDenied("this is another tester's trial")
    client = clean_client(raw_client)
    if trial.status != Trial.Status.SERVED:
        raise TrialClosed(f"trial {trial.position + 1} is already {trial.get_status_display().lower()}")
    return trial, client


def record_answer(trial_pk: int, tester, raw_answer: Any, raw_client: Any) -> Trial:
    """Store and score the tester's answer to an open trial; TrialClosed if it is not open.

    PermissionDenied when the trial is another tester's; Trial.DoesNotExist when there is none.

    AnswerRefused (bad answer or client data) changes nothing. An answer that arrives after the
    deadline (plus NETWORK_GRACE) closes the trial as timed out instead.
    """
    with transaction.atomic():
        trial, client = lock_open_trial(trial_pk, tester, raw_client)
        now = timezone.now()
        if trial.deadline is not None and now > trial.deadline + NETWORK_GRACE:
            close_timed_out(trial, client={**client, "late_answer": True})
            return trial
        answer = trial_for(trial.item.dataset.benchmark).read_answer(unit_for(trial), raw_answer)
        if len(orjson.dumps(answer)) > MAX_ANSWER_BYTES:
            raise AnswerRefused("answer", f"an answer is at most {MAX_ANSWER_BYTES:,} bytes")
        trial.status = Trial.Status.ANSWERED
        trial.answered_at = now
        trial.answer = answer
        trial.client = client
        trial.focus_losses = focus_losses(client)
        trial.result = score_one(trial, answer)
        trial.save(update_fields=["status", "answered_at", "answer", "client", "focus_losses", "result"])
        store_prediction(trial)
    return trial


def request_timeout(trial_pk: int, tester, raw_client: Any) -> Trial:
    """The browser's countdown reached zero: close the trial if the server's clock agrees."""
    with transaction.atomic():
        trial, client = lock_open_trial(trial_pk, tester, raw_client)
        if trial.deadline is None or timezone.now() < trial.deadline - EARLY_TIMEOUT:
            raise TrialClosed("this trial's time is not up on the server's clock")
        close_timed_out(trial, client=client)
    return trial


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
        fields += ["client", "focus_losses"]
    trial.save(update_fields=fields)
    store_prediction(trial)
