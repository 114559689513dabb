"""What every kind of job has: its status, in one vocabulary, and its times.

A job is queued by a request, taken by a worker (`started_at`), and ends once (`finished_at`):
succeeded, failed, or cancelled by its owner. Progress while it runs is in the shared cache (the
rows being written sit in one open transaction, and on SQLite nobody else may write until it
commits); a kind of job that writes its progress on its row too (model runs, whose worker may share
no cache with the web server) keeps `stage`, `done` and `total` fields, which `progress()` reads
once nothing live is left.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.core.cache import cache
from django.db import models
from django.utils.translation import gettext_lazy as _


class Status(models.TextChoices):
    QUEUED = "queued", _("Waiting for a worker")
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")
    CANCELLED = "cancelled", _("Cancelled")


#: Statuses of a job that is not over: a person waits for it, and a page follows it.
ACTIVE = (Status.QUEUED, Status.RUNNING)
ENDED = (Status.SUCCEEDED, Status.FAILED, Status.CANCELLED)


def progress_key(kind: str, pk: int) -> str:
    return f"yardstick:{kind}-progress:{pk}"


def heartbeat_key(kind: str, pk: int) -> str:
    return f"yardstick:{kind}-heartbeat:{pk}"


class Job(models.Model):
    """The fields and reads every job shares; `kind` names it in cache keys and messages."""

    Status = Status

    #: A short word naming this kind of job in its cache keys ("import", "scoring", "model-run").
    kind: ClassVar[str] = "job"
    #: Whether its worker reports progress to the cache (False: on the row only, nothing to read).
    progress_in_cache: ClassVar[bool] = True
    #: The Celery queue its task goes to (the metrics count waiting jobs per queue).
    queue: ClassVar[str] = "celery"

    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True, help_text=_("When a worker took the job."))
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def finished(self) -> bool:
        return self.status in ENDED

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    @property
    def progress_key(self) -> str:
        return progress_key(self.kind, self.pk)

    @property
    def heartbeat_key(self) -> str:
        return heartbeat_key(self.kind, self.pk)

    def progress(self) -> dict[str, Any]:
        """Stage and counts: live from the worker while the job runs, from the row once it ended
        (or where the kind keeps no counts on its row, nothing)."""
        live = cache.get(self.progress_key) if self.progress_in_cache and not self.finished else None
        if live:
            stage, done, total = live["stage"], live["done"], live["total"]
        else:
            stage, done, total = (
                getattr(self, "stage", ""),
                getattr(self, "done", 0),
                getattr(self, "total", 0),
            )
        percent = int(100 * done / total) if total else (100 if self.status == Status.SUCCEEDED else 0)
        return {"stage": stage, "done": done, "total": total, "percent": percent}

    @property
    def percent(self) -> int:
        return self.progress()["percent"]


class WorkerBeat(models.Model):
    """A Celery worker's sign of life, on a row (every host shares the database, not always the
    cache): which queues it consumes and when it was last heard of. The readiness endpoint
    (/health/workers) reads these; a worker writes its row every JOB_HEARTBEAT_S and deletes it
    when it stops cleanly."""

    name = models.CharField(max_length=200, unique=True, help_text=_("The worker's Celery name (name@host)."))
    queues = models.JSONField(default=list, help_text=_("The queues it consumes."))
    pid = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField()
    beat_at = models.DateTimeField()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({', '.join(self.queues)})"
