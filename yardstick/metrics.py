"""Prometheus metrics at /metrics: request latency, jobs waiting per queue, job durations and
failures, lease expiries, workers' last signs of life.

Two kinds of figures:

- **Per request** (`yardstick_http_request_duration_seconds`, a histogram by method, route and
  status class): counted by `RequestMetrics` in each web process. Under gunicorn's several worker
  processes set PROMETHEUS_MULTIPROC_DIR to an empty folder before the server starts (scripts/run.sh
  does, under var/) so that a scrape adds up every process; without it a process reports its own.
- **Read from the database at each scrape** (`DatabaseCollector`): the same on every web host,
  whatever broker runs the queues, because the database is what every host shares. Jobs waiting
  and running per queue and kind, finished jobs by status with the sum of their seconds (a
  duration's mean is sum / count), annotation leases that expired, each worker's age of beat.

Who may read it: a bearer token (YARDSTICK_METRICS_TOKEN) when one is set, else only a request from
the machine itself that no proxy passed on (a Prometheus on the host asking gunicorn directly).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import time

from django.apps import apps
from django.conf import settings
from django.db.models import Count, DurationField, ExpressionWrapper, F, Sum
from django.http import HttpResponse, HttpResponseForbidden
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

#: Buckets in seconds: pages answer in tens of milliseconds; an upload scored in the request, seconds.
BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)

REQUEST_SECONDS = Histogram(
    "yardstick_http_request_duration_seconds",
    "Time from a request reaching Django to its response, by route pattern and status class.",
    ["method", "route", "status"],
    buckets=BUCKETS,
)


class RequestMetrics:
    """Middleware (first in the list): times every request, labelled by its URL pattern (never its
    path, which would hold ids), its method and its status class (2xx, 4xx, ...)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = match.route if match is not None and match.route else "unmatched"
        method = (
            request.method if request.method in {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"} else "other"
        )
        REQUEST_SECONDS.labels(method, route, f"{response.status_code // 100}xx").observe(
            time.perf_counter() - started
        )
        return response


def job_models():
    from jobs.models import Job

    return [model for model in apps.get_models() if issubclass(model, Job)]


class DatabaseCollector:
    """What the database says at the moment of the scrape (see the module's docstring)."""

    def collect(self):
        from annotation.models import Assignment
        from jobs.models import ACTIVE, ENDED, WorkerBeat

        waiting = GaugeMetricFamily(
            "yardstick_jobs_active",
            "Jobs queued or running, by queue, kind and status.",
            labels=["queue", "kind", "status"],
        )
        ended = CounterMetricFamily(
            "yardstick_jobs_finished", "Jobs that ended, by kind and status.", labels=["kind", "status"]
        )
        seconds = CounterMetricFamily(
            "yardstick_jobs_finished_seconds",
            "Seconds from a worker taking a job to its end, summed over the jobs that ended, by kind and status.",
            labels=["kind", "status"],
        )
        took = ExpressionWrapper(F("finished_at") - F("started_at"), output_field=DurationField())
        for model in job_models():
            counts = dict(
                model.objects.filter(status__in=ACTIVE).values_list("status").annotate(n=Count("pk"))
            )
            for status in ACTIVE:
                waiting.add_metric([model.queue, model.kind, status], counts.get(status, 0))
            rows = (
                model.objects.filter(status__in=ENDED)
                .values("status")
                .annotate(n=Count("pk"), took=Sum(took))
                .order_by()
            )
            found = {row["status"]: row for row in rows}
            for status in ENDED:
                row = found.get(status, {"n": 0, "took": None})
                ended.add_metric([model.kind, status], row["n"])
                seconds.add_metric([model.kind, status], row["took"].total_seconds() if row["took"] else 0.0)
        yield waiting
        yield ended
        yield seconds
        expired = CounterMetricFamily(
            "yardstick_annotation_leases_expired", "Annotation and validation tasks whose lease ran out."
        )
        expired.add_metric([], Assignment.objects.filter(status=Assignment.Status.EXPIRED).count())
        yield expired
        beats = GaugeMetricFamily(
            "yardstick_worker_beat_age_seconds",
            "Seconds since each worker's last sign of life.",
            labels=["worker"],
        )
        now = timezone.now()
        for name, beat_at in WorkerBeat.objects.values_list("name", "beat_at"):
            beats.add_metric([name], (now - beat_at).total_seconds())
        yield beats


def registry() -> CollectorRegistry:
    """The request histogram (of every process, in multiprocess mode) and the database's figures."""
    scrape = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.MultiProcessCollector(scrape)
    else:
        scrape.register(REQUEST_SECONDS)
    scrape.register(DatabaseCollector())
    return scrape


#: Headers a reverse proxy adds: a request with one came from elsewhere, whatever REMOTE_ADDR says.
PROXY_HEADERS = ("X-Forwarded-For", "X-Real-IP", "Forwarded")


def allowed(request) -> bool:
    token = settings.METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())
    if any(header in request.headers for header in PROXY_HEADERS):
        return False  # passed on by a proxy on this machine: the asker is elsewhere
    try:
        return ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback
    except ValueError:
        return False


@never_cache
@require_GET
def metrics(request):
    if not allowed(request):
        return HttpResponseForbidden(
            "metrics: send the bearer token set in YARDSTICK_METRICS_TOKEN, or ask from the machine itself\n",
            content_type="text/plain",
        )
    return HttpResponse(generate_latest(registry()), content_type=CONTENT_TYPE_LATEST)
