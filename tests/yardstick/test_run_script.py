"""Stopping `make run`: whatever the signal, the web server and the Celery worker go, with every
process they started, within a few seconds (scripts/run.sh); and what it serves is the app as
deployed, DEBUG off.

The pair runs as `make run` starts it, in subprocesses against a fresh var/ folder (SQLite, the
file-system queue) on a free port, in a session of its own; the signal goes to the script's
process group, as a terminal (Ctrl-C, closing it) or a supervisor sends it. And a test run has a
var/ folder of its own, so that a `make run` beside it never takes the tests' tasks.
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

embedded_only = pytest.mark.skipif(
    bool(os.environ.get("DATABASE_URL")),
    reason="runs its own SQLite in subprocesses; identical on every test database",
)
linux_only = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="reads the process table from /proc"
)


def session_processes(session: int) -> dict[int, str]:
    """The live (not zombie) processes of a session, with their command lines."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # gone meanwhile
        # pid (comm) state ppid pgrp session ...: comm may hold spaces and parentheses
        state, _ppid, _pgrp, sid = stat[stat.rindex(")") + 2 :].split()[:4]
        if int(sid) == session and state != "Z":
            found[int(entry.name)] = command.strip()
    return found


def default_hangup() -> None:
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answers(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=5)
    except urllib.error.HTTPError:
        return True  # any answer is an answer (the home page redirects to the log-in page)
    except OSError:
        return False
    return True


@pytest.fixture(scope="module")
def environment(tmp_path_factory):
    """The script's environment: its own var/ folder, migrated once for the module."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DATABASE_URL", "CELERY_"))}
    env["YARDSTICK_VAR_DIR"] = str(tmp_path_factory.mktemp("run-script") / "var")
    env["DJANGO_SETTINGS_MODULE"] = "yardstick.settings"
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True, timeout=300
    )
    return env


def test_the_tests_have_a_var_folder_and_a_queue_of_their_own(settings):
    """A `make run` beside a test run never takes the tests' tasks (yardstick/settings.py)."""
    assert not settings.VAR_DIR.resolve().is_relative_to(ROOT / "var")
    assert os.environ["YARDSTICK_VAR_DIR"] == str(settings.VAR_DIR)  # the processes tests start share it
    if settings.CELERY_BROKER_URL.startswith("filesystem://"):
        for folder in ("data_folder_in", "data_folder_out", "processed_folder", "control_folder"):
            path = Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS[folder])
            assert path.resolve().is_relative_to(settings.VAR_DIR.resolve()), folder


def served_as_deployed(port: int) -> None:
    """`make run` serves the app as it is deployed: DEBUG off (a missing page is Yardstick's own
    404, listing no URLs), a Content-Security-Policy on every page, the static files served."""
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/no-such-page/", timeout=10)
    except urllib.error.HTTPError as error:
        body = error.read().decode()
        assert error.code == 404 and "There is no such page" in body
        assert "URLconf" not in body and "urlpatterns" not in body
        assert "script-src 'self'" in error.headers["Content-Security-Policy"]
    else:
        raise AssertionError("a missing page answered 200")
    login = urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=10)
    assert "script-src 'self'" in login.headers["Content-Security-Policy"]
    assert (
        urllib.request.urlopen(f"http://127.0.0.1:{port}/static/css/yardstick.css", timeout=10).status == 200
    )


@pytest.mark.slow  # three start-ups of the server and the worker: about 30 s each on two cores
@embedded_only
@linux_only
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_to_make_run_stops_the_server_and_the_worker_within_seconds(environment, signum, tmp_path):
    port = free_port()
    env = {**environment, "PORT": str(port)}
    worker_log = Path(env["YARDSTICK_VAR_DIR"]) / "worker.log"
    worker_log.unlink(missing_ok=True)
    with open(tmp_path / "run.log", "w") as log:
        script = subprocess.Popen(
            ["scripts/run.sh"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            # A shell cannot trap a signal it was started ignoring: under `nohup`, say, SIGHUP would
            # be ignored all the way down. make run is started with the default action.
            preexec_fn=default_hangup,
        )
    try:
        deadline = time.monotonic() + 180
        while not (
            answers(f"http://127.0.0.1:{port}/")
            and worker_log.exists()
            and "ready." in worker_log.read_text()
        ):
            assert script.poll() is None, (tmp_path / "run.log").read_text()
            assert time.monotonic() < deadline, "the server or the worker never came up"
            time.sleep(0.5)
        started = session_processes(script.pid)
        assert any("celery" in command and "worker" in command for command in started.values()), started
        assert any("gunicorn" in command for command in started.values()), started
        if signum == signal.SIGTERM:
            served_as_deployed(port)

        os.killpg(script.pid, signum)
        stopped_by = time.monotonic() + 10
        while session_processes(script.pid) and time.monotonic() < stopped_by:
            time.sleep(0.1)
        assert session_processes(script.pid) == {}, f"left running 10 s after {signum.name}"
        assert script.wait(timeout=1) == 128 + signum
    finally:
        leftover = session_processes(script.pid)
        for pid in leftover:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if script.poll() is None:
            script.wait(timeout=10)
