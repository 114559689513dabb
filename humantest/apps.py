from django.apps import AppConfig
from django.db.models.signals import post_delete, pre_delete


class HumantestConfig(AppConfig):
    """Test plans, tester sessions, practice and timed trials; human baselines scored by the evaluation engine."""

    name = "humantest"

    def ready(self) -> None:
        from humantest import signals
        from humantest.models import TestPlan, TestSession

        post_delete.connect(
            signals.delete_session_submission, sender=TestSession, dispatch_uid="humantest.session"
        )
        pre_delete.connect(signals.delete_pooled_submission, sender=TestPlan, dispatch_uid="humantest.plan")
