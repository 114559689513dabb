"""Benchmark: 20 concurrent testers taking a timed TRANCE test through gunicorn on PostgreSQL.

Usage:  .venv/bin/python -m perf.humantest_load [--testers 20] [--trials 30] [--workers 2] [--threads 1]
        [--configs 2x1,4x1]   (several gunicorn configs, workers x threads, one after the other)
        [--think-ms 0,1000]   (mean pause of a tester between seeing a trial and answering it;
                               several values run every config at each; the default runs both)
        [--celery-worker]     (run one Celery worker beside gunicorn for the summarize tasks)
(`make perf` runs it with the defaults). PostgreSQL is the throw-away server of
scripts/test-postgres.sh; the benchmark gets a database of its own (yardstick_humantest_perf),
dropped at the end. Results are appended to perf/results/humantest_load.jsonl and the latest
run is written to perf/results/humantest_load.md.

Target (issue): serving the next trial and recording an answer, with 20 concurrent testers on
PostgreSQL, each under 100 ms at the 95th percentile on the 2-core machine.

What is measured: the app as deployed, `gunicorn yardstick.wsgi` with DJANGO_DEBUG off. Every
tester is a client thread of this process (http.client, a new connection per request, its own
session cookie and CSRF token) that logs in, starts the plan, begins the test, then loops
without pause (or pausing --think-ms): GET the session page ("serve next trial": the server picks
the next open trial, starts its clock and renders it; the trial id is read from the page's
`trial-data` JSON) and POST an answer to it ("record answer": checked, scored, stored as a
Prediction; the summarize task it enqueues goes to Celery's filesystem broker in a temporary
folder, run by one worker on the same machine with --celery-worker and never run without).
Latencies are taken by the clients, from sending the request to reading the whole response; the
first --warmup trials of every tester are left out. Gunicorn's access log gives the time each
request spent inside a worker (no queueing in the listen backlog), and /proc gives the CPU used
by gunicorn, PostgreSQL, the Celery worker and the clients. Every response must be 200 and every
trial id must reach exactly one tester, once; the run fails otherwise.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.cookies import SimpleCookie
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "perf" / "results"
PG_SCRIPT = ROOT / "scripts" / "test-postgres.sh"
DB_NAME = "yardstick_humantest_perf"
PASSWORD = "perf-tester-password"  # noqa: S105 (throw-away users of a throw-away database)
TARGET_MS = 100.0
TRIAL_DATA = re.compile(r'<script id="trial-data" type="application/json">(.*?)</script>', re.S)
SESSION_URL = re.compile(r"/test/sessions/(\d+)/$")
OPS = ("serve", "answer")
OP_TITLES = {"serve": "serve next trial (GET session page)", "answer": "record answer (POST JSON)"}


class LoadFailure(Exception):
    """A wrong status, a trial id seen twice, or anything else that makes the numbers meaningless."""


# --- the setup -------------------------------------------------------------------------------------


def psql(base: str, sql: str) -> str:
    return subprocess.run(
        ["psql", f"{base}/postgres", "-qAtc", sql], check=True, capture_output=True, text=True
    ).stdout.strip()


def build_data(workdir: Path, *, samples: int, testers: int, seed: int):
    """The dataset and the tester accounts, in the benchmark database (Django is set up here)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import Group
    from django.core.management import call_command

    from accounts.roles import TESTER
    from benchmarks.services import import_dataset
    from plugins.trance.generator import generate

    call_command("migrate", verbosity=0)
    out_dir = workdir / "trance"
    generate(out_dir, count=samples, seed=seed, workers=2, render_images=False)
    dataset = import_dataset(
        benchmark="trance",
        data=(out_dir / "data.jsonl").read_bytes(),
        name="perf-humantest",
        source="data.jsonl",
    )
    user_model = get_user_model()
    hashed = make_password(PASSWORD)  # hashed once: every tester has the same password
    user_model.objects.bulk_create(
        [user_model(username=f"perf-tester-{index:02d}", password=hashed) for index in range(testers)]
        + [user_model(username="perf-probe", password=hashed)]
    )
    users = list(user_model.objects.filter(username__startswith="perf-tester-").order_by("username"))
    testers_group = Group.objects.get(name=TESTER)  # created by the migrations (accounts.roles)
    testers_group.user_set.add(*users, user_model.objects.get(username="perf-probe"))
    return dataset, users


