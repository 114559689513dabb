"""Hosts that share no disk: the web server, a CPU worker, a GPU-queue worker and beat, each a
process with its own var/, media, uploads, checkpoint and file-cache folders, sharing only what a
deployment shares: PostgreSQL, Redis (broker and cache) and the object store (moto's S3 server).

Through HTTP against the web server only: an import with its images (run by the CPU worker, the
images in the bucket, no host's media folder holding a file), a TranceNet run (run by the GPU worker
from its own copies of the images), a tester's trial (its image streamed from the store, the answer
taken), the health endpoints, and a GPU worker killed mid-run (beat's reaper, on the CPU worker,
fails the run as lost).

`make test-postgres` starts PostgreSQL and Redis and names them (DATABASE_URL,
YARDSTICK_TEST_REDIS_URL); elsewhere the test is skipped, and in CI a PostgreSQL run without Redis
fails it.
"""

from __future__ import annotations

import io
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
import httpx
import pytest

from tests.factories import PASSWORD
from tests.s3 import free_port
from tests.yardstick.test_faults import ROOT, Browser, environment, manage, trial_data

DATABASE_URL = os.environ.get("DATABASE_URL", "")
ON_POSTGRES = bool(DATABASE_URL) and "postgresql" in dj_database_url.parse(DATABASE_URL)["ENGINE"]
REDIS = os.environ.get("YARDSTICK_TEST_REDIS_URL", "")
BIN = Path(sys.executable).parent
#: Redis databases of this test (test_faults.py uses 3 and 4).
BROKER_DB, CACHE_DB = 5, 6
LOST_AFTER_S = 4

pytestmark = pytest.mark.skipif(
    not ON_POSTGRES, reason="the hosts share a PostgreSQL server: runs in `make test-postgres` (DATABASE_URL)"
)


# --- what the hosts share ---------------------------------------------------------------------------


@pytest.fixture
def redis_dbs():
    """The broker's and the cache's Redis URLs, both databases emptied before and after."""
    if not REDIS:
        if os.environ.get("CI"):
            pytest.fail(
                "YARDSTICK_TEST_REDIS_URL is not set: `make test-postgres` starts Redis (scripts/test-redis.sh)"
            )
        pytest.skip("needs Redis: run through `make test-postgres`, or set YARDSTICK_TEST_REDIS_URL")
    import redis

    urls = f"{REDIS}/{BROKER_DB}", f"{REDIS}/{CACHE_DB}"
    for url in urls:
        redis.Redis.from_url(url).flushdb()
    yield urls
    for url in urls:
        redis.Redis.from_url(url).flushdb()


@pytest.fixture
def database():
    """The URL of a fresh database on DATABASE_URL's server, dropped at the end."""
    import psycopg2

    name = f"yardstick_multihost_{secrets.token_hex(6)}"
    params = dj_database_url.parse(DATABASE_URL)
    admin = psycopg2.connect(
        dbname="postgres",
        user=params["USER"] or None,
        password=params["PASSWORD"] or None,
        host=params["HOST"] or None,
        port=params["PORT"] or None,
    )
    admin.autocommit = True
    try:
        with admin.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{name}"')
        yield urlsplit(DATABASE_URL)._replace(path=f"/{name}").geturl()
        with admin.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.close()


# --- hosts and their processes ----------------------------------------------------------------------


@dataclass
class Host:
    name: str
    folder: Path
    env: dict

    @property
    def media_root(self) -> Path:
        return self.folder / "media"

    @property
    def uploads_root(self) -> Path:
        return self.folder / "uploads"

    @property
    def file_cache(self) -> Path:
        return self.folder / "file-cache"


def make_host(root: Path, name: str, shared: dict[str, str]) -> Host:
    """A host's environment: the shared services, and folders of its own under root/name."""
    folder = root / name
    own = {
        "MEDIA_ROOT": str(folder / "media"),
        "YARDSTICK_UPLOADS_ROOT": str(folder / "uploads"),
        "YARDSTICK_CHECKPOINT_DIR": str(folder / "checkpoints"),
        "YARDSTICK_FILE_CACHE_DIR": str(folder / "file-cache"),
        "PROMETHEUS_MULTIPROC_DIR": str(folder / "prometheus"),
    }
    (folder / "prometheus").mkdir(parents=True)
    env = environment(folder, **own, **shared)  # YARDSTICK_VAR_DIR: folder/var
    # Nothing of this test process's own set-up reaches a host: no pytest variables, no other
    # YARDSTICK_* setting than the ones above (a host looks like a deployed one).
    mine = {*own, *shared, "YARDSTICK_VAR_DIR"}
    return Host(
        name,
        folder,
        {
            key: value
            for key, value in env.items()
            if not key.startswith("PYTEST_") and (not key.startswith("YARDSTICK_") or key in mine)
        },
    )


