"""Annotation in a real browser: an annotator draws and writes, a reviewer fixes, a second annotator
works blind, the researcher reads the agreement; and the Chinese interface."""

import pytest
from playwright.sync_api import expect

from annotation import services
from annotation.models import Assignment, QAPair
from tests.annotation.conftest import demo_stevqa, demo_stevqa_files, people  # noqa: F401 - fixtures
from tests.e2e.conftest import for_docs, log_in
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def every_image_twice(demo_stevqa, people, settings):  # noqa: F811 - fixtures
    settings.ANNOTATION_OCR_BUDGET_S = 0  # the OCR check has tests of its own
    return services.create_project(
        dataset=demo_stevqa,
        name="Signs",
        created_by=people["res"],
        pairs_per_item=2,
        overlap=1.0,
        annotators=[people["ann"], people["bob"]],
        reviewers=[people["rev"]],
    )


def corners(evidence):
    values = [float(v) for v in evidence]
    return list(zip(values[0::2], values[1::2], strict=True))


def click_image(page, x, y):
    point = screen(page, x, y)
    page.mouse.click(point["x"], point["y"])


def screen(page, x, y):
    return page.evaluate("([x, y]) => window.yardstickEditor.imageToScreen(x, y)", [x, y])


def draw(page, evidence, *, zoom_after_two=False):
    page.keyboard.press("d")
    points = corners(evidence)
    for index, (x, y) in enumerate(points):
        if zoom_after_two and index == 2:
            # Zoom and pan in the middle of a drawing: the next corners still land where aimed.
            at = screen(page, x, y)
            page.mouse.move(at["x"], at["y"])
            page.mouse.wheel(0, -240)
            page.wait_for_timeout(100)
            at = screen(page, x, y)
            page.mouse.move(at["x"] + 60, at["y"] + 60)
            page.mouse.down()
            page.mouse.move(at["x"] + 30, at["y"] + 50, steps=5)
            page.mouse.up()
        click_image(page, x, y)


def quad(page, index):
    return page.evaluate("(i) => window.yardstickEditor.quad(i)", index)


def shot(page, name):
    from tests.e2e.conftest import SCREENSHOTS

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    for_docs(path)


