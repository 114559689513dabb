"""Validation in a real browser: a validator judges generated CRIC items from the keyboard, a second
one judges the overlap items blind, the researcher reads the error rate, the agreement, the failing
steps and the rejected items; and a CLEVR-Ref+ expression checked against its marked objects."""

import json

import pytest

from annotation.models import Assignment
from benchmarks.services import import_dataset
from tests.e2e.conftest import SCREENSHOTS, for_docs, log_in
from tests.factories import PASSWORD, make_user
from validation import services
from validation.checks import check_for
from validation.models import Verdict

pytestmark = pytest.mark.django_db(transaction=True)

READY = "() => window.yardstickValidation && document.querySelector('#item-label').textContent !== ''"
SAVED = """() => {
  const s = window.yardstickValidation.state();
  return !s.dirty && !s.saving && document.querySelector('#save-status').dataset.state === 'saved';
}"""


@pytest.fixture(scope="module")
def cric_files(tmp_path_factory):
    """Its own two images (seed 4), not the shared cric_files: the walk-through below relies on the
    items this seed gives (the first item drawn has a program of two steps or more whose outputs
    differ from step to step)."""
    from plugins.cric.demo import generate_demo

    return generate_demo(tmp_path_factory.mktemp("cric-validation"), images=2, seed=4)


@pytest.fixture
def cric_dataset(cric_files):
    return import_dataset(
        benchmark="cric",
        data=cric_files.questions.read_bytes(),
        name="cric validation",
        split="val",
        images_dir=cric_files.images_dir,
        scenes_data=cric_files.scene_graphs.read_bytes(),
        scenes_source=cric_files.scene_graphs.name,
    )


def shot(page, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    for_docs(path)


def open_as(browser, live_server, username):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1400, "height": 950})
    page = context.new_page()
    page.set_default_timeout(15000)
    log_in(page, username, PASSWORD)
    page.wait_for_selector("form[action*=logout]", state="attached")
    return context, page


def take_item(page, plan):
    page.goto(f"/validate/plans/{plan.pk}/work/")
    page.click("#take-form button")
    page.wait_for_function(READY)


def wait_for_next_item(page, previous_label):
    page.wait_for_function(
        "(label) => document.querySelector('#item-label').textContent !== label", arg=previous_label
    )


def held(user):
    return Assignment.objects.select_related("task__item").get(
        annotator=user, status=Assignment.Status.LEASED
    )


def box_ids(page, kind):
    """The object ids of the boxes drawn as `kind` (marked, output, other), from their titles."""
    return page.eval_on_selector_all(
        f"#scene-boxes rect.box.{kind}",
        "rects => rects.map(r => r.querySelector('title').textContent.split('#').pop())",
    )


def pressed(page, question):
    return page.eval_on_selector_all(
        f"#question-{question} button.choice.pressed", "buttons => buttons.map(b => b.dataset.value)"
    )


def focused(page):
    return page.get_attribute("#questions fieldset.question.focused", "data-name")


