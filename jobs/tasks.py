"""The reaper on the worker's schedule: at the worker's start and every JOB_REAP_EVERY_S (beat);
the worker's own sign of life (a WorkerBeat row) from its start to its clean stop."""

import os

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown

from jobs.services import declare_lost_jobs, start_worker_beats, worker_stopped

_beats: dict[str, object] = {}


@shared_task(name="jobs.declare_lost")
def declare_lost() -> dict[str, list[int]]:
    """End the running jobs whose worker died (a beat schedule runs it; see settings)."""
    return declare_lost_jobs()


@worker_ready.connect
def declare_lost_at_start(**kwargs) -> None:
    """A worker starting after a crash ends what a dead worker left running."""
    declare_lost_jobs()


@worker_ready.connect
def beat_while_running(sender=None, **kwargs) -> None:
    """Record this worker and its queues every JOB_HEARTBEAT_S, for /health/workers."""
    if sender is None:
        return
    queues = [queue.name for queue in sender.task_consumer.queues] if sender.task_consumer else []
    _beats[sender.hostname] = start_worker_beats(sender.hostname, queues, os.getpid())


@worker_shutdown.connect
def stop_beating(sender=None, **kwargs) -> None:
    for name, stop in list(_beats.items()):
        stop.set()
        worker_stopped(name)
        del _beats[name]
