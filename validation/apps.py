from django.apps import AppConfig


class ValidationConfig(AppConfig):
    """Sampled validation of generated datasets: plans, verdicts on the annotation queue, estimates."""

    name = "validation"
