"""A tester in headless Chromium: brief, practice, TRANCE trials with drag and keyboard reordering,
a reload in the middle of a trial, a timed-out trial, the finished page and the history."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from humantest.models import TestPlan, TestSession, Trial
from tests.e2e.conftest import for_docs, log_in
from tests.factories import PASSWORD, make_user, steps_of

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def fill_row(page, number, step):
    row = page.locator("#steps li.step").nth(number)
    row.locator(".obj").select_option(str(step["obj_idx"]))
    row.locator(".attr").select_option(step["attr"])
    if step["attr"] == "position":
        row.locator(".direction").select_option(step["val"][0])
        row.locator(".distance").select_option(str(step["val"][1]))
    else:
        row.locator(".value").select_option(step["val"])


def row_steps(page):
    """The rows as the page shows them: (object, attribute) in order."""
    return page.eval_on_selector_all(
        "#steps li.step",
        "rows => rows.map(row => [row.querySelector('.obj').value, row.querySelector('.attr').value])",
    )


def current(page):
    data = json.loads(page.locator("#trial-data").text_content())
    return data, Trial.objects.select_related("item").get(pk=data["trial"])


def keep(screenshot, name):
    for_docs(screenshot(name))


def test_a_tester_practises_then_solves_reorders_reloads_and_times_out(page, screenshot, trance_dataset):
    tester = make_user("tessa", "tester")
    items = list(trance_dataset.items.order_by("position"))
    multi = [item for item in items if len(item.ground_truth["transformations"]) >= 2]
    single = [item for item in items if len(item.ground_truth["transformations"]) == 1]
    chosen = [multi[0], multi[1], single[0], multi[2]]
    plan = TestPlan.objects.create(
        name="TRANCE Event, human baseline",
        dataset=trance_dataset,
        setting="event",
        brief="Find the transformations between the two scenes.",
        guidance="Compare the table of initial objects with the final picture, one object at a time.",
        draw="fixed",
        fixed_items=[item.external_id for item in chosen],
        practice_items=[single[1].external_id],
        time_limit_s=120,
    )
    plan.testers.add(tester)
    bodies = []

    def read_body(response):
        # Read at once: a page's body is gone after the browser navigates away.
        if response.request.resource_type in ("document", "fetch", "xhr") and response.status < 300:
            bodies.append(response.text())

    page.on("response", read_body)

    log_in(page, tester.username, PASSWORD)
    page.goto("/test/")
    page.click("#my-tests button:has-text('Open')")
    page.wait_for_selector("#brief")
    keep(screenshot, "humantest-brief")

    # Practice: answer, see the right answer and the guidance, then start the test.
    page.click("#practice")
    page.wait_for_selector("body[data-trial-ready]")
    data, trial = current(page)
    assert data["practice"] and trial.item == single[1]
    fill_row(
        page,
        0,
        {
            "obj_idx": 0,
            "attr": "size",
            "val": "large" if trial.item.payload["initial"]["objects"][0]["size"] != "large" else "small",
        },
    )
    page.click("#submit")
    page.wait_for_selector("#result:not([hidden])")
    assert "Compare the table" in page.locator("#guidance").text_content()
    assert page.locator("#compare tbody tr").count() >= 1
    assert page.locator("#why li").first.text_content().startswith("Object ")  # why it was wrong
    keep(screenshot, "humantest-practice-result")
    page.click("#next")
    bodies.clear()  # the practice answer's truth was allowed; from here on, the test trials
    page.click("#begin")

    # Trial 1: steps entered in the wrong order, then put right by dragging the handle.
    page.wait_for_selector("body[data-trial-ready]")
    data, trial = current(page)
    assert trial.item == chosen[0] and not data["practice"]
    truth = steps_of(trial.item)
    page.click("#add-step")
    fill_row(page, 0, truth[1])
    fill_row(page, 1, truth[0])
    for extra in truth[2:]:
        page.click("#add-step")
        fill_row(page, page.locator("#steps li.step").count() - 1, extra)
    handles = page.locator("#steps li.step .handle")
    handles.nth(1).drag_to(handles.nth(0), target_position={"x": 5, "y": 2})
    assert row_steps(page)[:2] == [
        [str(truth[0]["obj_idx"]), truth[0]["attr"]],
        [str(truth[1]["obj_idx"]), truth[1]["attr"]],
    ]
    # The rows have slid into place (SortableJS animates the move) before the picture is taken.
    page.wait_for_function(
        "() => [...document.querySelectorAll('#steps li.step')]"
        ".every(r => !r.getAnimations().length && !r.style.transform)"
    )
    keep(screenshot, "humantest-trance-trial")
    # Nothing that reached the browser so far holds this trial's answer.
    assert bodies
    for body in bodies:
        assert '"transformations": ' not in body and '"truth": ' not in body
        for step in truth:
            assert json.dumps(step)[1:-1] not in body
    # The network drops the first submit: the tester is told, nothing is stored, the answer stays.
    page.route("**/answer/", lambda route: route.abort())
    page.click("#submit")
    expect(page.locator("#problem")).to_contain_text("could not be reached")
    assert Trial.objects.get(pk=trial.pk).status == Trial.Status.SERVED
    page.unroute("**/answer/")
    page.click("#submit")
    page.wait_for_selector("#result:not([hidden])")
    assert page.locator("#verdict").text_content() == "Correct"
    assert page.locator("#why").text_content() == "Your steps lead exactly to the final scene."
    keep(screenshot, "humantest-trance-result")
    trial.refresh_from_db()
    assert trial.answer == truth and trial.status == Trial.Status.ANSWERED
    page.click("#next")

    # Trial 2: reordered from the keyboard (Alt+Up on the focused row).
    page.wait_for_selector("body[data-trial-ready]")
    data, trial = current(page)
    truth = steps_of(trial.item)
    page.click("#add-step")
    fill_row(page, 0, truth[1])
    fill_row(page, 1, truth[0])
    for extra in truth[2:]:
        page.click("#add-step")
        fill_row(page, page.locator("#steps li.step").count() - 1, extra)
    page.locator("#steps li.step").nth(1).focus()
    page.keyboard.press("Alt+ArrowUp")
    assert row_steps(page)[0] == [str(truth[0]["obj_idx"]), truth[0]["attr"]]
    page.click("#submit")
    page.wait_for_selector("#result:not([hidden])")
    trial.refresh_from_db()
    assert trial.answer == truth
    # Pause between trials, and come back (another day, as far as the server cares).
    page.click("#pause")
    page.wait_for_selector("#my-tests")
    assert "Paused" in page.locator("#my-tests").text_content()
    assert TestSession.objects.get(plan=plan, tester=tester).status == TestSession.Status.PAUSED
    page.click("#my-tests button:has-text('Resume')")

    # Trial 3: a reload in the middle gives the same trial with the same start time.
    page.wait_for_selector("body[data-trial-ready]")
    data, trial = current(page)
    started = trial.served_at
    fill_row(page, 0, steps_of(trial.item)[0])
    page.reload()
    page.wait_for_selector("body[data-trial-ready]")
    again, trial = current(page)
    assert again["trial"] == data["trial"] and again["served_at"] == data["served_at"]
    assert trial.served_at == started and again["remaining_ms"] <= data["remaining_ms"]
    # The unfinished answer came back with the page (the draft is kept in the browser).
    step = steps_of(trial.item)[0]
    assert row_steps(page) == [[str(step["obj_idx"]), step["attr"]]]
    page.click("#submit")
    page.wait_for_selector("#result:not([hidden])")
    assert page.locator("#verdict").text_content() == "Correct"
    page.click("#next")

    # Trial 4: the time runs out (its deadline is brought forward to a few seconds from now).
    page.wait_for_selector("body[data-trial-ready]")
    data, trial = current(page)
    Trial.objects.filter(pk=trial.pk).update(deadline=timezone.now() + timedelta(seconds=3))
    page.reload()
    page.wait_for_selector("body[data-trial-ready]")
    page.wait_for_selector("#result:not([hidden])", timeout=15000)
    assert page.locator("#verdict").text_content() == "Time is up"
    trial.refresh_from_db()
    assert trial.status == Trial.Status.TIMED_OUT and trial.answer is None
    page.click("#next")

    page.wait_for_selector("#summary")
    assert "3 of 4" in page.locator("#summary").text_content()
    keep(screenshot, "humantest-finished")
    session = TestSession.objects.get(plan=plan, tester=tester)
    assert session.status == TestSession.Status.FINISHED
    assert session.submission.predictions.count() == 4

    page.goto("/test/history/")
    assert page.locator("#history tbody tr").count() == 5  # 4 trials and the practice
    assert "0.750" in page.locator("#totals").text_content()
    keep(screenshot, "humantest-history")

    # The researcher's side: the plan's results, with the tester's row and the pooled one.
    researcher = make_user("rita", "researcher")
    page.context.clear_cookies()
    log_in(page, researcher.username, PASSWORD)
    page.goto(f"/test/plans/{plan.pk}/")
    tester_row = page.locator("#testers tbody tr").first
    assert "tessa" in tester_row.text_content() and "0.750" in tester_row.text_content()
    assert page.locator("#metrics tr.human").count() == 1
    keep(screenshot, "humantest-plan-results")
    page.goto("/test/plans/")
    assert plan.name in page.locator("#plans").text_content()
    page.click("text=New test plan")
    page.fill("#id_name", "TRANCE View, second group")
    page.select_option("#id_dataset", str(trance_dataset.pk))
    page.select_option("#id_setting", "view")
    page.fill("#id_row_label", "Human (group 2)")
    page.fill("#id_items_per_tester", "6")
    page.select_option("#id_balance_by", "camera")
    page.fill("#id_practice_items", "0, 999")
    page.fill("#id_time_limit_s", "90")
    page.check(f"#plan-form input[name=testers][value='{tester.pk}']")
    keep(screenshot, "humantest-plan-form")
    page.click("#plan-form button[type=submit]")
    assert "no item 999" in page.locator("#field-practice_items").text_content()  # refused, named
    assert TestPlan.objects.count() == 1
    page.fill("#id_practice_items", "0")
    page.click("#plan-form button[type=submit]")
    page.wait_for_selector("#testers")
    second = TestPlan.objects.get(name="TRANCE View, second group")
    assert (
        second.setting == "view" and second.balance_by == "camera" and list(second.testers.all()) == [tester]
    )


def test_the_directions_cannot_be_misread_behind_is_toward_the_camera(page, screenshot, trance_dataset):
    """The brief pictures TRANCE's directions, the trial's top view writes them on their sides, the
    answer's direction menu shows each with its arrow, and a practice answer that leaves a moved
    object in place is told which way it went and that TRANCE calls it "behind"."""
    from humantest.trials import trial_for

    tester = make_user("tomas", "tester")
    (practice,) = trial_for("trance").suggested_practice(trance_dataset.items.all(), 1)
    item = trance_dataset.items.get(external_id=practice)
    assert any(
        step["val"][0] == "behind"
        for step in item.ground_truth["transformations"]
        if step["attr"] == "position"
    )
    plan = TestPlan.objects.create(
        name="TRANCE directions",
        dataset=trance_dataset,
        setting="event",
        brief="Find the transformations.",
        guidance="Check each object's position in the top view.",
        draw="fixed",
        fixed_items=[item.external_id for item in trance_dataset.items.exclude(external_id=practice)[:1]],
        practice_items=[practice],
        time_limit_s=120,
    )
    plan.testers.add(tester)
    log_in(page, tester.username, PASSWORD)
    page.goto("/test/")
    page.click("#my-tests button:has-text('Open')")
    figure = page.locator("#trance-directions")
    expect(figure).to_be_visible()
    expect(figure.locator("figcaption")).to_contain_text(
        "moves an object toward the centre camera, toward you"
    )
    keep(screenshot, "humantest-trance-directions-brief")

    page.click("#practice")
    page.wait_for_selector("body[data-trial-ready]")
    expect(page.locator("#diagram .compass [data-direction=behind]")).to_have_text("↓ behind")
    expect(page.locator("#diagram .compass [data-direction=front]")).to_have_text("↑ front")
    expect(page.locator("#directions-note")).to_contain_text("behind = toward the centre camera")
    row = page.locator("#steps li.step").first
    row.locator(".attr").select_option("position")
    options = row.locator(".direction option").all_text_contents()
    assert "↓ behind" in options and "↑ front" in options
    assert "↘ behind-right" in options
    # A wrong answer: the moved object's position stays as it was.
    row.locator(".obj").select_option("0")
    row.locator(".direction").select_option(
        "left" if item.payload["initial"]["objects"][0]["position"][1] > -30 else "right"
    )
    row.locator(".distance").select_option("1")
    page.click("#submit")
    page.wait_for_selector("#result:not([hidden])")
    expect(page.locator("#why")).to_contain_text(
        "toward the centre camera, toward you (down in the top view)"
    )
    expect(page.locator("#why")).to_contain_text("TRANCE calls that “behind”")
    keep(screenshot, "humantest-trance-directions-lesson")
