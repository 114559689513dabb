"""Roles are Django groups; what each may do is the set of permissions given to its group.

A researcher curates data: creates, imports and exports datasets. Annotators, reviewers and
testers see only the work given to them, so their groups hold no catalog permissions at all;
their apps check assignment, not permissions. Admins hold every permission.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group, Permission

ADMIN = "admin"
RESEARCHER = "researcher"
ANNOTATOR = "annotator"
REVIEWER = "reviewer"
TESTER = "tester"
#: Somebody who arrived by a study's entry link (Prolific, MTurk, a lab list): an account of its own,
#: tied to one plan, that opens that plan's pages and nothing else (humantest/middleware.py).
PARTICIPANT = "participant"
ROLES = (ADMIN, RESEARCHER, ANNOTATOR, REVIEWER, TESTER, PARTICIPANT)

#: Permissions by role, as "app_label.codename". Admin gets all of them.
ROLE_PERMISSIONS: dict[str, tuple[str, ...]] = {
    RESEARCHER: (
        "benchmarks.view_dataset",
        "benchmarks.add_dataset",
        "benchmarks.change_dataset",
        "benchmarks.delete_dataset",
        "benchmarks.import_dataset",
        "benchmarks.export_dataset",
        "benchmarks.view_item",
        "benchmarks.view_scene",
        "benchmarks.view_importjob",
        "benchmarks.add_importjob",
        "evaluation.view_submission",
        "evaluation.add_submission",
        "evaluation.change_submission",
        "evaluation.delete_submission",
        "evaluation.view_report",
        "humantest.view_testplan",
        "humantest.add_testplan",
        "humantest.change_testplan",
        "humantest.delete_testplan",
        "humantest.view_results",
        "annotation.view_project",
        "annotation.add_project",
        "annotation.view_progress",
        "validation.view_plan",
        "validation.add_plan",
        "validation.view_estimates",
        "inference.view_modelrun",
        "inference.add_modelrun",
        "inference.change_modelrun",
    ),
    ANNOTATOR: (),
    REVIEWER: (),
    TESTER: (),
    PARTICIPANT: (),
}


def sync_roles() -> None:
    """Create the role groups and give each exactly its permissions (safe to run again)."""
    for role in ROLES:
        group, _ = Group.objects.get_or_create(name=role)
        if role == ADMIN:
            group.permissions.set(Permission.objects.all())
            continue
        wanted = Permission.objects.none()
        for label in ROLE_PERMISSIONS[role]:
            app_label, codename = label.split(".")
            wanted |= Permission.objects.filter(content_type__app_label=app_label, codename=codename)
        group.permissions.set(wanted)


#: Apps whose permissions roles hand out; roles are synced after each of them migrates.
APPS_WITH_ROLE_PERMISSIONS = {
    "benchmarks",
    "evaluation",
    "humantest",
    "annotation",
    "validation",
    "inference",
}


def sync_roles_after_migrate(sender: Any, **kwargs: Any) -> None:
    # post_migrate fires once per app, after that app's permissions are created; syncing after
    # each of ours (permissions not created yet are skipped) leaves every role complete.
    if getattr(sender, "name", "") in APPS_WITH_ROLE_PERMISSIONS:
        sync_roles()


def user_roles(user: Any) -> list[str]:
    """The roles a user holds, in the order of ROLES; superusers count as admins."""
    if not user.is_authenticated:
        return []
    names = set(user.groups.values_list("name", flat=True))
    if user.is_superuser:
        names.add(ADMIN)
    return [role for role in ROLES if role in names]


def roles_context(request: Any) -> dict[str, Any]:
    """Template context: `roles` of the signed-in user, for menus."""
    user = getattr(request, "user", None)
    if user is None:
        return {"roles": []}
    if not hasattr(request, "_yardstick_roles"):
        request._yardstick_roles = user_roles(user)
    return {"roles": request._yardstick_roles}
