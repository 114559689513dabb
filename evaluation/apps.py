from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    """Metrics, agreement statistics, submissions and reports (built in a later issue)."""

    name = "evaluation"
