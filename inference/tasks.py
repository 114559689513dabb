"""Celery tasks of the inference app: model runs, on the `gpu` queue."""

from celery import shared_task

from inference.models import ModelRun
from inference.services import execute_run


@shared_task(name="inference.run_model")
def run_model(run_id: int) -> str:
    """Run a queued model run; the run's row records the outcome, so no result is kept."""
    run = ModelRun.objects.filter(pk=run_id).first()
    if run is None:
        return "gone"
    return execute_run(run).status
