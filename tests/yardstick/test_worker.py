"""The embedded set-up of `make run`: a real Celery worker on the file-system broker runs an import.

Everything runs in subprocesses against a fresh var/ folder (SQLite, local media, the
file-system queue), as `make run` does, so no broker or database server is involved.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CELERY = Path(sys.executable).with_name("celery")

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("DATABASE_URL")),
    reason="tests the embedded default; identical on every test database",
)

START_JOB = """
from django.core.files.base import ContentFile
from benchmarks.services import start_import_job
from tests.factories import make_user
user = make_user("worker-researcher", "researcher")
data = open({path!r}, "rb").read()
job = start_import_job(user=user, benchmark="stevqa", name="queued", upload=ContentFile(data, name="gt.json"))
print(job.pk)
"""

JOB_STATE = """
from benchmarks.models import ImportJob
job = ImportJob.objects.get(pk={pk})
print(job.status, job.dataset.item_count if job.dataset else 0, "|".join(job.errors))
"""

WORKER_BEAT = """
from jobs.models import WorkerBeat
print("|".join(",".join(beat.queues) for beat in WorkerBeat.objects.all()) or "none")
"""


def manage(env: dict, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""


def test_a_queued_import_is_run_by_a_real_worker(tmp_path):
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DATABASE_URL", "CELERY_"))}
    env["YARDSTICK_VAR_DIR"] = str(tmp_path / "var")
    env["DJANGO_SETTINGS_MODULE"] = "yardstick.settings"
    source = tmp_path / "gt.json"
    source.write_text(
        '[{"question_id": 1, "question": "这是什么店?", "answer": "华为", "evidence": ["1","1","9","1","9","9","1","9"]}]'
    )
    manage(env, "migrate", "-v0")
    worker = subprocess.Popen(
        [str(CELERY), "-A", "yardstick", "worker", "--pool=solo", "--loglevel=INFO"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        job_id = manage(env, "shell", "-v0", "-c", START_JOB.format(path=str(source)))
        deadline = time.monotonic() + 60
        state = ""
        while time.monotonic() < deadline:
            state = manage(env, "shell", "-v0", "-c", JOB_STATE.format(pk=job_id))
            if state.startswith(("succeeded", "failed")):
                break
            time.sleep(0.5)
        assert state == "succeeded 1", state
        # The worker records its own sign of life with its queues (what /health/workers reads).
        beat = manage(env, "shell", "-v0", "-c", WORKER_BEAT)
        assert beat == "celery,gpu,imports", beat
    finally:
        worker.terminate()
        log = worker.communicate(timeout=30)[0]
    assert "benchmarks.run_import" in log
    # A clean stop removes the row: no queue is reported as served by a worker that is gone.
    assert manage(env, "shell", "-v0", "-c", WORKER_BEAT) == "none"