class Processes:
    """Processes started in their own process groups, each logging to a file; all killed at the end."""

    def __init__(self) -> None:
        self.started: dict[str, tuple[subprocess.Popen, Path]] = {}

    def start(self, name: str, host: Host, *command: str) -> subprocess.Popen:
        log = host.folder / f"{name}.log"
        with log.open("wb") as stream:
            process = subprocess.Popen(
                list(command),
                cwd=ROOT,
                env=host.env,
                stdin=subprocess.DEVNULL,
                stdout=stream,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.started[name] = (process, log)
        return process

    def kill(self, name: str) -> None:
        """SIGKILL the process's whole group, as a machine lost would."""
        process, _ = self.started[name]
        kill_group(process.pid, signal.SIGKILL)
        process.wait(timeout=30)

    def stop_all(self) -> None:
        for process, _ in self.started.values():
            kill_group(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for process, _ in self.started.values():
            with suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            kill_group(process.pid, signal.SIGKILL)  # whatever is left of the group, children too
            process.wait(timeout=30)

    def logs(self, lines: int = 40) -> str:
        """The last lines of each process's log, for a failure's message."""
        parts = []
        for name, (process, log) in self.started.items():
            tail = log.read_text(errors="replace").splitlines()[-lines:] if log.exists() else []
            parts.append(f"--- {name} (exit {process.poll()}) ---\n" + "\n".join(tail))
        return "\n".join(parts)


def kill_group(pid: int, sig: int) -> None:
    with suppress(ProcessLookupError):
        os.killpg(pid, sig)


def wait_for(what: str, read: Callable[[], object], done: Callable[[object], bool], timeout: float, logs):
    """Read until `done` says so; else fail naming `what`, the last reading and the processes' logs."""
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        try:
            value = read()
        except (httpx.TransportError, ConnectionError) as error:
            value = error
        else:
            if done(value):
                return value
        time.sleep(0.25)
    pytest.fail(f"{what}: not within {timeout:g} s; last: {value!r}\n{logs()}")


def files_under(folder: Path) -> list[Path]:
    """The files under `folder`, without the file cache's marks (`.used`: when a folder was read)."""
    if not folder.exists():
        return []
    return sorted(path for path in folder.rglob("*") if path.is_file() and path.name != ".used")


def keys(client, bucket: str, prefix: str) -> list[str]:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return [entry["Key"] for page in pages for entry in page.get("Contents", [])]


USERS = """
from tests.factories import make_user
make_user("rita", "researcher")
make_user("tess", "tester")
"""

PLAN = """
from django.contrib.auth import get_user_model
from benchmarks.models import Dataset
from humantest.plans import create_test_plan
users = get_user_model().objects
plan = create_test_plan(created_by=users.get(username="rita"), testers=[users.get(username="tess")],
                        name="Multi-host", dataset=Dataset.objects.get(pk={dataset}), setting="event",
                        items_per_tester=2, time_limit_s=600)
print(plan.pk)
"""

ENDED = ("succeeded", "failed", "cancelled")


def test_web_and_workers_on_hosts_that_share_no_disk(tmp_path, redis_dbs, database, s3_server):
    from plugins.trance.generator import generate

    broker, shared_cache = redis_dbs
    bucket = s3_server.new_bucket()
    s3 = s3_server.client()
    shared = {
        "DATABASE_URL": database,
        "CELERY_BROKER_URL": broker,
        "CACHE_URL": shared_cache,
        **s3_server.settings_for(bucket),
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_DEBUG": "0",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        # Plain HTTP, as conftest.plain_http relaxes it in process.
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "DJANGO_SECURE_HSTS_SECONDS": "0",
        "DJANGO_SESSION_COOKIE_SECURE": "0",
        "DJANGO_CSRF_COOKIE_SECURE": "0",
        "YARDSTICK_WORKERS_ELSEWHERE": "1",
        "YARDSTICK_JOB_HEARTBEAT_S": "0.5",
        "YARDSTICK_JOB_LOST_AFTER_S": str(LOST_AFTER_S),
        "YARDSTICK_JOB_REAP_EVERY_S": "1",
    }
    web, cpu, gpu, beat = (make_host(tmp_path, name, shared) for name in ("web", "worker", "gpu", "beat"))
    hosts = (web, cpu, gpu, beat)

    samples = tmp_path / "samples"
    generate(samples, count=4, seed=3, workers=1)
    images = {path.name: path.read_bytes() for path in samples.glob("*.png")}
    assert len(images) == 16  # 4 samples x (initial + 3 final views)

    manage(web.env, "migrate", "--no-input", "-v0")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    processes = Processes()
    hang = socket.socket()  # a served model's endpoint that takes the request and never answers
    try:
        celery = str(BIN / "celery")
        processes.start(
            "web", web, str(BIN / "gunicorn"), "yardstick.wsgi", "-b", f"127.0.0.1:{port}", "-w", "2"
        )
        worker = (celery, "-A", "yardstick", "worker", "--loglevel=INFO", "-c", "1")
        processes.start("cpu-worker", cpu, *worker, "-Q", "celery,imports", "-n", "cpu@%h")
        processes.start("gpu-worker", gpu, *worker, "-Q", "gpu", "-n", "gpu@%h")
        processes.start("beat", beat, celery, "-A", "yardstick", "beat", "--loglevel=INFO")
        manage(web.env, "shell", "-v0", "-c", USERS)
        logs = processes.logs

        http = httpx.Client(base_url=base, timeout=60)
        wait_for("the web server", lambda: http.get("/health/live").status_code, lambda s: s == 200, 30, logs)
        token = http.post("/api/v1/auth/token/", data={"username": "rita", "password": PASSWORD})
        assert token.status_code == 200, token.text
        api = httpx.Client(
            base_url=base, timeout=60, headers={"Authorization": f"Token {token.json()['token']}"}
        )

        # 1. An import with its images: the CPU worker runs it; the images land in the bucket only.
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as zipped:
            for name, data in images.items():
                zipped.writestr(name, data)
        started = api.post(
            "/api/v1/imports/",
            data={"benchmark": "trance", "name": "Multi-host"},
            files={
                "upload": ("data.jsonl", (samples / "data.jsonl").read_bytes()),
                "images_upload": ("images.zip", archive.getvalue(), "application/zip"),
            },
        )
        assert started.status_code == 201, started.text
        job = wait_for(
            "the import",
            lambda: api.get(f"/api/v1/imports/{started.json()['id']}/").json(),
            lambda job: job["status"] in ENDED,
            45,
            logs,
        )
        assert job["status"] == "succeeded", job["errors"]
        dataset = job["dataset"]
        stored = keys(s3, bucket, f"media/datasets/{dataset}/")
        assert sorted(key.rsplit("/", 1)[-1] for key in stored) == sorted(images)
        for host in hosts:
            assert files_under(host.media_root) == [], host.name
            assert files_under(host.uploads_root) == [], host.name
        assert keys(s3, bucket, "uploads/imports/") == []  # the upload and the zip, removed by the worker

        # 2. A TranceNet run on the GPU queue: that worker fetches the images into its own cache.
        started = api.post(
            "/api/v1/model-runs/",
            json={"dataset": dataset, "baseline": "trancenet", "setting": "event", "device": "cpu"},
        )
        assert started.status_code == 201, started.text
        run = wait_for(
            "the TranceNet run",
            lambda: api.get(f"/api/v1/model-runs/{started.json()['id']}/").json(),
            lambda run: run["status"] in ENDED,
            60,
            logs,
        )
        assert run["status"] == "succeeded", run["error"]
        assert (run["done"], run["total"], run["used_device"]) == (4, 4, "cpu")
        assert run["submission"] is not None and run["summary"]["n"] == 4  # scored: 4 samples
        fetched = gpu.file_cache / "media" / "datasets" / str(dataset)
        assert sorted(path.name for path in files_under(fetched)) == sorted(images)
        assert all((fetched / name).read_bytes() == data for name, data in images.items())
        for host in (web, cpu, beat):
            assert not (host.file_cache / "media").exists(), host.name
        # The run's predictions are the one file in uploads/: the import's files were removed.
        [predictions] = keys(s3, bucket, "uploads/")
        assert re.fullmatch(
            rf"uploads/model-runs/\d{{4}}/\d{{2}}/run-{run['id']}-predictions\.json", predictions
        )
        for host in hosts:
            assert files_under(host.media_root) == [] and files_under(host.uploads_root) == [], host.name

        # 3. The health endpoints, from the loopback address as a probe on the web host reads them.
        ready = http.get("/health/ready")
        assert ready.status_code == 200, ready.text
        assert {name: check["ok"] for name, check in ready.json()["checks"].items()} == {
            "database": True,
            "cache": True,
            "broker": True,
            "storage": True,
        }
        assert keys(s3, bucket, "uploads/") == [predictions]  # its test file, written and removed
        workers = wait_for(
            "/health/workers hearing from both workers",
            lambda: http.get("/health/workers"),
            lambda answer: answer.status_code == 200,
            10,
            logs,
        )
        queues = {name: queue["workers"] for name, queue in workers.json()["queues"].items()}
        assert [name.split("@")[0] for name in queues["celery"]] == ["cpu"]
        assert [name.split("@")[0] for name in queues["imports"]] == ["cpu"]
        assert [name.split("@")[0] for name in queues["gpu"]] == ["gpu"]

        # 4. A tester's trial: its image streamed from the store through the web server, the answer kept.
        plan = manage(web.env, "shell", "-v0", "-c", PLAN.format(dataset=dataset))
        browser = Browser(base)
        browser.get("/accounts/login/")
        browser.post("/accounts/login/", {"username": "tess", "password": PASSWORD})
        brief = browser.post(f"/test/plans/{plan}/start/")
        session = re.search(r"/test/sessions/(\d+)/begin/", brief)[1]
        browser.post(f"/test/sessions/{session}/begin/")
        trial = trial_data(browser.get(f"/test/sessions/{session}/"))
        for role in ("initial_image", "final_image"):
            url = "/" + trial["view"][role].lstrip("/")
            assert url.startswith(f"/media/datasets/{dataset}/")
            with browser.opener.open(base + url, timeout=30) as image:
                assert (image.status, image.headers["Content-Type"]) == (200, "image/png")
                assert image.read() == images[url.rsplit("/", 1)[-1]]
        answer = browser.post(
            trial["answer_url"], body={"answer": {"steps": [{"obj_idx": 0, "attr": "color", "val": "red"}]}}
        )
        assert json.loads(answer)["status"] == "answered", answer
        assert files_under(web.media_root) == [] and not (web.file_cache / "media").exists()

        # 5. The GPU worker's machine is lost mid-run: beat's reaper (on the CPU worker) fails the run.
        hang.bind(("127.0.0.1", 0))
        hang.listen(16)
        endpoint = f"http://127.0.0.1:{hang.getsockname()[1]}/"
        options = {"endpoint": endpoint, "protocol": "yardstick", "timeout_s": 600, "retries": 0}
        started = api.post(
            "/api/v1/model-runs/",
            json={"dataset": dataset, "baseline": "served", "setting": "event", "options": options},
        )
        assert started.status_code == 201, started.text
        follow = f"/api/v1/model-runs/{started.json()['id']}/"
        wait_for(
            "the served run answering",
            lambda: api.get(follow).json(),
            lambda run: (run["status"], run["stage"]) == ("running", "answering") or run["status"] in ENDED,
            30,
            logs,
        )
        time.sleep(1)  # well inside the request the endpoint never answers
        assert api.get(follow).json()["status"] == "running"
        processes.kill("gpu-worker")
        killed = time.monotonic()
        run = wait_for(
            "the lost run failed",
            lambda: api.get(follow).json(),
            lambda run: run["status"] in ENDED,
            15,
            logs,
        )
        assert run["status"] == "failed" and run["stage"] == "worker lost", run
        assert re.fullmatch(
            r"the worker running this model stopped \(no sign of life for \d+ s\) after 0 of 4 units; "
            r"no submission was made: start the run again",
            run["error"],
        ), run["error"]
        assert run["submission"] is None
        assert time.monotonic() - killed >= LOST_AFTER_S - 1  # not before its beats were due
        gone = wait_for(
            "/health/workers missing the GPU worker",
            lambda: http.get("/health/workers"),
            lambda answer: answer.status_code == 503,
            5,
            logs,
        )
        assert gone.json()["problems"] == [f"queue gpu: no worker heard from in the last {LOST_AFTER_S} s"]
    finally:
        hang.close()
        processes.stop_all()
