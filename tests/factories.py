"""Builders shared by the tests: users with roles, TRANCE answers, human-test plans and sessions,
JSON requests, annotation tasks taken from a project's queue."""

import json

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client

from accounts.roles import sync_roles

PASSWORD = "a-long-test-password"


def make_user(username: str, *roles: str):
    sync_roles()
    user = get_user_model().objects.create_user(username=username, password=PASSWORD)
    for role in roles:
        user.groups.add(Group.objects.get(name=role))
    return user


def logged_in(client, user):
    """`client`, logged in as `user` with the password every test user has."""
    assert client.login(username=user.username, password=PASSWORD)
    return client


def client_for(user) -> Client:
    """A new test client, logged in as `user`."""
    client = Client()
    client.force_login(user)
    return client


def steps_of(item) -> list[dict]:
    """A TRANCE item's true steps as an answer gives them (object, attribute, value)."""
    return [
        {key: step[key] for key in ("obj_idx", "attr", "val")}
        for step in item.ground_truth["transformations"]
    ]


def wrong_steps_of(item) -> list[dict]:
    """A wrong answer to a TRANCE item: one step that resizes its first object (to large, or to
    small when it is large already)."""
    size = item.payload["initial"]["objects"][0]["size"]
    return [{"obj_idx": 0, "attr": "size", "val": "large" if size != "large" else "small"}]


def trance_answers(dataset, right=lambda index, item: True) -> bytes:
    """A TRANCE prediction file for every item of `dataset`: the true steps where `right(index,
    item)` (items in position order), no step elsewhere."""
    import orjson

    return orjson.dumps(
        {
            item.external_id: steps_of(item) if right(index, item) else []
            for index, item in enumerate(dataset.items.order_by("position"))
        }
    )


# --- human tests -----------------------------------------------------------------------------------


def make_plan(dataset, *testers, **fields):
    """A test plan on `dataset` ("Event test", event setting, seed 5 unless `fields` say otherwise)
    with `testers` as its testers."""
    from humantest.models import TestPlan

    plan = TestPlan.objects.create(
        dataset=dataset, **{"name": "Event test", "setting": "event", "seed": 5, **fields}
    )
    plan.testers.add(*testers)
    return plan


def right_answer(trial) -> dict:
    """The right answer to a TRANCE trial: its item's true steps."""
    return {"steps": steps_of(trial.item)}


def wrong_answer(trial) -> dict:
    """A wrong answer to a TRANCE trial (wrong_steps_of)."""
    return {"steps": wrong_steps_of(trial.item)}


def answer_all(plan, tester, answer_for=right_answer, client=None):
    """Start `tester`'s session of `plan`, begin its test and answer every trial it serves with
    `answer_for(trial)`, the browser's record being `client` (none by default); the session."""
    from humantest import answers, clock, sessions

    session = sessions.begin_test(sessions.start_session(plan, tester))
    while (trial := clock.serve_current_trial(session)[0]) is not None:
        answers.record_answer(trial.pk, tester, answer_for(trial), {} if client is None else client)
    return session


# --- JSON endpoints and the annotation queue -------------------------------------------------------


def post_json(client, url, body):
    """POST `body` to `url` as JSON; the response."""
    return client.post(url, json.dumps(body), content_type="application/json")


def post_json_reply(client, url, body) -> tuple[int, dict]:
    """POST `body` to `url` as JSON; the status and the JSON reply ({} when the reply is not JSON)."""
    response = post_json(client, url, body)
    return response.status_code, (response.json() if response["Content-Type"] == "application/json" else {})


def take_task(client, project, person):
    """`person`, logged in on `client`, takes the next task of an annotation `project`; the lease."""
    from annotation.models import Assignment

    client.force_login(person)
    assert client.post(f"/annotate/projects/{project.pk}/next/").status_code == 302
    return Assignment.objects.get(annotator=person, status=Assignment.Status.LEASED, task__project=project)
