"""Benchmark: a mixed load for 10 minutes on PostgreSQL + Redis, 50 simulated users on loopback.

Usage:  .venv/bin/python -m perf.mixed_load [--minutes 10] [--testers 40] [--researchers 10]
        [--workers 5] [--threads 1] [--think-s 2] [--import-records 100000]

The app as deployed: `gunicorn yardstick.wsgi` (DEBUG off), a Celery worker on a Redis broker,
Redis as the shared cache, PostgreSQL (the throw-away servers of scripts/test-postgres.sh and
scripts/test-redis.sh; the benchmark gets a database of its own, dropped at the end). Every user
is a client thread of this process (a cookie jar, a CSRF token, a new connection per request):

- testers (--testers) log in, open a TRANCE Event test and answer trial after trial, pausing
  about --think-s (exponential) before each answer, until the time is up;
- researchers (--researchers) read, pausing --think-s between pages: the report page, its CSV
  and the report API, the plan's results page (with its agreement bootstrap), the trials CSV,
  the dataset's export (streamed) and an item page;
- one of the researchers keeps an import running the whole time: it uploads an STE-VQA file of
  --import-records questions over the API and follows the job until it ends, then starts another.

Measured: per endpoint the count, the errors (any status other than the one expected, or a
failed connection) and the p50/p95/p99 latency from sending the request to reading the whole
response; every import's duration and outcome; and the answers: every answer a tester saw
accepted (200) must be in the database exactly as sent, once (0 lost, 0 duplicated), with its
Prediction in the tester's submission. Results: perf/results/mixed_load.md and .jsonl.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from pathlib import Path

from perf import humantest_load as base  # the clients, gunicorn, PostgreSQL and CPU helpers

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "perf" / "results"
REDIS_SCRIPT = ROOT / "scripts" / "test-redis.sh"
DB_NAME = "yardstick_mixed_perf"


PASSWORD = base.PASSWORD


class Record:
    """Every request of the run: endpoint, status, expected or not, seconds."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[tuple[str, int, bool, float]] = []
        self.answers: dict[int, list[dict]] = defaultdict(list)  # trial -> accepted answers
        self.served: dict[int, set[str]] = defaultdict(set)  # trial -> testers it was shown to
        self.imports: list[dict] = []
        self.failures: list[str] = []

    def note(self, endpoint: str, status: int, wanted: int, seconds: float) -> bool:
        with self.lock:
            self.requests.append((endpoint, status, status == wanted, seconds))
        return status == wanted


def timed(
    client, record: Record, endpoint: str, wanted: int, method: str, path: str, body=None, content_type=""
):
    started = time.perf_counter()
    try:
        status, headers, content = client.request(method, path, body, content_type)
    except OSError:
        record.note(endpoint, 0, wanted, time.perf_counter() - started)
        return 0, {}, b""
    record.note(endpoint, status, wanted, time.perf_counter() - started)
    return status, headers, content


def log_in(client) -> None:
    status, _, content = client.request("GET", "/accounts/login/")
    client.expect(status, 200, "login page", content)
    status, _, content = client.post_form(
        "/accounts/login/", {"username": client.username, "password": PASSWORD}
    )
    client.expect(status, 302, "login", content)


def tester_loop(
    client, plan_pk: int, record: Record, stop: threading.Event, think_s: float, seed: int
) -> None:
    rng = random.Random(seed)
    try:
        session_url = client.log_in_and_begin(plan_pk)
        while not stop.is_set():
            status, _, content = timed(client, record, "serve next trial", 200, "GET", session_url)
            found = base.TRIAL_DATA.search(content.decode()) if status == 200 else None
            if found is None:
                if status == 200:
                    return  # the plan is done
                time.sleep(1)
                continue
            data = json.loads(found.group(1))
            with record.lock:
                record.served[data["trial"]].add(client.username)
            stop.wait(min(rng.expovariate(1 / think_s), 4 * think_s) if think_s else 0)
            view = data["view"]
            steps = [
                {
                    "obj_idx": rng.randrange(len(view["objects"])),
                    "attr": "color",
                    "val": rng.choice(view["attributes"]["color"]),
                }
            ]
            body = json.dumps(
                {"answer": {"steps": steps}, "client": {"shown_ms": 10.0, "submit_ms": 900.0, "events": []}}
            )
            status, _, content = timed(
                client,
                record,
                "record answer",
                200,
                "POST",
                data["answer_url"],
                body.encode(),
                "application/json",
            )
            if status == 200:
                with record.lock:
                    record.answers[data["trial"]].append({"tester": client.username, "steps": steps})
    except Exception as error:  # noqa: BLE001 (reported; the run fails)
        with record.lock:
            record.failures.append(f"{client.username}: {error!r}")


