"""Uploads to a dataset larger than a request scores go to a worker: the page answers at once,
shows how far the worker is, and the row appears when it is done; a file the worker finds faulty
is named on the report and nothing of it is kept."""

from __future__ import annotations

import time
from datetime import timedelta

import orjson
import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from evaluation.models import Prediction, ScoringJob, Submission
from evaluation.selectors import report_table, scored_submissions
from evaluation.services import (
    READING_UNITS,
    run_scoring_job,
    start_scoring_job,
    submit_predictions,
)
from jobs.models import heartbeat_key, progress_key
from jobs.services import declare_lost_jobs
from tests.evaluation.test_submissions import perfect_answers, trance_dataset
from tests.factories import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def worker_scores(settings):
    """Every upload of more than one unit goes to the worker."""
    settings.SCORE_IN_REQUEST_UNITS = 1


def upload(client, dataset, data, name="big model"):
    return client.post(
        reverse("evaluation:report", args=[dataset.pk]),
        {
            "name": name,
            "producer": "model",
            "setting": "event",
            "variant": "official",
            "file": SimpleUploadedFile("answers.json", data),
        },
    )


def test_a_large_upload_is_scored_by_a_worker_and_then_reported_as_in_the_request(
    client, worker_scores, django_capture_on_commit_callbacks
):
    dataset, samples = trance_dataset()
    client.force_login(make_user("rita", "researcher"))
    with django_capture_on_commit_callbacks() as queued:
        response = upload(client, dataset, perfect_answers(samples[:2]))
    assert response.status_code == 302
    job = ScoringJob.objects.get()
    assert job.status == ScoringJob.Status.QUEUED and job.upload and job.name == "big model"
    assert job.submission.scored_at is None and not scored_submissions(dataset)
    page = client.get(reverse("evaluation:report", args=[dataset.pk])).content.decode()
    assert "is being scored by a worker" in page and 'id="scoring-jobs"' in page
    assert "Waiting for a worker" in page and "scoring_jobs.js" in page
    # The name is taken from the upload on.
    assert (
        "already has a submission named &#x27;big model&#x27;"
        in upload(client, dataset, b"{}").content.decode()
    )

    for callback in queued:
        callback()  # the worker (Celery runs tasks in-process in the tests)
    job.refresh_from_db()
    assert job.status == ScoringJob.Status.SUCCEEDED and not job.upload and job.finished_at
    assert not cache.get(progress_key("scoring", job.pk))
    worker_row = report_table(dataset).rows[0]
    in_request = submit_predictions(
        dataset=dataset, name="small model", data=perfect_answers(samples[:2]), setting="event"
    )
    assert [cell.value for cell in worker_row.cells] == [
        cell.value for cell in report_table(dataset).rows[1].cells
    ]
    assert Prediction.objects.filter(submission=job.submission).count() == 3

    def stored(submission):
        rows = Prediction.objects.filter(submission=submission).order_by("item__position")
        return list(rows.values_list("answer", "score"))

    assert stored(job.submission) == stored(in_request)
    fragment = client.get(reverse("evaluation:report-scoring", args=[dataset.pk])).content.decode()
    assert 'data-running="0"' in fragment and "Nothing is being scored" in fragment
    page = client.get(reverse("evaluation:report", args=[dataset.pk])).content.decode()
    assert "scoring_jobs.js" not in page and "big model" in page


def test_a_file_that_does_not_parse_is_refused_at_once(client, worker_scores):
    dataset, _ = trance_dataset()
    client.force_login(make_user("rita", "researcher"))
    response = upload(client, dataset, b'{"0": [{"obj_idx": 1, "attr": "colour", "val": "red"}]}')
    assert response.status_code == 200 and "idx 0" in response.content.decode()
    assert not ScoringJob.objects.exists() and not Submission.objects.exists()


def test_answers_for_unknown_units_fail_the_job_naming_them_and_keep_nothing(
    client, worker_scores, django_capture_on_commit_callbacks
):
    dataset, samples = trance_dataset()
    client.force_login(make_user("rita", "researcher"))
    answers = orjson.loads(perfect_answers(samples))
    answers["404"] = []
    with django_capture_on_commit_callbacks(execute=True):
        upload(client, dataset, orjson.dumps(answers))
    job = ScoringJob.objects.get()
    assert job.status == ScoringJob.Status.FAILED and job.submission is None and not job.upload
    assert job.errors == [f"prediction 404: idx: no such idx in {dataset}"]
    assert not Submission.objects.exists() and not Prediction.objects.exists()
    page = client.get(reverse("evaluation:report", args=[dataset.pk])).content.decode()
    assert "prediction 404: idx: no such idx" in page and "Nothing was stored" in page
    # The name is free again.
    with django_capture_on_commit_callbacks(execute=True):
        assert upload(client, dataset, perfect_answers(samples)).status_code == 302
    assert Submission.objects.get().name == "big model" and Submission.objects.get().scored_at