def test_annotate_review_second_opinion_and_agreement(browser, live_server, every_image_twice, people):  # noqa: F811
    project = every_image_twice
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1400, "height": 950})
    page = context.new_page()
    page.set_default_timeout(15000)
    log_in(page, "ann", PASSWORD)
    page.goto("/annotate/")
    page.click("#work-projects a.button")
    page.wait_for_selector("#take-next:focus")
    page.keyboard.press("Enter")  # one key for the next task
    page.wait_for_selector('body[data-annotation-ready="1"]')
    held = Assignment.objects.get(annotator=people["ann"], status=Assignment.Status.LEASED)
    truth = held.task.item.ground_truth["annotation"][0]

    # Zoom with the wheel before drawing, zoom and pan mid-way: the corners land on the aimed pixels.
    at = screen(page, *corners(truth["evidence"])[0])
    page.mouse.move(at["x"], at["y"])
    page.mouse.wheel(0, -200)
    page.wait_for_timeout(100)
    draw(page, truth["evidence"], zoom_after_two=True)
    zoom = page.evaluate("window.yardstickEditor.zoom()")
    assert quad(page, 0) == pytest.approx([float(v) for v in truth["evidence"]], abs=1.0), zoom
    # Drag a corner afterwards.
    page.keyboard.press("0")
    x, y = corners(truth["evidence"])[1]
    start, end = screen(page, x, y), screen(page, x + 6, y - 4)
    page.mouse.move(start["x"], start["y"])
    page.mouse.down()
    page.mouse.move((start["x"] + end["x"]) / 2, (start["y"] + end["y"]) / 2, steps=3)
    page.mouse.move(end["x"], end["y"], steps=3)
    page.mouse.up()
    moved = quad(page, 0)
    assert moved[2] == pytest.approx(x + 6, abs=1.5) and moved[3] == pytest.approx(y - 4, abs=1.5)

    # A Chinese yes/no question is refused, in words, beside the pair; nothing is stored.
    first = page.locator("#pairs > li.pair").nth(0)
    first.locator(".pair-question").fill("这是银行吗？")
    first.locator(".pair-answer").fill(truth["answer"])
    page.keyboard.press("Control+Enter")
    error = first.locator('.pair-errors li.error[data-code="yes_no_question"]')
    error.wait_for()
    assert "yes/no" in error.inner_text().lower()
    assert not QAPair.objects.exists()

    # A question of each language, the second about the same text.
    chinese, english = ("这个牌子上写的是什么？", "What is written on this sign?")
    first.locator(".pair-question").fill(chinese)
    assert first.locator(".pair-language").get_attribute("data-language") == "ch"
    page.keyboard.press("Escape")
    page.keyboard.press("n")
    second = page.locator("#pairs > li.pair").nth(1)
    second.locator(".pair-question").fill(english)
    second.locator(".pair-answer").fill(truth["answer"])
    page.keyboard.press("Escape")
    draw(page, truth["evidence"])
    assert second.locator(".pair-language").get_attribute("data-language") == "en"
    page.wait_for_selector('#save-status[data-state="saved"]')
    shot(page, "annotation-author")

    # Reload: the draft comes back from the server, text and corners.
    page.reload()
    page.wait_for_selector('body[data-annotation-ready="1"]')
    assert page.locator("#pairs > li.pair").count() == 2
    assert page.locator("#pairs > li.pair .pair-question").nth(1).input_value() == english
    assert quad(page, 0)[2] == pytest.approx(x + 6, abs=1.5)

    page.keyboard.press("Control+Enter")
    page.wait_for_function(f"() => document.querySelector('#author-page').dataset.assignment != '{held.pk}'")
    held.refresh_from_db()
    assert held.status == Assignment.Status.SUBMITTED
    assert sorted(held.pairs.values_list("language", flat=True)) == ["ch", "en"]
    context.close()

    # The reviewer moves a corner of the first pair and saves the fix as a new version.
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1400, "height": 950})
    page = context.new_page()
    page.set_default_timeout(15000)
    log_in(page, "rev", PASSWORD)
    page.goto(f"/annotate/projects/{project.pk}/review/")
    page.wait_for_selector('body[data-annotation-ready="1"]')
    pair = QAPair.objects.get(pk=page.url.rstrip("/").rsplit("/", 1)[-1])
    cx, cy = corners(pair.evidence)[0]
    start, end = screen(page, cx, cy), screen(page, cx - 5, cy - 5)
    page.mouse.move(start["x"], start["y"])
    page.mouse.down()
    page.mouse.move(end["x"], end["y"], steps=4)
    page.mouse.up()
    shot(page, "annotation-review")
    page.keyboard.press("f")
    page.wait_for_function(f"() => !location.pathname.endsWith('/{pair.pk}/')")
    pair.refresh_from_db()
    assert pair.review == QAPair.Review.FIXED and pair.version == 2
    assert pair.evidence[0] == pytest.approx(cx - 5, abs=1.5)
    assert [r.kind for r in pair.revisions.all()] == ["written", "fixed"]
    # The next pair's page says what became of this one; opened again, this one shows its review.
    expect(page.locator(".messages")).to_contain_text(f"“{pair.question}”: Fixed by a reviewer.")
    page.goto(f"/annotate/review/pairs/{pair.pk}/")
    expect(page.locator("#already-reviewed")).to_contain_text("Already reviewed: Fixed by a reviewer by rev")
    context.close()

    # The second annotator answers the first one's questions without seeing their answers.
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1400, "height": 950})
    page = context.new_page()
    page.set_default_timeout(15000)
    log_in(page, "bob", PASSWORD)
    page.goto(f"/annotate/projects/{project.pk}/work/")
    page.wait_for_selector("#take-next:focus")
    page.keyboard.press("Enter")
    page.wait_for_selector('body[data-annotation-ready="1"]')
    assert page.locator("#author-page").get_attribute("data-round") == "2"
    questions = page.locator("#pairs .pair-question-text").all_inner_texts()
    assert questions == [chinese, english]
    assert all(
        v == "" for v in page.locator("#pairs .pair-answer").evaluate_all("els => els.map(e => e.value)")
    )
    assert quad(page, 0) is None and quad(page, 1) is None
    for index, answer in enumerate((truth["answer"], truth["answer"].lower())):
        row = page.locator("#pairs > li.pair").nth(index)
        row.locator(".pair-answer").click()
        row.locator(".pair-answer").fill(answer)
        page.keyboard.press("Escape")
        page.keyboard.press(str(index + 1))
        draw(page, [float(v) + 3 for v in truth["evidence"]])
    page.keyboard.press("Control+Enter")
    page.wait_for_function(
        "() => document.querySelector('#author-page').dataset.round != '2'"
        " || document.querySelector('#no-more:not([hidden])')"
    )
    assert Assignment.objects.filter(annotator=people["bob"], round=2, status="submitted").count() == 1
    context.close()

    # The researcher sees the pair's agreement on the project page.
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1400, "height": 950})
    page = context.new_page()
    log_in(page, "res", PASSWORD)
    page.goto(f"/annotate/projects/{project.pk}/")
    table = page.locator("#agreement table").first
    first_row = table.locator("tbody tr").first.inner_text()
    assert first_row.startswith("all") and "\t2\t" in first_row
    assert "ann & bob" in table.inner_text()
    shot(page, "annotation-project")
    context.close()


