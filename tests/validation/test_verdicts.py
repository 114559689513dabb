"""Verdicts on the queue: drafts with versions, refusals naming the question, blind second verdicts."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation import queue
from annotation.models import Assignment
from tests.factories import client_for, post_json_reply
from tests.validation.conftest import FINE, WRONG
from validation import services
from validation.checks import VerdictRefused, check_for
from validation.models import Verdict


def take(client: Client, plan) -> dict:
    client.post(f"/validate/plans/{plan.pk}/next/")
    page = client.get(f"/validate/plans/{plan.pk}/work/")
    return page.context["task"]


def test_a_validator_saves_drafts_submits_and_gets_the_next_item(plan, people):
    client = client_for(people["val"])
    task = take(client, plan)
    # What the page draws: the image, every object's box, the program step by step.
    view = task["view"]
    assert view["image"].startswith(f"/media/datasets/{plan.dataset_id}/")
    assert view["objects"] and all(len(obj["box"]) == 4 for obj in view["objects"])
    assert [step["label"].split("(")[0] for step in view["steps"]][0] == "Initial"
    assert client.get(view["image"]).status_code == 200

    status, saved = post_json_reply(
        client, task["urls"]["save"], {"version": task["version"], "answers": {"natural": 3}}
    )
    assert status == 200 and saved["version"] == task["version"] + 1
    # A save based on the old version is refused with what the server holds.
    status, stale = post_json_reply(
        client, task["urls"]["save"], {"version": task["version"], "answers": {"natural": 1}}
    )
    assert (
        status == 409 and stale["error"] == "stale" and stale["server"]["draft"]["answers"] == {"natural": 3}
    )

    # An incomplete verdict names the question and stores nothing.
    status, refused = post_json_reply(
        client, task["urls"]["submit"], {"version": saved["version"], "answers": {"natural": 3}}
    )
    assert status == 400 and refused["errors"][0]["field"] == "answer_correct"
    assert not Verdict.objects.exists()

    status, done = post_json_reply(
        client, task["urls"]["submit"], {"version": saved["version"], "answers": WRONG}
    )
    assert status == 200 and done["error"] is True
    verdict = Verdict.objects.get()
    assert verdict.answers == WRONG and verdict.validator == people["val"] and verdict.round == 1
    assert done["next"]["assignment"] != task["assignment"]


BAD_VERDICTS = [
    ({**FINE, "answer_correct": "yes"}, "answer_correct"),
    ({**FINE, "natural": 6}, "natural"),
    ({**FINE, "natural": True}, "natural"),
    ({**FINE, "wrong_step": 99}, "wrong_step"),
    ({**FINE, "comment": "x" * 2001}, "comment"),
    ({**FINE, "colour": "red"}, "colour"),
    ([], "answers"),
]


def test_verdicts_that_cannot_be_right_are_refused_by_question(plan, people):
    held = queue.claim(plan.project, people["val"])
    for answers, field in BAD_VERDICTS:
        with pytest.raises(VerdictRefused) as refused:
            services.submit_verdict(held, people["val"], version=held.version, answers=answers)
        assert refused.value.field == field
        assert not Verdict.objects.exists()
        assert Assignment.objects.get(pk=held.pk).status == Assignment.Status.LEASED


def test_an_overlap_item_goes_to_a_second_validator_blind_and_never_twice_to_one(plan, people):
    first = queue.claim(plan.project, people["val"])
    while first.task.opinions < 2:  # work through single items until one wants two verdicts
        services.submit_verdict(first, people["val"], version=first.version, answers=FINE)
        first = queue.claim(plan.project, people["val"])
    services.submit_verdict(first, people["val"], version=first.version, answers=WRONG)
    # The second round is offered first, to the other validator, with none of the first's answers.
    client = client_for(people["vic"])
    task = take(client, plan)
    assert task["assignment"] != first.pk and task["round"] == 2 and task["draft"] == {}
    assert Assignment.objects.get(pk=task["assignment"]).task_id == first.task_id
    # The first validator is never handed that task again.
    seen = {first.task_id}
    while (following := queue.claim(plan.project, people["val"])) is not None:
        assert following.task_id not in seen
        seen.add(following.task_id)
        services.submit_verdict(following, people["val"], version=following.version, answers=FINE)


def test_only_the_plans_validators_see_its_items(plan, people):
    held = queue.claim(plan.project, people["val"])
    image = check_for("cric").view(held.task.item)["image"]
    outsider = client_for(people["tess"])
    assert outsider.get(f"/validate/plans/{plan.pk}/work/").status_code == 404
    assert (
        outsider.post(
            f"/validate/assignments/{held.pk}/save/", "{}", content_type="application/json"
        ).status_code
        == 403
    )
    assert outsider.get(image).status_code == 404
    # A validator of the plan who does not hold that item cannot read its image either...
    other = client_for(people["vic"])
    others = {check_for("cric").view(t.item)["image"] for t in plan.project.tasks.exclude(pk=held.task_id)}
    if image not in others:
        assert other.get(image).status_code == 404
    # ...nor post to someone else's assignment.
    assert (
        other.post(
            f"/validate/assignments/{held.pk}/submit/", "{}", content_type="application/json"
        ).status_code
        == 403
    )
    assert client_for(people["val"]).get(image).status_code == 200
    # Validators do not reach researchers' reports.
    assert client_for(people["val"]).get(f"/validate/plans/{plan.pk}/").status_code == 403


def test_a_lapsed_lease_refuses_the_save_and_returns_the_item(plan, people):
    from datetime import timedelta

    from django.utils import timezone

    client = client_for(people["val"])
    task = take(client, plan)
    Assignment.objects.filter(pk=task["assignment"]).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    status, lost = post_json_reply(
        client, task["urls"]["save"], {"version": task["version"], "answers": FINE}
    )
    assert status == 409 and lost["error"] == "lease_lost"
    # The next claim puts the lapsed item back in the pool.
    queue.claim(plan.project, people["vic"])
    lapsed = Assignment.objects.get(pk=task["assignment"])
    assert lapsed.status == Assignment.Status.EXPIRED
    assert lapsed.task.available or lapsed.task.assignments.filter(annotator=people["vic"]).exists()
