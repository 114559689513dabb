"""What the browser reports of a trial, checked before it is kept: its timings (milliseconds since
the page was loaded), the window's size and the focus events, from which the time the page was
hidden and the focus losses are counted.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from humantest.trials import AnswerRefused

CLIENT_EVENT_TYPES = ("blur", "focus", "hidden", "visible")
MAX_CLIENT_EVENTS = 2000
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
