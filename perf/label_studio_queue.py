"""Benchmark: Label Studio's claim-and-submit cycle with N annotators at once, for comparison.

Usage:  .venv/bin/python -m perf.label_studio_queue [--annotators 8] [--tasks 160] [--seconds 60]
        [--label-studio /tmp/lsvenv/bin/label-studio] [--data-dir DIR] [--results-dir perf/results]

Starts Label Studio (`label-studio start`, its default SQLite database, DEBUG off, analytics off)
on a free localhost port with a fresh data directory in a temporary folder, and an admin user made
on the command line (--username/--password/--user-token; legacy "Token" API auth switched on for
the organization with --enable-legacy-api-token).

Annotators sign up through the ordinary sign-up form (/user/signup/, with its CSRF token), which
logs them in; with that session each reads its own API token from GET /api/current-user/token.
The admin creates a project (a Text and a TextArea, sequential sampling, maximum_annotations=1)
and imports the tasks. Label Studio's community edition has no roles: every member of the
organization can annotate every project of it.

Load: each annotator is a thread with its own token and a persistent HTTP connection, looping with
no pause: GET /api/projects/<id>/next/ (the labeling stream's queue, which sets the task lock for
that user) and then POST /api/tasks/<task>/annotations/ with a TextArea result. One cycle = next +
submit. A thread stops when the queue answers 404 (no tasks left for that user) or time runs out.

Measured: cycle latency (p50/p95/p99), cycles per second, failures by step and status; then from
the API (project export): tasks annotated by more than one user (with maximum_annotations=1 each
is a duplicate hand-out), total annotations, tasks left unannotated; and on the client side, task
ids that /next handed to more than one annotator. Results: <results-dir>/label_studio_queue.md
(rebuilt from the .jsonl, the latest run for each annotators/tasks pair) and .jsonl (appended).
"""

from __future__ import annotations

import argparse
import collections
import http.client
import http.cookiejar
import json
import os
import platform
import re
import secrets
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_LS = "/tmp/lsvenv/bin/label-studio"
LABEL_CONFIG = '<View><Text name="t" value="$text"/><TextArea name="a" toName="t"/></View>'
ADMIN_EMAIL = "admin@example.com"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def machine_line() -> dict:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB RAM"
                break
    except OSError:
        pass
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores ({cpu}), {mem}, Python {platform.python_version()}",
        "load_before": load,
    }


