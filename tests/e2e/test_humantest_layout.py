"""What people see of the human-test pages at 1280 x 800, in headless Chromium: CLEVR-Ref+ object
numbers that never hide one another, TRANCE step rows laid out alike with whole object names, the
plan form offering the chosen dataset's benchmark's settings and balancing only, deleting a plan
from its page, and the tester's history newest first. Screenshots go to var/screenshots/ (and
docs/screenshots/ with `make screenshots`)."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from benchmarks.services import import_dataset
from evaluation.selectors import report_table
from humantest import answers, clock, sessions
from humantest.models import TestPlan, Trial
from tests.e2e.conftest import for_docs, log_in
from tests.factories import PASSWORD, make_user, steps_of

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

WIDTH, HEIGHT = 1280, 800


def at_1280(page):
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})


def keep(screenshot, name):
    for_docs(screenshot(name))


def overlap(a, b) -> float:
    """The area two {x, y, width, height} rectangles share."""
    width = min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"])
    height = min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"])
    return max(0.0, width) * max(0.0, height)


# --- CLEVR-Ref+: object numbers ------------------------------------------------------------------------

#: Boxes (x, y, w, h on the 480 x 320 image) that crowd each other's numbers: three sharing a
#: top-left corner, boxes meeting corner to corner or side by side, small ones at the image's
#: corners and edges, and two small ones overlapping. Twelve, so two-digit numbers too.
CROWDED = [
    [100, 100, 80, 80],
    [100, 100, 40, 40],
    [100, 100, 20, 60],
    [180, 180, 50, 50],
    [180, 100, 50, 80],
    [0, 0, 30, 30],
    [0, 0, 12, 12],
    [466, 306, 14, 14],
    [300, 50, 10, 10],
    [304, 54, 10, 10],
    [100, 140, 40, 40],
    [140, 100, 40, 40],
]


def test_clevrref_object_numbers_never_hide_one_another(page, screenshot, tmp_path):
    from plugins.clevrref.expressions import generate

    files = generate(tmp_path / "clevrref", images=1, seed=2, split="val")
    dataset = import_dataset(
        benchmark="clevrref",
        data=files.refexps_file.read_bytes(),
        name="crowded",
        split="val",
        images_dir=files.images_dir,
        scenes_data=files.scenes_file.read_bytes(),
        scenes_source=files.scenes_file.name,
    )
    for scene in dataset.scenes.all():
        objects = scene.data["objects"]
        scene.data["objects"] = [objects[index % len(objects)] for index in range(len(CROWDED))]
        scene.data["obj_bbox"] = {str(index + 1): box for index, box in enumerate(CROWDED)}
        scene.save(update_fields=["data"])
    tester = make_user("tess", "tester")
    plan = TestPlan.objects.create(name="Crowded scene", dataset=dataset, items_per_tester=1, seed=1)
    plan.testers.add(tester)
    session = sessions.begin_test(sessions.start_session(plan, tester))

    at_1280(page)
    log_in(page, tester.username, PASSWORD)
    page.goto(f"/test/sessions/{session.pk}/")
    expect(page.locator("body")).to_have_attribute("data-trial-ready", "1")
    tags = page.locator("#boxes text.tag")
    expect(tags).to_have_count(len(CROWDED))
    # Each number's extent on the image as the browser drew it (the SVG's own units: image pixels).
    drawn = page.eval_on_selector_all(
        "#boxes text.tag",
        "nodes => nodes.map(n => { const b = n.getBBox(); return {text: n.textContent, x: b.x, y: b.y, width: b.width, height: b.height}; })",
    )
    assert sorted(int(tag["text"]) for tag in drawn) == list(range(1, len(CROWDED) + 1))
    for index, tag in enumerate(drawn):
        assert tag["width"] > 0 and tag["height"] > 0
        # Inside the image...
        assert tag["x"] >= -0.5 and tag["y"] >= -0.5, tag
        assert tag["x"] + tag["width"] <= 480.5 and tag["y"] + tag["height"] <= 320.5, tag
        # ... inside its own box or just beside it (within a line and a half)...
        x, y, w, h = CROWDED[int(tag["text"]) - 1]
        margin = 1.5 * tag["height"]
        near = {"x": x - margin, "y": y - margin, "width": w + 2 * margin, "height": h + 2 * margin}
        assert overlap(tag, near) == pytest.approx(tag["width"] * tag["height"]), tag
        # ... and over no other number.
        for other in drawn[index + 1 :]:
            assert overlap(tag, other) < 0.5, (tag, other)
    keep(screenshot, "humantest-clevrref-crowded")


# --- TRANCE: the answer builder ------------------------------------------------------------------------


def test_trance_step_rows_line_up_and_show_whole_object_names(page, screenshot, trance_dataset):
    tester = make_user("tessa", "tester")
    items = list(trance_dataset.items.order_by("position"))
    # The scene whose longest object name is longest: the hardest to show whole.
    longest = max(
        items,
        key=lambda item: max(
            len(" ".join(obj[key] for key in ("size", "color", "material", "shape")))
            for obj in item.payload["initial"]["objects"]
        ),
    )
    plan = TestPlan.objects.create(
        name="TRANCE Event layout",
        dataset=trance_dataset,
        setting="event",
        draw="fixed",
        fixed_items=[longest.external_id],
        time_limit_s=600,
    )
    plan.testers.add(tester)
    session = sessions.begin_test(sessions.start_session(plan, tester))

    at_1280(page)
    log_in(page, tester.username, PASSWORD)
    page.goto(f"/test/sessions/{session.pk}/")
    expect(page.locator("body")).to_have_attribute("data-trial-ready", "1")
    objects = longest.payload["initial"]["objects"]
    names = [
        " ".join(objects[index][key] for key in ("size", "color", "material", "shape"))
        for index in range(len(objects))
    ]
    widest = max(range(len(objects)), key=lambda index: len(names[index]))
    # Four steps: the widest object name, a position step (two lists for its value), and two more.
    for _ in range(3):
        page.click("#add-step")
    rows = page.locator("#steps li.step")
    expect(rows).to_have_count(4)
    choices = [(widest, "color"), (0, "position"), (widest, "size"), (len(objects) - 1, "material")]
    for row, (obj, attr) in zip(range(4), choices, strict=True):
        rows.nth(row).locator(".obj").select_option(str(obj))
        rows.nth(row).locator(".attr").select_option(attr)

    # Every row the same height, its lists at the same places as in every other row.
    layout = page.eval_on_selector_all(
        "#steps li.step",
        """rows => rows.map(row => {
            const box = (selector) => { const r = row.querySelector(selector).getBoundingClientRect(); return [Math.round(r.left), Math.round(r.width)]; };
            return { height: Math.round(row.getBoundingClientRect().height), obj: box(".obj"), attr: box(".attr"),
                     value: box(".new-value"), remove: box(".remove") };
        })""",
    )
    assert len({row["height"] for row in layout}) == 1, layout
    for key in ("obj", "attr", "value", "remove"):
        assert len({tuple(row[key]) for row in layout}) == 1, (key, layout)
    # No row is wider than the builder, nor the builder than the trial's card.
    assert page.evaluate(
        "(() => { const card = document.querySelector('#trial').getBoundingClientRect();"
        " return [...document.querySelectorAll('#steps li.step, #objects')].every(n => n.getBoundingClientRect().right <= card.right + 0.5); })()"
    )

    # Every object's name shows whole in the object list, whichever is chosen, and so does every
    # choice of the other lists (a position's direction and steps share the value's place): the
    # text's width, measured in the list's own font, fits inside the list less its padding and arrow.
    fits = page.eval_on_selector_all(
        "#steps li.step select",
        """selects => selects.filter(select => select.offsetParent !== null).flatMap(select => {
            const style = getComputedStyle(select);
            const context = document.createElement('canvas').getContext('2d');
            context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
            const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
            return [...select.options].map(option => ({ list: select.className, text: option.text, width: context.measureText(option.text).width, room }));
        })""",
    )
    object_names = [entry["text"] for entry in fits if entry["list"] == "obj"][: len(names) + 1]
    assert object_names[1:] == [f"{index} · {name}" for index, name in enumerate(names)]
    assert {entry["list"] for entry in fits} == {"obj", "attr", "value", "direction", "distance"}
    for entry in fits:
        assert entry["width"] <= entry["room"], entry
    # The objects table cuts nothing either.
    cut = page.eval_on_selector_all(
        "#objects td, #objects th",
        "cells => cells.filter(c => c.scrollWidth > c.clientWidth).map(c => c.textContent)",
    )
    assert cut == []
    keep(screenshot, "humantest-trance-steps")


# --- the plan form -------------------------------------------------------------------------------------


def visible_options(page, select: str) -> list[str]:
    return page.eval_on_selector_all(
        f"{select} option", "options => options.filter(o => !o.hidden && !o.disabled).map(o => o.textContent)"
    )


def test_the_plan_form_offers_the_chosen_datasets_benchmark_only(page, screenshot, trance_dataset, tmp_path):
    from plugins.cric.demo import generate_demo

    files = generate_demo(tmp_path / "cric", images=1, seed=4)
    cric = import_dataset(
        benchmark="cric",
        data=files.questions.read_bytes(),
        name="cric form",
        split="val",
        images_dir=files.images_dir,
        scenes_data=files.scene_graphs.read_bytes(),
        scenes_source=files.scene_graphs.name,
    )
    researcher = make_user("rita", "researcher")
    tester = make_user("tom", "tester")
    at_1280(page)
    log_in(page, researcher.username, PASSWORD)
    page.goto("/test/plans/new/")
    # No dataset yet: nothing to choose beside it.
    expect(page.locator("#field-setting")).to_be_hidden()
    expect(page.locator("#field-balance_by")).to_be_hidden()

    page.select_option("#id_dataset", str(trance_dataset.pk))
    expect(page.locator("#field-setting")).to_be_visible()
    assert visible_options(page, "#id_setting") == ["Basic", "Event", "View"]
    assert page.locator("#id_setting").input_value() == "basic"  # the first, not a refused "–"
    assert visible_options(page, "#id_balance_by") == ["No balancing", "Number of transformations"]
    page.select_option("#id_setting", "view")  # the final camera is balanced in View only
    assert visible_options(page, "#id_balance_by") == [
        "No balancing",
        "Number of transformations",
        "Final camera (View)",
        "Each item under all three final cameras, in turn across testers (View)",
    ]
    page.select_option("#id_balance_by", "camera")
    keep(screenshot, "humantest-plan-form-trance")
    page.select_option("#id_setting", "event")
    assert page.locator("#id_balance_by").input_value() == ""  # camera went with View

    page.select_option("#id_dataset", str(cric.pk))
    expect(page.locator("#field-setting")).to_be_hidden()  # CRIC has no settings
    assert page.locator("#id_setting").input_value() == ""
    expect(page.locator("#field-balance_by")).to_be_visible()
    assert visible_options(page, "#id_balance_by") == ["No balancing", "Question type"]
    page.select_option("#id_balance_by", "question_type")
    page.fill("#id_name", "Everyday questions")
    page.fill("#id_items_per_tester", "3")
    page.check(f"#plan-form input[name=testers][value='{tester.pk}']")
    keep(screenshot, "humantest-plan-form-cric")
    page.click("#plan-form button[type=submit]")
    page.wait_for_selector("#testers")
    plan = TestPlan.objects.get(name="Everyday questions")
    assert plan.dataset == cric and plan.setting == "" and plan.balance_by == "question_type"


# --- deleting a plan, and the tester's history ---------------------------------------------------------


def test_a_researcher_deletes_a_plan_after_reading_what_goes_with_it(
    page, screenshot, trance_dataset, django_capture_on_commit_callbacks
):
    tester = make_user("tessa", "tester")
    researcher = make_user("rita", "researcher")
    plan = TestPlan.objects.create(
        name="TRANCE Event pilot",
        dataset=trance_dataset,
        setting="event",
        items_per_tester=2,
        time_limit_s=60,
        created_by=researcher,
    )
    plan.testers.add(tester)
    session = sessions.begin_test(sessions.start_session(plan, tester))
    now = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        trial, _ = clock.serve_current_trial(session)
        answers.record_answer(trial.pk, tester, {"steps": steps_of(trial.item)}, {})
        Trial.objects.filter(pk=trial.pk).update(
            served_at=now - timedelta(minutes=6), answered_at=now - timedelta(minutes=5)
        )
        # The second trial ran out of time a minute ago: newer than the answered one, so above it.
        trial, _ = clock.serve_current_trial(session)
        Trial.objects.filter(pk=trial.pk).update(
            served_at=now - timedelta(minutes=2), deadline=now - timedelta(minutes=1)
        )
        clock.serve_current_trial(session)
    assert [row.label for row in report_table(trance_dataset).rows] == ["Human"]

    at_1280(page)
    log_in(page, tester.username, PASSWORD)
    page.goto("/test/history/")
    rows = page.locator("#history tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("timed out")
    expect(rows.nth(1)).to_contain_text("correct")
    expect(rows.nth(0)).to_contain_text("TRANCE · Event")
    expect(page.locator("#totals")).to_contain_text("Event")
    keep(screenshot, "humantest-history-newest-first")
    page.context.clear_cookies()

    log_in(page, researcher.username, PASSWORD)
    page.goto(f"/test/plans/{plan.pk}/")
    page.click("#delete-plan")
    expect(page.locator("h1")).to_contain_text("Delete the test plan “TRANCE Event pilot”?")
    gone = page.locator("#deleted-with")
    expect(gone).to_contain_text("1 tester session (tessa)")
    expect(gone).to_contain_text("2 trials")
    expect(gone).to_contain_text("the pooled row “Human”")
    keep(screenshot, "humantest-plan-delete")
    page.click("#cancel-delete")  # changing one's mind keeps everything
    expect(page.locator("#testers")).to_be_visible()
    assert TestPlan.objects.filter(pk=plan.pk).exists()
    page.click("#delete-plan")
    page.click("#confirm-delete")
    expect(page.locator(".messages")).to_contain_text("Test plan “TRANCE Event pilot” deleted")
    expect(page.locator("#plans")).not_to_contain_text("TRANCE Event pilot")
    assert not TestPlan.objects.filter(pk=plan.pk).exists()
    page.goto(f"/datasets/{trance_dataset.pk}/report/")
    assert report_table(trance_dataset).rows == []
    assert "Human" not in (
        page.locator("table").first.text_content() if page.locator("table").count() else ""
    )
