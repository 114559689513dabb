"""Any body to any JSON endpoint: a 2xx, or a 4xx that names the field; never a 500, and nothing
stored when the answer is a 4xx (issue 25: one input gate for every JSON body).

Hypothesis writes the bodies: JSON of any shape, with the keys each endpoint reads, the ids and
versions it expects, and what broke it before (lone surrogates, NUL, NaN and Infinity, integers past
64 bits, deep nesting, long text), and bytes that are not JSON at all. Each endpoint is driven as
the person allowed to use it; whether the database changed is read before and after each request.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable

import pytest
from django.apps import apps
from django.db import transaction
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.models import Assignment, QAPair
from inference.services import start_run
from tests.factories import client_for
from tests.yardstick.hostile import HOSTILE, build_site, token_for

pytestmark = pytest.mark.django_db

#: Examples per endpoint: enough to find each kind of fault above in a few seconds an endpoint
#: (against the code before the gate, 40 found a 500 on most of them).
EXAMPLES = 40
KEYS = [
    "version", "draft", "pairs", "question", "answer", "evidence", "source", "ocr_confirmed", "reason",
    "action", "answers", "comment", "natural", "wrong_step", "answer_correct", "client", "events",
    "shown_ms", "object", "steps", "objects", "dataset", "baseline", "setting", "seed", "batch_size",
    "device", "checkpoint", "name", "testers", "items_per_tester", "username", "password", "file",
]  # fmt: skip

texts = st.one_of(
    st.text(alphabet=st.characters(categories=["L", "N", "P", "S", "Zs", "Cc", "Cs"]), max_size=20),
    st.sampled_from(HOSTILE),
    st.sampled_from(HOSTILE),
)
leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, -1, 2**31, 2**63, 2**64, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
    texts,
)
values = st.recursive(
    leaves,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.sampled_from(KEYS) | texts, children, max_size=4)
    ),
    max_leaves=12,
)


# What breaks a body where it is read: text fields, numbers, ids and versions, each either of the
# right kind (with hostile content) or any JSON value at all.
text_or_any = st.one_of(texts, texts, values)
numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 2**63, 2**64]),
    values,
)
#: Stands for the version the server holds now (filled in when the body is sent).
CURRENT = "<current version>"
versions = st.one_of(st.just(CURRENT), st.just(CURRENT), st.just(CURRENT), numbers)
pair = st.fixed_dictionaries(
    {
        "question": text_or_any,
        "answer": text_or_any,
        "evidence": st.lists(numbers, min_size=8, max_size=8) | values,
    },
    optional={"source": numbers, "ocr_confirmed": values},
)
verdict = st.fixed_dictionaries(
    {
        "answer_correct": st.booleans() | values,
        "grounding_correct": st.booleans() | values,
        "natural": st.integers(1, 5) | numbers,
        "wrong_step": st.none() | numbers,
    },
    optional={"comment": text_or_any},
)
client_data = st.fixed_dictionaries(
    {},
    optional={
        "shown_ms": numbers,
        "submit_ms": numbers,
        "answer_changes": numbers,
        "viewport": st.fixed_dictionaries({}, optional={"width": numbers, "height": numbers, "dpr": numbers})
        | values,
        "events": st.lists(
            st.fixed_dictionaries({"type": st.sampled_from(["blur", "focus"]) | texts, "t": numbers})
        ),
    },
)
ids = st.one_of(st.integers(min_value=1, max_value=3), numbers)
SHAPES = {
    "save": {
        "version": versions,
        "draft": st.fixed_dictionaries({"pairs": st.lists(pair, max_size=3)}) | values,
    },
    "heartbeat": {},
    "submit": {"version": versions, "pairs": st.lists(pair, max_size=3) | values},
    "skip": {"version": versions, "reason": text_or_any},
    "review": {
        "version": versions,
        "action": st.sampled_from(["accept", "fix", "reject"]) | values,
        "reason": text_or_any,
        "question": text_or_any,
        "answer": text_or_any,
        "evidence": st.lists(numbers, min_size=8, max_size=8) | values,
    },
    "verdict save": {"version": versions, "answers": verdict | values},
    "verdict submit": {"version": versions, "answers": verdict | values},
    "answer": {
        "answer": st.fixed_dictionaries({"answer": text_or_any, "object": st.none() | numbers}) | values,
        "client": client_data | values,
    },
    "timeout": {"client": client_data | values},
    "token": {"username": text_or_any, "password": text_or_any},
    "test plan": {
        "name": text_or_any,
        "dataset": ids,
        "items_per_tester": numbers,
        "seed": numbers,
        "row_label": text_or_any,
        "brief": text_or_any,
        "testers": st.lists(text_or_any, max_size=2) | values,
    },
    "model run": {
        "dataset": ids,
        "baseline": st.just("random") | text_or_any,
        "seed": numbers,
        "batch_size": numbers,
        "setting": text_or_any,
        "checkpoint": text_or_any,
    },
    "upload": {"dataset": ids, "name": text_or_any, "benchmark": st.just("cric") | text_or_any},
    "study": {
        "consent_text": text_or_any,
        "participant_cap": numbers,
        "idle_limit_s": numbers,
        "completion_code": text_or_any,
        "completion_url": st.just("https://app.prolific.com/submissions/complete?cc=X") | text_or_any,
        "base_pay": numbers | text_or_any,
        "bonus_threshold": numbers,
        "currency": st.just("GBP") | text_or_any,
        "opens_at": st.just("2026-12-01T09:00:00Z") | text_or_any,
    },
    "links": {
        "platform": st.sampled_from(["prolific", "mturk", "lab"]) | text_or_any,
        "lab_ids": st.lists(text_or_any) | values,
    },
    "exclusions": {
        "catch_failures": numbers,
        "min_median_s": numbers | text_or_any,
        "max_hidden_s": numbers,
        "max_focus_losses": numbers,
        "exclude_unfinished": st.booleans() | values,
    },
    "testers": {
        "add": st.lists(text_or_any, max_size=3) | values,
        "remove": st.lists(text_or_any, max_size=2) | values,
    },
}


def bodies(shape: str) -> st.SearchStrategy:
    """Request bodies: the endpoint's own shape with hostile leaves (most often: all of its keys,
    or some), any object of the keys the app reads, any JSON value (all as Python values, sent as
    JSON), JSON nested past any limit, and bytes that are not JSON (as bytes)."""
    whole = st.fixed_dictionaries(SHAPES[shape])
    some = st.fixed_dictionaries({}, optional=SHAPES[shape])
    objects = st.dictionaries(st.sampled_from(KEYS) | texts, values, max_size=6)
    deep = st.sampled_from([17, 40, 1100, 5000]).map(lambda depth: b'{"a":' * depth + b"1" + b"}" * depth)
    return st.one_of(whole, whole, whole, some, objects, values, deep, st.binary(max_size=60))


def encoded(body, version: int | None) -> bytes:
    """The body as sent: JSON (NaN and lone surrogates as an attacker writes them), with the
    server's current version where the body says CURRENT."""
    if isinstance(body, bytes):
        return body
    if isinstance(body, dict) and body.get("version") == CURRENT:
        body = {**body, "version": version}
    return json.dumps(body, allow_nan=True).encode()


