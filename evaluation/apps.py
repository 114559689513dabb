from django.apps import AppConfig
from django.db.models.signals import post_delete


class EvaluationConfig(AppConfig):
    """Metrics, agreement statistics, submissions and reports."""

    name = "evaluation"

    def ready(self) -> None:
        from benchmarks.storage import files_removed_with_the_row
        from evaluation.models import ScoringJob
        from evaluation.services import scoring_lost
        from jobs.services import when_lost

        when_lost(ScoringJob, scoring_lost)

        # A prediction file waiting for a worker goes with its job (and so with its dataset).
        post_delete.connect(
            files_removed_with_the_row("upload"),
            sender=ScoringJob,
            weak=False,
            dispatch_uid="evaluation.scoring-job-upload",
        )