class Api:
    """A small JSON client over one persistent HTTP connection (one per thread)."""

    def __init__(self, port: int, token: str | None = None, timeout: float = 120.0):
        self.port = port
        self.token = token
        self.timeout = timeout
        self.conn: http.client.HTTPConnection | None = None

    def _connect(self) -> http.client.HTTPConnection:
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        return self.conn

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def request(self, method: str, path: str, body=None) -> tuple[int, object]:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Token {self.token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        for attempt in (0, 1):
            conn = self._connect()
            try:
                conn.request(method, path, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
                if resp.getheader("Connection", "").lower() == "close" or resp.version == 10:
                    self.close()
                break
            except (TimeoutError, http.client.HTTPException, OSError):
                self.close()
                if attempt:
                    raise
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            payload = raw[:300].decode(errors="replace")
        return resp.status, payload


def check(status: int, payload, what: str, ok=(200, 201)) -> object:
    if status not in ok:
        raise RuntimeError(f"{what}: HTTP {status}: {str(payload)[:500]}")
    return payload


def start_label_studio(args, workdir: Path, port: int, admin_password: str, admin_token: str):
    data_dir = Path(args.data_dir) if args.data_dir else workdir / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(
        {
            "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir),
            "COLLECT_ANALYTICS": "false",
            "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
            "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "false",
            "SENTRY_DSN": "",
            "FRONTEND_SENTRY_DSN": "",
            "PYTHONUNBUFFERED": "1",
        }
    )
    for key in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "VIRTUAL_ENV", "PYTHONPATH"):
        env.pop(key, None)
    cmd = [
        args.label_studio,
        "start",
        "--no-browser",
        "--data-dir",
        str(data_dir),
        "--internal-host",
        "127.0.0.1",
        "--port",
        str(port),
        "--username",
        ADMIN_EMAIL,
        "--password",
        admin_password,
        "--user-token",
        admin_token,
        "--enable-legacy-api-token",
        "--log-level",
        "WARNING",
    ]
    with open(workdir / "label-studio.log", "wb") as log:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen(
            cmd,
            cwd=workdir,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    deadline = time.monotonic() + args.startup_timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"label-studio exited with {proc.returncode}; log:\n{tail(workdir / 'label-studio.log')}"
            )
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
                if r.status == 200:
                    return proc
        except (urllib.error.URLError, OSError, http.client.HTTPException):
            pass
        time.sleep(1)
    raise RuntimeError(
        f"label-studio did not answer in {args.startup_timeout} s; log:\n{tail(workdir / 'label-studio.log')}"
    )


def tail(path: Path, n: int = 4000) -> str:
    try:
        return path.read_bytes()[-n:].decode(errors="replace")
    except OSError:
        return ""


def stop_label_studio(proc: subprocess.Popen | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


def signup_and_token(port: int, email: str, password: str) -> str:
    """Sign up through the HTML form (which logs the user in), then read the user's API token."""
    base = f"http://127.0.0.1:{port}"
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(f"{base}/user/signup/", timeout=60) as r:
        r.read()
    csrf = next((c.value for c in jar if c.name == "csrftoken"), None)
    if not csrf:
        raise RuntimeError("no csrftoken cookie from /user/signup/")
    form = urllib.parse.urlencode(
        {"email": email, "password": password, "csrfmiddlewaretoken": csrf}
    ).encode()
    req = urllib.request.Request(
        f"{base}/user/signup/",
        data=form,
        headers={"Referer": f"{base}/user/signup/", "Origin": base, "X-CSRFToken": csrf},
    )
    with opener.open(req, timeout=60) as r:
        r.read()
    if not any(c.name == "sessionid" for c in jar):
        raise RuntimeError(f"sign-up of {email} did not log in (no sessionid cookie)")
    with opener.open(f"{base}/api/current-user/token", timeout=60) as r:
        token = json.loads(r.read())["token"]
    return token


def setup(port: int, admin_token: str, args) -> tuple[int, list[dict]]:
    admin = Api(port, admin_token)
    who = check(*admin.request("GET", "/api/current-user/whoami"), "admin whoami")
    print(f"admin: id={who['id']} {who['email']}", flush=True)

    annotators = []
    t0 = time.monotonic()
    for i in range(args.annotators):
        email = f"annotator{i + 1:02d}@example.com"
        token = signup_and_token(port, email, "Pw-" + secrets.token_hex(8))
        api = Api(port, token)
        me = check(*api.request("GET", "/api/current-user/whoami"), f"whoami {email}")
        api.close()
        if me["email"] != email:
            raise RuntimeError(f"token for {email} answers as {me['email']}")
        annotators.append({"email": email, "id": me["id"], "token": token})
    tokens = {a["token"] for a in annotators} | {admin_token}
    if len(tokens) != args.annotators + 1:
        raise RuntimeError("annotator tokens are not distinct")
    print(
        f"{args.annotators} annotators signed up, each with its own token ({time.monotonic() - t0:.1f} s)",
        flush=True,
    )

    project = check(
        *admin.request(
            "POST",
            "/api/projects/",
            {
                "title": "Queue benchmark",
                "label_config": LABEL_CONFIG,
                "sampling": "Sequential sampling",
                "maximum_annotations": 1,
                "show_skip_button": False,
            },
        ),
        "create project",
    )
    pid = project["id"]
    t0 = time.monotonic()
    tasks = [{"text": f"Task {i + 1}: what does this say?"} for i in range(args.tasks)]
    check(*admin.request("POST", f"/api/projects/{pid}/import", tasks), "import tasks")
    project = check(*admin.request("GET", f"/api/projects/{pid}/"), "read project")
    print(
        f"project {pid}: sampling={project.get('sampling')!r} maximum_annotations={project.get('maximum_annotations')} "
        f"task_number={project.get('task_number')} (import {time.monotonic() - t0:.1f} s)",
        flush=True,
    )
    if project.get("maximum_annotations") != 1 or project.get("sampling") != "Sequential sampling":
        raise RuntimeError(f"project settings not applied: {project}")
    if project.get("task_number") != args.tasks:
        raise RuntimeError(f"expected {args.tasks} tasks, project has {project.get('task_number')}")
    # Every annotator must see the project (community edition: organization members do).
    for a in annotators:
        api = Api(port, a["token"])
        check(*api.request("GET", f"/api/projects/{pid}/"), f"{a['email']} reads the project")
        api.close()
    admin.close()
    return pid, annotators


def run_load(port: int, pid: int, annotators: list[dict], seconds: float) -> dict:
    lock = threading.Lock()
    latencies: list[float] = []
    next_ms: list[float] = []
    submit_ms: list[float] = []
    failures: collections.Counter = collections.Counter()
    handed: dict[int, set] = collections.defaultdict(set)  # task id -> annotator ids /next handed it to
    same_user_repeats = collections.Counter()
    done_at: list[float] = []
    stop_reason: collections.Counter = collections.Counter()
    barrier = threading.Barrier(len(annotators) + 1)
    state = {"t0": 0.0, "deadline": 0.0}

    def worker(a: dict) -> None:
        api = Api(port, a["token"])
        mine: set = set()
        barrier.wait()
        deadline = state["deadline"]
        reason = "time"
        while time.monotonic() < deadline:
            t0 = time.monotonic()
            try:
                status, payload = api.request("GET", f"/api/projects/{pid}/next/")
            except Exception as exc:  # noqa: BLE001 - count and go on
                with lock:
                    failures[f"next: {type(exc).__name__}"] += 1
                continue
            t1 = time.monotonic()
            if status == 404:
                reason = "queue empty (404)"
                break
            if status != 200 or not isinstance(payload, dict) or "id" not in payload:
                with lock:
                    failures[f"next: HTTP {status}"] += 1
                continue
            task_id = payload["id"]
            with lock:
                handed[task_id].add(a["id"])
                if task_id in mine:
                    same_user_repeats[a["id"]] += 1
            mine.add(task_id)
            body = {
                "result": [
                    {
                        "from_name": "a",
                        "to_name": "t",
                        "type": "textarea",
                        "value": {"text": [f"answer from {a['email']}"]},
                    }
                ],
                "lead_time": 1.0,
                "project": pid,
            }
            try:
                status, payload = api.request(
                    "POST", f"/api/tasks/{task_id}/annotations/?project={pid}", body
                )
            except Exception as exc:  # noqa: BLE001
                with lock:
                    failures[f"submit: {type(exc).__name__}"] += 1
                continue
            t2 = time.monotonic()
            if status != 201:
                with lock:
                    failures[f"submit: HTTP {status}"] += 1
                continue
            with lock:
                latencies.append((t2 - t0) * 1000)
                next_ms.append((t1 - t0) * 1000)
                submit_ms.append((t2 - t1) * 1000)
        api.close()
        with lock:
            done_at.append(time.monotonic())
            stop_reason[reason] += 1

    threads = [threading.Thread(target=worker, args=(a,), daemon=True) for a in annotators]
    for t in threads:
        t.start()
    state["t0"] = time.monotonic()
    state["deadline"] = state["t0"] + seconds
    barrier.wait()
    for t in threads:
        t.join()
    elapsed = max(done_at) - state["t0"]
    return {
        "elapsed": elapsed,
        "latencies": latencies,
        "next_ms": next_ms,
        "submit_ms": submit_ms,
        "failures": dict(failures),
        "handed_to_2plus": sorted(t for t, users in handed.items() if len(users) > 1),
        "same_user_repeats": sum(same_user_repeats.values()),
        "stop_reason": dict(stop_reason),
    }


def pct(values: list[float]) -> dict:
    if len(values) < 2:
        v = round(values[0], 1) if values else None
        return {"p50": v, "p95": v, "p99": v, "max": v, "mean": v}
    q = statistics.quantiles(values, n=100, method="inclusive")
    return {
        "p50": round(q[49], 1),
        "p95": round(q[94], 1),
        "p99": round(q[98], 1),
        "max": round(max(values), 1),
        "mean": round(statistics.fmean(values), 1),
    }


def audit(port: int, admin_token: str, pid: int, n_tasks: int) -> dict:
    admin = Api(port, admin_token, timeout=300)
    status, tasks = admin.request(
        "GET", f"/api/projects/{pid}/export?exportType=JSON&download_all_tasks=true"
    )
    check(status, tasks, "export")
    project = check(*admin.request("GET", f"/api/projects/{pid}/"), "read project")
    admin.close()
    per_task = {}
    for t in tasks:
        anns = [a for a in t.get("annotations", []) if not a.get("was_cancelled")]
        users = []
        for a in anns:
            cb = a.get("completed_by")
            users.append(cb.get("id") if isinstance(cb, dict) else cb)
        per_task[t["id"]] = users
    total = sum(len(u) for u in per_task.values())
    multi_user = sorted(t for t, u in per_task.items() if len(set(u)) > 1)
    over_one = sorted(t for t, u in per_task.items() if len(u) > 1)
    return {
        "tasks_in_export": len(per_task),
        "total_annotations": total,
        "tasks_annotated": sum(1 for u in per_task.values() if u),
        "tasks_unannotated": n_tasks - sum(1 for u in per_task.values() if u),
        "tasks_by_2plus_users": len(multi_user),
        "tasks_with_2plus_annotations": len(over_one),
        "most_annotations_on_one_task": max((len(u) for u in per_task.values()), default=0),
        "example_duplicates": multi_user[:10],
        "project_counters": {
            k: project.get(k)
            for k in (
                "task_number",
                "num_tasks_with_annotations",
                "total_annotations_number",
                "finished_task_number",
            )
        },
    }


FRAME = re.compile(r'File ".*/label_studio/([^"]+)", line \d+, in (\w+)')
BUG = re.compile(r"\[(tasks\.models::\w+)::\d+\] \[ERROR\] (.*)")


def summarize_log(text: str) -> dict:
    """What Label Studio's own log says about the load: handled API errors (a "database is locked" is
    retried by its DatabaseIsLockedRetryMiddleware, sleeping 1 s, 1.5 s, ...), with the view that
    raised it, and its own "it's a bug" lock/overlap errors."""
    found = collections.Counter()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "custom_exception_handler" in line and "[ERROR]" in line:
            message = line.split("[ERROR]", 1)[1].strip().split(" ", 1)[-1]
            if message.startswith("There are no tasks for"):
                continue  # the queue's ordinary 404
            where = "?"
            for follow in lines[i + 1 : i + 300]:
                if follow.startswith("[20"):
                    break
                m = FRAME.search(follow)
                if m and m.group(1).endswith("api.py"):
                    where = f"{m.group(1)}:{m.group(2)}"
            found[f"handled error in {where}: {message}"] += 1
        elif "it's a bug" in line or "that's a bug" in line:
            m = BUG.search(line)
            text_ = re.sub(r"\d+", "N", m.group(2)) if m else line
            found[f"{m.group(1) if m else 'LS'}: {text_}"] += 1
        elif "Internal Server Error:" in line:
            path = line.split("Internal Server Error:", 1)[1].strip().split("?")[0]
            found["500 " + re.sub(r"/\d+", "/N", path)] += 1
    return dict(found)


def ls_version(port: int) -> str:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/version", timeout=30) as r:
            data = json.loads(r.read())
        return str(data.get("release") or data.get("label-studio-os-package", {}).get("version") or data)
    except Exception as exc:  # noqa: BLE001
        return f"unknown ({exc})"


def write_results(results_dir: Path, record: dict) -> None:
    results_dir.mkdir(parents=True, exist_ok=True)
    jsonl = results_dir / "label_studio_queue.jsonl"
    with jsonl.open("a") as f:
        f.write(json.dumps(record) + "\n")
    latest: dict = {}
    for line in jsonl.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            latest[(r["annotators"], r["tasks"])] = r
    rows = sorted(latest.values(), key=lambda r: (r["annotators"], r["tasks"]))
    out = [
        "# Label Studio: the claim-and-submit cycle under concurrent annotators",
        "",
        "For comparison with Yardstick's perf/annotation_queue.py. Label Studio as `label-studio start` runs it:",
        "Django's runserver (threaded), its default SQLite database, DEBUG off, analytics off. Each annotator is a",
        "client thread with its own API token (signed up via /user/signup/, token from /api/current-user/token)",
        "that loops with no pause: GET /api/projects/<id>/next/ then POST /api/tasks/<id>/annotations/ (one cycle).",
        "Project: sequential sampling, maximum_annotations = 1. Latency is next + submit. The load generator runs",
        "on the same machine as Label Studio. Latest run per (annotators, tasks); all runs are in the .jsonl.",
        "",
        "| annotators | tasks | cycles | seconds | cycles/s | p50 ms | p95 ms | p99 ms | next p50 ms | submit p50 ms "
        "| tasks given to 2+ annotators | annotations | tasks unannotated | failures | stopped by | LS | run |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lat = r["latency_ms"]
        fails = ", ".join(f"{k} x{v}" for k, v in r["failures"].items()) or "none"
        stops = ", ".join(f"{k} x{v}" for k, v in r["stop_reason"].items())
        out.append(
            f"| {r['annotators']} | {r['tasks']} | {r['cycles']} | {r['seconds']} | {r['cycles_per_s']} | {lat['p50']} "
            f"| {lat['p95']} | {lat['p99']} | {r['next_ms']['p50']} | {r['submit_ms']['p50']} "
            f"| {r['audit']['tasks_by_2plus_users']} (client saw {r['handed_to_2plus_by_next']}) "
            f"| {r['audit']['total_annotations']} | {r['audit']['tasks_unannotated']} | {fails} | {stops} "
            f"| {r['ls_version']} | {r['when']} |"
        )
    out.append("")
    for r in rows:
        srv = ", ".join(f"{k} x{v}" for k, v in r.get("server_log_during_load", {}).items()) or "nothing"
        out.append(
            f"- {r['annotators']} annotators / {r['tasks']} tasks: machine {r['machine']['machine']}; "
            f"load average before {r['machine']['load_before']}, after {r['load_after']}; "
            f"Label Studio's log during the load: {srv}; command `{r['command']}`"
        )
    out.append("")
    (results_dir / "label_studio_queue.md").write_text("\n".join(out))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--annotators", type=int, default=8)
    p.add_argument("--tasks", type=int, default=160)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--label-studio", default=DEFAULT_LS, help="the label-studio executable")
    p.add_argument("--data-dir", help="Label Studio data dir (default: a fresh one in a temp folder)")
    p.add_argument("--startup-timeout", type=float, default=600)
    p.add_argument("--results-dir", default=str(ROOT / "perf" / "results"))
    p.add_argument("--keep-log", help="copy Label Studio's log to this file at the end")
    args = p.parse_args()
    if not Path(args.label_studio).exists():
        print(f"label-studio not found at {args.label_studio}", file=sys.stderr)
        return 2

    machine = machine_line()
    workdir = Path(tempfile.mkdtemp(prefix="lsbench-"))
    port = free_port()
    admin_password = "Adm-" + secrets.token_hex(8)
    admin_token = secrets.token_hex(20)
    proc = None
    try:
        t0 = time.monotonic()
        proc = start_label_studio(args, workdir, port, admin_password, admin_token)
        print(
            f"Label Studio up on port {port} in {time.monotonic() - t0:.1f} s (data in {workdir})", flush=True
        )
        version = ls_version(port)
        pid, annotators = setup(port, admin_token, args)
        log_mark = (workdir / "label-studio.log").stat().st_size
        print(f"load: {args.annotators} annotators, {args.seconds:g} s ...", flush=True)
        load = run_load(port, pid, annotators, args.seconds)
        load_after = " ".join(f"{x:.2f}" for x in os.getloadavg())
        log_during_load = (workdir / "label-studio.log").read_bytes()[log_mark:].decode(errors="replace")
        result = audit(port, admin_token, pid, args.tasks)
        cycles = len(load["latencies"])
        record = {
            "annotators": args.annotators,
            "tasks": args.tasks,
            "seconds": round(load["elapsed"], 1),
            "seconds_asked": args.seconds,
            "cycles": cycles,
            "cycles_per_s": round(cycles / load["elapsed"], 2) if load["elapsed"] > 0 else None,
            "latency_ms": pct(load["latencies"]),
            "next_ms": pct(load["next_ms"]),
            "submit_ms": pct(load["submit_ms"]),
            "failures": load["failures"],
            "stop_reason": load["stop_reason"],
            "handed_to_2plus_by_next": len(load["handed_to_2plus"]),
            "same_user_got_task_again": load["same_user_repeats"],
            "audit": result,
            "server_log_during_load": summarize_log(log_during_load),
            "ls_version": version,
            "server": "label-studio start (Django runserver, threaded), SQLite, DEBUG off",
            "when": time.strftime("%Y-%m-%d %H:%M:%S"),
            "machine": machine,
            "load_after": load_after,
            "command": " ".join(
                shlex.quote(a) for a in [".venv/bin/python", "-m", "perf.label_studio_queue", *sys.argv[1:]]
            ),
        }
        print(json.dumps(record, indent=2), flush=True)
        write_results(Path(args.results_dir), record)
        if args.keep_log:
            shutil.copyfile(workdir / "label-studio.log", args.keep_log)
        return 0
    except Exception as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        print(tail(workdir / "label-studio.log"), file=sys.stderr)
        return 1
    finally:
        stop_label_studio(proc)
        shutil.rmtree(workdir, ignore_errors=True)  # a --data-dir given by the caller is left in place


if __name__ == "__main__":
    sys.exit(main())
