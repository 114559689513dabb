"""Validators work a plan's queue while they are its validators, and only through its own endpoints
(issue 25, findings 1 and 7). Each test failed before its fix."""

from __future__ import annotations

import pytest

from annotation import queue
from annotation.models import Assignment
from tests.factories import post_json_reply
from tests.validation.conftest import FINE
from validation.models import Verdict

pytestmark = pytest.mark.django_db


def test_a_validator_removed_from_a_plan_stops_at_once(client, plan, people):
    client.force_login(people["val"])
    assert client.post(f"/validate/plans/{plan.pk}/next/").status_code == 302
    held = Assignment.objects.get(annotator=people["val"], status=Assignment.Status.LEASED)
    plan.project.annotators.remove(people["val"])
    url = f"/validate/assignments/{held.pk}"
    for name, body in (
        ("save", {"version": 0, "answers": FINE}),
        ("heartbeat", {}),
        ("submit", {"version": 0, "answers": FINE}),
        ("skip", {"version": 0, "reason": "unsure"}),
    ):
        status, data = post_json_reply(client, f"{url}/{name}/", body)
        assert status == 403 and data["error"] == "not_member", name
    assert client.post(f"/validate/plans/{plan.pk}/next/").status_code == 404
    assert not Verdict.objects.exists()
    held.refresh_from_db()
    assert held.status == Assignment.Status.EXPIRED  # back in the pool at once, for the others


def test_the_annotation_endpoints_refuse_a_validation_assignment(client, plan, people):
    held = queue.claim(plan.project, people["vic"])
    client.force_login(people["vic"])
    big = {"version": held.version, "draft": {"pairs": [{"question": "x" * 150_000}]}}
    for name, body in (
        ("save", big),
        ("heartbeat", {}),
        ("submit", {"version": held.version, "pairs": []}),
        ("skip", {"version": held.version, "reason": "x"}),
    ):
        status, _ = post_json_reply(client, f"/annotate/assignments/{held.pk}/{name}/", body)
        assert status == 404, name
    held.refresh_from_db()
    assert held.draft == {} and held.version == 0 and held.status == Assignment.Status.LEASED
    # Its own endpoints take it, and refuse a draft over the validation limit (20 KB).
    assert post_json_reply(client, f"/validate/assignments/{held.pk}/heartbeat/", {})[0] == 200
    status, data = post_json_reply(
        client, f"/validate/assignments/{held.pk}/save/", {"version": 0, "answers": {"comment": "x" * 30_000}}
    )
    assert status == 400 and data["errors"][0]["field"] == "body"
    held.refresh_from_db()
    assert held.version == 0
