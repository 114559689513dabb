"""The work queue's JSON contract, one for every workflow on it (STE-VQA authoring, review, the
validation checks): reading a body through the input gate, its version and a skip's reason; the
answers to a refusal (400 naming each field), to a queue error (403 not a member, 409 stale or a
lost lease) and to a save or a heartbeat (the lease's end, as a moment and as seconds left).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import JsonResponse
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts import inputs
from annotation import queue, services
from annotation.models import Assignment


def read_json(request, *, max_bytes: int = inputs.MAX_BODY_BYTES) -> dict[str, Any]:
    """The request's JSON object, through the input gate (accounts/inputs.py); Refused names the fault."""
    try:
        return inputs.read_json(request.body, max_bytes=max_bytes)
    except inputs.InputRefused as error:
        raise services.Refused([services.problem(None, error.field, "input", error.message)]) from None


def read_version(body: dict[str, Any]) -> int:
    version = body.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise services.Refused(
            [services.problem(None, "version", "version", _("say which version you edited"))]
        )
    return version


def read_reason(body: dict[str, Any], missing: str) -> str:
    """A skip's reason: text of at most REASON_LIMIT characters, not empty."""
    reason = body.get("reason")
    if reason is None or (isinstance(reason, str) and not reason.strip()):
        raise services.Refused([services.problem(None, "reason", "reason", missing)])
    try:
        return inputs.text(reason, "reason", max_length=services.REASON_LIMIT, required=True)
    except inputs.InputRefused as error:
        raise services.Refused([services.problem(None, "reason", "reason", error.message)]) from None


def refused(error: services.Refused) -> JsonResponse:
    return JsonResponse({"errors": error.problems}, status=400)


def queue_error(error: queue.QueueError) -> JsonResponse:
    if isinstance(error, queue.NotMember):
        return JsonResponse(
            {
                "error": "not_member",
                "message": _(
                    "You are no longer on this project's team: nothing was saved. "
                    "Your last saved draft is kept on the server."
                ),
            },
            status=403,
        )
    if isinstance(error, queue.Stale):
        return JsonResponse(
            {
                "error": "stale",
                "message": _(
                    "This was changed elsewhere since you opened it (version %(version)s is current)."
                )
                % {"version": error.version},
                "server": error.server,
            },
            status=409,
        )
    return JsonResponse(
        {
            "error": "lease_lost",
            "message": _(
                "Your hold on this task ran out and it went back to the queue. "
                "Your work is kept in this browser; take the next task."
            ),
        },
        status=409,
    )


# --- annotators ---------------------------------------------------------------------------------


def lease_answer(until: datetime, **fields: Any) -> JsonResponse:
    """A held lease's end, as the server's moment (ISO 8601) and as seconds from now (which a
    browser with a wrong clock can use), with `fields` (a saved draft's new version)."""
    return JsonResponse(
        fields
        | {
            "lease_expires_at": until.isoformat(),
            "lease_expires_in_s": (until - timezone.now()).total_seconds(),
        }
    )


def beat(request, assignment: Assignment) -> JsonResponse:
    """Renew the lease on a held assignment (the annotation and the validation pages' heartbeat)."""
    try:
        until = queue.heartbeat(assignment, request.user)
    except queue.QueueError as error:
        return queue_error(error)
    return lease_answer(until)
