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

Only the project's members work its queue (`annotation.permissions.is_member`): a claim by anyone
else raises NotMember, and every write to an assignment (heartbeat, draft, submit, skip) is
conditional on its holder still being a member, so a person removed from a project stops at
once, whatever page they still have open. Their leases are ended when they are removed
(`release_removed`), so their tasks go back to the pool at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone

from annotation.models import Assignment, Project, Task
from annotation.permissions import is_member

#: How many free tasks one claim looks at before giving up (each collision moves to the next).
CANDIDATES = 20


class QueueError(Exception):
    code = "queue"


class LeaseLost(QueueError):
    """The lease ran out (or the task was never this person's): the work is no longer held."""

    code = "lease_lost"


class NotMember(QueueError):
    """The person is not (or no longer) one of the project's annotators or validators: the queue
    gives them nothing and takes nothing from them (their draft stays on the server)."""

    code = "not_member"


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
    found = list(lapsed.values_list("pk", "task_id", "submitted_at"))
    if not found:
        return 0
    # Each UPDATE checks the lapse again: a heartbeat that renewed a lease meanwhile keeps it.
    again = {"status": Assignment.Status.LEASED, "lease_expires_at__lt": now}
    returned = [pk for pk, _, submitted in found if submitted is not None]
    first = [pk for pk, _, submitted in found if submitted is None]
    count = Assignment.objects.filter(pk__in=returned, **again).update(status=Assignment.Status.RETURNED)
    with transaction.atomic():
        expired = Assignment.objects.filter(pk__in=first, **again).update(status=Assignment.Status.EXPIRED)
        if expired:
            reopen(
                Assignment.objects.filter(pk__in=first, status=Assignment.Status.EXPIRED).values("task_id")
            )
    return count + expired


def reopen(tasks) -> None:
    """The round a task's last attempt held is free again (expired or skipped)."""
    Task.objects.filter(pk__in=tasks).update(available=True)


def expire_now(project: Project, now: datetime) -> None:
    """Expire the project's lapsed leases, at most every ANNOTATION_EXPIRY_EVERY_S seconds per
    project (every claim asks; one that finds the shared cache's mark leaves it to the next)."""
    every = settings.ANNOTATION_EXPIRY_EVERY_S
    if every <= 0 or cache.add(f"annotation:expired:{project.pk}", 1, timeout=every):
        expire_leases(project, now)


def in_hand(project: Project, user: Any, now: datetime) -> Assignment | None:
    """The person's work in hand, read only: a task still leased to them, else one a reviewer
    returned to them (not leased again until they take it: opening a page changes nothing)."""
    return (
        Assignment.objects.filter(task__project=project, annotator=user)
        .filter(
            Q(status=Assignment.Status.LEASED, lease_expires_at__gte=now)
            | Q(status=Assignment.Status.RETURNED)
        )
        .select_related("task__project", "task__item__dataset")
        .order_by("status", "leased_at")  # "leased" sorts before "returned": the task in hand first
        .first()
    )


def held_by(project: Project, user: Any, now: datetime) -> Assignment | None:
    """The person's work in hand, a returned task leased to them again (part of a claim)."""
    held = in_hand(project, user, now)
    if held is None or held.status == Assignment.Status.LEASED:
        return held
    until = lease_end(project, now)
    taken = Assignment.objects.filter(pk=held.pk, status=Assignment.Status.RETURNED).update(
        status=Assignment.Status.LEASED, leased_at=now, lease_expires_at=until
    )
    if not taken:
        return None
    held.status, held.leased_at, held.lease_expires_at = Assignment.Status.LEASED, now, until
    return held


def free_tasks(project: Project, user: Any):
    """Tasks with a round free now that this person has not worked on or skipped, second opinions
    first, then in the project's order (one index scan: annotation/models.py, task_available)."""
    mine = Assignment.objects.filter(
        task=OuterRef("pk"), annotator=user, status__in=(*Assignment.LIVE, Assignment.Status.SKIPPED)
    )
    return (
        Task.objects.filter(project=project, available=True)
        .exclude(Exists(mine))
        .select_related("project", "item__dataset")
        .order_by("-next_round", "position")
    )


