"""The work queue: tasks handed out on leases, one person per round of a task, on any database.

Claiming is one transaction that picks a free (task, round) and inserts the person's Assignment.
What makes it safe is the database, not the picking: two partial unique constraints refuse a
second live assignment of a task's round and a second live assignment of one person on one task
(annotation/models.py). On PostgreSQL the pick also locks the task row with
`SELECT ... FOR UPDATE SKIP LOCKED`, so concurrent claimers step past each other's candidates
instead of colliding; on SQLite, where rows cannot be locked, the transaction is IMMEDIATE
(yardstick/settings.py), so claimers take the write lock before they read and run one after the
other. An insert that still collides (a candidate read a moment before someone else's commit)
is rolled back to its savepoint and the next candidate is tried.

A lease lasts the project's `lease_seconds` from the last sign of life (a heartbeat or a saved
draft). Nobody has to clean up: every claim first expires the project's lapsed leases with one
conditional UPDATE, so an abandoned task is back in the pool for the next person who asks. A
lapsed lease on work that was already submitted once (a task a reviewer returned) goes back to
its own annotator's queue instead of the pool.

Every write to an assignment names the version it was based on; a stale one changes nothing and
raises Stale with what the server holds, for the page to show both.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone

from annotation.models import Assignment, Project, Task

#: How many free tasks one claim looks at before giving up (each collision moves to the next).
CANDIDATES = 20


class QueueError(Exception):
    code = "queue"


class LeaseLost(QueueError):
    """The lease ran out (or the task was never this person's): the work is no longer held."""

    code = "lease_lost"


@dataclass
class Stale(QueueError):
    """A write based on an older version than the server's; `server` is what the server holds."""

    version: int
    server: dict[str, Any]
    code = "stale"


def lease_end(project: Project, now: datetime) -> datetime:
    return now + timedelta(seconds=project.lease_seconds)


def expire_leases(project: Project | None = None, now: datetime | None = None) -> int:
    """Lapsed leases end: a first attempt goes back to the pool, returned work to its annotator."""
    now = now or timezone.now()
    lapsed = Assignment.objects.filter(status=Assignment.Status.LEASED, lease_expires_at__lt=now)
    if project is not None:
        lapsed = lapsed.filter(task__project=project)
    returned = lapsed.filter(submitted_at__isnull=False).update(status=Assignment.Status.RETURNED)
    expired = lapsed.filter(submitted_at__isnull=True).update(status=Assignment.Status.EXPIRED)
    return returned + expired


def held_by(project: Project, user: Any, now: datetime) -> Assignment | None:
    """The person's work in hand: a task still leased to them, else one a reviewer returned."""
    mine = Assignment.objects.filter(task__project=project, annotator=user).select_related("task__item")
    leased = (
        mine.filter(status=Assignment.Status.LEASED, lease_expires_at__gte=now).order_by("leased_at").first()
    )
    if leased is not None:
        return leased
    returned = mine.filter(status=Assignment.Status.RETURNED).order_by("submitted_at").first()
    if returned is None:
        return None
    taken = Assignment.objects.filter(pk=returned.pk, status=Assignment.Status.RETURNED).update(
        status=Assignment.Status.LEASED, leased_at=now, lease_expires_at=lease_end(project, now)
    )
    if not taken:
        return None
    returned.refresh_from_db()
    return returned


def free_tasks(project: Project, user: Any, round_: int):
    """Tasks whose round `round_` nobody holds, that this person has not worked on or skipped."""
    live = Assignment.objects.filter(task=OuterRef("pk"), status__in=Assignment.LIVE)
    mine = Assignment.objects.filter(
        task=OuterRef("pk"), annotator=user, status__in=(*Assignment.LIVE, Assignment.Status.SKIPPED)
    )
    tasks = (
        Task.objects.filter(project=project, opinions__gte=round_)
        .exclude(Exists(live.filter(round=round_)))
        .exclude(Exists(mine))
    )
    if round_ > 1:  # a second opinion answers the first annotator's questions: they must exist
        tasks = tasks.filter(Exists(live.filter(round=round_ - 1, status=Assignment.Status.SUBMITTED)))
    return tasks.select_related("project").order_by("position")


def claim(project: Project, user: Any, now: datetime | None = None) -> Assignment | None:
    """The person's next task on a fresh lease, or the one they hold; None when none is left.

    Second opinions come first (so they follow the first annotation closely), then new images in
    the project's order.
    """
    now = now or timezone.now()
    expire_leases(project, now)
    with transaction.atomic():
        held = held_by(project, user, now)
        if held is not None:
            return held
        for round_ in (2, 1):
            tasks = free_tasks(project, user, round_)
            if connection.features.has_select_for_update_skip_locked:
                tasks = tasks.select_for_update(skip_locked=True, of=("self",))
            for task in tasks[:CANDIDATES]:
                assignment = _take(task, round_, user, now)
                if assignment is not None:
                    return assignment
    return None


def _take(task: Task, round_: int, user: Any, now: datetime) -> Assignment | None:
    # The last attempt by anyone at this round (lapsed or skipped) leaves its draft to the next.
    earlier = (
        Assignment.objects.filter(task=task, round=round_, status=Assignment.Status.EXPIRED, annotator=user)
        .order_by("-leased_at")
        .values_list("draft", "version")
        .first()
    )
    draft, version = earlier if earlier else ({}, 0)
    try:
        with transaction.atomic():
            return Assignment.objects.create(
                task=task,
                round=round_,
                annotator=user,
                leased_at=now,
                lease_expires_at=lease_end(task.project, now),
                draft=draft,
                version=version,
            )
    except IntegrityError:  # someone took this round (or this person holds the task) meanwhile
        return None


def holding(assignment_id: int, user: Any, now: datetime) -> Q:
    """The rows this person may still write: their assignment, leased and not lapsed."""
    return Q(pk=assignment_id, annotator=user, status=Assignment.Status.LEASED, lease_expires_at__gte=now)


def heartbeat(assignment: Assignment, user: Any) -> datetime:
    """Renew the lease; LeaseLost when it already ran out or is not this person's."""
    now = timezone.now()
    until = lease_end(assignment.task.project, now)
    if not Assignment.objects.filter(holding(assignment.pk, user, now)).update(lease_expires_at=until):
        raise LeaseLost()
    return until


def save_draft(
    assignment: Assignment, user: Any, version: int, draft: dict[str, Any]
) -> tuple[int, datetime]:
    """Store the draft if `version` is the server's; the lease is renewed with it."""
    now = timezone.now()
    until = lease_end(assignment.task.project, now)
    updated = Assignment.objects.filter(holding(assignment.pk, user, now), version=version).update(
        draft=draft, version=F("version") + 1, lease_expires_at=until
    )
    if not updated:
        raise refusal(assignment.pk, user, now)
    return version + 1, until


def refusal(assignment_id: int, user: Any, now: datetime) -> QueueError:
    """Why a conditional write to an assignment changed nothing: a lost lease or a stale version."""
    current = (
        Assignment.objects.filter(pk=assignment_id, annotator=user)
        .values("status", "lease_expires_at", "version", "draft")
        .first()
    )
    if current is None or current["status"] != Assignment.Status.LEASED or current["lease_expires_at"] < now:
        return LeaseLost()
    return Stale(current["version"], {"version": current["version"], "draft": current["draft"]})


def close(assignment: Assignment, user: Any, version: int, **changes: Any) -> Assignment:
    """Move a held assignment on (submitted or skipped) if `version` is current; inside a transaction."""
    now = timezone.now()
    updated = Assignment.objects.filter(holding(assignment.pk, user, now), version=version).update(
        version=F("version") + 1,
        work_seconds=F("work_seconds") + (now - assignment.leased_at).total_seconds(),
        **changes,
    )
    if not updated:
        raise refusal(assignment.pk, user, now)
    assignment.refresh_from_db()
    return assignment


def skip(assignment: Assignment, user: Any, version: int, reason: str) -> Assignment:
    """Give a task back with a reason; it goes to someone else, never back to this person."""
    return close(assignment, user, version, status=Assignment.Status.SKIPPED, skip_reason=reason)