def fingerprint() -> dict[str, list]:
    """Every row of the app's tables (the site is small): what a refused request must leave as it was."""
    found = {}
    for label in ("annotation", "validation", "humantest", "evaluation", "inference", "benchmarks"):
        for model in apps.get_app_config(label).get_models():
            found[model._meta.label] = list(model.objects.order_by("pk").values())
    return found


def names_a_field(status: int, data) -> bool:
    """A refusal says what was wrong: the field, or (409, 403) what happened to the work."""
    if not isinstance(data, dict) or not data:
        return False
    if status in (403, 409):
        return bool(data.get("error") or data.get("detail"))
    if "errors" in data:
        return all(problem.get("field") for problem in data["errors"])
    if "field" in data:
        return bool(data["field"])
    return all(isinstance(key, str) and key for key in data)  # DRF: {field: [messages]}


@pytest.fixture
def site(tmp_path, settings, trance_dataset):
    site = build_site(tmp_path, settings)
    site.trance = trance_dataset
    return site


def endpoints(site) -> list[tuple[str, Client, str, str, dict, Callable[[], int | None]]]:
    """(label, client, url, the shape of its body, extra request headers, the version it holds now)."""
    ann, rev, tess, rita = (client_for(site.people[name]) for name in ("ann", "rev", "tess", "rita"))
    token = {"HTTP_AUTHORIZATION": f"Token {token_for(site.people['rita'])}"}
    held, verdict, trial = site.held.pk, site.verdict_task.pk, site.trial.pk
    run = start_run(
        dataset=site.trance, baseline="random", setting="event", user=site.people["rita"], enqueue=False
    )

    def version_of(model, pk: int) -> Callable[[], int]:
        return lambda: model.objects.values_list("version", flat=True).get(pk=pk)

    def none() -> None:
        return None

    return [
        (f"annotation {name}", ann, f"/annotate/assignments/{held}/{name}/", name, {}, version_of(Assignment, held))
        for name in ("save", "heartbeat", "submit", "skip")
    ] + [
        ("review", rev, f"/annotate/review/pairs/{site.pair.pk}/", "review", {}, version_of(QAPair, site.pair.pk)),
    ] + [
        (f"validation {name}", ann, f"/validate/assignments/{verdict}/{name}/", shape, {}, version_of(Assignment, verdict))
        for name, shape in (("save", "verdict save"), ("heartbeat", "heartbeat"), ("submit", "verdict submit"), ("skip", "skip"))
    ] + [
        ("trial answer", tess, f"/test/trials/{trial}/answer/", "answer", {}, none),
        ("trial timeout", tess, f"/test/trials/{trial}/timeout/", "timeout", {}, none),
        ("api token", Client(), "/api/v1/auth/token/", "token", {}, none),
        ("api test plan", rita, "/api/v1/test-plans/", "test plan", token, none),
        ("api model run", rita, "/api/v1/model-runs/", "model run", token, none),
        ("api cancel", rita, f"/api/v1/model-runs/{run.pk}/cancel/", "heartbeat", token, none),
        ("api submission", rita, "/api/v1/submissions/", "upload", token, none),
        ("api study", rita, f"/api/v1/test-plans/{site.test_plan.pk}/study/", "study", {**token, "method": "patch"}, none),
        ("api links", rita, f"/api/v1/test-plans/{site.test_plan.pk}/links/", "links", token, none),
        ("api payments", rita, f"/api/v1/test-plans/{site.test_plan.pk}/payments/", "heartbeat", token, none),
        ("api testers", rita, f"/api/v1/test-plans/{site.test_plan.pk}/testers/", "testers", token, none),
        ("api exclusions", rita, f"/api/v1/test-plans/{site.test_plan.pk}/exclusions/", "exclusions", {**token, "method": "put"}, none),
        ("api import", rita, "/api/v1/imports/", "upload", token, none),
    ]  # fmt: skip


