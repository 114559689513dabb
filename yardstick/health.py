"""Health endpoints for load balancers, orchestrators and monitoring (no log-in, JSON, no secrets).

- `/health/live`: the process answers (nothing else is checked): restart it when this fails.
- `/health/ready`: what this web process needs to serve requests: the database, the cache, the
  broker and the file storage, each tried for real (a query, a write and read, a connection, a
  small file written and deleted). 200 when all answer, else 503. Take the host out of the load
  balancer on 503.
- `/health/workers`: for each Celery queue, the workers heard from within JOB_LOST_AFTER_S (their
  WorkerBeat rows); 503 naming each queue no worker consumes. A monitoring alert, not a reason to
  stop sending people to the web server.

A failed check says what failed and the error's type; the error's text (which may hold host
names) goes to the log only, never to the anonymous caller.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.core.files.base import ContentFile
from django.db import connection
from django.http import JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

logger = logging.getLogger(__name__)


def check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def check_cache() -> None:
    key, value = f"yardstick:health:{uuid.uuid4().hex}", uuid.uuid4().hex
    cache.set(key, value, timeout=30)
    try:
        if cache.get(key) != value:
            raise RuntimeError("the cache did not give back what was written")
    finally:
        cache.delete(key)


def check_broker() -> None:
    from yardstick.celery import app

    with app.connection_for_write() as broker:
        broker.ensure_connection(max_retries=1, timeout=3)


def check_storage() -> None:
    from benchmarks.storage import uploads

    name = uploads.save(f"health/{uuid.uuid4().hex}.txt", ContentFile(b"ok"))
    try:
        with uploads.open(name) as handle:
            if handle.read() != b"ok":
                raise RuntimeError("the storage did not give back what was written")
    finally:
        uploads.delete(name)


CHECKS: dict[str, Callable[[], None]] = {
    "database": check_database,
    "cache": check_cache,
    "broker": check_broker,
    "storage": check_storage,
}


def run_check(name: str, check: Callable[[], None]) -> dict:
    started = time.perf_counter()
    try:
        check()
    except Exception as error:  # any failure of a dependency is an answer here, never a 500
        logger.warning("health check %s failed: %s: %s", name, type(error).__name__, error)
        return {
            "ok": False,
            "error": type(error).__name__,
            "ms": round(1000 * (time.perf_counter() - started), 1),
        }
    return {"ok": True, "ms": round(1000 * (time.perf_counter() - started), 1)}


@never_cache
@require_GET
def live(request):
    return JsonResponse({"status": "ok"})


@never_cache
@require_GET
def ready(request):
    checks = {name: run_check(name, check) for name, check in CHECKS.items()}
    ok = all(result["ok"] for result in checks.values())
    return JsonResponse({"status": "ok" if ok else "failing", "checks": checks}, status=200 if ok else 503)


@never_cache
@require_GET
def workers(request):
    from jobs.models import WorkerBeat

    since = timezone.now() - timedelta(seconds=settings.JOB_LOST_AFTER_S)
    try:
        beats = list(WorkerBeat.objects.filter(beat_at__gte=since))
    except Exception as error:
        logger.warning("health check workers failed: %s: %s", type(error).__name__, error)
        return JsonResponse({"status": "failing", "error": type(error).__name__}, status=503)
    queues = {}
    for queue in (queue.name for queue in settings.CELERY_TASK_QUEUES):
        heard = [beat for beat in beats if queue in beat.queues]
        queues[queue] = {
            "workers": [beat.name for beat in heard],
            "last_beat_s": min(
                ((timezone.now() - beat.beat_at).total_seconds() for beat in heard), default=None
            ),
        }
    missing = [queue for queue, found in queues.items() if not found["workers"]]
    body = {
        "status": "failing" if missing else "ok",
        "queues": queues,
        "problems": [
            f"queue {queue}: no worker heard from in the last {settings.JOB_LOST_AFTER_S:g} s"
            for queue in missing
        ],
    }
    return JsonResponse(body, status=503 if missing else 200)
