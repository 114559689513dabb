"""A researcher runs the shipped TranceNet on a TRANCE dataset in the browser and finds its report row;
starts a served model from the run form and reads its requests; an endpoint the site refuses is
refused beside the form."""

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from benchmarks import registry
from benchmarks.services import import_dataset
from inference.models import ModelRun
from tests.dotcount.spec import SPEC
from tests.e2e.conftest import SCREENSHOTS, for_docs, log_in
from tests.factories import PASSWORD, make_user
from tests.inference.conftest import write_dot_files
from tests.inference.served_server import DotServer

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_researcher_starts_a_model_run_follows_it_and_opens_the_report(page, screenshot, trance_dataset):
    make_user("rita", "researcher")
    log_in(page, "rita", PASSWORD)
    page.click("nav >> text=Models")
    expect(page.locator("h1")).to_have_text("Model runs")
    page.click("text=New run")
    page.select_option("#id_dataset", str(trance_dataset.pk))
    # Only TRANCE's models and settings are offered for a TRANCE dataset: its three baselines and
    # the served model.
    offered = page.locator("#id_baseline option:not([hidden])")
    expect(offered).to_have_count(4)
    expect(offered.first).to_contain_text("TRANCE")
    expect(page.locator("#id_setting option")).to_have_count(3)
    page.select_option("#id_baseline", "trance:trancenet")
    page.select_option("#id_setting", "event")
    expect(page.locator("#field-checkpoint")).to_be_visible()
    for_docs(screenshot("model-run-form"))
    page.click("main form button[type=submit]")

    expect(page.locator("#run-status")).to_have_text("Succeeded", timeout=60000)
    expect(page.locator("#run-count")).to_have_text("12 / 12")
    expect(page.locator("#run-parameters")).to_contain_text("trancenet-basic.pt")
    # The checkpoint's training record reads "name: value", not a Python dict; the worker's start
    # is written; no "queued" notice is left over from the start.
    expect(page.locator("#run-parameters")).not_to_contain_text("{'")
    expect(page.locator("#run-parameters tr", has_text="trained")).to_contain_text("epochs: 20")
    expect(page.locator("#run-taken")).not_to_have_text("not yet")
    expect(page.locator(".messages")).to_have_count(0)
    for_docs(screenshot("model-run-finished"))
    page.click("text=Open the report")
    expect(page.locator("#report tbody")).to_contain_text("TranceNet")
    expect(page.locator("#submissions")).to_contain_text("made by model run")


# --- a served model, started from the run form ----------------------------------------------------

SERVED_FIELDS = ("endpoint", "protocol", "served_model", "api_key_env", "concurrency", "timeout_s", "retries")
KEY = "sk-e2e-5b7d2e"


@pytest.fixture
def dots(tmp_path):
    """Dot count (the test plug-in benchmark) and its eight-item dataset of dot images."""
    registry.register(SPEC)
    try:
        truth = write_dot_files(tmp_path / "dots")
        yield import_dataset(
            benchmark="dotcount",
            data=truth.read_bytes(),
            name="dots",
            images_dir=tmp_path / "dots" / "images",
        )
    finally:
        registry.unregister(SPEC.name)


@pytest.fixture
def dot_server(dots, settings):
    """A served model on 127.0.0.1 that counts the dots of the images it is sent."""
    settings.SERVED_BACKOFF_S = 0.01
    running = DotServer({})
    yield running
    running.close()


def open_the_run_form(page, dots, language: str = "") -> None:
    make_user("rita", "researcher")
    log_in(page, "rita", PASSWORD)
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    if language:
        with page.expect_navigation():
            page.select_option("#language-form select", language)
    page.goto("/models/new/")
    page.select_option("#id_dataset", str(dots.pk))


def choose_the_served_model(page, endpoint: str) -> None:
    page.select_option("#id_baseline", "dotcount:served")
    page.fill("#id_endpoint", endpoint)
    page.select_option("#id_protocol", "yardstick")


