"""A researcher imports a dataset in the browser and browses it; a tester is kept out."""

import zipfile

import orjson
import pytest
from playwright.sync_api import expect

from benchmarks.models import Dataset
from plugins.stevqa.demo import generate_demo
from tests.e2e.conftest import log_in
from tests.factories import PASSWORD, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def stevqa_upload(tmp_path):
    """A small training file and a zip of its images, as a researcher would upload them."""
    json_path = generate_demo(tmp_path / "samples", count=3, seed=5)
    archive = tmp_path / "images.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for image in sorted((tmp_path / "samples" / "images").iterdir()):
            bundle.write(image, arcname=f"images/{image.name}")
    return json_path, archive


def test_researcher_imports_with_images_and_sees_the_items(page, screenshot, stevqa_upload):
    make_user("rita", "researcher")
    json_path, archive = stevqa_upload
    log_in(page, "rita", PASSWORD)
    expect(page.locator("#research")).to_be_visible()
    screenshot("home-researcher")

    page.click("text=Import a dataset")
    page.select_option("#id_benchmark", "stevqa")
    page.fill("#id_name", "street signs")
    page.fill("#id_split", "train")
    page.set_input_files("#id_file", str(json_path))
    page.set_input_files("#id_images", str(archive))
    screenshot("import-form")
    page.click("#import-form button[type=submit]")

    expect(page.locator("#job-status")).to_have_text("Succeeded")
    expect(page.locator("#job-count")).to_have_text("3 / 3")
    screenshot("import-job-succeeded")
    page.click("text=Open the dataset")
    expect(page.locator("h1")).to_contain_text("street signs")

    page.click("nav >> text=Datasets")
    row = page.locator("#datasets tbody tr", has_text="street signs")
    expect(row).to_contain_text("STE-VQA")
    expect(row.locator("td.num")).to_have_text("3")
    screenshot("dataset-list")
    row.get_by_role("link", name="street signs", exact=True).click()

    expect(page.locator("h1")).to_contain_text("street signs")
    cards = page.locator(".item-card")
    expect(cards).to_have_count(3)
    first_image = cards.first.locator("img")
    expect(first_image).to_be_visible()
    page.wait_for_function("() => [...document.images].every(img => img.complete && img.naturalWidth > 0)")
    screenshot("dataset-detail")

    cards.first.click()
    annotation = orjson.loads(json_path.read_bytes())[0]["annotation"]
    expect(page.locator("#ground-truth")).to_contain_text(annotation[0]["answer"])
    expect(page.locator("#payload")).not_to_contain_text(annotation[0]["answer"])
    # Every answer's evidence quadrilateral is outlined over the image.
    expect(page.locator("svg.regions polygon")).to_have_count(len(annotation))
    screenshot("item-detail")
    assert Dataset.objects.get().item_count == 3


def test_a_bad_upload_lists_its_bad_records_and_loads_nothing(page, screenshot, tmp_path):
    make_user("rita", "researcher")
    bad = tmp_path / "bad.json"
    bad.write_bytes(
        b'[{"question_id": 1, "question": "q", "answer": "a", "evidence": [1, 2, 3]}, {"question_id": 2}]'
    )
    log_in(page, "rita", PASSWORD)
    page.goto("/datasets/import/")
    page.select_option("#id_benchmark", "stevqa")
    page.fill("#id_name", "broken")
    page.set_input_files("#id_file", str(bad))
    page.click("#import-form button[type=submit]")

    expect(page.locator("#job-status")).to_have_text("Failed")
    expect(page.locator("#job-nothing")).to_be_visible()
    expect(page.locator("#job-progress")).to_be_hidden()
    errors = page.locator("#job-errors li")
    expect(errors.first).to_contain_text("record 0: evidence: a quadrilateral needs 8 numbers")
    expect(page.locator("#job-errors")).to_contain_text("record 1: question: missing field")
    screenshot("import-job-failed")
    assert Dataset.objects.count() == 0


def test_tester_sees_only_their_own_work_and_no_catalog(page, screenshot):
    make_user("tom", "tester")
    log_in(page, "tom", PASSWORD)
    expect(page.locator("#testing")).to_be_visible()
    expect(page.locator("#research")).to_have_count(0)
    expect(page.locator("nav")).not_to_contain_text("Datasets")
    screenshot("home-tester")
    response = page.goto("/datasets/")
    assert response.status == 403


def test_password_change_and_log_out(page):
    make_user("tom", "tester")
    log_in(page, "tom", PASSWORD)
    page.click("text=Password")
    page.fill("#id_old_password", PASSWORD)
    page.fill("#id_new_password1", "a-fresh-secret-2026")
    page.fill("#id_new_password2", "a-fresh-secret-2026")
    page.click("main button[type=submit]")
    expect(page.locator("h1")).to_have_text("Password changed")
    page.click("text=Log out")
    expect(page.locator("h1")).to_have_text("Log in")
    log_in(page, "tom", PASSWORD)
    expect(page.locator(".error")).to_contain_text("didn't match")
    log_in(page, "tom", "a-fresh-secret-2026")
    expect(page.locator("#testing")).to_be_visible()


def test_api_docs_render_without_the_network(page, screenshot):
    make_user("rita", "researcher")
    log_in(page, "rita", PASSWORD)
    page.click("nav >> text=API")
    expect(page.locator(".swagger-ui")).to_contain_text("/api/v1/imports/")
    screenshot("api-docs")


@pytest.fixture
def no_worker():
    """Tasks are queued in memory where no worker listens: the test plays the worker."""
    from yardstick.celery import app

    saved = app.conf.task_always_eager, app.conf.broker_url
    app.conf.task_always_eager, app.conf.broker_url = False, "memory://"
    yield
    app.conf.task_always_eager, app.conf.broker_url = saved


def test_the_job_page_follows_a_queued_import_until_a_worker_finishes_it(page, no_worker, tmp_path):
    """With no worker running the job waits; the page updates by itself once a worker runs it."""
    from benchmarks.models import ImportJob
    from benchmarks.services import run_import_job
    from tests.benchmarks import builders

    make_user("rita", "researcher")
    source = tmp_path / "gt.json"
    source.write_bytes(orjson.dumps(builders.stevqa_questions()))
    log_in(page, "rita", PASSWORD)
    page.goto("/datasets/import/")
    page.select_option("#id_benchmark", "stevqa")
    page.fill("#id_name", "queued")
    page.set_input_files("#id_file", str(source))
    page.click("#import-form button[type=submit]")
    expect(page.locator("#job-status")).to_have_text("Waiting for a worker")

    run_import_job(ImportJob.objects.get(name="queued"))  # what the worker would do
    expect(page.locator("#job-status")).to_have_text("Succeeded")
    expect(page.locator("#job-count")).to_have_text("3 / 3")
    expect(page.locator("#job-result a")).to_have_text("Open the dataset")
