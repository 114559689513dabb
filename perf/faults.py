"""Faults, measured: a worker killed mid-import on a Redis broker, a web server killed mid-trial.

Usage:  .venv/bin/python -m perf.faults [--records 400000] [--lost-after 3]

Everything runs in subprocesses against a fresh var/ folder (SQLite), with the Celery broker and
the shared cache on Redis (scripts/test-redis.sh), as tests/yardstick/test_faults.py does (whose
helpers this reuses); here the times are taken and written to perf/results/faults.md.

1. A worker imports --records STE-VQA questions; it is killed (SIGKILL to its process group) 1.5 s
   after the job is seen running. Measured: the job's state right after the kill, the seconds
   until a newly started worker has declared it failed (YARDSTICK_JOB_LOST_AFTER_S = --lost-after,
   beats every 0.5 s), and what the database and the uploads folder hold then.
2. A tester opens a timed trial through runserver; the server is killed and started again.
   Measured: whether the same trial comes back with the same start, the seconds the restart
   took, and whether an answer after it is stored.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "perf" / "results"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "yardstick.settings")

import django  # noqa: E402

django.setup()  # the scenario's helpers import models
from tests.yardstick import test_faults as faults  # noqa: E402


def killed_import(workdir: Path, redis_url: str, *, records: int, lost_after: float) -> dict:
    import redis

    broker, shared = f"{redis_url}/3", f"{redis_url}/4"
    for url in (broker, shared):
        redis.Redis.from_url(url).flushdb()
    env = faults.environment(
        workdir,
        CELERY_BROKER_URL=broker,
        CACHE_URL=shared,
        YARDSTICK_JOB_HEARTBEAT_S="0.5",
        YARDSTICK_JOB_LOST_AFTER_S=str(lost_after),
    )
    source = workdir / "big.json"
    evidence = ["1", "1", "9", "1", "9", "9", "1", "9"]
    source.write_text(
        json.dumps(
            [
                {"question_id": i, "question": f"sign {i}?", "answer": "stop", "evidence": evidence}
                for i in range(records)
            ]
        )
    )
    faults.manage(env, "migrate", "-v0")
    state = lambda: faults.manage(env, "shell", "-v0", "-c", faults.JOB_STATE.format(pk=job))  # noqa: E731
    worker = faults.start_worker(env)
    job = faults.manage(env, "shell", "-v0", "-c", faults.START_JOB.format(path=str(source)))
    while not state().startswith("running"):
        time.sleep(0.2)
    time.sleep(1.5)
    before_kill = state()
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()
    killed_at = time.monotonic()
    after_kill = state()
    replacement = faults.start_worker(env)
    try:
        while not (final := state()).startswith("failed"):
            time.sleep(0.2)
        declared = time.monotonic() - killed_at
    finally:
        replacement.send_signal(signal.SIGTERM)
        replacement.communicate(timeout=60)
    uploads = [path for path in (workdir / "var" / "uploads").rglob("*") if path.is_file()]
    return {
        "records": records,
        "file_mb": round(source.stat().st_size / 2**20, 1),
        "before_kill": before_kill.split(" |")[0],
        "after_kill": after_kill.split(" |")[0],
        "declared_failed_after_s": round(declared, 1),
        "final": final,
        "uploads_left": len(uploads),
    }


def killed_server(workdir: Path) -> dict:
    port = faults.free_port()
    env = faults.environment(
        workdir,
        DJANGO_DEBUG="0",
        DJANGO_SECURE_SSL_REDIRECT="0",
        DJANGO_SESSION_COOKIE_SECURE="0",
        DJANGO_CSRF_COOKIE_SECURE="0",
    )
    faults.manage(env, "migrate", "-v0")
    plan = faults.manage(env, "shell", "-v0", "-c", faults.PLAN.format(folder=str(workdir / "trance")))

    def serve():
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload", "--insecure"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        while True:
            try:
                faults.socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return server
            except OSError:
                time.sleep(0.1)

    server = serve()
    browser = faults.Browser(f"http://127.0.0.1:{port}")
    try:
        browser.get("/accounts/login/")
        browser.post("/accounts/login/", {"username": "tess", "password": "a-long-test-password"})
        session = re.search(r"/test/sessions/(\d+)/begin/", browser.post(f"/test/plans/{plan}/start/"))[1]
        browser.post(f"/test/sessions/{session}/begin/")
        before = faults.trial_data(browser.get(f"/test/sessions/{session}/"))
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
        started = time.monotonic()
        server = serve()
        restart = time.monotonic() - started
        after = faults.trial_data(browser.get(f"/test/sessions/{session}/"))
        answer = {"answer": {"steps": [{"obj_idx": 0, "attr": "color", "val": "red"}]}}
        result = json.loads(browser.post(after["answer_url"], body=answer))
    finally:
        os.killpg(server.pid, signal.SIGKILL)
    return {
        "same_trial": after["trial"] == before["trial"],
        "same_start": after["served_at"] == before["served_at"],
        "remaining_ms_before": before["remaining_ms"],
        "remaining_ms_after": after["remaining_ms"],
        "restart_s": round(restart, 1),
        "answer_after_restart": result["status"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=400_000)
    parser.add_argument("--lost-after", type=float, default=3.0)
    args = parser.parse_args()
    script = ROOT / "scripts" / "test-redis.sh"
    subprocess.run([str(script), "start"], check=True)
    redis_url = subprocess.run(
        [str(script), "url"], check=True, capture_output=True, text=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="yardstick-perf-faults-") as folder:
        for name in ("import", "trial"):
            (Path(folder) / name).mkdir()
        imported = killed_import(
            Path(folder) / "import", redis_url, records=args.records, lost_after=args.lost_after
        )
        served = killed_server(Path(folder) / "trial")
    command = f".venv/bin/python -m perf.faults --records {args.records} --lost-after {args.lost_after:g}"
    lines = [
        "# Faults: a worker killed mid-import, a web server killed mid-trial",
        "",
        f"Latest run {time.strftime('%Y-%m-%d %H:%M:%S')}; command: `{command}`. SQLite in a fresh var/, "
        "Celery broker and shared cache on Redis (scripts/test-redis.sh).",
        "",
        f"1. Import of {imported['records']} STE-VQA questions ({imported['file_mb']} MB), the worker killed with "
        f"SIGKILL 1.5 s into the job. Right before: `{imported['before_kill']}` (status, datasets, upload kept); "
        f"right after: `{imported['after_kill']}` — still marked running, as a dead worker leaves it. A new worker "
        f"declared it failed {imported['declared_failed_after_s']} s after the kill (lost after "
        f"{args.lost_after:g} s without a beat): `{imported['final']}`. Uploads left: {imported['uploads_left']}.",
        f"2. A tester in a timed TRANCE trial; the web server killed with SIGKILL and started again "
        f"({served['restart_s']} s). Same trial: {served['same_trial']}; same start on the server's clock: "
        f"{served['same_start']} (time left {served['remaining_ms_before']} ms before, {served['remaining_ms_after']} "
        f"ms after); an answer after the restart: {served['answer_after_restart']}.",
        "",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "faults.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