def shoot(page, name: str) -> Path:
    """A full-page screenshot under var/screenshots/. The field being typed in is left first: Chromium
    scrolls a focused input back into view after the full-page resize, which would move the page
    under the next click."""
    page.evaluate("document.activeElement && document.activeElement.blur()")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def test_a_served_model_runs_from_the_form_and_its_requests_can_be_read(page, dots, dot_server, monkeypatch):
    monkeypatch.setenv("YARDSTICK_SERVED_KEY_E2E", KEY)
    dot_server.key = KEY  # the server refuses a request without it
    open_the_run_form(page, dots)
    # Dot count's two baselines and its served model; the served model's fields only for it.
    expect(page.locator("#id_baseline option:not([hidden])")).to_have_count(3)
    for field in SERVED_FIELDS:
        expect(page.locator(f"#field-{field}")).to_be_hidden()
    page.select_option("#id_baseline", "dotcount:served")
    for field in (*SERVED_FIELDS, "max_tokens"):  # the OpenAI protocol is the first offered
        expect(page.locator(f"#field-{field}")).to_be_visible()
    expect(page.locator("#field-checkpoint")).to_be_hidden()
    page.select_option("#id_baseline", "dotcount:blobs")
    for field in (*SERVED_FIELDS, "max_tokens"):
        expect(page.locator(f"#field-{field}")).to_be_hidden()
    choose_the_served_model(page, f"{dot_server.url}/answer")
    for field in SERVED_FIELDS:
        expect(page.locator(f"#field-{field}")).to_be_visible()
    expect(page.locator("#field-max_tokens")).to_be_hidden()  # the OpenAI protocol's only
    page.fill("#id_api_key_env", "YARDSTICK_SERVED_KEY_E2E")
    page.fill("#id_concurrency", "2")
    page.fill("#id_batch_size", "3")
    shoot(page, "served-form-en")
    page.click("main form button[type=submit]")

    expect(page.locator("#run-status")).to_have_text("Succeeded", timeout=60000)
    expect(page.locator("#run-count")).to_have_text("8 / 8")
    expect(page.locator("#run-error")).to_be_hidden()
    served = page.locator("#run-served")
    expect(served).to_contain_text(f"{dot_server.url}/answer")
    expect(served).to_contain_text("yardstick")
    expect(served).to_contain_text("YARDSTICK_SERVED_KEY_E2E")
    expect(page.locator("main")).not_to_contain_text(KEY)
    run = ModelRun.objects.get()
    assert run.submission.summary["overall"]["Acc"] == 1.0
    assert sorted(dot_server.units_seen()) == [["d0", "d1", "d2"], ["d3", "d4", "d5"], ["d6", "d7"]]
    assert {request["authorization"] for request in dot_server.seen} == {f"Bearer {KEY}"}

    # The requests and responses: a download of JSON lines naming every item sent, and no key.
    link = page.locator("#run-audit a")
    expect(link).to_have_text("Requests and responses (JSON lines)")
    with page.expect_download() as download:
        link.click()
    assert download.value.suggested_filename == f"run-{run.pk}-requests.jsonl"
    text = Path(download.value.path()).read_text()
    assert KEY not in text and "Bearer" not in text and "base64" not in text
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0]["kind"] == "run" and lines[0]["options"]["api_key_env"] == "YARDSTICK_SERVED_KEY_E2E"
    requests = [line for line in lines if line["kind"] == "request"]
    assert all(line["status"] == 200 and line["url"] == f"{dot_server.url}/answer" for line in requests)
    sent = sorted(item["id"] for line in requests for item in line["request"]["items"])
    assert sent == [f"d{index}" for index in range(8)]
    assert lines[-1]["kind"] == "end" and lines[-1]["requests"] == 3

    # The score: the run's row of the dataset's report, every count right (Acc 1, MAE 0).
    page.click("text=Open the report")
    row = page.locator(
        "#report tbody tr", has_text=f"Served model ({dot_server.url.removeprefix('http://')})"
    )
    expect(row).to_have_count(1)
    columns = page.locator("#report thead tr").nth(1).locator("th").all_inner_texts()
    assert columns[:2] == ["Acc", "MAE"], columns
    expect(row.locator("td").nth(0)).to_contain_text("1.0000")
    expect(row.locator("td").nth(1)).to_contain_text("0.0000")


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_link_local_endpoint_is_refused_beside_the_form_and_starts_no_run(page, dots, language):
    open_the_run_form(page, dots, language="" if language == "en" else language)
    choose_the_served_model(page, "http://169.254.169.254/latest")
    if language == "zh-hans":
        expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
        expect(page.locator("h1")).to_have_text("新建模型运行")
        expect(page.locator("#field-endpoint label")).to_have_text("服务地址")
        shoot(page, "served-form-zh")
    page.click("main form button[type=submit]")

    refusal = page.locator("#run-form .errorlist")
    expect(refusal).to_contain_text("endpoint: 169.254.169.254 is a link-local")
    expect(refusal).to_contain_text("link-local")
    assert page.url.endswith("/models/new/")
    # What was typed is kept, the served model's fields still shown.
    expect(page.locator("#id_baseline")).to_have_value("dotcount:served")
    expect(page.locator("#id_endpoint")).to_have_value("http://169.254.169.254/latest")
    expect(page.locator("#id_protocol")).to_have_value("yardstick")
    expect(page.locator("#field-endpoint")).to_be_visible()
    submit = page.locator("main form button[type=submit]")
    if language == "zh-hans":
        expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
        expect(submit).to_have_text("开始运行")
        expect(page.locator("#field-protocol label")).to_have_text("协议")
    else:
        expect(submit).to_have_text("Start the run")
    shoot(page, f"served-refused-{language}")
    assert ModelRun.objects.count() == 0


def test_an_endpoint_outside_the_site_s_allowed_hosts_is_refused(page, dots, dot_server, settings):
    settings.SERVED_ALLOWED_HOSTS = ["gpu-box.example.org"]
    open_the_run_form(page, dots)
    choose_the_served_model(page, f"{dot_server.url}/answer")
    page.click("main form button[type=submit]")

    refusal = page.locator("#run-form .errorlist")
    expect(refusal).to_contain_text("127.0.0.1 is not among the hosts this site lets runs reach")
    expect(refusal).to_contain_text("YARDSTICK_SERVED_ALLOWED_HOSTS")
    expect(page.locator("#id_endpoint")).to_have_value(f"{dot_server.url}/answer")
    assert ModelRun.objects.count() == 0 and dot_server.seen == []
