"""Permission checks for the HTTP API, shared by every app's viewsets."""

from __future__ import annotations

from rest_framework import permissions


def requires(permission: str) -> type[permissions.BasePermission]:
    """A DRF permission class granting access to users who hold `permission` ("app.codename")."""

    class HasPermission(permissions.BasePermission):
        message = f"You need the {permission} permission (a researcher's role)."

        def has_permission(self, request, view) -> bool:
            return bool(request.user and request.user.has_perm(permission))

    HasPermission.__name__ = f"Has_{permission.replace('.', '_')}"
    return HasPermission
