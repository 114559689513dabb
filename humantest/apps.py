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

        # Testers' rows are scored from their trials, not from the stored answers alone.
        from evaluation.models import Submission
        from evaluation.services import register_rescorer
        from humantest.scoring import rescore_pooled_submission, rescore_session_submission

        register_rescorer(Submission.Origin.TEST_SESSION, rescore_session_submission)
        register_rescorer(Submission.Origin.TEST_PLAN, rescore_pooled_submission)
