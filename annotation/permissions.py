"""Who may do what with annotation's objects: one function per question, asked by the pages, the
queue and the validation app (whose plans work on this app's queue).

- Members (a project's annotators; a validation plan's validators) work its queue: take tasks,
  save, heartbeat, submit and skip. Membership is asked at every step, not only on the work
  page, so a person removed from a project stops at once (annotation/queue.py).
- A project's reviewers review its pairs, never their own.
- Researchers (annotation.view_progress) read every project's progress, statistics and exports;
  only a project's owner, or an admin, changes it (publishes it): `accounts.permissions.may_change`.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _

from accounts.permissions import may_change
from annotation.models import Assignment, Project, QAPair


def is_member(user: Any, project: Project | int) -> bool:
    """Whether `user` is one of the project's annotators (validators, for a validation plan)."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    project_id = project.pk if isinstance(project, Project) else project
    return Project.annotators.through.objects.filter(project_id=project_id, user_id=user.pk).exists()


def is_reviewer(user: Any, project: Project) -> bool:
    return project.reviewers.filter(pk=user.pk).exists()


def may_read(user: Any) -> bool:
    """Projects' progress, statistics and exports: researchers and admins."""
    return user.has_perm("annotation.view_progress")


def may_publish(user: Any, project: Project) -> bool:
    return user.has_perm("annotation.add_project") and may_change(user, project)


def worker_assignment(user: Any, pk: int, kind: str) -> Assignment:
    """An assignment of a `kind` project (authoring or validation) that `user` holds: 404 when
    there is no such assignment of that kind, 403 when it is someone else's. Whether its holder is
    still a member is the queue's question, asked by every write (annotation/queue.py)."""
    assignment = get_object_or_404(
        Assignment.objects.select_related("task__project", "task__item__dataset", "task__item__scene"),
        pk=pk,
        task__project__kind=kind,
    )
    if assignment.annotator_id != user.pk:
        raise PermissionDenied(_("this is another person's task"))
    return assignment


def reviewable_pair(user: Any, pk: int) -> QAPair:
    """A pair `user` may review: in a project they review, written by someone else (403 otherwise)."""
    pair = get_object_or_404(
        QAPair.objects.select_related(
            "assignment__task__project", "assignment__task__item__dataset", "assignment__annotator"
        ),
        pk=pk,
        assignment__task__project__kind=Project.Kind.AUTHORING,
    )
    if not is_reviewer(user, pair.assignment.task.project) or pair.assignment.annotator_id == user.pk:
        raise PermissionDenied(_("you do not review this pair"))
    return pair