def test_the_chinese_interface(page, every_image_twice):
    log_in(page, "ann", PASSWORD)
    page.wait_for_url(lambda url: "/accounts/login/" not in url)  # the log-in page has the switch too
    with page.expect_navigation():
        page.select_option("#language-form select", "zh-hans")
    page.goto("/annotate/")
    assert page.locator("html").get_attribute("lang") == "zh-hans"
    assert "你的标注工作" in page.inner_text("h1")
    page.click("#work-projects a.button")
    page.wait_for_selector("#take-next:focus")
    page.keyboard.press("Enter")
    page.wait_for_selector('body[data-annotation-ready="1"]')
    page.locator("#pairs .pair-question").first.fill("是不是药店")
    page.locator("#pairs .pair-answer").first.fill("药店")
    page.keyboard.press("Control+Enter")
    error = page.locator('.pair-errors li.error[data-code="yes_no_question"]').first
    error.wait_for()
    assert "是非" in error.inner_text() or "是/否" in error.inner_text()
    assert "提交" in page.inner_text("#submit")
    shot(page, "annotation-author-zh")


def test_a_researcher_makes_a_project_from_the_form(page, demo_stevqa, people):  # noqa: F811 - fixtures
    log_in(page, "res", PASSWORD)
    page.wait_for_selector("#research")  # the researcher's home page
    page.goto("/annotate/projects/")
    page.click("text=New annotation project")
    page.fill("#id_name", "Street signs")
    page.select_option("#id_dataset", str(demo_stevqa.pk))
    page.fill("#id_overlap", "0.5")
    page.check(f"#field-annotators input[value='{people['ann'].pk}']")
    page.click("main form button[type=submit]")
    # One annotator cannot give second opinions: said beside the field, nothing made.
    error = page.locator("#field-annotators .error")
    assert "two annotators" in error.inner_text()
    assert not services.Project.objects.exists()
    page.check(f"#field-annotators input[value='{people['bob'].pk}']")
    page.click("main form button[type=submit]")
    page.wait_for_selector("#progress")
    project = services.Project.objects.get(name="Street signs")
    assert page.url.rstrip("/").endswith(f"/annotate/projects/{project.pk}")
    assert (
        f"{project.tasks.count()} images, {project.tasks.filter(opinions=2).count()} of them"
        in page.inner_text("#progress")
    )
    page.goto("/annotate/projects/")
    assert "Street signs" in page.inner_text("table")


def test_at_1280_by_800_the_image_fits_and_adding_pairs_or_drawing_never_scrolls_the_page(
    browser,
    live_server,
    every_image_twice,
    people,  # noqa: F811
):
    project = every_image_twice
    project.instructions = "Ask about the text on the signs."
    project.save()
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(15000)
    log_in(page, "ann", PASSWORD)
    page.goto(f"/annotate/projects/{project.pk}/work/")
    # The start page shows the instructions once, open.
    expect(page.locator("text=Ask about the text on the signs.")).to_have_count(1)
    page.wait_for_selector("#take-next:focus")
    page.keyboard.press("Enter")
    page.wait_for_selector('body[data-annotation-ready="1"]')
    canvas = page.locator(".quad-canvas").bounding_box()
    assert canvas["y"] + canvas["height"] <= 800, canvas
    for key in ("n", "n", "n", "n", "d"):
        page.keyboard.press("Escape")
        page.keyboard.press(key)
        assert page.evaluate("scrollY") == 0, key  # the image stays where the annotator draws
    # The new pair is shown in its list, which scrolled by itself, and Submit is on screen.
    last = page.locator("#pairs > li.pair").last.bounding_box()
    listed = page.locator("#pairs").bounding_box()
    assert listed["y"] <= last["y"] and last["y"] + last["height"] <= listed["y"] + listed["height"] + 1
    submit = page.locator("#submit").bounding_box()
    assert submit["y"] + submit["height"] <= 800, submit
    context.close()
