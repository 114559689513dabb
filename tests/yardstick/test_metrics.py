"""/metrics: Prometheus's text format with the request histogram by route, jobs per queue and
status with their durations, expired leases and workers' beats; readable only with the token or
from the machine itself."""

from datetime import timedelta

import pytest
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from benchmarks.models import ImportJob
from inference.models import ModelRun
from jobs.services import record_worker_beat
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def samples(response) -> dict:
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain; version=")
    found = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def test_metrics_count_requests_by_route_and_jobs_by_queue(client, trance_dataset):
    before = samples(client.get("/metrics"))  # the histogram counts from the process's start
    client.force_login(make_user("rita", "researcher"))
    client.get("/health/live")
    client.get("/datasets/999999/")  # a 404 is counted under its route, not its path
    now = timezone.now()
    ModelRun.objects.create(dataset=trance_dataset, baseline="random")  # queued on gpu
    ModelRun.objects.create(
        dataset=trance_dataset,
        baseline="random",
        status="failed",
        started_at=now - timedelta(seconds=30),
        finished_at=now - timedelta(seconds=20),
    )
    ModelRun.objects.create(
        dataset=trance_dataset,
        baseline="random",
        status="failed",
        started_at=now - timedelta(seconds=5),
        finished_at=now,
    )
    record_worker_beat("celery@gpu", ["gpu"], 1, now)
    found = samples(client.get("/metrics"))
    live = (
        "yardstick_http_request_duration_seconds_count",
        (("method", "GET"), ("route", "health/live"), ("status", "2xx")),
    )
    assert found[live] - before.get(live, 0) == 1
    missing = (
        "yardstick_http_request_duration_seconds_count",
        (("method", "GET"), ("route", "datasets/<int:pk>/"), ("status", "4xx")),
    )
    assert found[missing] - before.get(missing, 0) == 1
    assert (
        found[("yardstick_jobs_active", (("kind", "model-run"), ("queue", "gpu"), ("status", "queued")))] == 1
    )
    assert (
        found[("yardstick_jobs_active", (("kind", "import"), ("queue", "imports"), ("status", "queued")))]
        == 0
    )
    assert found[("yardstick_jobs_finished_total", (("kind", "model-run"), ("status", "failed")))] == 2
    assert found[
        ("yardstick_jobs_finished_seconds_total", (("kind", "model-run"), ("status", "failed")))
    ] == pytest.approx(15)
    assert found[("yardstick_annotation_leases_expired_total", ())] == 0
    assert 0 <= found[("yardstick_worker_beat_age_seconds", (("worker", "celery@gpu"),))] < 60
    assert not any(
        key[0].startswith("yardstick_jobs") and dict(key[1]).get("kind") == "scoring" and value
        for key, value in found.items()
    )
    assert ImportJob.queue == "imports"


def test_metrics_are_for_monitoring_only(client, settings):
    remote = client.get("/metrics", REMOTE_ADDR="203.0.113.9")
    assert remote.status_code == 403 and "YARDSTICK_METRICS_TOKEN" in remote.content.decode()
    # Through nginx on the same machine: the address is the loopback, the asker is not.
    assert client.get("/metrics", HTTP_X_FORWARDED_FOR="203.0.113.9").status_code == 403
    settings.METRICS_TOKEN = "s3cret-token"
    assert client.get("/metrics").status_code == 403  # the machine itself now needs the token too
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    assert (
        client.get(
            "/metrics", HTTP_AUTHORIZATION="Bearer s3cret-token", REMOTE_ADDR="203.0.113.9"
        ).status_code
        == 200
    )
