"""Permission checks every app shares: the API's role check and the one rule of ownership.

Roles decide what a person may read and start (accounts/roles.py). Ownership decides who may
change or delete what was made: **everybody with a role reads what the role reads, but only the
person who made a thing (its `created_by`), or an admin, changes or deletes it.** That holds for
every kind of object (submissions, test plans, annotation projects, validation plans, model runs,
imports), on the pages and in the API alike; each app's permissions module asks `may_change`.
A thing nobody made (loaded by a command, or whose maker's account was deleted) is an admin's.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from rest_framework import permissions

from accounts.roles import ADMIN, user_roles


def requires(permission: str) -> type[permissions.BasePermission]:
    """A DRF permission class granting access to users who hold `permission` ("app.codename")."""

    class HasPermission(permissions.BasePermission):
        @property
        def message(self) -> str:  # read when refusing: in the reader's language
            return _("You need the %(permission)s permission (a researcher's role).") % {
                "permission": permission
            }

        def has_permission(self, request, view) -> bool:
            return bool(request.user and request.user.has_perm(permission))

    HasPermission.__name__ = f"Has_{permission.replace('.', '_')}"
    return HasPermission


def is_admin(user: Any) -> bool:
    return bool(getattr(user, "is_authenticated", False)) and ADMIN in user_roles(user)


def may_change(user: Any, thing: Any) -> bool:
    """The ownership rule: `user` made `thing` (its created_by), or is an admin."""
    owner = getattr(thing, "created_by_id", None)
    if owner is not None and getattr(user, "pk", None) == owner:
        return True
    return is_admin(user)


def ownership_problem(user: Any, thing: Any, what: str) -> str | None:
    """Why `user` may not change `thing` (None when they may), naming its owner: for 403 pages and
    API errors, in the reader's language. `what` says what the thing is ("test plan “Pilot”"), best
    already translated by the caller."""
    if may_change(user, thing):
        return None
    owner = getattr(thing, "created_by", None) if getattr(thing, "created_by_id", None) else None
    if owner is not None:
        return _(
            "only the researcher who made the %(what)s (%(owner)s), or an admin, can change or delete it"
        ) % {
            "what": what,
            "owner": owner.username,
        }
    return _("only the researcher who made the %(what)s, or an admin, can change or delete it") % {
        "what": what
    }
