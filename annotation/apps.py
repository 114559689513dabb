from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    """Human labeling workflows on a shared work queue with leases (built in a later issue)."""

    name = "annotation"
