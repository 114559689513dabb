"""Structured logs (yardstick/logs.py): a request's id on its lines and in its response, a hostile
X-Request-ID replaced, a traceback as "exception", a task's name and id, YARDSTICK_LOG_FORMAT=json
from the settings."""

import io
import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from celery import shared_task

from yardstick import logs

ROOT = Path(__file__).resolve().parents[2]
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


@shared_task(name="tests.logs.say")
def say(job_id: int) -> None:
    logging.getLogger("tests.logs").info("inside the task for %s", job_id)


@pytest.fixture
def json_lines():
    """The JSON lines logged while the test runs, as the settings' console handler writes them with
    YARDSTICK_LOG_FORMAT=json: a handler of the root logger with the context filter and the formatter."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(logs.ContextFilter())
    handler.setFormatter(logs.JsonFormatter())
    root = logging.getLogger()
    root.addHandler(handler)

    def read() -> list[dict]:
        text = stream.getvalue()
        return [json.loads(line) for line in text.splitlines()]

    yield read
    root.removeHandler(handler)


def test_a_request_s_lines_carry_its_id_which_the_response_echoes(client, json_lines, django_user_model):
    user = django_user_model.objects.create_user("reader", password="x")
    client.force_login(user)
    response = client.get("/no-such-page/", headers={"X-Request-ID": "nginx-4f2a.9_B"})
    assert response.status_code == 404
    assert response["X-Request-ID"] == "nginx-4f2a.9_B"
    (line,) = [line for line in json_lines() if line["logger"] == "django.request"]
    assert line["request_id"] == "nginx-4f2a.9_B"
    assert (line["method"], line["path"], line["level"]) == ("GET", "/no-such-page/", "WARNING")
    assert line["user_id"] == user.pk
    assert TIME.fullmatch(line["time"]) and line["host"] and line["process"] == os.getpid()
    assert "Not Found" in line["message"]


def test_without_an_incoming_id_one_is_made(client, json_lines):
    response = client.get("/no-such-page/")
    assert re.fullmatch(r"[0-9a-f]{32}", response["X-Request-ID"])
    (line,) = [line for line in json_lines() if line["logger"] == "django.request"]
    assert line["request_id"] == response["X-Request-ID"] and "user_id" not in line


@pytest.mark.parametrize(
    "hostile",
    ["abc\nX-Injected: 1", "a" * 200, 'id"with"quotes', "id with spaces", "<script>", "ü-umlaut", ""],
)
def test_a_hostile_request_id_is_replaced_never_echoed(client, json_lines, hostile):
    response = client.get("/no-such-page/", headers={"X-Request-ID": hostile})
    assert re.fullmatch(r"[0-9a-f]{32}", response["X-Request-ID"])
    assert "X-Injected" not in response.headers
    (line,) = [line for line in json_lines() if line["logger"] == "django.request"]
    assert line["request_id"] == response["X-Request-ID"]
    assert hostile not in json.dumps(line) or not hostile


def test_outside_a_request_the_context_is_empty_again(client, json_lines):
    client.get("/no-such-page/", headers={"X-Request-ID": "first"})
    logging.getLogger("tests.logs").warning("after the request")
    (line,) = [line for line in json_lines() if line["message"] == "after the request"]
    assert not {"request_id", "path", "method"} & set(line)


def test_an_exception_is_its_own_field_and_a_line_stays_one_line(json_lines):
    try:
        raise ValueError("bad value")
    except ValueError:
        logging.getLogger("tests.logs").exception("it failed:\nsecond line, «quoted»")
    (line,) = json_lines()
    assert line["message"] == "it failed:\nsecond line, «quoted»"  # ensure_ascii=False, newline escaped
    assert line["exception"].startswith("Traceback") and "ValueError: bad value" in line["exception"]
    assert line["level"] == "ERROR" and line["logger"] == "tests.logs"


def test_a_lone_surrogate_is_escaped_not_a_lost_line():
    record = logging.LogRecord("tests.logs", logging.INFO, __file__, 1, "odd \udcff text", None, None)
    text = logs.JsonFormatter().format(record)
    text.encode("utf-8")
    assert json.loads(text)["message"] == "odd \udcff text"


def test_a_task_run_eagerly_logs_its_name_and_id(json_lines):
    result = say.apply_async(args=[5], task_id="task-id-1")
    assert result.successful()
    (line,) = [line for line in json_lines() if line["logger"] == "tests.logs"]
    assert (line["task"], line["task_id"]) == ("tests.logs.say", "task-id-1")
    assert "job" not in line  # not one of the tasks that run a job
    logging.getLogger("tests.logs").info("after the task")
    assert "task" not in json_lines()[-1]


def test_the_tasks_that_run_a_job_name_it():
    class Task:
        name = "inference.run_model"

    logs.task_started(task=Task(), task_id="t-2", args=(17,), kwargs={})
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "m", None, None)
    logs.ContextFilter().filter(record)
    logs.task_finished(task_id="t-2")
    assert (record.task, record.task_id, record.job) == ("inference.run_model", "t-2", "model-run:17")
    Task.name = "benchmarks.run_import"
    logs.task_started(task=Task(), task_id="t-3", args=(), kwargs={"job_id": 4})
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "m", None, None)
    logs.ContextFilter().filter(record)
    logs.task_finished(task_id="t-3")
    assert record.job == "import:4"
    assert logs.current() == {}


@pytest.mark.parametrize("log_format", ["json", "text"])
def test_the_setting_picks_the_console_format(tmp_path, log_format):
    env = {key: value for key, value in os.environ.items() if key in ("PATH", "LANG", "HOME")}
    env.update(
        YARDSTICK_VAR_DIR=str(tmp_path / "var"),
        YARDSTICK_LOG_FORMAT=log_format,
        DJANGO_SETTINGS_MODULE="yardstick.settings",
    )
    script = (
        "import django, logging; django.setup(); logging.getLogger('tests.logs').warning('hello %s', 'there')"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    (written,) = result.stderr.splitlines()
    if log_format == "text":
        assert written == "hello there"
    else:
        line = json.loads(written)
        assert (line["message"], line["level"], line["logger"]) == ("hello there", "WARNING", "tests.logs")
        assert TIME.fullmatch(line["time"]) and line["process"] and line["host"]