def test_two_validators_judge_cric_items_and_the_researcher_reads_the_report(
    browser, live_server, cric_dataset
):
    v1, v2 = make_user("vera", "reviewer"), make_user("walt", "reviewer")
    make_user("rita", "researcher")
    plan = services.create_plan(
        dataset=cric_dataset,
        name="CRIC check",
        strata=["question_type"],
        sample_size=6,
        overlap=0.5,
        validators_per_overlap=2,
        validators=[v1, v2],
    )
    check = check_for("cric")

    # --- the first validator: the program step by step, a wrong step, a refused submit, keys ---
    context, page = open_as(browser, live_server, "vera")
    take_item(page, plan)
    first = held(v1)
    item = first.task.item
    view = check.view(item)
    steps = view["steps"]
    assert len(steps) >= 2
    label = page.inner_text("#item-label")
    assert label.startswith(f"item {item.external_id}")
    facts = page.inner_text("#facts")
    assert item.payload["question"] in facts and str(item.ground_truth["answer"]) in facts
    # The image arrives after the page says it is ready (a busy machine is slow to send it).
    image = page.locator("#scene-image").element_handle()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image, timeout=30000)
    assert sorted(box_ids(page, "marked")) == sorted(str(i) for i in view["marked"])
    assert page.locator("#steps li").count() == len(steps)
    assert focused(page) == "answer_correct"

    # ArrowRight walks the program: the selected step's output objects are the ones drawn as output.
    drawn = []
    for index, step in enumerate(steps):
        if index:
            page.keyboard.press("ArrowRight")
        assert page.get_attribute(f"#steps li:nth-child({index + 1})", "class").split() == [
            "step",
            "selected",
        ]
        shown = page.evaluate(
            "(i) => window.yardstickValidation.state().task.view.steps[i].output.length", index
        )
        assert page.locator("#scene-boxes rect.box.output").count() == len(step["output"]) == shown
        assert sorted(box_ids(page, "output")) == sorted(str(i) for i in step["output"])
        drawn.append(sorted(box_ids(page, "output")))
    assert len({tuple(ids) for ids in drawn}) > 1, "the drawn boxes change from step to step"
    page.keyboard.press("ArrowRight")  # past the last step: it stays selected
    assert page.locator("#steps li.selected").get_attribute("data-index") == str(len(steps) - 1)
    for _ in range(len(steps) - 2):
        page.keyboard.press("ArrowLeft")
    assert page.locator("#steps li.selected").get_attribute("data-index") == "1"
    page.keyboard.press("w")
    assert page.locator("#steps li.wrong").get_attribute("data-index") == "1"
    assert page.locator("#steps li.wrong .wrong-flag").inner_text() == "wrong"
    assert page.inner_text("#question-wrong_step .chosen-step") == f"2. {steps[1]['label']}"

    # Submitting without an answer is refused, naming the question; nothing is stored.
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#form-errors li")
    error = page.inner_text("#form-errors")
    assert "answer_correct" in error and "Is the answer correct?" in error
    assert Verdict.objects.count() == 0
    assert held(v1).pk == first.pk
    assert focused(page) == "answer_correct"

    # n: the answer is wrong; y: the grounding is right; 4: natural enough; c: a comment.
    comment = "The answer names the wrong object."
    page.keyboard.press("n")
    assert pressed(page, "answer_correct") == ["false"] and focused(page) == "grounding_correct"
    page.keyboard.press("y")
    assert pressed(page, "grounding_correct") == ["true"] and focused(page) == "natural"
    page.keyboard.press("4")
    assert pressed(page, "natural") == ["4"] and focused(page) == "wrong_step"
    page.keyboard.press("c")
    assert page.evaluate("document.activeElement.id") == "comment"
    page.keyboard.type(comment)
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement.id") != "comment"
    page.keyboard.press("ArrowUp")
    assert focused(page) == "natural"

    # The draft is saved as one goes: a reload brings it all back from the server.
    page.wait_for_function(SAVED)
    assert page.inner_text("#save-status") == "Saved"
    first.refresh_from_db()
    assert first.draft["answers"]["comment"] == comment
    shot(page, "validation-work")
    page.reload()
    page.wait_for_function(READY)
    assert pressed(page, "answer_correct") == ["false"]
    assert pressed(page, "grounding_correct") == ["true"]
    assert pressed(page, "natural") == ["4"]
    assert page.input_value("#comment") == comment
    assert page.locator("#steps li.wrong").get_attribute("data-index") == "1"

    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#flash:not([hidden])")
    assert page.inner_text("#flash").startswith("Submitted")
    wait_for_next_item(page, label)
    assert page.inner_text("#form-errors") == ""
    verdict = Verdict.objects.get(validator=v1)
    assert verdict.sampled.item_id == item.pk and verdict.round == 1 and verdict.error is True
    assert verdict.answers == {
        "answer_correct": False,
        "grounding_correct": True,
        "natural": 4,
        "wrong_step": 1,
        "comment": comment,
    }

    # The next item is the second overlap item: all fine, from the keyboard alone.
    second = held(v1)
    assert second.task.opinions == 2
    label = page.inner_text("#item-label")
    assert label.startswith(f"item {second.task.item.external_id}")
    assert page.locator("#steps li.selected").get_attribute("data-index") == "0"
    assert page.locator("#questions button.pressed").count() == 0
    for key in ("y", "y", "5"):
        page.keyboard.press(key)
    page.keyboard.press("Control+Enter")
    wait_for_next_item(page, label)
    assert Verdict.objects.get(validator=v1, sampled__item=second.task.item).error is False
    context.close()

    # --- the second validator: second opinions first, blind to the first validator's answers ---
    context, page = open_as(browser, live_server, "walt")
    take_item(page, plan)
    again = held(v2)
    assert again.task_id == first.task_id and again.round == 2
    label = page.inner_text("#item-label")
    assert label.startswith(f"item {item.external_id}") and "blind" in label
    assert page.locator("#questions button.pressed").count() == 0
    assert page.input_value("#comment") == ""
    assert page.locator("#steps li.wrong").count() == 0
    assert page.inner_text("#question-wrong_step .chosen-step") == "No step is wrong"
    assert comment not in page.content()
    # The answer is right, says this one, but the highlighted objects are not the ones asked about.
    for key in ("y", "n", "2"):
        page.keyboard.press(key)
    page.keyboard.press("Control+Enter")
    wait_for_next_item(page, label)
    label = page.inner_text("#item-label")
    assert label.startswith(f"item {second.task.item.external_id}") and "blind" in label
    for key in ("y", "y", "5"):
        page.keyboard.press(key)
    page.keyboard.press("Control+Enter")
    wait_for_next_item(page, label)
    assert "blind" not in page.inner_text("#item-label")
    mine = Verdict.objects.get(validator=v2, sampled__item=item)
    assert mine.error is True and mine.round == 2
    assert mine.answers["answer_correct"] is True and mine.answers["grounding_correct"] is False
    assert mine.answers["wrong_step"] is None
    context.close()

    # --- the researcher's report ---
    context, page = open_as(browser, live_server, "rita")
    page.goto(f"/validate/plans/{plan.pk}/")
    page.wait_for_selector("#estimate")
    assert 0 < float(page.inner_text("#error-rate")) < 1
    assert "from 1 error in 2 items checked" in page.inner_text("#estimate")
    strata = page.inner_text("#strata")
    assert item.payload["question_type"] in strata
    assert page.eval_on_selector("#strata img.plot", "img => img.complete && img.naturalWidth") > 0

    rows = page.locator("#agreement-table tbody tr")
    questions = [q.label for q in check.agreement_questions()]
    assert rows.count() == len(questions)
    for index, question in enumerate(questions):
        cells = rows.nth(index).locator("td").all_inner_texts()
        assert cells[0] == question
        assert cells[-2:] == ["2", "2"], cells  # two items, two validators
    answer_row = rows.nth(0).locator("td").all_inner_texts()
    assert answer_row[1].startswith("0.500")  # agreed on one of the two items

    failing = check.step_kind(item, 1)
    failures = page.locator("#failures table").first.locator("tbody tr").first.locator("td").all_inner_texts()
    assert failures[:2] == [failing, "1"]

    rejected = page.locator("#rejected figure.rejected-item")
    assert rejected.count() == 1
    caption = rejected.locator("figcaption").inner_text()
    assert f"item {item.external_id}" in caption and "2 validators" in caption and comment in caption
    assert "grounding_correct" in caption and "answer_correct" in caption
    image = rejected.locator("img")
    image.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
    shot(page, "validation-report")
    context.close()