def make_plan(dataset, users, *, name: str, trials: int, seed: int):
    from humantest.models import TestPlan

    plan = TestPlan.objects.create(
        name=name,
        dataset=dataset,
        setting="event",
        items_per_tester=trials,
        time_limit_s=120,
        seed=seed,
    )
    plan.testers.set(users)
    return plan


def count_queries(dataset, trials: int) -> dict[str, int]:
    """SQL queries of one serve and one answer, taken in-process with Django's test client."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    probe = get_user_model().objects.get(username="perf-probe")
    plan = make_plan(dataset, [probe], name="perf query count", trials=trials, seed=99)
    client = Client()
    client.force_login(probe)
    session_url = client.post(f"/test/plans/{plan.pk}/start/")["Location"]
    client.post(f"{session_url}begin/")
    counts = {}
    for _ in range(2):  # the second round is the one reported (the first warms caches)
        with CaptureQueriesContext(connection) as serve:
            page = client.get(session_url)
        data = json.loads(TRIAL_DATA.search(page.content.decode()).group(1))
        body = {"answer": {"steps": [{"obj_idx": 0, "attr": "color", "val": "red"}]}, "client": {}}
        with CaptureQueriesContext(connection) as answer:
            reply = client.post(data["answer_url"], json.dumps(body), content_type="application/json")
        if page.status_code != 200 or reply.status_code != 200:
            raise LoadFailure(f"query count: serve {page.status_code}, answer {reply.status_code}")
        counts = {"serve": len(serve), "answer": len(answer)}
    return counts


# --- the server ------------------------------------------------------------------------------------


def deployed_env(database_url: str, workdir: Path, name: str, **extra: str) -> dict[str, str]:
    """The environment of the app as deployed (DEBUG off), on plain HTTP over loopback, for a run
    of perf/mixed_load.py or perf/annotation_queue.py; `extra` adds or overrides variables."""
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "yardstick.settings",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": f"perf-{name}-not-a-secret-" + "x" * 30,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "DJANGO_SESSION_COOKIE_SECURE": "0",
        "DJANGO_CSRF_COOKIE_SECURE": "0",
        "DJANGO_SECURE_HSTS_SECONDS": "0",
        "YARDSTICK_VAR_DIR": str(workdir / "var"),
        "LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
        **extra,
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_gunicorn(env: dict, *, workers: int, threads: int, port: int, logdir: Path) -> subprocess.Popen:
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "yardstick.wsgi",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--worker-class",
        "gthread" if threads > 1 else "sync",
        "--threads",
        str(threads),
        "--access-logfile",
        str(logdir / "access.log"),
        "--access-logformat",
        "%(m)s %(U)s %(s)s %(D)s",
        "--error-logfile",
        str(logdir / "error.log"),
        "--log-level",
        "warning",
    ]
    with open(logdir / "output.log", "ab") as output:  # Django's console logging, kombu's warnings
        server = subprocess.Popen(command, env=env, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            logs = (logdir / "error.log").read_text() + (logdir / "output.log").read_text()
            raise LoadFailure(f"gunicorn exited with {server.returncode}: {logs[-3000:]}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/accounts/login/")
            if connection.getresponse().status == 200:
                connection.close()
                return server
        except OSError:
            pass
        time.sleep(0.2)
    server.terminate()
    raise LoadFailure("gunicorn did not answer within 60 s")


def start_celery_worker(env: dict, logdir: Path) -> subprocess.Popen:
    """One Celery worker process (solo pool) beside the web server, as `make run` has on one machine."""
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "yardstick",
        "worker",
        "--pool",
        "solo",
        "--loglevel",
        "WARNING",
    ]
    command += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
    with open(logdir / "celery.log", "ab") as output:
        return subprocess.Popen(command, env=env, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT)


def stop_gunicorn(server: subprocess.Popen | None) -> None:
    if server is None or server.poll() is not None:
        return
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


# --- CPU accounting --------------------------------------------------------------------------------

TICK = os.sysconf("SC_CLK_TCK")


def process_table() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds of the process and of its children that have ended)."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        # after the name: state ppid ... utime(11) stime(12) cutime(13) cstime(14), 0-based from state
        table[int(entry)] = (int(fields[1]), sum(int(value) for value in fields[11:15]) / TICK)
    return table


def tree_cpu(table: dict[int, tuple[int, float]], root: int | None) -> float:
    if root is None or root not in table:
        return 0.0
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    total, stack = 0.0, [root]
    while stack:
        pid = stack.pop()
        total += table[pid][1]
        stack.extend(children.get(pid, ()))
    return total


def machine_busy() -> float:
    """CPU seconds the whole machine has been busy (all cores)."""
    values = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]
    return (sum(values[:8]) - idle) / TICK


def postmaster_pid() -> int | None:
    folder = Path(os.environ.get("YARDSTICK_PGDIR", f"/tmp/yardstick-pg-{os.getuid()}"))
    try:
        return int((folder / "data" / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def cpu_snapshot(server_pid: int, pg_pid: int | None, worker_pid: int | None) -> dict[str, float]:
    table = process_table()
    times = os.times()
    return {
        "app": tree_cpu(table, server_pid),
        "db": tree_cpu(table, pg_pid),
        "tasks": tree_cpu(table, worker_pid),
        "client": times.user + times.system,
        "machine": machine_busy(),
        "wall": time.monotonic(),
    }


# --- the testers -----------------------------------------------------------------------------------


class Tester:
    """One browser: a cookie jar, a CSRF token and a new connection per request."""

    def __init__(self, port: int, username: str) -> None:
        self.port = port
        self.username = username
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, body: bytes | None = None, content_type: str = ""):
        headers = {"Connection": "close"}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{key}={value}" for key, value in self.cookies.items())
        if method == "POST":
            headers["X-CSRFToken"] = self.cookies.get("csrftoken", "")
            headers["Content-Type"] = content_type or "application/x-www-form-urlencoded"
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            content = response.read()
        finally:
            connection.close()
        for header in response.headers.get_all("Set-Cookie") or ():
            for key, morsel in SimpleCookie(header).items():
                self.cookies[key] = morsel.value
        return response.status, response.headers, content

    def expect(self, status: int, wanted: int, what: str, content: bytes = b"") -> None:
        if status != wanted:
            raise LoadFailure(
                f"{self.username}: {what} answered {status}, expected {wanted}: {content[:300]!r}"
            )

    def post_form(self, path: str, fields: dict[str, str] | None = None):
        data = {"csrfmiddlewaretoken": self.cookies.get("csrftoken", ""), **(fields or {})}
        return self.request("POST", path, urllib.parse.urlencode(data).encode())

    def log_in_and_begin(self, plan_pk: int) -> str:
        status, _, content = self.request("GET", "/accounts/login/")
        self.expect(status, 200, "login page", content)
        status, headers, content = self.post_form(
            "/accounts/login/", {"username": self.username, "password": PASSWORD}
        )
        self.expect(status, 302, "login", content)
        status, headers, content = self.post_form(f"/test/plans/{plan_pk}/start/")
        self.expect(status, 302, "start", content)
        session_url = urllib.parse.urlsplit(headers["Location"]).path
        if not SESSION_URL.search(session_url):
            raise LoadFailure(f"{self.username}: start sent to {session_url}, not a session page")
        status, _, content = self.post_form(f"{session_url}begin/")
        self.expect(status, 302, "begin", content)
        return session_url


class Load:
    """What all testers share: the owner of every trial id seen, the samples and the failures."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.owner: dict[int, str] = {}
        self.samples: list[dict] = []  # {"op", "tester", "index", "start", "seconds", "trial"}
        self.failures: list[str] = []

    def claim(self, trial: int, username: str) -> None:
        with self.lock:
            holder = self.owner.setdefault(trial, username)
        if holder != username:
            raise LoadFailure(f"trial {trial} was served to {holder} and to {username}")

    def fail(self, message: str) -> None:
        with self.lock:
            self.failures.append(message)