def test_the_page_follows_the_worker_and_a_dead_worker_is_declared(client, worker_scores, settings):
    dataset, samples = trance_dataset()
    client.force_login(make_user("rita", "researcher"))
    job = start_scoring_job(dataset=dataset, name="slow", data=perfect_answers(samples), setting="event")
    taken = job.created_at - timedelta(seconds=settings.JOB_LOST_AFTER_S + 60)
    ScoringJob.objects.filter(pk=job.pk).update(status=ScoringJob.Status.RUNNING, started_at=taken)
    cache.set(progress_key("scoring", job.pk), {"stage": READING_UNITS, "done": 1, "total": 4})
    cache.set(heartbeat_key("scoring", job.pk), time.time())
    fragment = client.get(reverse("evaluation:report-scoring", args=[dataset.pk])).content.decode()
    assert 'data-running="1"' in fragment and "reading the dataset" in fragment
    assert '<progress max="100" value="25">' in fragment and "1 / 4" in fragment

    # The page only reads; the worker's reaper declares the job once its beats stopped.
    assert (
        'data-running="1"'
        in client.get(reverse("evaluation:report-scoring", args=[dataset.pk])).content.decode()
    )
    cache.set(heartbeat_key("scoring", job.pk), time.time() - settings.JOB_LOST_AFTER_S - 5)
    assert declare_lost_jobs() == {"scoring": [job.pk]}
    job.refresh_from_db()
    assert job.status == ScoringJob.Status.FAILED and "stopped" in job.errors[0] and not job.upload
    assert not Submission.objects.exists()
    # A second delivery of the task finds the job ended and does nothing.
    assert run_scoring_job(job).status == ScoringJob.Status.FAILED


def test_testers_cannot_follow_scoring_jobs(client, worker_scores):
    dataset, _ = trance_dataset()
    client.force_login(make_user("tom", "tester"))
    assert client.get(reverse("evaluation:report-scoring", args=[dataset.pk])).status_code == 403


def test_a_dataset_deleted_while_an_upload_waits_leaves_no_file_behind(
    client, worker_scores, django_capture_on_commit_callbacks
):
    import os

    dataset, samples = trance_dataset()
    client.force_login(make_user("rita", "researcher"))
    with django_capture_on_commit_callbacks():  # the worker never gets to it
        upload(client, dataset, perfect_answers(samples[:2]))
    job = ScoringJob.objects.get()
    path = job.upload.path
    assert os.path.exists(path)
    with django_capture_on_commit_callbacks(execute=True):
        dataset.delete()  # as the admin deletes one
    assert not ScoringJob.objects.exists() and not os.path.exists(path)


def api_upload(api, dataset, data, name="api model"):
    return api.post(
        "/api/v1/submissions/",
        {"dataset": dataset.pk, "name": name, "setting": "event", "file": SimpleUploadedFile("a.json", data)},
        format="multipart",
    )


def test_the_api_answers_202_with_the_job_for_a_large_upload_and_201_below(
    settings, worker_scores, django_capture_on_commit_callbacks
):
    from rest_framework.test import APIClient

    dataset, samples = trance_dataset()
    rita, rob = make_user("rita", "researcher"), make_user("rob", "researcher")
    api = APIClient()
    api.force_authenticate(rita)
    with django_capture_on_commit_callbacks() as queued:
        response = api_upload(api, dataset, perfect_answers(samples))
    assert response.status_code == 202, response.content
    job = response.json()
    assert (
        job["status"] == "queued"
        and job["submission"]
        and job["url"].endswith(f"/api/v1/scoring-jobs/{job['id']}/")
    )
    assert response["Location"] == job["url"]
    assert not Submission.objects.get(pk=job["submission"]).scored_at
    # A bad file is still refused at once, naming the record, with nothing kept.
    refused = api_upload(api, dataset, b'{"1": [{"obj_idx": "x"}]}', name="bad")
    assert refused.status_code == 400 and "file" in refused.json()
    for callback in queued:
        callback()  # the worker
    followed = api.get(job["url"]).json()
    assert (followed["status"], followed["progress"]["percent"], followed["errors"]) == ("succeeded", 100, [])
    scored = api.get(f"/api/v1/submissions/{job['submission']}/").json()
    assert scored["scored_at"] and scored["summary"]["Acc"] == 1.0
    # Each researcher follows their own jobs; testers none.
    other = APIClient()
    other.force_authenticate(rob)
    assert (
        other.get(job["url"]).status_code == 404
        and other.get("/api/v1/scoring-jobs/").json()["results"] == []
    )
    other.force_authenticate(make_user("tess", "tester"))
    assert other.get(job["url"]).status_code == 403
    # Below the threshold the file is scored in the request: 201 with the summary.
    settings.SCORE_IN_REQUEST_UNITS = 10_000
    small = api_upload(api, dataset, perfect_answers(samples), name="small")
    assert small.status_code == 201 and small.json()["summary"]["Acc"] == 1.0
