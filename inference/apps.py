from django.apps import AppConfig


class InferenceConfig(AppConfig):
    """Baseline models on GPU workers (built in a later issue; torch never enters the web process)."""

    name = "inference"