def run_tester(
    tester: Tester,
    plan_pk: int,
    trials: int,
    think_ms: float,
    load: Load,
    barrier: threading.Barrier,
    seed: int,
) -> None:
    rng = random.Random(seed)
    samples = []
    try:
        session_url = tester.log_in_and_begin(plan_pk)
    except Exception as error:  # noqa: BLE001 (reported, and the other testers are released)
        load.fail(f"{tester.username}: setting up: {error!r}")
        barrier.abort()
        return
    try:
        barrier.wait()
        seen: set[int] = set()
        for index in range(trials):
            started = time.perf_counter()
            status, _, content = tester.request("GET", session_url)
            served = time.perf_counter()
            tester.expect(status, 200, f"serve #{index + 1}", content)
            found = TRIAL_DATA.search(content.decode())
            if not found:
                raise LoadFailure(
                    f"{tester.username}: serve #{index + 1} has no trial-data: {content[:300]!r}"
                )
            data = json.loads(found.group(1))
            trial = data["trial"]
            if trial in seen:
                raise LoadFailure(f"{tester.username}: trial {trial} served again after it was answered")
            seen.add(trial)
            load.claim(trial, tester.username)
            if data["practice"]:
                raise LoadFailure(f"{tester.username}: serve #{index + 1} is a practice trial")
            samples.append(
                {
                    "op": "serve",
                    "tester": tester.username,
                    "index": index,
                    "start": started,
                    "end": served,
                    "trial": trial,
                }
            )
            if think_ms:
                time.sleep(rng.uniform(0.5, 1.5) * think_ms / 1000)
            view = data["view"]
            steps = [
                {
                    "obj_idx": rng.randrange(len(view["objects"])),
                    "attr": "color",
                    "val": rng.choice(view["attributes"]["color"]),
                }
                for _ in range(rng.randint(1, 2))
            ]
            body = json.dumps(
                {
                    "answer": {"steps": steps},
                    "client": {"shown_ms": 12.5, "submit_ms": 12.5 + think_ms, "events": []},
                }
            ).encode()
            started = time.perf_counter()
            status, _, content = tester.request("POST", data["answer_url"], body, "application/json")
            answered = time.perf_counter()
            tester.expect(status, 200, f"answer #{index + 1} (trial {trial})", content)
            if json.loads(content)["status"] != "answered":
                raise LoadFailure(f"{tester.username}: trial {trial} not answered: {content[:300]!r}")
            samples.append(
                {
                    "op": "answer",
                    "tester": tester.username,
                    "index": index,
                    "start": started,
                    "end": answered,
                    "trial": trial,
                }
            )
        status, _, content = tester.request("GET", session_url)
        tester.expect(status, 200, "finished page", content)
        if TRIAL_DATA.search(content.decode()):
            raise LoadFailure(f"{tester.username}: a trial is still served after {trials} answers")
    except threading.BrokenBarrierError:
        return
    except Exception as error:  # noqa: BLE001 (reported below, and fails the run)
        load.fail(f"{tester.username}: {error}")
    with load.lock:
        load.samples.extend(samples)