def claim(project: Project, user: Any, now: datetime | None = None) -> Assignment | None:
    """The person's next task on a fresh lease, or the one they hold; None when none is left.

    Second opinions come first (so they follow the first annotation closely), then new images in
    the project's order.
    """
    now = now or timezone.now()
    if not is_member(user, project):
        raise NotMember()
    expire_now(project, now)
    with transaction.atomic():
        held = held_by(project, user, now)
        if held is not None:
            return held
        tasks = free_tasks(project, user)
        if connection.features.has_select_for_update_skip_locked:
            tasks = tasks.select_for_update(skip_locked=True, of=("self",))
        for task in tasks[:CANDIDATES]:
            assignment = _take(task, user, now)
            if assignment is not None:
                return assignment
    return None


def _take(task: Task, user: Any, now: datetime) -> Assignment | None:
    # This person's own lapsed attempt at the task leaves its draft to them.
    earlier = (
        Assignment.objects.filter(
            task=task, round=task.next_round, status=Assignment.Status.EXPIRED, annotator=user
        )
        .order_by("-leased_at")
        .values_list("draft", "version")
        .first()
    )
    draft, version = earlier if earlier else ({}, 0)
    try:
        with transaction.atomic():
            if not Task.objects.filter(pk=task.pk, available=True).update(available=False):
                return None  # someone took it a moment ago
            assignment = Assignment.objects.create(
                task=task,
                round=task.next_round,
                annotator=user,
                leased_at=now,
                lease_expires_at=lease_end(task.project, now),
                draft=draft,
                version=version,
            )
    except IntegrityError:  # someone holds this round (or this person the task): rolled back
        return None
    assignment.task = task
    return assignment


def submitted(assignment: Assignment, first_time: bool) -> None:
    """After a round's first submit, the task's next round (a second opinion) is open."""
    task = assignment.task
    if first_time and assignment.round < task.opinions:
        Task.objects.filter(pk=task.pk).update(next_round=assignment.round + 1, available=True)


def holding(assignment_id: int, user: Any, now: datetime) -> Q:
    """The rows this person may still write: their assignment, leased and not lapsed, in a project
    they are still a member of."""
    return Q(
        pk=assignment_id,
        annotator=user,
        status=Assignment.Status.LEASED,
        lease_expires_at__gte=now,
        task__project__annotators=user,
    )


def heartbeat(assignment: Assignment, user: Any) -> datetime:
    """Renew the lease; LeaseLost when it already ran out or is not this person's, NotMember when
    they left the project."""
    now = timezone.now()
    until = lease_end(assignment.task.project, now)
    if not Assignment.objects.filter(holding(assignment.pk, user, now)).update(lease_expires_at=until):
        problem = refusal(assignment.pk, user, now)
        raise problem if isinstance(problem, NotMember) else LeaseLost()
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
    """Why a conditional write to an assignment changed nothing: the person left the project, a
    lost lease or a stale version."""
    current = (
        Assignment.objects.filter(pk=assignment_id, annotator=user)
        .values("status", "lease_expires_at", "version", "draft", "task__project")
        .first()
    )
    if current is not None and not is_member(user, current["task__project"]):
        return NotMember()
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
    assignment.version = version + 1
    assignment.work_seconds += (now - assignment.leased_at).total_seconds()
    for name, value in changes.items():
        setattr(assignment, name, value)
    return assignment


def skip(assignment: Assignment, user: Any, version: int, reason: str) -> Assignment:
    """Give a task back with a reason; it goes to someone else, never back to this person."""
    with transaction.atomic():
        closed = close(assignment, user, version, status=Assignment.Status.SKIPPED, skip_reason=reason)
        if closed.submitted_at is None:  # returned work, once skipped, is not reopened to others
            reopen([closed.task_id])
    return closed


def release_removed(project: Project, people: Any) -> int:
    """End the leases of people removed from a project: their tasks are free again at once (their
    drafts stay on their assignments, theirs again should they come back)."""
    with transaction.atomic():
        leased = Assignment.objects.filter(
            task__project=project, annotator__in=people, status=Assignment.Status.LEASED
        )
        first = list(leased.filter(submitted_at__isnull=True).values_list("pk", "task_id"))
        returned = leased.filter(submitted_at__isnull=False).update(status=Assignment.Status.RETURNED)
        expired = Assignment.objects.filter(
            pk__in=[pk for pk, _ in first], status=Assignment.Status.LEASED
        ).update(status=Assignment.Status.EXPIRED)
        reopen([task for _, task in first])
    return returned + expired
