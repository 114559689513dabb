"""The reaper on the worker's schedule: at the worker's start and every JOB_REAP_EVERY_S (beat)."""

from celery import shared_task
from celery.signals import worker_ready

from jobs.services import declare_lost_jobs


@shared_task(name="jobs.declare_lost")
def declare_lost() -> dict[str, list[int]]:
    """End the running jobs whose worker died (a beat schedule runs it; see settings)."""
    return declare_lost_jobs()


@worker_ready.connect
def declare_lost_at_start(**kwargs) -> None:
    """A worker starting after a crash ends what a dead worker left running."""
    declare_lost_jobs()
