"""The TRANCE report at 1280 px: Event and View rows, long row names, every column in view without
scrolling sideways."""

import pytest

from evaluation.services import submit_predictions
from tests.e2e.conftest import log_in
from tests.factories import PASSWORD, make_user, trance_answers

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_trance_report_with_event_and_view_rows_fits_1280_pixels(page, screenshot, trance_dataset):
    rita = make_user("rita", "researcher")
    # Basic is scored on one-step samples only (its own files): on this set the Basic columns
    # stay empty, as they do in a report of the Event and View data.
    for setting, name in (
        ("event", "TranceNet (ResNet-101, paper recipe)"),
        ("view", "TranceNet (ResNet-101, view)"),
        ("view", "Human (exclusion rules v1)"),
    ):
        submit_predictions(
            dataset=trance_dataset,
            name=name,
            data=trance_answers(trance_dataset),
            setting=setting,
            created_by=rita,
        )
    log_in(page, "rita", PASSWORD)
    page.goto(f"/datasets/{trance_dataset.pk}/report/")
    widths = page.evaluate(
        "() => { const table = document.getElementById('report');"
        " return [table.scrollWidth, table.closest('.table-scroll').clientWidth]; }"
    )
    screenshot("report-trance-event-view")
    assert widths[0] <= widths[1], f"the table is {widths[0]} px wide in a {widths[1]} px column"
    # The last column (View EO) is on screen.
    box = page.locator("#report thead tr").nth(1).locator("th").last.bounding_box()
    assert box["x"] + box["width"] <= 1280
