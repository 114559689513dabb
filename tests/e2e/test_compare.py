"""A researcher compares the TranceNet model row with the Human row of a TRANCE report, in the browser."""

import pytest
from playwright.sync_api import expect

from evaluation import tasks
from humantest.models import TestPlan
from inference.services import execute_run, start_run
from tests.e2e.conftest import for_docs, log_in
from tests.factories import PASSWORD, make_user
from tests.yardstick.test_crawl import answer_all

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_model_row_and_the_human_row_are_compared_on_the_items_both_answered(
    page, screenshot, trance_dataset, django_capture_on_commit_callbacks, monkeypatch
):
    make_user("rita", "researcher")
    testers = [make_user(name, "tester") for name in ("tess", "tom")]
    with django_capture_on_commit_callbacks(execute=True):
        plan = TestPlan.objects.create(
            name="Event", dataset=trance_dataset, setting="event", items_per_tester=6, seed=2
        )
        plan.testers.add(*testers)
        for tester in testers:
            answer_all(plan, tester)
    run = execute_run(start_run(dataset=trance_dataset, baseline="trancenet", setting="event", enqueue=False))
    assert run.status == "succeeded", run.error

    # The table of every pair is a worker's job: held back here, run below while the page waits.
    queued = []
    monkeypatch.setattr(tasks.compute_pairwise, "delay", lambda *args: queued.append(args))
    log_in(page, "rita", PASSWORD)
    page.goto(f"/datasets/{trance_dataset.pk}/report/")
    expect(page.locator("#report tbody")).to_contain_text("TranceNet")
    expect(page.locator("#report tbody")).to_contain_text("Human")
    expect(page.locator("#pairwise-computing")).to_be_visible()
    assert len(queued) == 1
    tasks.compute_pairwise(*queued[0])
    pair = page.locator("#pairwise tbody tr", has_text="Event Acc")
    expect(pair).to_contain_text("TranceNet", timeout=15_000)  # the page fetched it by itself
    expect(pair).to_contain_text("Human")
    page.locator("#pairwise-section").scroll_into_view_if_needed()
    for_docs(screenshot("report-pairwise"))
    # The first comparison of two rows is a worker's job too (a minute on a large dataset): held
    # back, then run while the page waits for it.
    compared = []
    monkeypatch.setattr(tasks.compute_comparison, "delay", lambda *args: compared.append(args))
    page.click("#compare-link")
    page.select_option("select[name=a]", "TranceNet")
    page.select_option("select[name=b]", "Human")
    page.click("#compare-form button[type=submit]")
    expect(page.locator("#compare-computing")).to_be_visible()
    for choices in compared:
        tasks.compute_comparison(*choices)
    event_acc = page.locator("#comparison tbody tr", has_text="Event Acc")
    expect(event_acc).to_be_visible(timeout=15_000)  # fetched by the page itself
    expect(page.locator("#compare-computing")).to_have_count(0)
    # The testers answered every item they were given right; the units both rows answered are theirs.
    cells = event_acc.locator("td")
    expect(cells.nth(2)).to_have_text("1.0000")
    units = int(cells.nth(0).inner_text())
    assert 6 <= units <= 12
    for_docs(screenshot("report-compare"))

    # Who misses what: the units only the model missed, with their renders and both rows' answers.
    page.locator("#comparison tbody tr", has_text="Event Acc").locator("a.overlap-link").click()
    expect(page.locator("h1")).to_contain_text("Who misses what")
    expect(page.locator("#overlap-plot svg")).to_be_visible()
    # The tabs name the rows as the plot does: A is the model here.
    page.click("#overlap-tabs >> text=only TranceNet misses")
    first = page.locator(".overlap-unit").first
    # Every image of the item, captioned: the initial scene and the three final cameras.
    expect(first.locator(".overlap-images img")).to_have_count(4)
    expect(first.locator(".overlap-images figcaption").first).to_have_text("init.Camera_Center")
    # The render arrives (lazy-loaded: waited for, not read at once).
    image = first.locator(".overlap-images img").first.element_handle()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image, timeout=15_000)
    # Answers as the benchmark words them, not raw JSON.
    expect(first.locator(".overlap-answers")).to_contain_text("object ")
    expect(first.locator(".overlap-answers")).not_to_contain_text("obj_idx")
    for_docs(screenshot("report-overlap"))
