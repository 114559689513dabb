"""Celery tasks of the catalog."""

from celery import shared_task

from benchmarks.models import ImportJob
from benchmarks.services import run_import_job


@shared_task(name="benchmarks.run_import")
def run_import(job_id: int) -> str:
    """Run a queued import job; the job row records the outcome, so no result is kept."""
    job = ImportJob.objects.get(pk=job_id)
    return run_import_job(job).status
