from django.apps import AppConfig
from django.db.models.signals import m2m_changed


class AnnotationConfig(AppConfig):
    """Human labeling workflows on a shared work queue with leases."""

    name = "annotation"

    def ready(self) -> None:
        from annotation import signals
        from annotation.models import Project

        m2m_changed.connect(
            signals.release_removed_members,
            sender=Project.annotators.through,
            dispatch_uid="annotation.members",
        )
