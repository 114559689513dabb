"""Faults: a worker killed mid-import, a server restarted mid-trial.

The first runs the distributed set-up for real: a Celery worker on a Redis broker, Redis as the
shared cache (heartbeats, progress), in subprocesses against their own var/ folder. `make test`
starts Redis (scripts/test-redis.sh) and names it in YARDSTICK_TEST_REDIS_URL; elsewhere the test
is skipped, and in CI a missing Redis fails it.
"""

import http.cookiejar
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from django.core.cache import cache

from benchmarks.models import ImportJob
from jobs.models import heartbeat_key
from jobs.services import beating, declare_lost_jobs
from tests.factories import make_user

ROOT = Path(__file__).resolve().parents[2]
CELERY = Path(sys.executable).with_name("celery")
REDIS = os.environ.get("YARDSTICK_TEST_REDIS_URL", "")
embedded_only = pytest.mark.skipif(
    bool(os.environ.get("DATABASE_URL")),
    reason="runs its own SQLite in subprocesses; identical on every test database",
)


# --- the reaper, in process -----------------------------------------------------------------------


@pytest.mark.django_db
def test_a_running_job_without_heartbeat_is_declared_failed_and_one_with_beats_is_left(client, settings):
    from django.utils import timezone

    settings.JOB_LOST_AFTER_S = 60
    user = make_user("rita", "researcher")
    long_ago = timezone.now() - timezone.timedelta(minutes=5)
    lost = ImportJob.objects.create(
        benchmark="cric", name="lost", created_by=user, status="running", started_at=long_ago
    )
    alive = ImportJob.objects.create(
        benchmark="cric", name="alive", created_by=user, status="running", started_at=long_ago
    )
    ImportJob.objects.create(
        benchmark="cric", name="fresh", created_by=user, status="running", started_at=timezone.now()
    )
    cache.set(heartbeat_key("import", alive.pk), time.time())
    client.force_login(user)
    # Pages only read: the job's page shows it running until the worker's reaper has run.
    page = client.get(f"/datasets/import/{lost.pk}/").content.decode()
    assert 'data-status="running"' in page and "stopped" not in page
    assert client.get(f"/api/v1/imports/{lost.pk}/").json()["status"] == "running"
    assert declare_lost_jobs() == {"import": [lost.pk]}
    page = client.get(f"/datasets/import/{lost.pk}/").content.decode()
    assert "the worker running this import stopped (no sign of life for 30" in page  # 5 minutes
    states = dict(ImportJob.objects.values_list("name", "status"))
    assert states == {"lost": "failed", "alive": "running", "fresh": "running"}
    assert declare_lost_jobs() == {}


def test_the_reaper_is_on_the_workers_beat_schedule(settings):
    from celery import current_app

    from jobs.services import _tasks

    entry = settings.CELERY_BEAT_SCHEDULE["declare-lost-jobs"]
    assert entry["task"] in _tasks() and entry["schedule"] == settings.JOB_REAP_EVERY_S
    assert current_app.conf.beat_schedule["declare-lost-jobs"]["task"] == "jobs.declare_lost"
    # make run's worker sends the schedule itself (-B): one machine needs no separate beat.
    assert " worker -B " in (ROOT / "scripts" / "run.sh").read_text()


@pytest.mark.django_db
def test_the_heartbeat_beats_while_the_job_runs_and_stops_after(settings):
    settings.JOB_HEARTBEAT_S = 0.05
    job = ImportJob(pk=41)
    with beating(job):
        first = cache.get(heartbeat_key("import", 41))
        time.sleep(0.2)
        assert cache.get(heartbeat_key("import", 41)) > first
    assert cache.get(heartbeat_key("import", 41)) is None


# --- a real worker on a real Redis broker, killed mid-import --------------------------------------


def environment(tmp_path: Path, **extra: str) -> dict:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DATABASE_URL", "CELERY_", "CACHE_"))
    }
    env.update(YARDSTICK_VAR_DIR=str(tmp_path / "var"), DJANGO_SETTINGS_MODULE="yardstick.settings", **extra)
    return env


