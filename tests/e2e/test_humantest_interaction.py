"""Interaction data per trial in headless Chromium: a tester edits a TRANCE answer, leaves the page
for a while (the page is made hidden, then visible again) and answers; the stored trial has the
time the page was hidden, the edits counted, the browser's viewport and the moment the stimulus
was shown, and the plan's export has them too."""

import time

import pytest
from playwright.sync_api import expect

from humantest.models import TestPlan, TestSession, Trial
from humantest.selectors import export_rows
from tests.e2e.conftest import log_in
from tests.factories import PASSWORD, make_user, steps_of

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

#: How long the page stays hidden.
AWAY_MS = 700

SET_VISIBILITY = """hidden => {
    for (const [name, value] of [["hidden", hidden], ["visibilityState", hidden ? "hidden" : "visible"]])
        Object.defineProperty(document, name, { configurable: true, get: () => value });
    document.dispatchEvent(new Event("visibilitychange"));
}"""


def fill_row(page, number, step) -> int:
    """Fill a step's row the way a tester does; the number of edits (choices) it took."""
    row = page.locator("#steps li.step").nth(number)
    row.locator(".obj").select_option(str(step["obj_idx"]))
    row.locator(".attr").select_option(step["attr"])
    if step["attr"] == "position":
        row.locator(".direction").select_option(step["val"][0])
        row.locator(".distance").select_option(str(step["val"][1]))
        return 4
    row.locator(".value").select_option(step["val"])
    return 3


def test_hidden_time_edits_and_viewport_are_stored_with_the_trial(page, trance_dataset):
    tester = make_user("tess", "tester")
    item = next(
        item
        for item in trance_dataset.items.order_by("position")
        if len(item.ground_truth["transformations"]) >= 2
    )
    plan = TestPlan.objects.create(
        name="Interaction",
        dataset=trance_dataset,
        setting="event",
        draw="fixed",
        fixed_items=[item.external_id],
        time_limit_s=600,
    )
    plan.testers.add(tester)

    log_in(page, tester.username, PASSWORD)
    page.goto("/test/")
    page.locator("#my-tests tbody tr", has_text=plan.name).get_by_role("button", name="Open").click()
    page.click("#begin")
    expect(page.locator("body")).to_have_attribute("data-stimulus-shown", "1")
    truth = steps_of(item)

    edits = fill_row(page, 0, truth[0])
    # The tester leaves the page (another tab, a minimised window) and comes back.
    started = time.monotonic()
    page.evaluate(SET_VISIBILITY, True)
    page.wait_for_timeout(AWAY_MS)
    page.evaluate(SET_VISIBILITY, False)
    away_at_most_ms = (time.monotonic() - started) * 1000
    for number, step in enumerate(truth[1:], start=1):
        page.click("#add-step")
        edits += 1 + fill_row(page, number, step)

    page.click("#submit")
    expect(page.locator("#verdict")).to_have_text("Correct")

    trial = Trial.objects.get(session=TestSession.objects.get(plan=plan, tester=tester))
    assert trial.status == Trial.Status.ANSWERED
    assert AWAY_MS <= trial.hidden_ms <= away_at_most_ms
    assert trial.focus_losses >= 1
    assert trial.client["answer_changes"] >= edits
    viewport = page.viewport_size
    assert trial.client["viewport"] == {
        "width": viewport["width"],
        "height": viewport["height"],
        "dpr": page.evaluate("window.devicePixelRatio"),
    }
    shown = trial.client["shown_ms"]
    assert trial.client["loaded_ms"] <= shown <= trial.client["first_input_ms"] <= trial.client["submit_ms"]

    (row,) = export_rows(plan)
    assert row["hidden_ms"] == trial.hidden_ms and row["answer_changes"] == trial.client["answer_changes"]
    assert (row["viewport_width"], row["viewport_height"]) == (viewport["width"], viewport["height"])
    assert row["time_to_first_input_ms"] == pytest.approx(trial.client["first_input_ms"] - shown, abs=0.1)
