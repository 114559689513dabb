"""A deleted test plan takes its human results with it: the testers' and the pooled submissions."""

from __future__ import annotations

from typing import Any

from evaluation.services import delete_submissions


def delete_session_submission(sender: Any, instance: Any, **kwargs: Any) -> None:
    delete_submissions(ids=[instance.submission_id])


def delete_pooled_submission(sender: Any, instance: Any, **kwargs: Any) -> None:
    # Read from the database: the pooled submission is made when the first tester starts, so the
    # instance being deleted may predate it.
    rows = (
        sender.objects.filter(pk=instance.pk)
        .values_list("pooled_submission_id", "all_testers_submission_id")
        .first()
    )
    delete_submissions(ids=[pk for pk in rows or () if pk is not None])
