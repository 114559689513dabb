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
from django.utils.translation import gettext as _

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
#: The largest answer a trial keeps, in bytes of JSON (a ten-step answer is ~400).
MAX_ANSWER_BYTES = 16 * 1024
#: Browser timings are milliseconds since the page was loaded: none is negative or over a week.
MAX_CLIENT_MS = 7 * 24 * 3600 * 1000
#: The browser's timings of a trial, each in milliseconds (performance.now()): the page's script
#: loaded, the stimulus drawn (the first animation frame after it), the first edit, the answer
#: sent, the countdown's time-out request sent.
CLIENT_TIMINGS = ("loaded_ms", "shown_ms", "first_input_ms", "submit_ms", "timeout_ms")
#: Edits to one answer: a tester typing for an hour at ten keys a second makes 36,000.
MAX_ANSWER_CHANGES = 100_000
#: The browser window's inner size in CSS pixels: a 16K screen zoomed out to 25% is 61,440 wide.
MAX_VIEWPORT_PX = 100_000
#: Device pixels per CSS pixel: 1 to 4 on today's screens, more with the browser zoomed in.
MAX_DEVICE_PIXEL_RATIO = 16


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
    """The browser's timings, edit count, viewport and focus events, checked; AnswerRefused names
    a bad field. Keys not listed here are dropped (a total the browser sent is never kept)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise AnswerRefused("client", _("expected an object of timings"))
    clean: dict[str, Any] = {}
    for key in CLIENT_TIMINGS:
        value = raw.get(key)
        if value is not None:
            clean[key] = milliseconds(value, f"client.{key}")
    changes = raw.get("answer_changes")
    if changes is not None:
        clean["answer_changes"] = whole_number(changes, "client.answer_changes", 0, MAX_ANSWER_CHANGES)
    viewport = raw.get("viewport")
    if viewport is not None:
        clean["viewport"] = clean_viewport(viewport)
    events = raw.get("events", [])
    if not isinstance(events, list) or len(events) > MAX_CLIENT_EVENTS:
        raise AnswerRefused(
            "client.events",
            _("expected a list of at most %(limit)s events") % {"limit": MAX_CLIENT_EVENTS},
        )
    clean_events: list[dict[str, Any]] = []
    for index, event in enumerate(events):
        event_type = event.get("type") if isinstance(event, dict) else None
        moment = event.get("t") if isinstance(event, dict) else None
        if event_type not in CLIENT_EVENT_TYPES:
            raise AnswerRefused(
                f"client.events[{index}].type",
                _("expected one of %(types)s") % {"types": ", ".join(CLIENT_EVENT_TYPES)},
            )
        moment = milliseconds(moment, f"client.events[{index}].t")
        if clean_events and moment < clean_events[-1]["t"]:
            raise AnswerRefused(
                f"client.events[{index}].t",
                _("events are in time order: %(moment)s comes before the previous event's %(previous)s")
                % {"moment": moment, "previous": clean_events[-1]["t"]},
            )
        clean_events.append({"type": event_type, "t": moment})
    clean["events"] = clean_events
    return clean


def clean_viewport(raw: Any) -> dict[str, Any]:
    """The browser window's inner width and height (CSS pixels) and its device pixel ratio."""
    if not isinstance(raw, dict):
        raise AnswerRefused("client.viewport", _("expected an object {width, height, dpr}"))
    clean: dict[str, Any] = {
        side: whole_number(raw.get(side), f"client.viewport.{side}", 1, MAX_VIEWPORT_PX)
        for side in ("width", "height")
    }
    dpr = raw.get("dpr")
    if isinstance(dpr, bool) or not isinstance(dpr, (int, float)) or not 0 < dpr <= MAX_DEVICE_PIXEL_RATIO:
        raise AnswerRefused(
            "client.viewport.dpr",
            _("expected device pixels per CSS pixel, a number over 0 and at most %(limit)s, got %(value)r")
            % {"limit": MAX_DEVICE_PIXEL_RATIO, "value": dpr},
        )
    clean["dpr"] = float(dpr)
    return clean


def whole_number(value: Any, field: str, low: int, high: int) -> int:
    """A count or a size in pixels, checked: an integer from `low` to `high` (AnswerRefused otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise AnswerRefused(
            field,
            _("expected a whole number from %(low)s to %(high)s, got %(value)r")
            % {"low": low, "high": f"{high:,}", "value": value},
        )
    return value


def milliseconds(value: Any, field: str) -> float:
    """A browser timing, checked: milliseconds from 0 to MAX_CLIENT_MS (AnswerRefused otherwise)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise AnswerRefused(field, _("expected milliseconds (a number), got %(value)r") % {"value": value})
    if not 0 <= value <= MAX_CLIENT_MS:
        raise AnswerRefused(
            field,
            _("expected milliseconds from 0 to %(limit)s, got %(value)r")
            % {"limit": MAX_CLIENT_MS, "value": value},
        )
    return round(float(value), 1)


def focus_losses(client: dict[str, Any]) -> int:
    return sum(1 for event in client.get("events", ()) if event["type"] in ("blur", "hidden"))


def hidden_ms(client: dict[str, Any]) -> float:
    """Milliseconds the page was hidden, from the checked events (in time order): each "hidden"
    to the next "visible". A page still hidden at the end counts until the answer or the time-out
    was sent (the later of submit_ms and timeout_ms), or until the last event if neither is known.
    The browser's own total, if it sent one, is never used."""
    total = 0.0
    since: float | None = None
    last = 0.0
    for event in client.get("events", ()):
        last = event["t"]
        if event["type"] == "hidden" and since is None:
            since = event["t"]
        elif event["type"] == "visible" and since is not None:
            total += event["t"] - since
            since = None
    if since is not None:
        ends = [client[key] for key in ("submit_ms", "timeout_ms") if client.get(key) is not None]
        total += max(0.0, max(ends, default=last) - since)
    return round(total, 1)


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
        raise PermissionDenied(_("this is another tester's trial"))
    client = clean_client(raw_client)
    if trial.status != Trial.Status.SERVED:
        raise TrialClosed(
            _("trial %(number)s is already %(status)s")
            % {"number": trial.position + 1, "status": trial.get_status_display().lower()}
        )
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
            raise AnswerRefused(
                "answer", _("an answer is at most %(limit)s bytes") % {"limit": f"{MAX_ANSWER_BYTES:,}"}
            )
        trial.status = Trial.Status.ANSWERED
        trial.answered_at = now
        trial.answer = answer
        trial.client = client
        trial.focus_losses = focus_losses(client)
        trial.hidden_ms = hidden_ms(client)
        trial.result = score_one(trial, answer)
        trial.save(
            update_fields=["status", "answered_at", "answer", "client", "focus_losses", "hidden_ms", "result"]
        )
        store_prediction(trial)
    return trial


def request_timeout(trial_pk: int, tester, raw_client: Any) -> Trial:
    """The browser's countdown reached zero: close the trial if the server's clock agrees."""
    with transaction.atomic():
        trial, client = lock_open_trial(trial_pk, tester, raw_client)
        if trial.deadline is None or timezone.now() < trial.deadline - EARLY_TIMEOUT:
            raise TrialClosed(_("this trial's time is not up on the server's clock"))
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
        trial.hidden_ms = hidden_ms(client)
        fields += ["client", "focus_losses", "hidden_ms"]
    trial.save(update_fields=fields)
    store_prediction(trial)
