"""A researcher runs the shipped TranceNet on a TRANCE dataset in the browser and finds its report row."""

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import for_docs, log_in
from tests.factories import PASSWORD, make_user

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
