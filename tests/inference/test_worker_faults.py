"""A real Celery worker on the embedded broker runs a model run, and is killed mid-run; another,
started as `make run` starts it (with the beat schedule), declares the run lost on its schedule.

The worker, the web side and the database are the embedded defaults of `make run` (the file
system broker, the file cache for the heartbeats, SQLite), in subprocesses against their own
var/ folder; Dot count is loaded as a plug-in benchmark whose baseline waits a moment per batch.
"""

import os
import signal
import time

import pytest

from tests.inference.conftest import write_dot_files
from tests.yardstick.test_faults import embedded_only, environment, manage, start_worker

START = """
from benchmarks.models import Dataset
from inference.services import start_run
run = start_run(dataset=Dataset.objects.get(name="dots"), baseline="blobs", batch_size=1)
print(run.pk)
"""

STATE = """
from inference.models import ModelRun
run = ModelRun.objects.get(pk={pk})
print(run.status, run.done, run.total, run.submission_id, run.error)
"""


def state(env, pk):
    return manage(env, "shell", "-v0", "-c", STATE.format(pk=pk))


def wait_for(env, pk, predicate, seconds=90):
    deadline = time.monotonic() + seconds
    current = ""
    while time.monotonic() < deadline:
        current = state(env, pk)
        if predicate(current):
            return current
        time.sleep(0.3)
    raise AssertionError(f"run {pk} never got there: {current}")


@embedded_only
@pytest.mark.slow
def test_a_worker_killed_mid_run_is_declared_lost_on_the_beat_and_a_new_worker_finishes_the_next(tmp_path):
    env = environment(
        tmp_path,
        YARDSTICK_BENCHMARKS="tests.dotcount.spec",
        YARDSTICK_TEST_BASELINE_DELAY_S="0.7",
        YARDSTICK_JOB_HEARTBEAT_S="0.3",
        YARDSTICK_JOB_LOST_AFTER_S="8",
        YARDSTICK_JOB_REAP_EVERY_S="1",
    )
    truth = write_dot_files(tmp_path / "dots")
    manage(env, "migrate", "-v0")
    manage(
        env,
        "import_dataset",
        "dotcount",
        str(truth),
        "--name",
        "dots",
        "--images",
        str(tmp_path / "dots" / "images"),
    )
    worker = start_worker(env)
    try:
        pk = manage(env, "shell", "-v0", "-c", START)
        wait_for(env, pk, lambda current: current.startswith("running") and int(current.split()[1]) >= 2)
        os.killpg(worker.pid, signal.SIGKILL)  # as the out-of-memory killer or a lost machine would
        worker.wait(timeout=30)
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
    assert state(env, pk).startswith("running")  # nobody has looked yet, and it was running a moment ago

    # A worker started at once, with the beat schedule as `make run` starts it: at its start the run
    # is not lost yet (beaten less than 8 s ago: a worker starts in less), so its reaper on the schedule declares it, and pages
    # only read what it wrote. Then it takes the next run to its end, with a scored submission.
    worker = start_worker(env, "-B", f"--schedule={tmp_path / 'beat-schedule'}")
    try:
        failed = wait_for(env, pk, lambda current: current.startswith("failed"), seconds=60)
        assert "None the worker running this model stopped" in failed, failed
        pk = manage(env, "shell", "-v0", "-c", START)
        finished = wait_for(env, pk, lambda current: current.split()[0] in {"succeeded", "failed"})
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.communicate(timeout=30)
        except Exception:
            os.killpg(worker.pid, signal.SIGKILL)
    assert finished.startswith("succeeded 8 8 "), finished
