"""When people leave a project, the queue lets go of them at once (annotation/queue.py)."""

from __future__ import annotations

from typing import Any

from annotation.models import Project


def release_removed_members(sender: Any, instance: Any, action: str, reverse: bool, pk_set, **kwargs) -> None:
    """A project's annotators (a validation plan's validators) changed: the leases of those removed
    end now, so their tasks go back to the pool instead of waiting for the leases to lapse.

    Fires for both sides of the relation (project.annotators.remove(person) and
    person.annotation_projects.remove(project)); a clear() is seen before it happens.
    """
    from annotation import queue

    if action == "pre_clear":
        instance._removed_members = set(
            Project.annotators.through.objects.filter(
                **({"user_id": instance.pk} if reverse else {"project_id": instance.pk})
            ).values_list("project_id" if reverse else "user_id", flat=True)
        )
        return
    if action == "post_clear":
        pk_set = getattr(instance, "_removed_members", set())
    elif action != "post_remove":
        return
    if not pk_set:
        return
    if reverse:  # instance is the person, pk_set the projects they left
        for project in Project.objects.filter(pk__in=pk_set):
            queue.release_removed(project, [instance.pk])
    else:
        queue.release_removed(instance, list(pk_set))
