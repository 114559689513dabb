"""Celery tasks of the catalog."""

from celery import shared_task
from celery.signals import worker_ready

from benchmarks.models import ImportJob
from benchmarks.services import fail_lost_jobs, run_import_job


@shared_task(name="benchmarks.run_import")
def run_import(job_id: int) -> str:
    """Run a queued import job; the job row records the outcome, so no result is kept."""
    job = ImportJob.objects.get(pk=job_id)
    return run_import_job(job).status


@worker_ready.connect
def fail_jobs_of_dead_workers(**kwargs) -> None:
    """A worker starting after a crash declares the imports it (or another dead one) left running."""
    fail_lost_jobs()