def researcher_loop(
    client, ids: dict, record: Record, stop: threading.Event, think_s: float, seed: int
) -> None:
    rng = random.Random(seed)
    dataset, plan = ids["dataset"], ids["plan"]
    pages = [
        ("report page", f"/datasets/{dataset}/report/"),
        ("report CSV", f"/datasets/{dataset}/report.csv"),
        ("report API", f"/api/v1/datasets/{dataset}/report/"),
        ("plan results page", f"/test/plans/{plan}/"),
        ("trials CSV", f"/test/plans/{plan}/trials.csv"),
        ("dataset export", f"/datasets/{dataset}/export/"),
        ("dataset list", "/datasets/"),
    ]
    try:
        log_in(client)
        while not stop.is_set():
            endpoint, path = rng.choice(pages)
            if endpoint == "dataset list" and rng.random() < 0.5:
                endpoint, path = "item page", f"/datasets/{dataset}/items/{rng.choice(ids['items'])}/"
            timed(client, record, endpoint, 200, "GET", path)
            stop.wait(min(rng.expovariate(1 / think_s), 4 * think_s) if think_s else 0)
    except Exception as error:  # noqa: BLE001
        with record.lock:
            record.failures.append(f"{client.username}: {error!r}")


def multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        )
    for name, (file_name, data) in files.items():
        head = f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{file_name}"\r\n'
        parts.append(head.encode() + b"Content-Type: application/json\r\n\r\n" + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def importer_loop(client, data: bytes, record: Record, stop: threading.Event) -> None:
    try:
        log_in(client)
        number = 0
        while not stop.is_set():
            number += 1
            body, content_type = multipart(
                {"benchmark": "stevqa", "name": f"load import {number}"}, {"upload": ("questions.json", data)}
            )
            started = time.monotonic()
            status, _, content = timed(
                client, record, "start import (API)", 201, "POST", "/api/v1/imports/", body, content_type
            )
            if status != 201:
                stop.wait(2)
                continue
            job = json.loads(content)["id"]
            outcome = "running"
            while outcome in ("queued", "running"):
                stop.wait(2)
                status, _, content = timed(
                    client, record, "follow import (API)", 200, "GET", f"/api/v1/imports/{job}/"
                )
                if status == 200:
                    outcome = json.loads(content)["status"]
                if stop.is_set() and outcome in ("queued", "running") and time.monotonic() - started > 600:
                    break
            with record.lock:
                record.imports.append(
                    {"job": job, "status": outcome, "seconds": round(time.monotonic() - started, 1)}
                )
    except Exception as error:  # noqa: BLE001
        with record.lock:
            record.failures.append(f"{client.username}: {error!r}")


def build(workdir: Path, args) -> dict:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import Group
    from django.core.management import call_command

    from accounts.roles import RESEARCHER, TESTER
    from benchmarks.services import import_dataset
    from evaluation.services import submit_predictions
    from humantest.models import TestPlan
    from plugins.trance.generator import generate

    call_command("migrate", verbosity=0)
    generate(workdir / "trance", count=args.samples, seed=0, workers=2, render_images=False)
    dataset = import_dataset(
        benchmark="trance", data=(workdir / "trance" / "data.jsonl").read_bytes(), name="load"
    )
    rng = random.Random(1)
    guesses = {
        item.external_id: [{"obj_idx": rng.randrange(10), "attr": "color", "val": "red"}]
        for item in dataset.items.all()
    }
    submit_predictions(
        dataset=dataset, name="Random guesser", data=json.dumps(guesses).encode(), setting="event"
    )
    users = get_user_model()
    hashed = make_password(PASSWORD)
    users.objects.bulk_create(
        [users(username=f"load-tester-{i:02d}", password=hashed) for i in range(args.testers)]
        + [users(username=f"load-researcher-{i:02d}", password=hashed) for i in range(args.researchers)]
    )
    Group.objects.get(name=TESTER).user_set.add(*users.objects.filter(username__startswith="load-tester-"))
    Group.objects.get(name=RESEARCHER).user_set.add(
        *users.objects.filter(username__startswith="load-researcher-")
    )
    plan = TestPlan.objects.create(
        name="Load",
        dataset=dataset,
        setting="event",
        items_per_tester=args.samples - 10,
        time_limit_s=600,
        seed=2,
    )
    plan.testers.set(users.objects.filter(username__startswith="load-tester-"))
    evidence = ["1", "1", "90", "1", "90", "40", "1", "40"]
    questions = [
        {"question_id": i, "question": f"What does sign {i} say?", "answer": "exit", "evidence": evidence}
        for i in range(args.import_records)
    ]
    return {
        "dataset": dataset.pk,
        "plan": plan.pk,
        "items": list(dataset.items.values_list("pk", flat=True)[:50]),
        "import": json.dumps(questions).encode(),
    }


def verify(record: Record, plan_pk: int) -> dict:
    """Every accepted answer is in the database as sent, once, with its Prediction."""
    from evaluation.models import Prediction
    from humantest.models import Trial

    duplicates = sum(1 for answers in record.answers.values() if len(answers) > 1)
    shown_twice = sum(1 for testers in record.served.values() if len(testers) > 1)
    stored = {
        trial.pk: trial
        for trial in Trial.objects.filter(pk__in=list(record.answers)).select_related(
            "session__tester", "session"
        )
    }
    lost = 0
    for trial_pk, answers in record.answers.items():
        trial = stored.get(trial_pk)
        if (
            trial is None
            or trial.status != Trial.Status.ANSWERED
            or trial.answer != answers[0]["steps"]
            or trial.session.tester.username != answers[0]["tester"]
            or not Prediction.objects.filter(
                submission_id=trial.session.submission_id, item_id=trial.item_id
            ).exists()
        ):
            lost += 1
    answered_in_db = Trial.objects.filter(session__plan_id=plan_pk, status=Trial.Status.ANSWERED).count()
    return {
        "accepted": len(record.answers),
        "answered_in_db": answered_in_db,
        "lost": lost,
        "duplicated": duplicates,
        "served_to_two_testers": shown_twice,
    }


def summarise(record: Record, seconds: float) -> dict:
    by_endpoint: dict[str, list] = defaultdict(list)
    for endpoint, status, ok, duration in record.requests:
        by_endpoint[endpoint].append((status, ok, duration))
    endpoints = {}
    for endpoint, rows in sorted(by_endpoint.items()):
        latencies = [duration * 1000 for _, _, duration in rows]
        errors = [status for status, ok, _ in rows if not ok]
        endpoints[endpoint] = {
            "count": len(rows),
            "errors": len(errors),
            "error_statuses": sorted(set(errors)),
            **(base.percentiles(latencies) if len(latencies) > 1 else {}),
        }
    total = len(record.requests)
    failed = sum(1 for _, _, ok, _ in record.requests if not ok)
    return {
        "requests": total,
        "requests_per_s": round(total / seconds, 1),
        "errors": failed,
        "error_rate": round(failed / total, 5) if total else None,
        "endpoints": endpoints,
    }


def write_report(result: dict, command: str) -> None:
    lines = [
        "# Mixed load: testers answering, researchers reading, an import running (PostgreSQL + Redis)",
        "",
        f"Latest run {result['date']} on {result['machine']}; {result['db']}, Redis {result['redis']}, "
        f"{result['gunicorn']} ({result['workers']} workers x {result['threads']} threads, "
        f"{'gthread' if result['threads'] > 1 else 'sync'}), one Celery "
        "worker (prefork, 1 process) on the Redis broker, Redis as the shared cache.",
        f"Command: `{command}`.",
        "",
        f"{result['testers']} testers and {result['researchers']} researchers (one of them importing) for "
        f"{result['minutes']:g} minutes, think time {result['think_s']:g} s (exponential mean). "
        f"{result['load']['requests']} requests ({result['load']['requests_per_s']} per second), "
        f"**{result['load']['errors']} errors (error rate {result['load']['error_rate']})**.",
        "",
        "| endpoint | requests | errors | p50 ms | p95 ms | p99 ms | max ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for endpoint, row in result["load"]["endpoints"].items():
        lines.append(
            f"| {endpoint} | {row['count']} | {row['errors']} | {row.get('p50', '–')} | {row.get('p95', '–')} | "
            f"{row.get('p99', '–')} | {row.get('max', '–')} |"
        )
    answers = result["answers"]
    imports = result["imports"]
    finished = [job for job in imports if job["status"] == "succeeded"]
    lines += [
        "",
        f"Answers: {answers['accepted']} accepted by the server, {answers['answered_in_db']} answered trials in the "
        f"database; **{answers['lost']} lost, {answers['duplicated']} duplicated**, "
        f"{answers['served_to_two_testers']} trials shown to two testers.",
        f"Imports of {result['import_records']} STE-VQA questions: {len(finished)} succeeded, "
        f"{len(imports) - len(finished)} not (a job still running at the end counts here), "
        + (
            f"{min(job['seconds'] for job in finished)}–{max(job['seconds'] for job in finished)} s each under load."
            if finished
            else "none finished."
        ),
        f"CPU seconds over the run: app {result['cpu_s']['app']}, PostgreSQL {result['cpu_s']['db']}, Celery worker "
        f"{result['cpu_s']['tasks']}, clients {result['cpu_s']['client']}, whole machine {result['cpu_s']['machine']} "
        f"of {result['cpu_s']['available']} available.",
        "",
    ]
    (RESULTS / "mixed_load.md").write_text("\n".join(lines))
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--testers", type=int, default=40)
    parser.add_argument("--researchers", type=int, default=10)
    parser.add_argument("--workers", type=int, default=5, help="gunicorn workers (2 x cores + 1)")
    parser.add_argument("--threads", type=int, default=1, help="threads per worker (1: sync workers)")
    parser.add_argument("--think-s", type=float, default=2.0)
    parser.add_argument(
        "--samples", type=int, default=600, help="TRANCE samples (a tester answers at most this many)"
    )
    parser.add_argument("--import-records", type=int, default=100_000)
    args = parser.parse_args()

    subprocess.run([str(base.PG_SCRIPT), "start"], check=True)
    subprocess.run([str(REDIS_SCRIPT), "start"], check=True)
    pg_url = subprocess.run(
        [str(base.PG_SCRIPT), "url"], check=True, capture_output=True, text=True
    ).stdout.strip()
    redis_url = subprocess.run(
        [str(REDIS_SCRIPT), "url"], check=True, capture_output=True, text=True
    ).stdout.strip()
    server_base = pg_url.rsplit("/", 1)[0]
    with tempfile.TemporaryDirectory(prefix="yardstick-perf-mixed-") as folder:
        workdir = Path(folder)
        env = base.deployed_env(
            f"{server_base}/{DB_NAME}",
            workdir,
            "mixed-load",
            CELERY_BROKER_URL=f"{redis_url}/7",
            CACHE_URL=f"{redis_url}/8",
            YARDSTICK_TOKEN_RATE="1000/minute",
            CELERY_TASK_ALWAYS_EAGER="0",
        )
        os.environ.update(env)
        import redis

        for number in (7, 8):
            redis.Redis.from_url(f"{redis_url}/{number}").flushdb()
        base.psql(server_base, f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")
        base.psql(server_base, f"CREATE DATABASE {DB_NAME}")
        server = worker = None
        try:
            import django

            django.setup()
            from django.db import connections

            ids = build(workdir, args)
            connections.close_all()
            logdir = workdir / "logs"
            logdir.mkdir()
            port = base.free_port()
            server = base.start_gunicorn(
                env, workers=args.workers, threads=args.threads, port=port, logdir=logdir
            )
            with open(logdir / "celery.log", "ab") as output:
                worker = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "celery",
                        "-A",
                        "yardstick",
                        "worker",
                        "--concurrency",
                        "1",
                        "--loglevel",
                        "WARNING",
                    ],
                    env=env,
                    cwd=ROOT,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                )
            record, stop = Record(), threading.Event()
            clients = [base.Tester(port, f"load-tester-{i:02d}") for i in range(args.testers)]
            readers = [base.Tester(port, f"load-researcher-{i:02d}") for i in range(args.researchers)]
            threads = [
                threading.Thread(
                    target=tester_loop, args=(client, ids["plan"], record, stop, args.think_s, i), daemon=True
                )
                for i, client in enumerate(clients)
            ]
            threads += [
                threading.Thread(
                    target=researcher_loop,
                    args=(client, ids, record, stop, args.think_s, 100 + i),
                    daemon=True,
                )
                for i, client in enumerate(readers[1:])
            ]
            threads.append(
                threading.Thread(
                    target=importer_loop, args=(readers[0], ids["import"], record, stop), daemon=True
                )
            )
            before = base.cpu_snapshot(server.pid, base.postmaster_pid(), worker.pid)
            started = time.monotonic()
            for thread in threads:
                thread.start()
            stop.wait(args.minutes * 60)
            stop.set()
            for thread in threads:
                thread.join(timeout=900)
            seconds = time.monotonic() - started
            after = base.cpu_snapshot(server.pid, base.postmaster_pid(), worker.pid)
            time.sleep(20)  # let the worker finish the summaries the last answers queued
            answers = verify(record, ids["plan"])
        finally:
            base.stop_gunicorn(server)
            base.stop_gunicorn(worker)
            if "django.db" in sys.modules:
                from django.db import connections

                connections.close_all()
            base.psql(server_base, f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")

    redis_version = subprocess.run(
        ["redis-server", "--version"], capture_output=True, text=True
    ).stdout.split()[2]
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        **base.machine_line(),
        "db": "PostgreSQL " + base.psql(server_base, "SHOW server_version").split()[0],
        "redis": redis_version.removeprefix("v="),
        "gunicorn": subprocess.run(
            [sys.executable, "-m", "gunicorn", "--version"], capture_output=True, text=True
        ).stdout.strip(),
        "workers": args.workers,
        "threads": args.threads,
        "testers": args.testers,
        "researchers": args.researchers,
        "minutes": args.minutes,
        "think_s": args.think_s,
        "import_records": args.import_records,
        "load": summarise(record, seconds),
        "answers": answers,
        "imports": record.imports,
        "failures": record.failures,
        "cpu_s": {
            key: round(after[key] - before[key], 1) for key in ("app", "db", "tasks", "client", "machine")
        }
        | {"available": round((after["wall"] - before["wall"]) * (os.cpu_count() or 1), 1)},
    }
    command = (
        f".venv/bin/python -m perf.mixed_load --minutes {args.minutes:g} --testers {args.testers} "
        f"--researchers {args.researchers} --workers {args.workers} --threads {args.threads} --think-s {args.think_s:g} "
        f"--import-records {args.import_records}"
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    with open(RESULTS / "mixed_load.jsonl", "a") as log:
        log.write(json.dumps(result) + "\n")
    write_report(result, command)
    if record.failures or answers["lost"] or answers["duplicated"]:
        sys.exit("the run failed: " + "; ".join(record.failures[:5]))


if __name__ == "__main__":
    main()
