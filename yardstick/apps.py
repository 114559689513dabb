from django.apps import AppConfig
from django.db.models.signals import post_migrate


class YardstickConfig(AppConfig):
    """The project package as an app: roles, the home page, the shared layout."""

    name = "yardstick"
    verbose_name = "Yardstick"

    def ready(self) -> None:
        from yardstick.roles import sync_roles_after_migrate

        post_migrate.connect(sync_roles_after_migrate, dispatch_uid="yardstick.sync_roles")
