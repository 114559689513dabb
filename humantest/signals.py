"""A deleted test plan takes its human results with it: the testers' and the pooled submissions."""

from __future__ import annotations

from typing import Any

from evaluation.models import Submission


def delete_session_submission(sender: Any, instance: Any, **kwargs: Any) -> None:
    if instance.submission_id:
        Submission.objects.filter(pk=instance.submission_id).delete()


def delete_pooled_submission(sender: Any, instance: Any, **kwargs: Any) -> None:
    # Read from the database: the pooled submission is set by a background task, so the instance
    # being deleted may predate it.
    pooled = sender.objects.filter(pk=instance.pk).values_list("pooled_submission_id", flat=True).first()
    if pooled:
        Submission.objects.filter(pk=pooled).delete()
