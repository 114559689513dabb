"""A researcher uploads predictions to a dataset too large to score in the request, and watches the
report page follow the worker until the row appears, in the browser."""

import json
import time

import pytest
from django.core.cache import cache
from django.utils import timezone
from playwright.sync_api import expect

from evaluation import tasks
from evaluation.models import ScoringJob
from evaluation.services import WRITING
from jobs.models import heartbeat_key, progress_key
from tests.e2e.conftest import for_docs, log_in
from tests.factories import PASSWORD, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_report_follows_a_worker_scoring_an_upload_until_its_row_appears(
    page, screenshot, trance_dataset, settings, monkeypatch, tmp_path
):
    settings.SCORE_IN_REQUEST_UNITS = 1
    make_user("rita", "researcher")
    answers = {
        item.external_id: [
            {key: step[key] for key in ("obj_idx", "attr", "val")}
            for step in item.ground_truth["transformations"]
        ]
        for item in trance_dataset.items.all()
    }
    upload = tmp_path / "answers.json"
    upload.write_text(json.dumps(answers))
    queued = []  # the worker's job, held back and run below while the page waits
    monkeypatch.setattr(tasks.score_upload, "apply_async", lambda args, **options: queued.append(args))

    log_in(page, "rita", PASSWORD)
    page.goto(f"/datasets/{trance_dataset.pk}/report/")
    page.fill("#submission-form input[name=name]", "Large model")
    page.select_option("#submission-form select[name=setting]", "event")
    page.set_input_files("#submission-form input[name=file]", str(upload))
    page.click("#submission-form button[type=submit]")
    expect(page.locator("body")).to_contain_text("is being scored by a worker")
    expect(page.locator("#scoring-jobs")).to_contain_text("Waiting for a worker")
    assert len(queued) == 1

    # The worker takes the job and is writing rows: the page shows it without being reloaded.
    job = ScoringJob.objects.get()
    ScoringJob.objects.filter(pk=job.pk).update(status=ScoringJob.Status.RUNNING, started_at=timezone.now())
    cache.set(progress_key("scoring", job.pk), {"stage": WRITING, "done": 6, "total": 12})
    cache.set(heartbeat_key("scoring", job.pk), time.time())
    expect(page.locator("#scoring-jobs progress")).to_have_attribute("value", "50", timeout=10_000)
    expect(page.locator("#scoring-jobs")).to_contain_text("writing per-unit scores")
    page.locator("#scoring-jobs").scroll_into_view_if_needed()
    for_docs(screenshot("report-scoring-job"))

    ScoringJob.objects.filter(pk=job.pk).update(status=ScoringJob.Status.QUEUED)
    tasks.score_upload(*queued[0])
    # The page reloads by itself once nothing is left to score, with the new row in the table.
    expect(page.locator("#report tbody")).to_contain_text("Large model", timeout=15_000)
    expect(page.locator("#scoring-jobs")).to_have_count(0)
