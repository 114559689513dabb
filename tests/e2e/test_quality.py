"""Quality control in the browser (issue 27): a tester fails the practice qualification and sees the
screen-out message; another qualifies, meets two catch trials among the test trials and finishes;
the researcher sees the exclusion table and downloads the filled reporting checklist."""

import json

import pytest
from playwright.sync_api import expect

from humantest import exclusions
from humantest.models import TestPlan, TestSession, Trial
from humantest.plans import create_test_plan
from tests.e2e.conftest import for_docs, log_in
from tests.factories import PASSWORD, make_user, steps_of

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def wrong_step(item):
    size = item.payload["initial"]["objects"][0]["size"]
    return {"obj_idx": 0, "attr": "size", "val": "large" if size != "large" else "small"}


def fill_row(page, number, step):
    row = page.locator("#steps li.step").nth(number)
    row.locator(".obj").select_option(str(step["obj_idx"]))
    row.locator(".attr").select_option(step["attr"])
    if step["attr"] == "position":
        row.locator(".direction").select_option(step["val"][0])
        row.locator(".distance").select_option(str(step["val"][1]))
    else:
        row.locator(".value").select_option(step["val"])


def answer_shown_trial(page, *, right: bool) -> Trial:
    """Answer the trial on screen (its steps, or one wrong step) and go on."""
    page.wait_for_selector("body[data-trial-ready]")
    data = json.loads(page.locator("#trial-data").text_content())
    trial = Trial.objects.select_related("item").get(pk=data["trial"])
    steps = steps_of(trial.item) if right else [wrong_step(trial.item)]
    for number, step in enumerate(steps):
        if number:
            page.click("#add-step")
        fill_row(page, number, step)
    page.click("#submit")
    page.wait_for_selector("#result:not([hidden])")
    page.click("#next")
    return trial


@pytest.fixture
def plan(trance_dataset):
    ids = list(trance_dataset.items.order_by("position").values_list("external_id", flat=True))
    rita = make_user("rita", "researcher")
    plan = create_test_plan(
        created_by=rita,
        testers=[make_user("quinn", "tester"), make_user("tessa", "tester")],
        dataset=trance_dataset,
        name="Careful TRANCE",
        setting="event",
        draw=TestPlan.Draw.FIXED,
        fixed_items=ids[:3],
        practice_items=ids[3:5],
        catch_items=ids[5:7],
        catch_count=2,
        qualify_min_correct=2,
        qualify_rounds=1,
    )
    exclusions.save_rules(plan, {"catch_failures": 1, "min_median_s": 0.05, "exclude_unfinished": True})
    return plan


def test_qualification_catch_trials_exclusions_and_the_filled_checklist(page, screenshot, plan, tmp_path):
    # Quinn gets the practice wrong: the one round allowed is used, the test is not for them.
    log_in(page, "quinn", PASSWORD)
    page.goto("/test/")
    page.click("#my-tests button:has-text('Open')")
    expect(page.locator("#qualification-note")).to_contain_text("at least 2 right answers")
    expect(page.locator("#begin")).to_have_count(0)  # no test before qualifying
    page.click("#practice")
    for _ in range(2):
        answer_shown_trial(page, right=False)
    expect(page.locator("#screened-out")).to_be_visible()
    expect(page.locator("h1")).to_contain_text("not for you")
    assert TestSession.objects.get(tester__username="quinn").status == TestSession.Status.SCREENED_OUT
    page.context.clear_cookies()

    # Tessa qualifies, then meets the two catch trials somewhere among her five trials.
    log_in(page, "tessa", PASSWORD)
    page.goto("/test/")
    page.click("#my-tests button:has-text('Open')")
    page.click("#practice")
    for _ in range(2):
        answer_shown_trial(page, right=True)
    expect(page.locator("#practice-score")).to_contain_text("2 of 2")
    expect(page.locator("#qualified")).to_be_visible()
    page.click("#begin")
    phases = [answer_shown_trial(page, right=True).phase for _ in range(5)]
    assert sorted(phases) == ["catch", "catch", "test", "test", "test"]
    expect(page.locator("h1")).to_contain_text("finished", ignore_case=True)
    page.context.clear_cookies()

    # The researcher: who was kept, who was screened out, and the checklist to download.
    log_in(page, "rita", PASSWORD)
    page.goto(f"/test/plans/{plan.pk}/")
    page.click("#quality-link")
    table = page.locator("#exclusion-table")
    expect(table.locator("tr[data-tester='tessa']")).to_contain_text("kept")
    expect(table.locator("tr[data-tester='tessa']")).to_contain_text("0 / 2")  # no catch trial failed
    expect(table.locator("tr[data-tester='quinn']")).to_contain_text("screened out")
    expect(page.locator("#screened-out-count")).to_have_text("1")
    expect(page.locator("#plot svg")).to_be_visible()
    for_docs(screenshot("quality-control"))

    page.goto(f"/test/plans/{plan.pk}/")
    page.click("#baseline-report")
    expect(page.locator("#report")).to_be_visible()
    with page.expect_download() as download:
        page.click("#download-markdown")
    path = tmp_path / "checklist.md"
    download.value.save_as(path)
    text = path.read_text()
    assert "Careful TRANCE" in text
    # The checklist's number of baseliners, answered from what was recorded: Tessa kept, Quinn screened out.
    assert "1 measured (started the test): 1 kept" in text and "1 screened out" in text
