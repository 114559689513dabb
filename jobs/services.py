"""The one way jobs are queued, beat, report progress and are declared lost.

- `enqueue` hands a task to the workers by its name once the request's transaction commits, so a
  module never imports its own Celery tasks (which import it back).
- `take` moves a queued job to running exactly once: a second delivery of the same task, or a job
  already declared lost, finds nothing to take.
- `beating` is the worker's sign of life while it runs a job; `report_progress` tells the pages how
  far it is. Both go to the shared cache (files, or Redis) the web server reads.
- `declare_lost_jobs`, the one reaper: a running job without a sign of life for JOB_LOST_AFTER_S
  is ended as failed by its kind's own handler (which says what was kept and what to do). The
  worker runs it when it starts and on its beat schedule (CELERY_BEAT_SCHEDULE); pages only read.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from functools import cache as memoize

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from jobs.models import Job, Status

#: What ends a lost job of a kind: called with the job and the seconds since its last sign of life.
LostHandler = Callable[[Job, int], None]
_lost_handlers: dict[type[Job], LostHandler] = {}


_imported = threading.Lock()


@memoize
def _tasks():
    """Celery's registry of tasks, every app's tasks module imported (once per process; a lock,
    as threads of one web process may queue their first tasks at once)."""
    from celery import current_app

    with _imported:
        current_app.loader.import_default_modules()
        return current_app.tasks


def enqueue(
    task: str, *args, queue: str | None = None, countdown: float | None = None, at_commit: bool = True
) -> None:
    """Send the task named `task` to the workers when the current transaction commits (at once
    outside one, or with `at_commit` False: for work on rows already committed), on `queue` (else
    its route) and `countdown` seconds later; with CELERY_TASK_ALWAYS_EAGER it runs in this
    process then."""
    found = _tasks()[task]
    options = {key: value for key, value in (("queue", queue), ("countdown", countdown)) if value is not None}

    def send() -> None:
        found.apply_async(args, **options)

    if at_commit:
        transaction.on_commit(send)
    else:
        send()


def take(job: Job, **fields) -> bool:
    """Mark a queued job running (with `fields` set too); False when it was not queued any more."""
    model = type(job)
    taken = model.objects.filter(pk=job.pk, status=Status.QUEUED).update(
        status=Status.RUNNING, started_at=timezone.now(), **fields
    )
    job.refresh_from_db()
    return bool(taken)


def report_progress(job: Job, stage: str, done: int, total: int) -> None:
    cache.set(job.progress_key, {"stage": stage, "done": done, "total": total}, timeout=86400)


def clear_progress(job: Job) -> dict:
    """The last progress reported (empty when none) and forget it: the job's row keeps what lasts."""
    last = cache.get(job.progress_key) or {}
    cache.delete(job.progress_key)
    return last


@contextmanager
def beating(job: Job) -> Iterator[None]:
    """While the block runs, a thread writes the time under the job's heartbeat key in the shared
    cache every JOB_HEARTBEAT_S; the key is removed when the block ends.

    The thread dies with the worker, so a worker killed mid-job (out of memory, kill -9, a lost
    machine) stops the beats, and `declare_lost_jobs` ends the job as failed instead of leaving it
    running for ever.
    """
    key = job.heartbeat_key
    stop = threading.Event()

    def beat() -> None:
        while not stop.is_set():
            cache.set(key, time.time(), timeout=3600)
            stop.wait(settings.JOB_HEARTBEAT_S)

    thread = threading.Thread(target=beat, name=f"{job.kind}-{job.pk}-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        cache.delete(key)


def when_lost(model: type[Job], handler: LostHandler) -> None:
    """Register what ends a lost job of `model` (each app does it for its own kinds when ready)."""
    _lost_handlers[model] = handler


def last_sign_of_life(job: Job) -> float | None:
    """When the job's worker was last heard of (a Unix time), None when never: its cache beat, a
    beat it keeps on its row (`heartbeat_at`), or the moment it was taken."""
    beats = [cache.get(job.heartbeat_key)]
    beats += [moment.timestamp() for moment in (getattr(job, "heartbeat_at", None), job.started_at) if moment]
    return max((beat for beat in beats if beat is not None), default=None)


def declare_lost_jobs() -> dict[str, list[int]]:
    """End as failed every running job whose worker has stopped beating; the ids, by kind."""
    lost: dict[str, list[int]] = {}
    now = time.time()
    for model, handler in _lost_handlers.items():
        for job in model.objects.filter(status=Status.RUNNING):
            last = last_sign_of_life(job)
            if last is not None and last >= now - settings.JOB_LOST_AFTER_S:
                continue
            seconds = int(now - last) if last is not None else int(settings.JOB_LOST_AFTER_S)
            with transaction.atomic():
                # Locked and read again: the worker may have ended it since the query above.
                job = model.objects.select_for_update().filter(pk=job.pk, status=Status.RUNNING).first()
                if job is None:
                    continue
                handler(job, seconds)
            lost.setdefault(model.kind, []).append(job.pk)
    return lost


# --- workers' own signs of life ----------------------------------------------------------------


def record_worker_beat(name: str, queues: list[str], pid: int, started_at) -> None:
    """Write that the worker `name` (consuming `queues`) is alive now. A database too busy to take
    the write (SQLite during a long import) skips this beat: the next one comes JOB_HEARTBEAT_S later."""
    from django.db import OperationalError

    from jobs.models import WorkerBeat

    with suppress(OperationalError):
        WorkerBeat.objects.update_or_create(
            name=name,
            defaults={
                "queues": sorted(queues),
                "pid": pid,
                "started_at": started_at,
                "beat_at": timezone.now(),
            },
        )


def worker_stopped(name: str) -> None:
    from jobs.models import WorkerBeat

    WorkerBeat.objects.filter(name=name).delete()


def start_worker_beats(name: str, queues: list[str], pid: int) -> threading.Event:
    """A daemon thread that records the worker's beat every JOB_HEARTBEAT_S until the returned
    event is set (or the process dies: then the beats stop, and /health/workers says so)."""
    from django.db import connection

    stop = threading.Event()
    started_at = timezone.now()

    def beat() -> None:
        while not stop.is_set():
            record_worker_beat(name, queues, pid, started_at)
            connection.close()  # this thread's own connection: none left open between beats
            stop.wait(settings.JOB_HEARTBEAT_S)

    threading.Thread(target=beat, name=f"{name}-beat", daemon=True).start()
    return stop
