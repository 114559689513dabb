"""Benchmark: a crowd study, 200 participants arriving through one Prolific link within a minute.

Usage:  .venv/bin/python -m perf.study_load [--participants 200] [--trials 20] [--arrive-s 60]
        [--think-s 5,15] [--restart-at 0.5] [--workers 2] [--threads 4]

The app as deployed (gunicorn, DJANGO_DEBUG off) on PostgreSQL (the throw-away server of
scripts/test-postgres.sh, a database of its own, dropped at the end) with one Celery worker.
A TRANCE plan of --trials test trials a participant, a consent text, a completion code. Every
participant is a client thread of this process with its own cookies: it arrives at a random
moment within --arrive-s (GET /join/<token>/?PROLIFIC_PID=...&SESSION_ID=...), reads the consent
page and agrees, begins, then per trial GETs the session page (the trial, served on the server's
clock), thinks for a uniform --think-s seconds (human pacing) and POSTs an answer; finally it
GETs the session page again and must find the completion code on it, once.

Faults, on purpose: one participant in ten opens the link in two tabs at once (two arrivals of
the same id without cookies, at the same moment); one in ten reloads every page it is shown and
sends every answer twice (the second must be refused as closed, nothing stored twice); and
gunicorn is restarted at --restart-at of the run (its port refuses connections until it is back:
the clients retry, as a browser's user would; an answer whose reply was lost is sent again and,
if it was stored, is refused as closed).

What must hold (the run fails otherwise): 0 duplicate participants or sessions, every trial
answered exactly once (the predictions in the evaluation app too), every finisher shown the code,
every participant finished. Measured: p50/p95/p99 of arrival, trial serve and answer, as the
clients see them (request sent to response read, retries after a restart included in the one
request they belong to). Results: perf/results/study_load.md (latest) and study_load.jsonl.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

from perf import humantest_load as base  # gunicorn, Celery, PostgreSQL and report helpers

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "perf" / "results"
DB_NAME = "yardstick_study_perf"
CODE = "LOADC0DE"


class Failure(Exception):
    pass


class Browser:
    """One participant's browser: cookies, a CSRF token, a new connection per request, and
    patience when the server is away (a restart): it retries for up to a minute."""

    def __init__(self, server: dict) -> None:
        self.server = server  # {"port": ...}: the same port after a restart
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, body: bytes | None = None, content_type: str = ""):
        deadline = time.monotonic() + 90
        while True:
            headers = {"Connection": "close"}
            if self.cookies:
                headers["Cookie"] = "; ".join(f"{key}={value}" for key, value in self.cookies.items())
            if method == "POST":
                headers["X-CSRFToken"] = self.cookies.get("csrftoken", "")
                headers["Content-Type"] = content_type or "application/x-www-form-urlencoded"
            connection = http.client.HTTPConnection("127.0.0.1", self.server["port"], timeout=60)
            try:
                connection.request(method, path, body=body, headers=headers)
                response = connection.getresponse()
                content = response.read()
            except (OSError, http.client.HTTPException):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)  # the server is restarting: try again, as a person would
                continue
            finally:
                connection.close()
            if response.status == 502 and time.monotonic() < deadline:
                time.sleep(0.5)
                continue
            from http.cookies import SimpleCookie

            for header in response.headers.get_all("Set-Cookie") or ():
                for key, morsel in SimpleCookie(header).items():
                    self.cookies[key] = morsel.value
            return response.status, response.headers, content

    def post_form(self, path: str, fields: dict[str, str]):
        data = {"csrfmiddlewaretoken": self.cookies.get("csrftoken", ""), **fields}
        return self.request("POST", path, urllib.parse.urlencode(data).encode())


class Run:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.times: dict[str, list[float]] = {"arrival": [], "serve": [], "answer": []}
        self.failures: list[str] = []
        self.codes_seen = 0
        self.double_answers_refused = 0

    def note(self, op: str, seconds: float) -> None:
        with self.lock:
            self.times[op].append(seconds * 1000)

    def fail(self, message: str) -> None:
        with self.lock:
            self.failures.append(message)


def participant(index: int, token: str, server: dict, args, run: Run, start: float) -> None:
    rng = random.Random(index)
    reloads = index % 10 == 3
    two_tabs = index % 10 == 7
    query = urllib.parse.urlencode(
        {"PROLIFIC_PID": f"P{index:04d}", "STUDY_ID": "load", "SESSION_ID": f"S{index:04d}"}
    )
    time.sleep(max(0.0, start + rng.uniform(0, args.arrive_s) - time.monotonic()))
    browser = Browser(server)
    try:
        began = time.perf_counter()
        if two_tabs:  # the same id, two tabs, the same moment, no cookies yet
            other = Browser(server)
            twin = threading.Thread(target=lambda: other.request("GET", f"/join/{token}/?{query}"))
            twin.start()
        status, headers, content = browser.request("GET", f"/join/{token}/?{query}")
        run.note("arrival", time.perf_counter() - began)
        if two_tabs:
            twin.join()
        if status != 302:
            raise Failure(f"arrival answered {status}: {content[:200]!r}")
        session = urllib.parse.urlsplit(headers["Location"]).path
        status, _, content = browser.request("GET", session)
        if b'id="consent"' not in content:
            raise Failure(f"no consent page first: {status} {content[:200]!r}")
        version = content.decode().split('data-version="', 1)[1].split('"', 1)[0]
        browser.post_form(f"{session}consent/", {"action": "accept", "version": version})
        browser.post_form(f"{session}begin/", {})
        for number in range(args.trials):
            began = time.perf_counter()
            status, _, content = browser.request("GET", session)
            run.note("serve", time.perf_counter() - began)
            if reloads:
                status, _, content = browser.request("GET", session)  # a reload: the same trial
            found = base.TRIAL_DATA.search(content.decode())
            if status != 200 or not found:
                raise Failure(f"trial {number + 1}: {status} {content[:200]!r}")
            data = json.loads(found.group(1))
            time.sleep(rng.uniform(*args.think_s))
            view = data["view"]
            body = json.dumps(
                {
                    "answer": {
                        "steps": [
                            {"obj_idx": 0, "attr": "color", "val": rng.choice(view["attributes"]["color"])}
                        ]
                    },
                    "client": {"shown_ms": 5.0, "submit_ms": 4000.0, "events": []},
                }
            ).encode()
            began = time.perf_counter()
            status, _, content = browser.request("POST", data["answer_url"], body, "application/json")
            run.note("answer", time.perf_counter() - began)
            if status == 409:  # the reply to an answer stored before a restart was lost: sent again
                pass
            elif status != 200:
                raise Failure(f"answer {number + 1}: {status} {content[:200]!r}")
            if reloads:
                again, _, _ = browser.request("POST", data["answer_url"], body, "application/json")
                if again != 409:
                    raise Failure(f"a second answer to trial {data['trial']} answered {again}, not 409")
                with run.lock:
                    run.double_answers_refused += 1
        status, _, content = browser.request("GET", session)
        page = content.decode()
        if page.count(f'id="completion-code">{CODE}<') != 1:
            raise Failure(f"the finished page shows the code {page.count(CODE)} times: {page[:300]!r}")
        with run.lock:
            run.codes_seen += 1
    except Exception as error:  # noqa: BLE001 (the run reports every participant's failure)
        run.fail(f"P{index:04d}: {error}")


def check_database(args) -> dict:
    """What the server stored: one participant and one session each, every trial answered once."""
    from django.db.models import Count

    from evaluation.models import Prediction
    from humantest.models import Participant, TestSession, Trial

    people = Participant.objects.count()
    sessions = TestSession.objects.count()
    duplicates = list(
        Participant.objects.values("external_id")
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
        .values_list("external_id", flat=True)
    )
    answered = Trial.objects.filter(phase="test", status="answered").count()
    per_session = set(
        Trial.objects.filter(phase="test", status="answered")
        .values("session")
        .annotate(n=Count("pk"))
        .values_list("n", flat=True)
    )
    predictions = Prediction.objects.filter(submission__origin="test_session").count()
    double_predictions = (
        Prediction.objects.filter(submission__origin="test_session")
        .values("submission", "item", "part")
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
        .count()
    )
    finished = Participant.objects.filter(status="finished", code_shown_at__isnull=False).count()
    return {
        "participants": people,
        "sessions": sessions,
        "duplicate_ids": duplicates,
        "answered_trials": answered,
        "answers_per_session": sorted(per_session),
        "predictions": predictions,
        "predictions_twice": double_predictions,
        "finished_with_code": finished,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--arrive-s", type=float, default=60.0, help="arrivals spread over this many seconds")
    parser.add_argument(
        "--think-s", default="5,15", help="a participant thinks uniformly this long per trial"
    )
    parser.add_argument(
        "--restart-at", type=float, default=0.5, help="restart gunicorn at this share of the run (0: never)"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--samples", type=int, default=300)
    args = parser.parse_args()
    args.think_s = tuple(float(value) for value in args.think_s.split(","))
    subprocess.run([str(base.PG_SCRIPT), "start"], check=True)
    url = subprocess.run(
        [str(base.PG_SCRIPT), "url"], check=True, capture_output=True, text=True
    ).stdout.strip()
    pg = url.rsplit("/", 1)[0]
    info = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), **base.machine_line()}
    with tempfile.TemporaryDirectory(prefix="yardstick-perf-study-") as folder:
        workdir = Path(folder)
        env = base.deployed_env(f"{pg}/{DB_NAME}", workdir, "study")
        env["CELERY_TASK_ALWAYS_EAGER"] = "0"
        import os

        for name in ("CELERY_BROKER_URL", "CACHE_URL", "SQLITE_PATH"):
            env.pop(name, None)
            os.environ.pop(name, None)
        os.environ.update(env)
        base.psql(pg, f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")
        base.psql(pg, f"CREATE DATABASE {DB_NAME}")
        try:
            import django

            django.setup()
            from django.db import connections

            from humantest import studies
            from humantest.models import TestPlan

            dataset, _ = base.build_data(workdir, samples=args.samples, testers=0, seed=0)
            plan = TestPlan.objects.create(
                name="Crowd load",
                dataset=dataset,
                setting="event",
                items_per_tester=args.trials,
                time_limit_s=120,
            )
            studies.update_study(
                plan,
                consent_text="# Taking part\n\nTwenty short questions.",
                completion_code=CODE,
                completion_url=f"https://app.prolific.com/submissions/complete?cc={CODE}",
            )
            token = studies.open_link(plan, "prolific").token
            connections.close_all()
            logdir = workdir / "logs"
            logdir.mkdir()
            server = {"port": base.free_port()}
            gunicorn = base.start_gunicorn(
                env, workers=args.workers, threads=args.threads, port=server["port"], logdir=logdir
            )
            worker = base.start_celery_worker(env, logdir)
            run = Run()
            start = time.monotonic() + 1
            clients = [
                threading.Thread(
                    target=participant, args=(index, token, server, args, run, start), daemon=True
                )
                for index in range(args.participants)
            ]
            for client in clients:
                client.start()
            expected = args.arrive_s + args.trials * sum(args.think_s) / 2
            restarted_at = None
            if args.restart_at:
                time.sleep(max(0.0, start + expected * args.restart_at - time.monotonic()))
                base.stop_gunicorn(gunicorn)
                restarted_at = round(time.monotonic() - start, 1)
                gunicorn = base.start_gunicorn(
                    env, workers=args.workers, threads=args.threads, port=server["port"], logdir=logdir
                )
                back_after = round(time.monotonic() - start - restarted_at, 1)
            for client in clients:
                client.join()
            wall = round(time.monotonic() - start, 1)
            base.stop_gunicorn(gunicorn)
            base.stop_gunicorn(worker)
            stored = check_database(args)
            if run.failures:  # the server's side of what went wrong, kept for reading
                import shutil

                shutil.copytree(logdir, RESULTS.parent / "study_load_logs", dirs_exist_ok=True)
        finally:
            from django.db import connections

            connections.close_all()
            base.psql(pg, f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")
    expected_answers = args.participants * args.trials
    problems = list(run.failures)
    if (
        stored["participants"] != args.participants
        or stored["sessions"] != args.participants
        or stored["duplicate_ids"]
    ):
        problems.append(f"participants/sessions: {stored}")
    if stored["answered_trials"] != expected_answers or stored["answers_per_session"] != [args.trials]:
        problems.append(f"answers: {stored}")
    if stored["predictions"] != expected_answers or stored["predictions_twice"]:
        problems.append(f"predictions: {stored}")
    if run.codes_seen != args.participants or stored["finished_with_code"] != args.participants:
        problems.append(f"codes: {run.codes_seen} seen, {stored['finished_with_code']} recorded")
    result = {
        "date": info["date"],
        "machine": info["machine"],
        "participants": args.participants,
        "trials": args.trials,
        "arrive_s": args.arrive_s,
        "think_s": list(args.think_s),
        "gunicorn": f"{args.workers} workers x {args.threads} threads",
        "restarted_at_s": restarted_at,
        "back_after_s": back_after if restarted_at is not None else None,
        "wall_s": wall,
        "latency_ms": {op: base.percentiles(values) for op, values in run.times.items() if len(values) > 1},
        "double_answers_refused": run.double_answers_refused,
        "stored": stored,
        "problems": problems[:20],
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    with open(RESULTS / "study_load.jsonl", "a") as log:
        log.write(json.dumps(result) + "\n")
    write_report(result, " ".join(["-m perf.study_load", *sys.argv[1:]]))
    if problems:
        raise SystemExit("FAILED:\n  " + "\n  ".join(problems[:20]))


def write_report(result: dict, command: str) -> None:
    latency = result["latency_ms"]
    stored = result["stored"]
    lines = [
        f"# A crowd study under load: {result['participants']} participants through one Prolific link",
        "",
        f"Latest run {result['date']} on {result['machine']}. Command: `.venv/bin/python {command}`.",
        f"gunicorn {result['gunicorn']} (DEBUG off) + one Celery worker + PostgreSQL, all on this machine, with the"
        f" {result['participants']} client threads. Arrivals spread over {result['arrive_s']:g} s; each"
        f" participant agrees to the consent text, begins, and answers {result['trials']} TRANCE trials,"
        f" thinking {result['think_s'][0]:g} to {result['think_s'][1]:g} s on each. One in ten opened the link"
        " in two tabs at once; one in ten reloaded every page and sent every answer twice; gunicorn was"
        f" restarted {result['restarted_at_s']} s into the run (back after {result['back_after_s']} s; the"
        f" clients retried). The whole run took {result['wall_s']} s.",
        "",
        "| request | n | p50 ms | p95 ms | p99 ms | max ms |",
        "|---|---|---|---|---|---|",
    ]
    names = {
        "arrival": "arrival (GET the link: participant, account, session)",
        "serve": "trial serve (GET)",
        "answer": "answer (POST)",
    }
    for op, figures in latency.items():
        count = {
            "arrival": result["participants"],
            "serve": result["participants"] * result["trials"],
            "answer": result["participants"] * result["trials"],
        }[op]
        lines.append(
            f"| {names[op]} | {count} | {figures['p50']} | {figures['p95']} | {figures['p99']} | {figures['max']} |"
        )
    lines += [
        "",
        "Stored (read from the database after the run):",
        "",
        f"- participants {stored['participants']}, sessions {stored['sessions']}, ids arrived twice {len(stored['duplicate_ids'])}",
        f"- test trials answered {stored['answered_trials']} (each session: {stored['answers_per_session']}),"
        f" predictions {stored['predictions']}, predictions twice {stored['predictions_twice']}",
        f"- second answers refused as closed: {result['double_answers_refused']}",
        f"- finished and shown the code: {stored['finished_with_code']}",
        "",
        "Verdict: "
        + ("every check held" if not result["problems"] else "FAILED: " + "; ".join(result["problems"])),
        "",
        "The latencies include the time a request waited while gunicorn was restarting (its retries):"
        " the maximum and the p99 are the requests caught by the restart; p50 and p95 are the steady"
        " state. The 200 client threads run on the same 2 cores as the server, PostgreSQL and the worker.",
    ]
    (RESULTS / "study_load.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