def test_every_json_endpoint_answers_any_body_with_a_2xx_or_a_4xx_naming_the_field(site, settings):
    settings.MODEL_RUNS_PER_PERSON = 0  # the runs a lucky body starts are not what this is about
    failures: list[str] = []
    for endpoint in endpoints(site):
        drive_endpoint(*endpoint, failures)
    assert failures == [], "\n".join(failures[:20])


def drive_endpoint(
    label: str, client: Client, url: str, shape: str, headers: dict, version: Callable, failures: list[str]
) -> None:
    """Send the endpoint EXAMPLES bodies; what is wrong with its answers goes to `failures`."""
    client.raise_request_exception = False  # a 500 is counted, not raised: every endpoint is tried

    @settings_for_endpoint
    @given(body=bodies(shape))
    def drive(body) -> None:
        raw = encoded(body, version())
        before = fingerprint()
        send = getattr(client, headers.get("method", "post"))
        extra = {key: value for key, value in headers.items() if key != "method"}
        with transaction.atomic():  # a failed request's broken transaction is undone, not inherited
            response = send(url, raw, content_type="application/json", **extra)
            status = response.status_code
            if status >= 500:
                transaction.set_rollback(True)
        if status >= 500:
            failures.append(f"{label}: {status} for {raw[:200]!r}")
            return
        if 200 <= status < 300:
            return
        data = response.json() if response.get("Content-Type", "").startswith("application/json") else None
        if not names_a_field(status, data):
            failures.append(
                f"{label}: {status} names no field ({response.content[:200]!r}) for {raw[:200]!r}"
            )
        if fingerprint() != before:
            failures.append(f"{label}: {status} but the database changed, for {raw[:200]!r}")

    drive()


settings_for_endpoint = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,  # the same bodies on every run: a failure is found again
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
    database=None,
)


#: The addresses driven above, by name.
DRIVEN = {
    "annotation:save", "annotation:heartbeat", "annotation:submit", "annotation:skip", "annotation:review-pair",
    "validation:save", "validation:heartbeat", "validation:submit", "validation:skip",
    "humantest:answer", "humantest:timeout",
    "api-token", "testplan-list", "modelrun-list", "modelrun-cancel", "submission-list", "importjob-list",
    "testplan-study", "testplan-links", "testplan-payments", "testplan-testers", "testplan-exclusions",
}  # fmt: skip
#: Addresses that take a POST or DELETE but read no JSON body: buttons and forms (whose hostile
#: input the crawl's site types in: tests/yardstick/hostile.py), and the API's DELETE.
NOT_JSON = {
    "logout", "choose-language", "benchmarks:import", "evaluation:report", "evaluation:submission-rename",
    "evaluation:submission-delete", "humantest:plan-new", "humantest:plan-delete", "humantest:start",
    "humantest:practice", "humantest:begin", "humantest:pause", "humantest:resume", "annotation:project-new",
    "annotation:project-publish", "annotation:next", "validation:plan-new", "validation:plan-mark",
    "validation:next", "inference:run-new", "inference:run-cancel", "submission-detail", "humantest:study",
    "humantest:testers", "humantest:consent", "join", "testplan-revoke-link", "humantest:quality",
    "humantest:report", "humantest:preregistration",
}  # fmt: skip


def test_every_address_that_takes_a_body_is_driven_or_reads_no_json():
    """A new endpoint that takes a POST must be driven here (or say that it reads no JSON)."""
    from tests.yardstick import test_access_matrix

    taking = set(
        re.findall(
            r'\("([^"]+)", "(?:POST|PUT|PATCH|DELETE)"\): \(', inspect.getsource(test_access_matrix.rows)
        )
    )
    assert taking - DRIVEN - NOT_JSON == set()
    assert taking >= DRIVEN and taking >= NOT_JSON
