from django.apps import AppConfig
from django.db.models.signals import post_delete


class InferenceConfig(AppConfig):
    """Baseline models on GPU workers (torch never enters the web process)."""

    name = "inference"

    def ready(self) -> None:
        from benchmarks.storage import files_removed_with_the_row
        from inference.models import ModelRun
        from inference.services import run_lost
        from jobs.services import when_lost

        when_lost(ModelRun, run_lost)

        # A run's predictions file goes with the run (and so with its dataset).
        post_delete.connect(
            files_removed_with_the_row("predictions"),
            sender=ModelRun,
            weak=False,
            dispatch_uid="inference.model-run-predictions",
        )
        post_delete.connect(
            files_removed_with_the_row("audit"),
            sender=ModelRun,
            weak=False,
            dispatch_uid="inference.model-run-audit",
        )