def manage(env: dict, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""


def start_worker(env: dict, *options: str) -> subprocess.Popen:
    return subprocess.Popen(
        [str(CELERY), "-A", "yardstick", "worker", "--pool=solo", "--loglevel=INFO", *options],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


START_JOB = """
from django.core.files.base import ContentFile
from benchmarks.services import start_import_job
from tests.factories import make_user
user = make_user("worker-researcher", "researcher")
job = start_import_job(user=user, benchmark="stevqa", name="big", upload=ContentFile(open({path!r}, "rb").read(), name="big.json"))
print(job.pk)
"""

JOB_STATE = """
from benchmarks.models import Dataset, ImportJob
job = ImportJob.objects.get(pk={pk})
print(job.status, Dataset.objects.count(), bool(job.upload), "|".join(job.errors))
"""


@embedded_only
def test_a_worker_killed_mid_import_leaves_the_job_failed_never_running(tmp_path):
    if not REDIS:
        if os.environ.get("CI"):
            pytest.fail(
                "YARDSTICK_TEST_REDIS_URL is not set: `make test` starts Redis (scripts/test-redis.sh)"
            )
        pytest.skip("needs Redis: run through `make test`, or set YARDSTICK_TEST_REDIS_URL")
    import redis

    broker, shared_cache = f"{REDIS}/3", f"{REDIS}/4"
    for url in (broker, shared_cache):
        redis.Redis.from_url(url).flushdb()
    env = environment(
        tmp_path,
        CELERY_BROKER_URL=broker,
        CACHE_URL=shared_cache,
        YARDSTICK_JOB_HEARTBEAT_S="0.5",
        YARDSTICK_JOB_LOST_AFTER_S="3",
    )
    source = tmp_path / "big.json"
    evidence = ["1", "1", "9", "1", "9", "9", "1", "9"]
    source.write_text(
        json.dumps(
            [
                {"question_id": i, "question": f"what is sign {i}?", "answer": "stop", "evidence": evidence}
                for i in range(400_000)
            ]
        )
    )
    manage(env, "migrate", "-v0")
    worker = start_worker(env)
    try:
        job_id = manage(env, "shell", "-v0", "-c", START_JOB.format(path=str(source)))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not manage(
            env, "shell", "-v0", "-c", JOB_STATE.format(pk=job_id)
        ).startswith("running"):
            time.sleep(0.2)
        time.sleep(1.5)  # well inside the import: reading, checking, writing rows in its transaction
        assert manage(env, "shell", "-v0", "-c", JOB_STATE.format(pk=job_id)).startswith("running 0")
        os.killpg(worker.pid, signal.SIGKILL)  # as the out-of-memory killer or a lost machine would
        worker.wait(timeout=30)
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
    assert manage(env, "shell", "-v0", "-c", JOB_STATE.format(pk=job_id)).startswith("running")
    time.sleep(3.5)
    # The next worker to start declares the job lost: failed, nothing loaded, its upload removed.
    replacement = start_worker(env)
    try:
        deadline = time.monotonic() + 60
        state = ""
        while time.monotonic() < deadline:
            state = manage(env, "shell", "-v0", "-c", JOB_STATE.format(pk=job_id))
            if state.startswith("failed"):
                break
            time.sleep(0.5)
    finally:
        replacement.send_signal(signal.SIGTERM)
        replacement.communicate(timeout=30)
    assert state.startswith("failed 0 False the worker running this import stopped"), state


# --- the web server restarted mid-trial -------------------------------------------------------------

PLAN = """
from humantest.plans import create_test_plan
from benchmarks.services import import_dataset
from accounts.roles import sync_roles
from tests.factories import make_user
from plugins.trance.generator import generate
from pathlib import Path
folder = Path({folder!r})
generate(folder, count=4, seed=3, workers=1)
dataset = import_dataset(benchmark="trance", data=(folder / "data.jsonl").read_bytes(), name="t", images_dir=folder)
tester = make_user("tess", "tester")
plan = create_test_plan(created_by=make_user("rita", "researcher"), testers=[tester], name="Restart", dataset=dataset,
                        setting="event", items_per_tester=2, time_limit_s=600)
print(plan.pk)
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Browser:
    """Just enough of a browser: cookies, the CSRF token, following redirects."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))

    def csrf(self) -> str:
        return next(cookie.value for cookie in self.cookies if cookie.name == "csrftoken")

    def get(self, path: str) -> str:
        return self.opener.open(self.base + path, timeout=30).read().decode()

    def post(self, path: str, data: dict | None = None, body: dict | None = None) -> str:
        headers = {"X-CSRFToken": self.csrf(), "Referer": self.base + path}
        if body is not None:
            payload, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
        else:
            payload = urllib.parse.urlencode({"csrfmiddlewaretoken": self.csrf(), **(data or {})}).encode()
        request = urllib.request.Request(self.base + path, data=payload, headers=headers)
        return self.opener.open(request, timeout=30).read().decode()


def trial_data(page: str) -> dict:
    return json.loads(
        re.search(r'<script id="trial-data" type="application/json">(.*?)</script>', page, re.S)[1]
    )


@embedded_only
def test_the_web_server_restarted_mid_trial_loses_nothing(tmp_path):
    port = free_port()
    env = environment(
        tmp_path,
        DJANGO_DEBUG="0",
        DJANGO_SECURE_SSL_REDIRECT="0",
        DJANGO_SESSION_COOKIE_SECURE="0",
        DJANGO_CSRF_COOKIE_SECURE="0",
    )
    manage(env, "migrate", "-v0")
    plan = manage(env, "shell", "-v0", "-c", PLAN.format(folder=str(tmp_path / "trance")))

    def serve() -> subprocess.Popen:
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload", "--insecure"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return server
            except OSError:
                time.sleep(0.2)
        raise AssertionError("the server did not start")

    server = serve()
    browser = Browser(f"http://127.0.0.1:{port}")
    try:
        browser.get("/accounts/login/")
        browser.post("/accounts/login/", {"username": "tess", "password": "a-long-test-password"})
        brief = browser.post(f"/test/plans/{plan}/start/")
        session = re.search(r"/test/sessions/(\d+)/begin/", brief)[1]
        browser.post(f"/test/sessions/{session}/begin/")
        before = trial_data(browser.get(f"/test/sessions/{session}/"))
        os.killpg(server.pid, signal.SIGKILL)  # the server dies mid-trial
        server.wait(timeout=30)
        server = serve()
        after = trial_data(browser.get(f"/test/sessions/{session}/"))
        # The same trial, with the clock the server started before it died.
        assert (after["trial"], after["served_at"]) == (before["trial"], before["served_at"])
        assert after["remaining_ms"] <= before["remaining_ms"]
        result = json.loads(
            browser.post(
                after["answer_url"],
                body={"answer": {"steps": [{"obj_idx": 0, "attr": "color", "val": "red"}]}},
            )
        )
        assert result["status"] == "answered"
    finally:
        os.killpg(server.pid, signal.SIGKILL)
