"""The answer write path: a tester's answer to an open trial, or the browser's request to close it
when its countdown reached zero, each checked against the server's clock under the trial's lock.

An answer is accepted only while the trial is open (status "served") and before its deadline
plus a small network grace; a second answer to the same trial, or one after it was closed as
timed out, is refused (stale writes are refused, never merged).
"""

from __future__ import annotations

from typing import Any

import orjson
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from humantest.browser import clean_client, focus_losses, hidden_ms
from humantest.clock import EARLY_TIMEOUT, NETWORK_GRACE, close_timed_out
from humantest.models import Trial
from humantest.scoring import score_one, store_prediction, unit_for
from humantest.sessions import TrialClosed
from humantest.trials import AnswerRefused, trial_for

#: The largest answer a trial keeps, in bytes of JSON (a ten-step answer is ~400).
MAX_ANSWER_BYTES = 16 * 1024


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
