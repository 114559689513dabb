"""The model-run pages and API: start, follow, cancel; who may."""

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from evaluation.models import Submission
from inference.models import ModelRun
from inference.services import start_run
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def test_a_researcher_starts_a_run_from_the_form_and_its_row_reaches_the_report(
    dots, client, django_capture_on_commit_callbacks
):
    client.force_login(make_user("rita", "researcher"))
    page = client.get("/models/new/").content.decode()
    assert 'data-benchmark="dotcount"' in page and "Blob counter" in page and "the image" in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/models/new/",
            {"dataset": dots.pk, "baseline": "dotcount:blobs", "device": "auto", "batch_size": 4, "seed": 0},
        )
    run = ModelRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/models/{run.pk}/"
    page = client.get(f"/models/{run.pk}/").content.decode()
    assert "Succeeded" in page and "8 / 8" in page and "Open the report" in page and run.code_version in page
    report = client.get(f"/datasets/{dots.pk}/report/").content.decode()
    assert (
        "Blob counter" in report
        and "&quot;produced_by&quot;" in report
        and "&quot;code_version&quot;" in report
    )
    assert f'made by <a href="/models/{run.pk}/">model run {run.pk}</a>: blobs on cpu' in report
    listing = client.get("/models/").content.decode()
    assert f'href="/models/{run.pk}/"' in listing


def test_the_form_refuses_a_baseline_of_another_benchmark_naming_both(dots, trance_dataset, client):
    client.force_login(make_user("rita", "researcher"))
    response = client.post(
        "/models/new/",
        {
            "dataset": trance_dataset.pk,
            "baseline": "dotcount:guess",
            "device": "auto",
            "batch_size": 4,
            "seed": 0,
        },
    )
    assert response.status_code == 200
    assert "Random count answers Dot count items" in response.content.decode()
    assert not ModelRun.objects.exists()


def test_the_run_page_follows_progress_as_json_and_cancels(dots, client):
    rita = make_user("rita", "researcher")
    client.force_login(rita)
    run = start_run(dataset=dots, baseline="blobs", enqueue=False, user=rita)
    now = timezone.now()
    ModelRun.objects.filter(pk=run.pk).update(
        status="running", done=3, total=8, started_at=now, heartbeat_at=now
    )
    data = client.get(f"/models/{run.pk}/?format=json").json()
    assert (data["status"], data["done"], data["total"], data["percent"]) == ("running", 3, 8, 37)
    page = client.get(f"/models/{run.pk}/").content.decode()
    assert 'id="run-cancel"' in page
    # Another researcher follows it too, but only who started it (or an admin) cancels it.
    client.force_login(make_user("rex", "researcher"))
    assert 'id="run-cancel"' not in client.get(f"/models/{run.pk}/").content.decode()
    assert client.post(f"/models/{run.pk}/cancel/").status_code == 403
    run.refresh_from_db()
    assert not run.cancel_requested
    client.force_login(rita)
    client.post(f"/models/{run.pk}/cancel/")
    run.refresh_from_db()
    assert run.cancel_requested and run.status == "running" and "next batch" in run.stage


@pytest.mark.parametrize("role", ["tester", "annotator", "reviewer"])
def test_people_who_are_not_researchers_see_no_runs(dots, client, role):
    run = start_run(dataset=dots, baseline="guess", enqueue=False)
    client.force_login(make_user("someone", role))
    assert client.get("/models/").status_code == 403
    assert client.get(f"/models/{run.pk}/").status_code == 403
    assert client.post(f"/models/{run.pk}/cancel/").status_code == 403
    assert "/models/" not in client.get("/").content.decode()
    assert ModelRun.objects.get().status == "queued"


def test_the_api_starts_lists_and_cancels_runs_and_refuses_bad_choices(
    dots, django_capture_on_commit_callbacks
):
    api = APIClient()
    rita = make_user("rita", "researcher")
    api.force_authenticate(rita)
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/api/v1/model-runs/", {"dataset": dots.pk, "baseline": "guess", "seed": 2}, format="json"
        )
    assert response.status_code == 201, response.json()
    run_id = response.json()["id"]
    run = api.get(f"/api/v1/model-runs/{run_id}/").json()
    assert run["status"] == "succeeded" and run["summary"]["overall"]["n"] == 8
    assert [row["id"] for row in api.get(f"/api/v1/model-runs/?dataset={dots.pk}").json()["results"]] == [
        run_id
    ]
    refused = api.post("/api/v1/model-runs/", {"dataset": dots.pk, "baseline": "oracle"}, format="json")
    assert refused.status_code == 400 and "has no baseline or model 'oracle'" in refused.json()["detail"]
    refused = api.post(
        "/api/v1/model-runs/",
        {"dataset": dots.pk, "baseline": "guess", "checkpoint": "../../etc/passwd"},
        format="json",
    )
    assert refused.status_code == 400 and "no checkpoint named" in str(refused.json()["checkpoint"])
    queued = start_run(dataset=dots, baseline="guess", enqueue=False, user=rita)
    other = APIClient()
    other.force_authenticate(make_user("rex", "researcher"))
    refused = other.post(f"/api/v1/model-runs/{queued.pk}/cancel/")
    assert refused.status_code == 403 and "(rita), or an admin" in refused.json()["detail"]
    cancelled = api.post(f"/api/v1/model-runs/{queued.pk}/cancel/").json()
    assert cancelled["status"] == "cancelled"
    assert Submission.objects.filter(dataset=dots).count() == 1
    assert ModelRun.objects.count() == 2
