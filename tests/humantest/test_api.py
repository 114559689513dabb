"""/api/v1/test-plans/: researchers script plans and read results; testers are refused."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from humantest import answers, clock, sessions
from humantest.models import TestPlan
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def api_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def plan_data(dataset, **changes):
    return {
        "name": "Scripted plan",
        "dataset": dataset.pk,
        "setting": "event",
        "items_per_tester": 3,
        "balance_by": "length",
        "practice_items": ["0"],
        "time_limit_s": 90,
        "testers": ["tom"],
        **changes,
    }


def test_a_researcher_creates_a_plan_and_reads_its_results_and_trials(
    trance_dataset, django_capture_on_commit_callbacks
):
    researcher = make_user("rita", "researcher")
    tester = make_user("tom", "tester")
    client = api_client(researcher)
    created = client.post("/api/v1/test-plans/", plan_data(trance_dataset), format="json")
    assert created.status_code == 201, created.json()
    plan = TestPlan.objects.get(pk=created.json()["id"])
    assert created.json()["testers"] == ["tom"] and plan.created_by == researcher

    session = sessions.begin_test(sessions.start_session(plan, tester))
    with django_capture_on_commit_callbacks(execute=True):
        while (trial := clock.serve_current_trial(session)[0]) is not None:
            steps = [
                {key: step[key] for key in ("obj_idx", "attr", "val")}
                for step in trial.item.ground_truth["transformations"]
            ]
            answers.record_answer(trial.pk, tester, {"steps": steps}, {})

    results = client.get(f"/api/v1/test-plans/{plan.pk}/results/").json()
    assert results["testers"][0]["label"] == "tom" and results["testers"][0]["correct"] == 3
    assert results["pooled"]["accuracy"] == 1.0
    assert results["table"]["rows"][-1]["label"] == "Human"
    trials = client.get(f"/api/v1/test-plans/{plan.pk}/trials/").json()
    assert [row["position"] for row in trials] == [1, 2, 3]
    assert all(row["correct"] is True and row["tester"] == "tom" for row in trials)
    plan.refresh_from_db()
    assert (
        client.get("/api/v1/test-plans/").json()["results"][0]["pooled_submission"]
        == plan.pooled_submission_id
    )


def test_a_bad_plan_is_refused_with_its_fields_and_nothing_is_created(trance_dataset):
    make_user("tom", "tester")
    client = api_client(make_user("rita", "researcher"))
    response = client.post(
        "/api/v1/test-plans/",
        plan_data(trance_dataset, setting="bi", practice_items=["0", "404"], testers=["nobody"]),
        format="json",
    )
    assert response.status_code == 400
    errors = response.json()
    assert "testers" in errors  # validated first: an unknown tester
    response = client.post(
        "/api/v1/test-plans/",
        plan_data(trance_dataset, setting="bi", practice_items=["0", "404"]),
        format="json",
    )
    errors = response.json()
    assert response.status_code == 400 and "setting" in errors and "404" in errors["practice_items"][0]
    assert not TestPlan.objects.exists()


def test_testers_cannot_list_or_create_plans(trance_dataset):
    tester = make_user("tom", "tester")
    client = api_client(tester)
    assert client.get("/api/v1/test-plans/").status_code == 403
    assert client.post("/api/v1/test-plans/", plan_data(trance_dataset), format="json").status_code == 403