def test_a_clevrref_expression_is_checked_against_its_marked_objects(page, tmp_path):
    from plugins.clevrref.expressions import generate

    files = generate(tmp_path / "clevrref", images=1, seed=3, split="val")  # the demo's generator, one scene
    dataset = import_dataset(
        benchmark="clevrref",
        data=files.refexps_file.read_bytes(),
        name="clevrref validation",
        split="val",
        images_dir=files.images_dir,
        scenes_data=files.scenes_file.read_bytes(),
        scenes_source=files.scenes_file.name,
    )
    validator = make_user("vera", "reviewer")
    plan = services.create_plan(
        dataset=dataset, name="Expressions", sample_size=2, overlap=0, validators=[validator]
    )
    check = check_for("clevrref")
    log_in(page, "vera", PASSWORD)
    page.wait_for_selector("form[action*=logout]", state="attached")
    take_item(page, plan)

    for answer in ("n", "y"):
        assignment = held(validator)
        item = assignment.task.item
        view = check.view(item)
        label = page.inner_text("#item-label")
        assert label == f"item {item.external_id}"
        assert item.payload["refexp"] in page.inner_text("#facts")
        assert page.inner_text("#marked-label") == "referred objects"
        assert page.locator("#scene-boxes rect.box.marked").count() == len(view["marked"]) > 0
        assert sorted(box_ids(page, "marked")) == sorted(str(i) for i in view["marked"])
        legend = page.inner_text("#question-refers_exactly legend")
        assert legend == "Does the expression refer to exactly the marked objects?"
        page.keyboard.press(answer)
        assert pressed(page, "refers_exactly") == [json.dumps(answer == "y")]
        page.keyboard.press("3")
        page.keyboard.press("Control+Enter")
        if answer == "n":
            page.wait_for_selector("#flash:not([hidden])")
            wait_for_next_item(page, label)
        else:  # nothing is left: the page goes back to the queue
            page.wait_for_selector("#take-form")
        verdict = Verdict.objects.get(assignment=assignment)
        assert verdict.answers["refers_exactly"] is (answer == "y") and verdict.answers["natural"] == 3
        assert verdict.error is (answer == "n")

    # The queue page counts what was done.
    assert "You have checked 2 items" in page.inner_text("#take")
    assert not Assignment.objects.filter(annotator=validator, status=Assignment.Status.LEASED).exists()
