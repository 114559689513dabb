from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AccountsConfig(AppConfig):
    """Roles (Django groups with their permissions) and the permission checks every app uses.

    It sits below every other app of the project: the catalog, evaluation, human tests,
    annotation and inference may all import it; it imports none of them.
    """

    name = "accounts"

    def ready(self) -> None:
        from accounts.roles import sync_roles_after_migrate

        post_migrate.connect(sync_roles_after_migrate, dispatch_uid="accounts.sync_roles")
