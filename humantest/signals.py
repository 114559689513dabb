"""A deleted test plan takes its human results with it: the testers' and the pooled submissions."""

from __future__ import annotations

from typing import Any

from evaluation.services import delete_submissions


def delete_session_submission(sender: Any, instance: Any, **kwargs: Any) -> None:
    delete_submissions(ids=[instance.submission_id])


def delete_pooled_submission(sender: Any, instance: Any, **kwargs: Any) -> None:
    # Read from the database: the pooled submission is made when the first tester starts, so the
    # instance being deleted may predate it.
    pooled = sender.objects.filter(pk=instance.pk).values_list("pooled_submission_id", flat=True).first()
    delete_submissions(ids=[pooled])