# --- figures ---------------------------------------------------------------------------------------


def percentiles(values: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {
        "p50": round(cuts[49], 1),
        "p95": round(cuts[94], 1),
        "p99": round(cuts[98], 1),
        "max": round(max(values), 1),
        "mean": round(statistics.fmean(values), 1),
    }


def server_side(
    access_log: Path, samples: list[dict], warmup: int, trials: int
) -> dict[str, dict[str, float]]:
    """Time inside gunicorn's workers per operation, from the access log, warm-up left out."""
    answer_index = {sample["trial"]: sample["index"] for sample in samples if sample["op"] == "answer"}
    gets: dict[str, int] = {}
    times: dict[str, list[float]] = {op: [] for op in OPS}
    for line in access_log.read_text().splitlines():
        method, path, status, micros = line.split()
        if method == "GET" and SESSION_URL.search(path):
            index = gets[path] = gets.get(path, -1) + 1
            if warmup <= index < trials and status == "200":  # index == trials: the finished page
                times["serve"].append(int(micros) / 1000)
        elif method == "POST" and path.endswith("/answer/"):
            trial = int(path.rstrip("/").split("/")[-2])
            if answer_index.get(trial, -1) >= warmup:
                times["answer"].append(int(micros) / 1000)
    return {op: percentiles(values) for op, values in times.items() if len(values) > 1}


def run_config(
    env: dict,
    plan,
    *,
    users,
    workers: int,
    threads: int,
    trials: int,
    warmup: int,
    think_ms: float,
    logdir: Path,
    celery_worker: bool,
) -> dict:
    port = free_port()
    logdir.mkdir(parents=True, exist_ok=True)
    queue = Path(env["YARDSTICK_VAR_DIR"]) / "celery" / "queue"
    for message in queue.glob("*"):  # tasks of an earlier config
        message.unlink()
    server = start_gunicorn(env, workers=workers, threads=threads, port=port, logdir=logdir)
    worker = start_celery_worker(env, logdir) if celery_worker else None
    worker_pid = worker.pid if worker else None
    try:
        load = Load()
        barrier = threading.Barrier(len(users) + 1)
        threads_ = [
            threading.Thread(
                target=run_tester,
                args=(Tester(port, user.username), plan.pk, trials, think_ms, load, barrier, index),
                daemon=True,
            )
            for index, user in enumerate(users)
        ]
        for thread in threads_:
            thread.start()
        try:
            barrier.wait(timeout=300)
        except threading.BrokenBarrierError:
            raise LoadFailure("; ".join(load.failures) or "the testers did not all start") from None
        before = cpu_snapshot(server.pid, postmaster_pid(), worker_pid)
        for thread in threads_:
            thread.join()
        after = cpu_snapshot(server.pid, postmaster_pid(), worker_pid)
        backlog = len(list(queue.glob("*")))  # summarize tasks not yet taken by a worker
    finally:
        stop_gunicorn(server)
        stop_gunicorn(worker)
    if load.failures:
        raise LoadFailure(f"{len(load.failures)} tester(s) failed:\n  " + "\n  ".join(load.failures))
    expected = len(users) * trials
    counts = {op: sum(1 for sample in load.samples if sample["op"] == op) for op in OPS}
    if counts != {"serve": expected, "answer": expected} or len(load.owner) != expected:
        raise LoadFailure(
            f"expected {expected} trials served and answered, got {counts}, {len(load.owner)} ids"
        )

    measured = [sample for sample in load.samples if sample["index"] >= warmup]
    window = max(sample["end"] for sample in measured) - min(sample["start"] for sample in measured)
    latency = {
        op: percentiles([(s["end"] - s["start"]) * 1000 for s in measured if s["op"] == op]) for op in OPS
    }
    wall = after["wall"] - before["wall"]
    requests = len(users) * (2 * trials + 1)  # + the finished page
    cpu = {key: round(after[key] - before[key], 2) for key in ("app", "db", "tasks", "client", "machine")}
    accounted = cpu["app"] + cpu["db"] + cpu["tasks"] + cpu["client"]
    cpu["other"] = round(max(0.0, cpu["machine"] - accounted), 2)
    return {
        "workers": workers,
        "threads": threads,
        "worker_class": "gthread" if threads > 1 else "sync",
        "testers": len(users),
        "trials": trials,
        "warmup": warmup,
        "think_ms": think_ms,
        "celery_worker": celery_worker,
        "tasks_left": backlog,
        "measured_per_op": len(measured) // 2,
        "latency_ms": latency,
        "per_s": {op: round(len(measured) / 2 / window, 1) for op in OPS},
        "in_worker_ms": server_side(logdir / "access.log", load.samples, warmup, trials),
        "load_s": round(wall, 2),
        "cpu_s": cpu,
        "cpu_ms_per_request": {
            key: round(cpu[key] * 1000 / requests, 1)
            for key in ("app", "db", "tasks", "client", "other", "machine")
        },
        "cpu_busy_pct": round(100 * cpu["machine"] / (wall * (os.cpu_count() or 1))),
    }


# --- the report ------------------------------------------------------------------------------------


def machine_line() -> dict[str, str]:
    memory = "?"
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            memory = f"{int(line.split()[1]) / 1024**2:.1f} GiB RAM"
    model = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    cores = len(os.sched_getaffinity(0))
    return {
        "machine": f"{platform.machine()}, {cores} cores ({model}), {memory}, Python {platform.python_version()}",
        "load_before": " ".join(Path("/proc/loadavg").read_text().split()[:3]),
    }


def verdict(result: dict) -> str:
    failed = [op for op in OPS if result["latency_ms"][op]["p95"] >= TARGET_MS]
    return "met" if not failed else "NOT met (" + ", ".join(failed) + ")"


def write_report(results: list[dict], *, command: str, info: dict) -> None:
    lines = [
        "# Human test under load: 20 concurrent testers, gunicorn, PostgreSQL",
        "",
        f"Latest run {info['date']} on {info['machine']}; load average before the run {info['load_before']}.",
        f"Command: `{command}`.",
        f"Database: {info['db']} (scripts/test-postgres.sh: fsync, synchronous_commit and full_page_writes off),"
        f" a database of its own, on the same machine. Server: `gunicorn yardstick.wsgi` {info['gunicorn']},"
        " DJANGO_DEBUG off, persistent DB connections (CONN_MAX_AGE 60); the summarize task every answer"
        " enqueues goes to Celery's filesystem broker, where one worker (solo pool) runs it beside the server"
        " only with --celery-worker.",
        f"Dataset: {info['samples']} generated TRANCE samples; plan: setting event, time limit 120 s, items"
        f" drawn at random per tester. Per request, SQL queries (in-process, Django test client):"
        f" serve {info['queries']['serve']}, answer {info['queries']['answer']}.",
        "",
        "Latency is measured by the client threads (this process, on the same 2 cores), request sent to"
        " response read; the first trials of every tester are warm-up and left out. 'In worker' is the"
        " time gunicorn's access log gives (the request inside a worker, without waiting for a free one).",
        "",
        "| server | testers × trials (warm-up) | think ms | serve p50 / p95 / p99 / max ms"
        " | answer p50 / p95 / p99 / max ms | serves/s | answers/s | in worker p95 ms (serve / answer)"
        f" | target p95 < {TARGET_MS:.0f} ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for result in results:
        serve, answer = result["latency_ms"]["serve"], result["latency_ms"]["answer"]
        inside = result["in_worker_ms"]
        lines.append(
            f"| {result['workers']} workers × {result['threads']} threads ({result['worker_class']})"
            f" | {result['testers']} × {result['trials']} ({result['warmup']}) | {result['think_ms']:g}"
            f" | {serve['p50']} / **{serve['p95']}** / {serve['p99']} / {serve['max']}"
            f" | {answer['p50']} / **{answer['p95']}** / {answer['p99']} / {answer['max']}"
            f" | {result['per_s']['serve']} | {result['per_s']['answer']}"
            f" | {inside.get('serve', {}).get('p95', '?')} / {inside.get('answer', {}).get('p95', '?')}"
            f" | {verdict(result)} |"
        )
    lines += [
        "",
        "CPU during the load, all cores (a request is a serve, an answer or the final page). 'Other"
        " processes' is whatever else ran on the machine meanwhile; 'capacity' is the cores divided by"
        " the CPU one request needs (gunicorn + PostgreSQL + clients), the most requests per second these"
        " cores can finish when nothing else runs. With no pause, every tester always has one request in"
        " flight, so the mean latency is testers ÷ requests per second (Little's law) whatever the"
        " server config: under 100 ms for 20 testers needs over 200 requests/s.",
        "",
        "| server | think ms | load s | machine busy | CPU ms per request: gunicorn / PostgreSQL / clients"
        " / Celery worker / other processes | capacity requests/s | summarize tasks left in the queue |",
        "|---|---|---|---|---|---|---|",
    ]
    for result in results:
        per = result["cpu_ms_per_request"]
        own = per["app"] + per["db"] + per["client"]
        capacity = round(1000 * len(os.sched_getaffinity(0)) / own) if own else "?"
        lines.append(
            f"| {result['workers']} × {result['threads']} | {result['think_ms']:g} | {result['load_s']}"
            f" | {result['cpu_busy_pct']} % | {per['app']} / {per['db']} / {per['client']}"
            f" / {per['tasks'] if result['celery_worker'] else 'none run'} / {per['other']}"
            f" | {capacity} | {result['tasks_left']} |"
        )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "humantest_load.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


# --- main ------------------------------------------------------------------------------------------


def parse_configs(args) -> list[tuple[int, int]]:
    if not args.configs:
        return [(args.workers, args.threads)]
    configs = []
    for part in args.configs.split(","):
        workers, _, threads = part.strip().partition("x")
        configs.append((int(workers), int(threads or 1)))
    return configs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--testers", type=int, default=20)
    parser.add_argument("--trials", type=int, default=30, help="test trials per tester")
    parser.add_argument("--warmup", type=int, default=3, help="first trials of every tester left out")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=1, help="threads per worker (gthread when > 1)")
    parser.add_argument("--configs", default="", help="several servers, e.g. 4x1,2x4 (workers x threads)")
    parser.add_argument(
        "--think-ms",
        default="0,1000",
        help="mean pause before each answer, ms; several: 0,1000 (each config at each)",
    )
    parser.add_argument(
        "--celery-worker", action="store_true", help="run one Celery worker beside gunicorn (summarize tasks)"
    )
    parser.add_argument("--samples", type=int, default=300, help="TRANCE samples in the dataset")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.trials <= args.warmup:
        parser.error("--trials must be larger than --warmup")
    configs = parse_configs(args)
    thinks = [float(value) for value in args.think_ms.split(",")]
    runs = [(think, workers, threads) for think in thinks for workers, threads in configs]

    subprocess.run([str(PG_SCRIPT), "start"], check=True)
    url = subprocess.run([str(PG_SCRIPT), "url"], check=True, capture_output=True, text=True).stdout.strip()
    base = url.rsplit("/", 1)[0]
    info = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), **machine_line()}
    results = []
    with tempfile.TemporaryDirectory(prefix="yardstick-perf-humantest-") as folder:
        workdir = Path(folder)
        env = {
            **os.environ,
            "DATABASE_URL": f"{base}/{DB_NAME}",
            "DJANGO_SETTINGS_MODULE": "yardstick.settings",
            "DJANGO_DEBUG": "0",
            "DJANGO_SECRET_KEY": "perf-humantest-load-not-a-secret",
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
            # Plain HTTP on loopback: no redirect to HTTPS, cookies sent without TLS.
            "DJANGO_SECURE_SSL_REDIRECT": "0",
            "DJANGO_SESSION_COOKIE_SECURE": "0",
            "DJANGO_CSRF_COOKIE_SECURE": "0",
            "YARDSTICK_VAR_DIR": str(workdir / "var"),
            "MEDIA_ROOT": str(workdir / "var" / "media"),
            "CELERY_TASK_ALWAYS_EAGER": "0",
            "LOG_LEVEL": "WARNING",
            "PYTHONPATH": str(ROOT),
        }
        for name in ("CELERY_BROKER_URL", "CACHE_URL", "SQLITE_PATH"):
            env.pop(name, None)
            os.environ.pop(name, None)
        os.environ.update(env)
        psql(base, f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")
        psql(base, f"CREATE DATABASE {DB_NAME}")
        try:
            import django

            django.setup()
            from django.db import connections

            info["db"] = psql(base, "SHOW server_version").split()[0]
            info["db"] = f"PostgreSQL {info['db']}"
            info["gunicorn"] = subprocess.run(
                [sys.executable, "-m", "gunicorn", "--version"], capture_output=True, text=True, check=True
            ).stdout.strip()
            info["samples"] = args.samples
            dataset, users = build_data(workdir, samples=args.samples, testers=args.testers, seed=args.seed)
            info["queries"] = count_queries(dataset, args.trials)
            for number, (think_ms, workers, threads) in enumerate(runs):
                plan = make_plan(
                    dataset,
                    users,
                    name=f"perf load {workers}x{threads} think {think_ms:g}",
                    trials=args.trials,
                    seed=args.seed + number,
                )
                connections.close_all()  # this process stays out of the database during the load
                result = run_config(
                    env,
                    plan,
                    users=users,
                    workers=workers,
                    threads=threads,
                    trials=args.trials,
                    warmup=args.warmup,
                    think_ms=think_ms,
                    logdir=workdir / f"gunicorn-{number}",
                    celery_worker=args.celery_worker,
                )
                print(
                    f"{workers}x{threads}, think {think_ms:g} ms: serve p95 {result['latency_ms']['serve']['p95']} ms,"
                    f" answer p95 {result['latency_ms']['answer']['p95']} ms",
                    flush=True,
                )
                results.append(result)
        finally:
            if "django" in sys.modules and "django.db" in sys.modules:
                from django.db import connections

                connections.close_all()
            psql(base, f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")

    command = f".venv/bin/python -m perf.humantest_load --testers {args.testers} --trials {args.trials}"
    command += (
        f" --configs {args.configs}"
        if args.configs
        else f" --workers {args.workers} --threads {args.threads}"
    )
    if args.celery_worker:
        command += " --celery-worker"
    command += f" --think-ms {args.think_ms}"
    with open(RESULTS / "humantest_load.jsonl", "a") as log:
        for result in results:
            log.write(
                json.dumps({"date": info["date"], "machine": info["machine"], "db": info["db"], **result})
                + "\n"
            )
    write_report(results, command=command, info=info)


if __name__ == "__main__":
    main()
