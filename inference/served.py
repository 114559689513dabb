"""Served models: a run whose answers come from an HTTP endpoint the researcher runs (pure, no Django).

A benchmark whose spec names a served format (`BenchmarkSpec.served`, a "module:Class" path to a
`ServedFormat` in its own folder) offers the built-in model `served`. A run of it sends the units
to an endpoint by one of two protocols (run option `protocol`):

- "yardstick": a POST to the endpoint per batch, ``{"benchmark", "setting", "items": [{"id",
  "payload", "images": {role: data URI}}]}``, answered ``{"answers": [...]}``: one answer per item,
  in order, already in the benchmark's prediction format (the researcher's own server);
- "openai": a POST per unit to ``{endpoint}/chat/completions`` (an OpenAI-compatible chat server
  with a vision-language model, such as vLLM): the benchmark's prompt and the images it names in,
  the reply's text turned into a prediction by the benchmark's parser. A text the parser cannot
  read is recorded as the format's `unparsed` answer (wrong, never a crash), counted and listed.

Requests run `concurrency` at a time inside each batch (the run's cancel is checked between
batches), each with a timeout; connection errors, timeouts, 429 and 5xx are retried with
exponential backoff and a jitter drawn from the run's seed (so a run's waits repeat), honouring a
Retry-After given in seconds. A request still failing after its retries fails the run
(`ServedFailed`, naming the units, the status and the last error) and nothing is scored.

Every attempt is one JSON line of the audit file (time, units, attempt, URL, the request body with
each image replaced by its sha256, size and type, status, the response body up to
`AUDIT_RESPONSE_BYTES`, seconds, error); the Authorization header never enters it. The API key
itself is never stored: the run names an environment variable of the worker that holds it.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import ipaddress
import json
import mimetypes
import os
import random
import re
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from benchmarks.spec import plugged
from inference.baselines import Baseline, BaselineRefused, RunChoices, Unit, gettext_noop
from inference.plugins import ModelInput

if TYPE_CHECKING:
    import httpx

    from benchmarks.spec import BenchmarkSpec

#: The built-in model's name: `run_baseline served <dataset>`, "served" on the form and the API.
SERVED = "served"
YARDSTICK, OPENAI = "yardstick", "openai"
PROTOCOLS = (YARDSTICK, OPENAI)
#: Bounds of the run options: (lowest, highest, default).
CONCURRENCY = (1, 32, 4)
TIMEOUT_S = (0.1, 600.0, 60.0)
RETRIES = (0, 10, 3)
MAX_TOKENS = (1, 32768, 256)
#: How much of a response body the audit keeps (the rest is cut, and the line says so).
AUDIT_RESPONSE_BYTES = 64 * 1024
#: How many unparsed units the run's parameters list by id (all of them are counted).
UNPARSED_LISTED = 50
#: Query parameters an endpoint may not carry: a key in the URL would be stored and shown.
SECRET_QUERY = re.compile(r"key|token|secret|password|passwd|signature|sig|auth", re.I)
#: A key's variable must carry this prefix: a run may not have the worker send any other of its
#: variables (its database password, its secret key) to an endpoint the run names.
KEY_PREFIX = "YARDSTICK_SERVED_KEY_"
ENV_NAME = re.compile(re.escape(KEY_PREFIX) + r"[A-Za-z0-9_]{1,100}")
DATA_URI = re.compile(r"data:[^;,]+;base64,", re.I)
#: Addresses an endpoint may never have, whatever the site allows: link-local addresses hold cloud
#: machines' metadata services (and their credentials); the others are not servers.
NEVER = tuple(
    ipaddress.ip_network(network)
    for network in ("169.254.0.0/16", "fe80::/10", "0.0.0.0/8", "224.0.0.0/4", "ff00::/8", "::/128")
)


def host_problem(host: str, allowed: Sequence[str] = (), addresses: Sequence[str] = ()) -> str:
    """Why the worker may not send items to `host` (empty when it may).

    `allowed` is the site's list (YARDSTICK_SERVED_ALLOWED_HOSTS): host names ("gpu-box"), domains
    ("*.lab.example.org" or ".lab.example.org": the domain's hosts), addresses and networks
    ("10.0.0.0/8"); empty, any host may be named. `addresses`: what the name resolves to on the
    worker. A name is allowed by its name or, when every address it resolves to is in an allowed
    network, by those; an address only by a network. A link-local or unspecified address is refused
    whatever the list says, also as what an allowed name resolves to."""
    host = host.lower().rstrip(".").strip("[]")
    try:
        literal = [ipaddress.ip_address(host)]
    except ValueError:
        literal = []
    found = literal + [ipaddress.ip_address(address) for address in addresses]
    for address in found:
        if any(address in network for network in NEVER if address.version == network.version):
            what = f"{host} is" if literal else f"{host} resolves to {address},"
            return (
                f"{what} a link-local or unspecified address: a machine's metadata service lives "
                "there, and no run may send it anything"
            )
    if not allowed:
        return ""
    names, networks = [], []
    for entry in allowed:
        try:
            networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
        except ValueError:
            names.append(entry.lower().rstrip("."))
    by_name = any(
        host == name or (name.startswith(("*.", ".")) and host.endswith("." + name.lstrip("*.")))
        for name in names
    )
    in_networks = bool(found) and all(
        any(address in network for network in networks if address.version == network.version)
        for address in found
    )
    if literal and not in_networks:
        return f"{host} is not among the hosts this site lets runs reach (YARDSTICK_SERVED_ALLOWED_HOSTS)"
    if not literal and not by_name and not in_networks:
        return f"{host} is not among the hosts this site lets runs reach (YARDSTICK_SERVED_ALLOWED_HOSTS)"
    return ""


def resolved_addresses(host: str, port: int | None) -> list[str]:
    """The addresses `host` resolves to here (none when it does not resolve: the request will say)."""
    try:
        return sorted({info[4][0] for info in socket.getaddrinfo(host, port or 80, proto=socket.IPPROTO_TCP)})
    except (OSError, UnicodeError):
        return []


class OptionsRefused(BaselineRefused):
    """A served run's options are wrong; the message starts with the option's name."""


class ServedFailed(Exception):
    """The endpoint could not answer a unit (after its retries), or answered in a shape that
    cannot be read: the run fails with this, and nothing is scored."""


class Stopped(ServedFailed):
    """A request given up because another request of the batch failed (that one is reported)."""


class Unparsed(ValueError):
    """A served format's parser cannot read the model's text: the unit gets `unparsed(item)`."""


# --- options ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServedOptions:
    """A served run's options, checked (`served_options`), as `ModelRun.options` keeps them."""

    endpoint: str
    protocol: str = OPENAI
    model: str = ""
    api_key_env: str = ""
    concurrency: int = CONCURRENCY[2]
    timeout_s: float = TIMEOUT_S[2]
    retries: int = RETRIES[2]
    max_tokens: int = MAX_TOKENS[2]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def shown_endpoint(self) -> str:
        """The endpoint as reports show it: without its query string."""
        parts = urlsplit(self.endpoint)
        return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


OPTION_NAMES = tuple(ServedOptions.__dataclass_fields__)


def served_options(raw: Mapping[str, Any] | None) -> ServedOptions:
    """The options checked and completed with their defaults; OptionsRefused names the field."""
    raw = dict(raw or {})
    unknown = sorted(set(raw) - set(OPTION_NAMES))
    if unknown:
        raise OptionsRefused(
            f"options: unknown option {unknown[0]!r} (a served model takes {', '.join(OPTION_NAMES)})"
        )
    endpoint = checked_endpoint(raw.get("endpoint"))
    protocol = raw.get("protocol", OPENAI)
    if protocol not in PROTOCOLS:
        raise OptionsRefused(f"protocol: expected one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    model = raw.get("model", "") or ""
    if not isinstance(model, str) or len(model) > 200:
        raise OptionsRefused(
            "model: expected the model's name as the server knows it (at most 200 characters)"
        )
    if protocol == OPENAI and not model.strip():
        raise OptionsRefused(
            "model: the openai protocol needs the model's name as the server knows it (its /v1/models)"
        )
    api_key_env = raw.get("api_key_env", "") or ""
    if not isinstance(api_key_env, str) or (api_key_env and not ENV_NAME.fullmatch(api_key_env)):
        raise OptionsRefused(
            f"api_key_env: expected the NAME of an environment variable on the worker that holds the key, "
            f"starting with {KEY_PREFIX} (such as {KEY_PREFIX}VLLM), never the key itself: no other "
            "variable of the worker may be sent to an endpoint"
        )
    return ServedOptions(
        endpoint=endpoint,
        protocol=protocol,
        model=model.strip(),
        api_key_env=api_key_env,
        concurrency=bounded_int(raw, "concurrency", CONCURRENCY),
        timeout_s=bounded_number(raw, "timeout_s", TIMEOUT_S),
        retries=bounded_int(raw, "retries", RETRIES),
        max_tokens=bounded_int(raw, "max_tokens", MAX_TOKENS),
    )


def checked_endpoint(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise OptionsRefused("endpoint: expected the server's URL, such as http://gpu-box:8000/v1")
    value = value.strip()
    if len(value) > 2000:
        raise OptionsRefused("endpoint: a URL of at most 2,000 characters")
    try:
        parts = urlsplit(value)
        _ = parts.port  # a port that is not a number raises here
    except ValueError as error:
        raise OptionsRefused(f"endpoint: not a URL ({error})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise OptionsRefused(f"endpoint: expected an http or https URL with a host, got {value!r}")
    if parts.username is not None or parts.password is not None:
        raise OptionsRefused(
            "endpoint: no user name or password in the URL (it would be stored and shown): put the key "
            "in an environment variable of the worker and name it in api_key_env"
        )
    secret = [name for name, _ in parse_qsl(parts.query, keep_blank_values=True) if SECRET_QUERY.search(name)]
    if secret:
        raise OptionsRefused(
            f"endpoint: no credentials in the URL (its query names {secret[0]!r}): put the key in an "
            "environment variable of the worker and name it in api_key_env"
        )
    if parts.fragment:
        raise OptionsRefused("endpoint: a URL without a #fragment")
    return value


def bounded_int(raw: Mapping[str, Any], name: str, bounds: tuple[int, int, int]) -> int:
    low, high, default = bounds
    value = raw.get(name)
    if value is None or value == "":
        return default
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise OptionsRefused(f"{name}: expected a whole number from {low} to {high}, got {value!r}")
    try:
        number = int(value)
    except ValueError:
        raise OptionsRefused(f"{name}: expected a whole number from {low} to {high}, got {value!r}") from None
    if not low <= number <= high:
        raise OptionsRefused(f"{name}: expected a whole number from {low} to {high}, got {number}")
    return number


def bounded_number(raw: Mapping[str, Any], name: str, bounds: tuple[float, float, float]) -> float:
    low, high, default = bounds
    value = raw.get(name)
    if value is None or value == "":
        return default
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise OptionsRefused(f"{name}: expected a number of seconds from {low:g} to {high:g}, got {value!r}")
    try:
        number = float(value)
    except ValueError:
        raise OptionsRefused(
            f"{name}: expected a number of seconds from {low:g} to {high:g}, got {value!r}"
        ) from None
    if not low <= number <= high:  # NaN fails this too
        raise OptionsRefused(f"{name}: expected a number of seconds from {low:g} to {high:g}, got {number:g}")
    return number


# --- a benchmark's prompt and parser ---------------------------------------------------------------


class ServedFormat:
    """How a benchmark's units are asked of a chat model and its replies read (the "openai"
    protocol). Subclass it in the benchmark's folder (`plugins/<name>/served.py`) and name it in the
    spec's `served`.

    `template`: the prompt's fixed text (its sha256 names the prompt in every report, so a change of
    prompt shows). `settings`: the settings it can ask (empty: all). `prompt` gives the text and the
    image roles to send, in order; `parse` turns the reply's text into the prediction the
    benchmark's file holds for the unit, raising `Unparsed` when it cannot; `unparsed` is the
    answer recorded then (one the metric scores as wrong).
    """

    template: str = ""
    settings: tuple[str, ...] = ()

    def prompt(self, item: ModelInput) -> tuple[str, list[str]]:
        raise NotImplementedError

    def parse(self, text: str, item: ModelInput) -> Any:
        raise NotImplementedError

    def unparsed(self, item: ModelInput) -> Any:
        raise NotImplementedError

    def template_sha256(self) -> str:
        return hashlib.sha256(self.template.encode()).hexdigest()


#: Labels a model puts before its answer ("Answer:", "答案：").
ANSWER_LABEL = re.compile(
    r"^\s*(?:(?:final answer|answer|答案|回答)\s*[:：]|the answer is\s*[:：]?|答案是\s*[:：]?)\s*", re.I
)
FENCE = re.compile(r"```[a-zA-Z]*\s*(.*?)```", re.S)
QUOTES = "\"'“”‘’「」`*"


def answer_text(text: str) -> str:
    """The answer a chat model gave, without the chatter around it: the text after the last
    "Answer:" label when there is one, else the first non-empty line (of a fenced block, when the
    reply has one), without quotes, bold marks or a final full stop."""
    fenced = FENCE.search(text)
    if fenced:
        text = fenced.group(1)
    lines = [line.replace("**", "").strip() for line in text.splitlines() if line.strip()]
    labelled = [ANSWER_LABEL.sub("", line, count=1) for line in lines if ANSWER_LABEL.match(line)]
    for line in [*reversed(labelled), *lines]:
        line = line.strip().strip(QUOTES).strip()
        line = line.rstrip("。.!！").strip().strip(QUOTES).strip()
        if line:
            return line
    return ""


def json_block(text: str) -> Any:
    """The first JSON value in a reply: a fenced block's, else the first bracketed list or object
    that reads as JSON (or as a Python literal: single quotes); Unparsed when there is none."""
    candidates = [block.strip() for block in FENCE.findall(text)]
    candidates += [text[start:end] for start, end in bracketed(text)]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            pass
        try:
            return ast.literal_eval(candidate)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    raise Unparsed("no JSON list or object in the reply")


def bracketed(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each outermost balanced [...] or {...} in a text, quotes inside respected;
    an opening bracket never closed is passed over."""
    index = 0
    while index < len(text):
        if text[index] in "[{":
            end = closing_bracket(text, index)
            if end is not None:
                yield index, end
                index = end
                continue
        index += 1


def closing_bracket(text: str, start: int) -> int | None:
    """The end (one past it) of the bracket opened at `start`, or None when it is never closed."""
    pairs = {"[": "]", "{": "}"}
    expected: list[str] = []
    quote = ""
    for index in range(start, len(text)):
        character = text[index]
        if quote:
            if character == quote and text[index - 1] != "\\":
                quote = ""
        elif character in "\"'":
            quote = character
        elif character in pairs:
            expected.append(pairs[character])
        elif character in "]}":
            if character != expected.pop():
                return None
            if not expected:
                return index + 1
    return None


#: A number on its own: not the digit of a name such as "x1".
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?![\w])")


def numbers(text: str) -> list[float]:
    """Every number written in a text, in order."""
    return [float(value) for value in NUMBER.findall(text)]


def image_size(path: str) -> tuple[int, int]:
    """(width, height) of an image file, read from its header."""
    from PIL import Image

    with Image.open(path) as image:
        return image.size


# --- images and the audit ------------------------------------------------------------------------


@dataclass(frozen=True)
class EncodedImage:
    """An image file as a request carries it (a data URI) and as the audit names it."""

    data_uri: str
    sha256: str
    size: int
    type: str

    @classmethod
    def read(cls, path: str) -> EncodedImage:
        data = Path(path).read_bytes()
        kind = mimetypes.guess_type(str(path))[0] or "application/octet-stream"
        encoded = base64.b64encode(data).decode("ascii")
        return cls(f"data:{kind};base64,{encoded}", hashlib.sha256(data).hexdigest(), len(data), kind)

    @property
    def audited(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "bytes": self.size, "type": self.type}


class AuditLog:
    """The run's requests and responses, one JSON line each, in a temporary file (saved with the
    run when it ends). Safe to write from several threads."""

    def __init__(self, folder: str | None = None):
        descriptor, name = tempfile.mkstemp(prefix="yardstick-served-", suffix=".jsonl", dir=folder)
        self.path = Path(name)
        self.handle = os.fdopen(descriptor, "w", encoding="utf-8")
        self.lock = threading.Lock()

    def write(self, kind: str, **fields: Any) -> None:
        line = json.dumps(
            {"kind": kind, "time": datetime.now(UTC).isoformat(timespec="milliseconds"), **fields},
            ensure_ascii=False,
            default=str,
        )
        with self.lock:
            if not self.handle.closed:
                self.handle.write(line + "\n")
                self.handle.flush()

    def close(self) -> Path:
        with self.lock:
            if not self.handle.closed:
                self.handle.close()
        return self.path


def response_for_audit(text: str) -> dict[str, Any]:
    data = text.encode("utf-8", errors="replace")
    if len(data) <= AUDIT_RESPONSE_BYTES:
        return {"response": text}
    cut = data[:AUDIT_RESPONSE_BYTES].decode("utf-8", errors="ignore")
    return {"response": cut, "response_truncated": True, "response_bytes": len(data)}


def retry_after(value: str | None, most: float) -> float | None:
    """A Retry-After header given in seconds, capped at `most` (None: absent, or an HTTP date)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    if seconds != seconds or seconds < 0:
        return None
    return min(seconds, most)


# --- talking to the endpoint ------------------------------------------------------------------------


@dataclass
class Reply:
    """A request's successful answer: its JSON body."""

    body: Any
    attempts: int


class Endpoint:
    """POSTs with timeouts, retries and backoff, every attempt written to the audit."""

    def __init__(
        self,
        options: ServedOptions,
        audit: AuditLog,
        *,
        seed: int,
        api_key: str = "",
        backoff_s: float = 1.0,
        backoff_max_s: float = 30.0,
        retry_after_max_s: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ):
        import httpx

        self.options = options
        self.audit = audit
        self.seed = seed
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.retry_after_max_s = retry_after_max_s
        self.stopping = threading.Event()
        headers = {"User-Agent": "Yardstick served-model client"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(options.timeout_s),
            limits=httpx.Limits(
                max_connections=options.concurrency, max_keepalive_connections=options.concurrency
            ),
            follow_redirects=False,
            transport=transport,
        )
        self.lock = threading.Lock()
        self.requests = 0
        self.retried = 0

    def close(self) -> None:
        self.stopping.set()
        self.client.close()

    def backoff(self, key: str, attempt: int) -> float:
        """Exponential backoff with a jitter of up to half of it, drawn from the run's seed, the
        request and the attempt (so the same run waits the same, whatever the threads' order)."""
        rng = random.Random(f"{self.seed}:{key}:{attempt}")
        delay = min(self.backoff_max_s, self.backoff_s * 2 ** (attempt - 1))
        return delay * (1 + 0.5 * rng.random())

    def post(self, url: str, body: Any, audited_body: Any, units: Sequence[str]) -> Reply:
        """The JSON answer of a POST, retried as the options say; ServedFailed when there is none."""
        import httpx

        described = describe_units(units)
        attempts = self.options.retries + 1
        last = ""
        for attempt in range(1, attempts + 1):
            if self.stopping.is_set():
                raise Stopped(f"{described}: stopped (another request of the batch failed)")
            started = time.perf_counter()
            status: int | None = None
            text = ""
            error = ""
            delay: float | None = None
            try:
                response = self.client.post(url, json=body)
            except httpx.TimeoutException as problem:
                error = f"timed out after {self.options.timeout_s:g} s ({type(problem).__name__})"
            except httpx.RequestError as problem:
                error = f"{type(problem).__name__}: {problem}" if str(problem) else type(problem).__name__
            else:
                status = response.status_code
                text = response.text
                delay = retry_after(response.headers.get("Retry-After"), self.retry_after_max_s)
            seconds = round(time.perf_counter() - started, 4)
            retryable = status is None or status == 429 or status >= 500
            final = attempt == attempts or not retryable
            if not final:
                delay = self.backoff(described, attempt) if delay is None else delay
            with self.lock:
                self.requests += 1
                self.retried += int(attempt > 1)
            self.audit.write(
                "request",
                units=list(units),
                attempt=attempt,
                url=url,
                request=audited_body,
                status=status,
                **response_for_audit(text),
                seconds=seconds,
                error=error or None,
                **({"retry_in_s": round(delay, 3)} if not final and delay is not None else {}),
            )
            if status is not None and 200 <= status < 300:
                try:
                    return Reply(json.loads(text), attempt)
                except ValueError:
                    raise ServedFailed(
                        f"{described}: {url} answered {status} with a body that is not JSON: {snippet(text)}"
                    ) from None
            last = f"status {status}: {snippet(text)}" if status is not None else error
            if not retryable:
                raise ServedFailed(
                    f"{described}: {url} answered {status} (not retried): {snippet(text) or 'no body'}"
                )
            if not final and delay:
                self.stopping.wait(delay)
        raise ServedFailed(f"{described}: no answer from {url} after {attempts} attempts; the last: {last}")


def describe_units(units: Sequence[str]) -> str:
    if len(units) == 1:
        return f"unit {units[0]}"
    return f"units {units[0]} to {units[-1]}"


def snippet(text: str, most: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= most else text[: most - 1] + "…"


# --- the model ----------------------------------------------------------------------------------------


class ServedBaseline(Baseline):
    """The built-in model `served`: answers come from the run's endpoint (see the module)."""

    name = SERVED
    title = "Served model"
    description = gettext_noop(
        "Sends each item, as people see it, to an HTTP endpoint you run: your own server (the "
        "yardstick protocol) or an OpenAI-compatible chat server with a vision-language model, asked "
        "by the benchmark's prompt and read by its parser."
    )
    uses = gettext_noop("the images and the question, as people see them, sent to the endpoint")
    learned = False
    needs_images = True
    default_batch_size = 16
    #: Backoff's first wait, its cap, and the cap on a server's Retry-After (the worker's settings).
    backoff_s = 1.0
    backoff_max_s = 30.0
    retry_after_max_s = 60.0
    #: The hosts runs may reach (the site's YARDSTICK_SERVED_ALLOWED_HOSTS; empty: any but NEVER).
    allowed_hosts: tuple[str, ...] = ()

    def __init__(self, spec: BenchmarkSpec, options: Mapping[str, Any] | None = None):
        super().__init__(spec)
        self.options: ServedOptions | None = None
        self.format: ServedFormat | None = None
        self.audit: AuditLog | None = None
        self.endpoint: Endpoint | None = None
        self.pool: ThreadPoolExecutor | None = None
        self.unparsed_units: list[str] = []
        self.unparsed_count = 0
        self.server_models: set[str] = set()
        self.tokens = {"prompt_tokens": 0, "completion_tokens": 0}
        self.counts_lock = threading.Lock()
        if options is not None:
            self.configure(options)

    # --- before a run ---------------------------------------------------------------------------

    def configure(self, options: Mapping[str, Any] | None) -> ServedOptions:
        """Check the run's options (OptionsRefused names the field); the served format is loaded
        for the openai protocol, whose settings it declares."""
        checked = served_options(options)
        problem = host_problem(urlsplit(checked.endpoint).hostname or "", self.allowed_hosts)
        if problem:
            raise OptionsRefused(f"endpoint: {problem}")
        if checked.protocol == OPENAI:
            self.format = served_format(self.spec)
        self.options = checked
        if checked.model:
            self.title = f"{checked.model} (served)"
        else:
            self.title = f"Served model ({urlsplit(checked.endpoint).netloc})"
        return checked

    @property
    def settings(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.format.settings if self.format is not None else ()

    # --- a run ----------------------------------------------------------------------------------

    def load(self, units: Sequence[Unit], choices: RunChoices) -> None:
        super().load(units, choices)
        if self.options is None:
            raise OptionsRefused("endpoint: a served run needs its options (endpoint, protocol, ...)")
        # Checked again where the requests leave from, with what the name resolves to there.
        parts = urlsplit(self.options.endpoint)
        host = parts.hostname or ""
        problem = host_problem(host, self.allowed_hosts, resolved_addresses(host, parts.port))
        if problem:
            raise ServedFailed(f"endpoint: {problem}")
        api_key = ""
        if self.options.api_key_env:
            api_key = os.environ.get(self.options.api_key_env, "")
            if not api_key:
                raise ServedFailed(
                    f"api_key_env: the environment variable {self.options.api_key_env} is not set (or is "
                    "empty) on the worker that ran this model; set it where the worker runs"
                )
        self.audit = AuditLog()
        self.audit.write(
            "run",
            benchmark=self.spec.name,
            setting=choices.setting,
            seed=choices.seed,
            batch_size=choices.batch_size,
            options=self.options.as_dict(),
            **({"prompt_sha256": self.format.template_sha256()} if self.format else {}),
        )
        self.endpoint = Endpoint(
            self.options,
            self.audit,
            seed=choices.seed,
            api_key=api_key,
            backoff_s=self.backoff_s,
            backoff_max_s=self.backoff_max_s,
            retry_after_max_s=self.retry_after_max_s,
        )
        self.pool = ThreadPoolExecutor(max_workers=self.options.concurrency, thread_name_prefix="served")

    def batches(self, units: Sequence[Unit], batch_size: int) -> Iterator[tuple[Sequence[Unit], Any]]:
        """The openai protocol: batches of the run's size, their units asked `concurrency` at a
        time. The yardstick protocol: each request carries a batch of the run's size, and
        `concurrency` requests go at once, so progress (and cancel) comes after each such group."""
        assert self.options is not None
        step = batch_size * (self.options.concurrency if self.options.protocol == YARDSTICK else 1)
        for start in range(0, len(units), step):
            yield units[start : start + step], None

    def predict(self, units: Sequence[Unit], inputs: Any) -> list[Any]:
        assert self.options is not None and self.pool is not None, "load() first"
        if self.options.protocol == YARDSTICK:
            size = self.choices.batch_size
            groups = [units[start : start + size] for start in range(0, len(units), size)]
            answered = self.all_of([(self.ask_batch, group) for group in groups])
            answers = [answer for group in answered for answer in group]
        else:
            answers = self.all_of([(self.ask_chat, unit) for unit in units])
        self.check_answers(units, answers)
        return answers

    def all_of(self, calls: Sequence[tuple[Callable[[Any], Any], Any]]) -> list[Any]:
        """Each call's result, in order, run on the pool; the first failure in order (after every
        call has ended: the others stop at their next attempt) is raised."""
        assert self.pool is not None and self.endpoint is not None
        stopping = self.endpoint.stopping

        def stop_on_failure(future: Future) -> None:
            if not future.cancelled() and future.exception() is not None:
                stopping.set()

        futures = [self.pool.submit(call, argument) for call, argument in calls]
        for future in futures:
            future.add_done_callback(stop_on_failure)
        wait(futures)
        failures = [future.exception() for future in futures if future.exception() is not None]
        if failures:
            raise next((problem for problem in failures if not isinstance(problem, Stopped)), failures[0])
        return [future.result() for future in futures]

    def item(self, unit: Unit) -> ModelInput:
        return ModelInput(unit.id, self.choices.setting, unit.payload, unit.images)

    def ask_batch(self, units: Sequence[Unit]) -> list[Any]:
        assert self.options is not None and self.endpoint is not None
        ids = [unit.id for unit in units]
        sent, audited = [], []
        for unit in units:
            images = {role: EncodedImage.read(path) for role, path in unit.images.items()}
            sent.append(
                {"id": unit.id, "payload": unit.payload, "images": {r: i.data_uri for r, i in images.items()}}
            )
            audited.append(
                {"id": unit.id, "payload": unit.payload, "images": {r: i.audited for r, i in images.items()}}
            )
        head = {"benchmark": self.spec.name, "setting": self.choices.setting}
        reply = self.endpoint.post(
            self.options.endpoint, {**head, "items": sent}, {**head, "items": audited}, ids
        )
        answers = reply.body.get("answers") if isinstance(reply.body, dict) else None
        if not isinstance(answers, list) or len(answers) != len(units):
            got = f"{len(answers)} answers" if isinstance(answers, list) else "no list under 'answers'"
            raise ServedFailed(
                f"{describe_units(ids)}: the endpoint answered with {got}; expected "
                f'{{"answers": [...]}} with {len(units)} answers, one per item, in order'
            )
        return answers

    def ask_chat(self, unit: Unit) -> Any:
        assert self.options is not None and self.endpoint is not None and self.format is not None
        item = self.item(unit)
        text, roles = self.format.prompt(item)
        missing = [role for role in roles if role not in unit.images]
        if missing:
            raise ServedFailed(
                f"unit {unit.id}: the prompt shows the image {missing[0]!r}, which the item lacks"
            )
        images = [EncodedImage.read(unit.images[role]) for role in roles]

        def body(show: Callable[[EncodedImage], Any]) -> dict[str, Any]:
            content: list[dict[str, Any]] = [{"type": "text", "text": text}]
            content += [{"type": "image_url", "image_url": {"url": show(image)}} for image in images]
            return {
                "model": self.options.model,
                "messages": [{"role": "user", "content": content}],
                "temperature": 0,
                "max_tokens": self.options.max_tokens,
            }

        url = self.options.endpoint.rstrip("/") + "/chat/completions"
        reply = self.endpoint.post(
            url, body(lambda image: image.data_uri), body(lambda image: image.audited), [unit.id]
        )
        said = chat_text(reply.body, unit.id)
        self.note_reply(reply.body)
        try:
            answer = self.format.parse(said, item)
        except Unparsed as why:
            answer = self.format.unparsed(item)
            with self.counts_lock:
                self.unparsed_count += 1
                self.unparsed_units.append(unit.id)
            self.endpoint.audit.write("answer", units=[unit.id], answer=answer, unparsed=str(why) or True)
        else:
            self.endpoint.audit.write("answer", units=[unit.id], answer=answer)
        return answer

    def note_reply(self, body: Mapping[str, Any]) -> None:
        with self.counts_lock:
            if isinstance(body.get("model"), str):
                self.server_models.add(body["model"])
            usage = body.get("usage")
            if isinstance(usage, Mapping):
                for key in self.tokens:
                    if isinstance(usage.get(key), int):
                        self.tokens[key] += usage[key]

    def check_answers(self, units: Sequence[Unit], answers: list[Any]) -> None:
        """Refuse answers the benchmark's prediction reader refuses, or that name other units."""
        try:
            data = self.spec.write_predictions(
                [(unit.id, answer) for unit, answer in zip(units, answers, strict=True)]
            )
            read = self.spec.read_predictions(data, source="the endpoint's answers")
        except ValueError as error:
            raise ServedFailed(
                f"{describe_units([u.id for u in units])}: answers in the wrong shape: {error}"
            ) from None
        except (TypeError, KeyError, AttributeError) as error:
            raise ServedFailed(
                f"{describe_units([u.id for u in units])}: answers in the wrong shape ({type(error).__name__}: {error})"
            ) from None
        expected = [unit.id for unit in units]
        if sorted(map(str, read)) != sorted(expected):
            named = [key for key in map(str, read) if key not in expected]
            raise ServedFailed(
                f"{describe_units(expected)}: the answers name other units ({', '.join(named[:5]) or 'too few'}); "
                "expected one answer per item, in order, each naming its item"
            )

    def close(self) -> Path | None:
        """Stop the requests and the pool, and hand back the audit file, once (None when none was
        made, or it was handed back before)."""
        if self.endpoint is not None:
            self.endpoint.stopping.set()
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
        if self.endpoint is not None:
            self.endpoint.client.close()
        if self.audit is None:
            return None
        audit, self.audit = self.audit, None
        audit.write("end", **self.counts())
        return audit.close()

    def counts(self) -> dict[str, Any]:
        endpoint = self.endpoint
        return {
            "requests": endpoint.requests if endpoint else 0,
            "retries": endpoint.retried if endpoint else 0,
            **({"unparsed": self.unparsed_count} if self.format is not None else {}),
        }

    def parameters(self) -> dict[str, Any]:
        options = self.options
        if options is None:
            return {}
        facts: dict[str, Any] = {
            "endpoint": options.shown_endpoint,
            "protocol": options.protocol,
            **({"served_model": options.model} if options.model else {}),
            **({"server_model": ", ".join(sorted(self.server_models))} if self.server_models else {}),
        }
        if self.format is not None:
            facts["prompt"] = self.spec.served
            facts["prompt_sha256"] = self.format.template_sha256()
            facts["max_tokens"] = options.max_tokens
            facts["temperature"] = 0
        facts.update(
            concurrency=options.concurrency,
            timeout_s=options.timeout_s,
            max_retries=options.retries,
            **({"api_key_env": options.api_key_env} if options.api_key_env else {}),
            **self.counts(),
        )
        if self.format is not None and self.unparsed_units:
            facts["unparsed_units"] = sorted(self.unparsed_units, key=natural)[:UNPARSED_LISTED]
        if any(self.tokens.values()):
            facts["tokens"] = dict(self.tokens)
        return facts


def natural(text: str) -> tuple[int, str]:
    return (int(text), "") if text.isdigit() else (0, text)


def chat_text(body: Any, unit_id: str) -> str:
    """The reply's text: choices[0].message.content (a string, or a list of text parts)."""
    try:
        content = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ServedFailed(
            f"unit {unit_id}: the endpoint's answer has no choices[0].message.content (is it an "
            "OpenAI-compatible /chat/completions?)"
        ) from None
    if content is None:
        return ""
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return str(content)


def served_format(spec: BenchmarkSpec) -> ServedFormat:
    """The benchmark's prompt and parser; OptionsRefused when it declares none."""
    if not spec.served:
        raise OptionsRefused(f"protocol: {spec.title} has no prompt for the openai protocol")
    format_class = plugged(spec.served)
    return format_class()
