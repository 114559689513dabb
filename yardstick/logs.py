"""Log lines that say where they come from, and (YARDSTICK_LOG_FORMAT=json) one JSON object each.

- `RequestContextMiddleware` gives each web request an id: the incoming X-Request-ID when it is a
  short safe token (nginx sets it to its own $request_id), else a fresh one; it is sent back in the
  response's X-Request-ID. From then until the response is closed (Django's request_finished, so
  that the "Not Found: /x" line Django logs after the middleware has returned has them too), its
  id, method and path are in a context variable.
- `task_started` / `task_finished` (connected to Celery's task_prerun and task_postrun in
  yardstick/celery.py) do the same for a task: its name, id and, for the tasks that run a job, the
  job ("import:12").
- `ContextFilter` (on the console handler, settings.LOGGING) copies those onto every record, and the
  user's id once the request has looked its user up (the filter never queries the database).
- `JsonFormatter` writes a record as one line of JSON: time (UTC, milliseconds), level, logger,
  message, host, process, the fields above where known, and the traceback as "exception".

The text format (the default) is Django's as before: the message alone.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import socket
import uuid
from datetime import UTC, datetime

#: The current request's or task's fields (None outside both). Each value is a new dict: never mutated.
_context: contextvars.ContextVar[dict | None] = contextvars.ContextVar("yardstick_log_context", default=None)
#: An X-Request-ID kept as it came: short, and nothing a log reader or a header could trip on.
SAFE_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
#: The fields a JSON line carries after the fixed ones, when the record has them.
CONTEXT_FIELDS = ("request_id", "method", "path", "user_id", "task", "task_id", "job")
#: The tasks that run a job, and the job's kind (its model's `kind`): the task's first argument is its id.
JOB_TASKS = {
    "benchmarks.run_import": "import",
    "evaluation.score_upload": "scoring",
    "inference.run_model": "model-run",
}
HOST = socket.gethostname()


def current() -> dict:
    return _context.get() or {}


def request_id_for(request) -> str:
    incoming = request.headers.get("X-Request-ID", "")
    return incoming if SAFE_REQUEST_ID.fullmatch(incoming) else uuid.uuid4().hex


class RequestContextMiddleware:
    """A request's id, method and path for every line logged while it runs; the id in the response."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.request_id = request_id_for(request)
        _context.set(
            {
                "request_id": request.request_id,
                "method": request.method,
                "path": request.path,
                "request": request,
            }
        )
        response = self.get_response(request)
        response["X-Request-ID"] = request.request_id
        return response


def request_over(**kwargs) -> None:
    """Django's request_started and request_finished: no line outside a request carries one's fields
    (a thread of the server goes on to the next request)."""
    _context.set(None)


_task_tokens: dict[str, contextvars.Token] = {}


def task_started(sender=None, task_id=None, task=None, args=None, kwargs=None, **extra) -> None:
    """Celery's task_prerun: the task's name, id and job for the lines it logs (on top of the
    request's, for a task run eagerly inside one)."""
    name = getattr(task or sender, "name", None)
    fields = {**current(), "task": name, "task_id": task_id}
    kind = JOB_TASKS.get(name)
    if kind:
        job = args[0] if args else next(iter((kwargs or {}).values()), None)
        if job is not None:
            fields["job"] = f"{kind}:{job}"
    _task_tokens[task_id] = _context.set(fields)


def task_finished(sender=None, task_id=None, **extra) -> None:
    """Celery's task_postrun: back to what was before the task."""
    token = _task_tokens.pop(task_id, None)
    if token is None:
        return
    try:
        _context.reset(token)
    except ValueError:  # set in another context (never for Celery's pools): forget it all
        _context.set(None)


class ContextFilter(logging.Filter):
    """Copy the current request's or task's fields onto each record (never over the record's own)."""

    def filter(self, record: logging.LogRecord) -> bool:
        fields = current()
        for key, value in fields.items():
            if key != "request" and not hasattr(record, key):
                setattr(record, key, value)
        request = fields.get("request")
        # The user once AuthenticationMiddleware looked it up (cached on the request): never a query here.
        user = getattr(request, "_cached_user", None)
        if user is not None and user.is_authenticated and not hasattr(record, "user_id"):
            record.user_id = user.pk
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line (YARDSTICK_LOG_FORMAT=json), for a log collector."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "host": HOST,
            "process": record.process,
        }
        for field in CONTEXT_FIELDS:
            value = getattr(record, field, None)
            if value is not None:
                line[field] = value
        if record.exc_info and record.exc_info[0] is not None:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        text = json.dumps(line, default=str, ensure_ascii=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate in a message: escaped, not a lost line
            text = json.dumps(line, default=str)
        return text
