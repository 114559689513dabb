"""Health endpoints: live, ready (database, cache, broker, storage tried for real) and workers
(each queue's workers, from the rows their beat threads write); failures say what, not the secrets."""

import time
from datetime import timedelta

import pytest
from django.db import OperationalError
from django.utils import timezone

from benchmarks import storage
from jobs.models import WorkerBeat
from jobs.services import record_worker_beat, start_worker_beats, worker_stopped
from yardstick import health

pytestmark = pytest.mark.django_db


def test_live_and_ready_answer_ok_without_a_log_in(client):
    assert client.get("/health/live").json() == {"status": "ok"}
    answer = client.get("/health/ready")
    assert answer.status_code == 200 and answer["Cache-Control"].startswith("max-age=0")
    checks = answer.json()["checks"]
    assert set(checks) == {"database", "cache", "broker", "storage"}
    assert all(check["ok"] for check in checks.values())
    assert not any(
        storage.uploads.exists(name) for name in storage.uploads.listdir("health")[1]
    )  # cleaned up


def test_a_failing_dependency_makes_ready_503_naming_it_without_its_error_text(client, monkeypatch):
    class Unreachable:
        def set(self, *args, **kwargs):
            raise ConnectionError("redis://secret-host:6379 refused")

    monkeypatch.setattr(health, "cache", Unreachable())
    answer = client.get("/health/ready")
    assert answer.status_code == 503
    body = answer.json()
    assert body["status"] == "failing"
    assert body["checks"]["cache"] == {
        "ok": False,
        "error": "ConnectionError",
        "ms": body["checks"]["cache"]["ms"],
    }
    assert body["checks"]["database"]["ok"] and body["checks"]["storage"]["ok"]
    assert "secret-host" not in answer.content.decode()


def test_workers_names_each_queue_nobody_consumes(client, settings):
    answer = client.get("/health/workers")
    assert answer.status_code == 503
    assert answer.json()["problems"] == [
        f"queue {name}: no worker heard from in the last {settings.JOB_LOST_AFTER_S:g} s"
        for name in ("celery", "imports", "gpu")
    ]
    record_worker_beat("celery@web", ["celery", "imports"], 11, timezone.now())
    record_worker_beat("celery@gpu-host", ["gpu"], 12, timezone.now())
    answer = client.get("/health/workers")
    assert answer.status_code == 200
    assert answer.json()["queues"]["gpu"]["workers"] == ["celery@gpu-host"]
    # The GPU host stops beating (killed): after JOB_LOST_AFTER_S its queue is reported again.
    WorkerBeat.objects.filter(name="celery@gpu-host").update(
        beat_at=timezone.now() - timedelta(seconds=settings.JOB_LOST_AFTER_S + 1)
    )
    answer = client.get("/health/workers")
    assert answer.status_code == 503 and answer.json()["problems"] == [
        f"queue gpu: no worker heard from in the last {settings.JOB_LOST_AFTER_S:g} s"
    ]
    worker_stopped("celery@web")
    assert list(WorkerBeat.objects.values_list("name", flat=True)) == ["celery@gpu-host"]


@pytest.mark.django_db(transaction=True)
def test_a_worker_s_beat_thread_writes_its_row_until_stopped(settings):
    settings.JOB_HEARTBEAT_S = 0.05

    def beat_of_box():
        """The row, read between the beat thread's writes (SQLite's shared in-memory test database
        answers "table is locked" to a reader while the thread writes: read again)."""
        for _ in range(500):
            try:
                return WorkerBeat.objects.filter(name="celery@box").first()
            except OperationalError:
                time.sleep(0.02)
        raise AssertionError("the worker beat table stayed locked")

    stop = start_worker_beats("celery@box", ["celery", "gpu"], 99)
    try:
        deadline = timezone.now() + timedelta(seconds=30)
        while beat_of_box() is None and timezone.now() < deadline:
            time.sleep(0.02)  # leave the beat thread the interpreter and the database
        first = beat_of_box()
        assert (first.queues, first.pid) == (["celery", "gpu"], 99)
        while beat_of_box().beat_at == first.beat_at and timezone.now() < deadline:
            time.sleep(0.02)
        assert beat_of_box().beat_at > first.beat_at
    finally:
        stop.set()


def test_probes_on_the_host_get_their_answer_not_the_https_redirect(client, settings):
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/health/live").status_code == 200
    assert client.get("/metrics").status_code == 200
    assert client.get("/datasets/").status_code == 301  # the rest still goes to HTTPS
