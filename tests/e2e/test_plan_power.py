"""The test-plan form's power card computes in place, keeping what was typed in the form, and offers
the chosen dataset's model rows as the model's accuracy."""

import pytest
from playwright.sync_api import expect

from evaluation.services import submit_predictions
from tests.e2e.conftest import log_in
from tests.factories import PASSWORD, make_user, trance_answers

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_power_card_keeps_the_form_and_offers_model_rows(page, screenshot, trance_dataset):
    rita = make_user("rita", "researcher")
    submit_predictions(
        dataset=trance_dataset,
        name="Half model",
        data=trance_answers(trance_dataset, lambda index, item: index % 2),
        setting="event",
        created_by=rita,
    )
    log_in(page, "rita", PASSWORD)
    page.goto("/test/plans/new/")
    page.fill("#id_name", "Typed before computing")
    page.select_option("#id_dataset", str(trance_dataset.pk))
    rows = page.locator("#power-model-row option")
    expect(rows.filter(has_text="Half model · Event Acc: 0.500")).to_have_count(1)
    page.select_option("#power-model-row", label="Half model · Event Acc: 0.500")
    expect(page.locator("#power-form input[name=model]")).to_have_value("0.5")
    page.fill("#power-form input[name=human]", "0.8")
    url = page.url
    page.click("#power-form button[type=submit]")
    expect(page.locator("#power-result")).to_contain_text("testers")
    assert page.url == url  # no reload
    expect(page.locator("#id_name")).to_have_value("Typed before computing")
    expect(page.locator("#power-model-row")).to_have_value("Half model · Event Acc: 0.500")  # kept
    screenshot("humantest-plan-power")
