"""A tester solves one CRIC, one CLEVR-Ref+ and one STE-VQA trial by clicking on the image.

Each test imports a few generated images, invites a tester to a one-trial plan, opens the trial
from the tester's list, checks that an incomplete answer is refused in the page (and nothing is
stored), answers right by clicking boxes or corners, and checks the result panel and the stored
trial and prediction. A reload in the middle of a trial gives back the unfinished answer (the
draft trial.js keeps in the browser's localStorage). Screenshots go to var/screenshots/ (and to docs/screenshots/ with `make screenshots`).
"""

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from benchmarks.services import import_dataset
from humantest.models import TestPlan, TestSession, Trial
from humantest.scoring import unit_for
from humantest.trials import trial_for
from tests.e2e.conftest import for_docs, log_in
from tests.factories import PASSWORD, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

IMAGES_LOADED = (
    "() => [...document.querySelectorAll('#trial img, #comparison img')].every(i => i.naturalWidth > 0)"
)


def invite(dataset, name: str):
    tester = make_user("tess", "tester")
    plan = TestPlan.objects.create(
        name=name, dataset=dataset, setting="", items_per_tester=1, draw="random", seed=3, time_limit_s=600
    )
    plan.testers.add(tester)
    return plan, tester


def open_trial(page, plan: TestPlan, tester) -> Trial:
    """Log in, open the plan from the tester's list, start the test; the trial being shown."""
    log_in(page, tester.username, PASSWORD)
    page.goto("/test/")
    page.locator("#my-tests tbody tr", has_text=plan.name).get_by_role("button", name="Open").click()
    page.click("#begin")
    expect(page.locator("body")).to_have_attribute("data-trial-ready", "1")
    page.wait_for_function(IMAGES_LOADED)
    session = TestSession.objects.get(plan=plan, tester=tester)
    return session.trials.select_related("item__scene", "item__dataset", "session__plan").get(
        status=Trial.Status.SERVED
    )


def expect_refused(page, trial: Trial, message: str) -> None:
    """Submitting now shows `message` in #problem, and the server stored nothing."""
    page.click("#submit")
    expect(page.locator("#problem")).to_contain_text(message)
    trial.refresh_from_db()
    assert trial.status == Trial.Status.SERVED and trial.answer is None
    assert not trial.session.submission.predictions.exists()


def reload_trial(page) -> None:
    """Reload: the same trial comes back with a fresh widget, the draft put back into it (and no
    message left from a refusal)."""
    page.reload()
    expect(page.locator("body")).to_have_attribute("data-trial-ready", "1")
    page.wait_for_function(IMAGES_LOADED)
    expect(page.locator("#problem")).to_have_text("")


def plant_draft(page, draft) -> None:
    """Store `draft` as this trial's saved draft, the way trial.js does; a reload restores it."""
    page.evaluate(
        """draft => {
            const trial = JSON.parse(document.getElementById("trial-data").textContent).trial;
            localStorage.setItem(`yardstick:trial-draft:${trial}`, JSON.stringify({ draft }));
        }""",
        draft,
    )


def objects_chosen(count: int) -> str:
    """The CLEVR-Ref+ counter's text."""
    return f"{count} object{'' if count == 1 else 's'} chosen"


def submit_right_answer(page, screenshot, trial: Trial, name: str) -> list[Path]:
    """Submit, see "Correct", and find the answer stored, scored and made a prediction."""
    shots = [screenshot(f"humantest-{name}-trial")]
    page.click("#submit")
    expect(page.locator("#result")).to_be_visible()
    expect(page.locator("#verdict")).to_have_text("Correct")
    expect(page.locator("#problem")).to_have_text("")
    page.wait_for_function(IMAGES_LOADED)
    shots.append(screenshot(f"humantest-{name}-result"))
    trial.refresh_from_db()
    assert trial.status == Trial.Status.ANSWERED and trial.answered_at is not None
    assert trial.client["first_input_ms"] <= trial.client["submit_ms"]
    prediction = trial.session.submission.predictions.get(item=trial.item)
    # The prediction keeps the answer, plus what the benchmark's format adds (box and mask, question).
    assert prediction.answer == trial_for(trial.item.dataset.benchmark).stored_answer(
        unit_for(trial), trial.answer
    )
    assert trial.answer.items() <= prediction.answer.items()
    assert prediction.score == trial.result and prediction.score
    return shots


def publish(shots: list[Path]) -> None:
    for shot in shots:
        for_docs(shot)


def draw_order(candidates: list[dict]) -> list[dict]:
    """The widgets' drawing order: larger boxes first (a stable sort, as in JavaScript)."""
    return sorted(candidates, key=lambda candidate: -candidate["box"][2] * candidate["box"][3])


def click_box(page, candidates: list[dict], object_id: int) -> None:
    """Click the object's box at a point no box drawn above it covers (Enter if there is none)."""
    order = draw_order(candidates)
    index = next(i for i, candidate in enumerate(order) if candidate["id"] == object_id)
    x, y, w, h = order[index]["box"]
    above = [candidate["box"] for candidate in order[index + 1 :]]
    rect = page.locator(f'#boxes rect[data-object="{object_id}"]')
    fractions = (0.5, 0.3, 0.7, 0.15, 0.85)
    for fy in fractions:
        for fx in fractions:
            px, py = x + fx * w, y + fy * h
            if not any(bx <= px <= bx + bw and by <= py <= by + bh for bx, by, bw, bh in above):
                bounds = rect.bounding_box()
                rect.click(position={"x": fx * bounds["width"], "y": fy * bounds["height"]})
                return
    rect.focus()
    page.keyboard.press("Enter")


def test_cric_trial_answer_and_grounding_object(page, screenshot, tmp_path):
    from plugins.cric.demo import generate_demo

    files = generate_demo(tmp_path / "cric", images=2, seed=4)
    # Questions with a target object only, so that the right answer needs a click on a box.
    questions = [q for q in json.loads(files.questions.read_text()) if q["target"]]
    dataset = import_dataset(
        benchmark="cric",
        data=json.dumps(questions).encode(),
        name="cric widgets",
        split="val",
        images_dir=files.images_dir,
        scenes_data=files.scene_graphs.read_bytes(),
        scenes_source=files.scene_graphs.name,
    )
    plan, tester = invite(dataset, "Everyday objects")
    trial = open_trial(page, plan, tester)
    truth = trial.item.ground_truth
    objects = trial.item.scene.data["objects"]
    candidates = [
        {"id": obj["object_id"], "box": [obj["x"], obj["y"], obj["w"], obj["h"]]} for obj in objects
    ]
    target = truth["target"][0]
    number = [obj["object_id"] for obj in objects].index(target) + 1

    expect(page.locator("#question")).to_have_text(trial.item.payload["question"])
    expect(page.locator("#boxes rect.candidate")).to_have_count(len(objects))
    expect(page.locator(f'#boxes rect[aria-label="object {number}"]')).to_have_attribute(
        "data-object", str(target)
    )
    expect_refused(page, trial, "Type your answer")
    page.fill("#answer-text", truth["answer"])
    expect_refused(page, trial, "No object")
    # The refused answer was kept as a draft: the reload gives it back, still without an object.
    reload_trial(page)
    expect(page.locator("#answer-text")).to_have_value(truth["answer"])
    expect(page.locator("#chosen")).to_have_text("Nothing chosen yet")
    expect(page.locator("#boxes rect.chosen")).to_have_count(0)
    page.click("button[data-fill=yes]")
    expect(page.locator("#answer-text")).to_have_value("yes")
    page.fill("#answer-text", truth["answer"])

    # "No object" and a box exclude each other; a box is chosen from the keyboard too.
    box = page.locator(f'#boxes rect[data-object="{target}"]')
    page.click("#no-object")
    expect(page.locator("#no-object")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#chosen")).to_have_text("No object")
    box.focus()
    page.keyboard.press("Space")
    expect(box).to_have_class("candidate chosen")
    expect(page.locator("#no-object")).to_have_attribute("aria-pressed", "false")
    page.keyboard.press("Enter")
    expect(page.locator("#boxes rect.chosen")).to_have_count(0)
    expect(page.locator("#chosen")).to_have_text("Nothing chosen yet")
    click_box(page, candidates, target)
    expect(page.locator("#boxes rect.chosen")).to_have_count(1)
    expect(box).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#chosen")).to_have_text(f"Object {number}")

    # A reload keeps the answer and the chosen box...
    reload_trial(page)
    expect(page.locator("#answer-text")).to_have_value(truth["answer"])
    expect(page.locator("#boxes rect.chosen")).to_have_count(1)
    expect(box).to_have_class("candidate chosen")
    expect(box).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#no-object")).to_have_attribute("aria-pressed", "false")
    expect(page.locator("#chosen")).to_have_text(f"Object {number}")
    # ... and "No object" instead, which a box then replaces as if both were clicked by hand.
    page.click("#no-object")
    expect(page.locator("#boxes rect.chosen")).to_have_count(0)
    reload_trial(page)
    expect(page.locator("#answer-text")).to_have_value(truth["answer"])
    expect(page.locator("#no-object")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#chosen")).to_have_text("No object")
    expect(page.locator("#boxes rect.chosen")).to_have_count(0)
    expect(box).to_have_attribute("aria-pressed", "false")
    click_box(page, candidates, target)
    expect(box).to_have_class("candidate chosen")
    expect(page.locator("#no-object")).to_have_attribute("aria-pressed", "false")
    expect(page.locator("#chosen")).to_have_text(f"Object {number}")

    shots = submit_right_answer(page, screenshot, trial, "cric")
    assert trial.answer == {"answer": truth["answer"], "object": target}
    assert trial.result["final_correct"] is True
    compare = page.locator("#compare")
    expect(compare.locator("tbody tr").nth(0)).to_contain_text(truth["answer"])
    expect(compare.locator("tbody tr").nth(1)).to_contain_text(f"object {number}")
    expect(page.locator("#comparison rect.truth")).to_have_count(len(truth["target"]))
    expect(page.locator("#boxes rect[tabindex]")).to_have_count(0)
    publish(shots)


def overlap_area(a, b) -> float:
    """The area two [x, y, w, h] rectangles share."""
    width = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    height = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    return max(0.0, width) * max(0.0, height)


def test_cric_object_numbers_keep_clear_of_the_names_painted_on_the_image(page, tmp_path):
    """The demo's pictures carry their objects' names; a number placed over one turned "table"
    into "tabl3". The numbers now keep clear of the painted text the scene graph lists."""
    from plugins.cric.demo import generate_demo

    files = generate_demo(tmp_path / "cric", images=12, seed=2)
    graphs = json.loads(files.scene_graphs.read_text())
    # The page's own placement, without and with the text to keep clear of, on every picture.
    page.goto("/accounts/login/")
    placements = page.evaluate(
        """async (graphs) => {
          const { placeTags } = await import("/static/humantest/widgets/picker.js");
          return graphs.map((g) => {
            const candidates = g.objects.map((o) => ({ id: o.object_id, box: [o.x, o.y, o.w, o.h] }));
            const number = (id) => candidates.findIndex((c) => c.id === id) + 1;
            const size = { width: g.width, height: g.height };
            return [placeTags(candidates, number, size).map((p) => p.rect),
                    placeTags(candidates, number, size, g.text_regions).map((p) => p.rect)];
          });
        }""",
        graphs,
    )
    crossing = []
    for graph, (plain, kept) in zip(graphs, placements, strict=True):
        texts = graph["text_regions"]
        assert len(texts) == len(graph["objects"])  # one painted name per object
        assert not any(overlap_area(tag, text) for tag in kept for text in texts), graph["image_id"]
        if any(overlap_area(tag, text) for tag in plain for text in texts):
            crossing.append(graph["image_id"])
    # Without the painted text to avoid, some numbers do land on a name (what testers saw).
    assert crossing, "no picture would have a number over its text: the check proves nothing"

    # A trial on such a picture draws its numbers clear of the text.
    image_id = crossing[0]
    questions = [q for q in json.loads(files.questions.read_text()) if q["image_id"] == image_id]
    dataset = import_dataset(
        benchmark="cric",
        data=json.dumps(questions).encode(),
        name="painted names",
        split="val",
        images_dir=files.images_dir,
        scenes_data=files.scene_graphs.read_bytes(),
        scenes_source=files.scene_graphs.name,
    )
    plan, tester = invite(dataset, "Painted names")
    trial = open_trial(page, plan, tester)
    drawn = page.eval_on_selector_all(
        "#boxes text.tag",
        "nodes => nodes.map(n => { const b = n.getBBox(); return [b.x, b.y, b.width, b.height]; })",
    )
    texts = trial.item.scene.data["text_regions"]
    assert len(drawn) == len(trial.item.scene.data["objects"])
    assert not [tag for tag in drawn for text in texts if overlap_area(tag, text) > 0.5]


def test_clevrref_trial_chooses_every_referred_object(page, screenshot, tmp_path):
    from plugins.clevrref.expressions import generate

    files = generate(tmp_path / "clevrref", images=2, seed=2, split="val")
    dataset = import_dataset(
        benchmark="clevrref",
        data=files.refexps_file.read_bytes(),
        name="clevrref widgets",
        split="val",
        images_dir=files.images_dir,
        scenes_data=files.scenes_file.read_bytes(),
        scenes_source=files.scenes_file.name,
    )
    plan, tester = invite(dataset, "Referring expressions")
    trial = open_trial(page, plan, tester)
    kind = trial_for("clevrref")
    unit = unit_for(trial)
    right = kind.truth(unit)["objects"]
    candidates = kind.view(unit)["candidates"]

    expect(page.locator("#refexp")).to_have_text(trial.item.payload["refexp"])
    expect(page.locator("#boxes rect.candidate")).to_have_count(len(candidates))
    expect(page.locator("#count")).to_have_text("0 objects chosen")
    expect_refused(page, trial, "Click at least one object")
    # A refusal changes nothing, so there is no draft yet; a draft of junk (ids that are no
    # candidate, or not numbers) is ignored.
    plant_draft(page, {"objects": [len(candidates) + 5, "0", None, [1], -1]})
    reload_trial(page)
    expect(page.locator("#count")).to_have_text("0 objects chosen")
    expect(page.locator("#boxes rect.chosen")).to_have_count(0)

    # A wrong object chosen and unchosen again, then every right one.
    wrong = next((c["id"] for c in candidates if c["id"] not in right), None)
    if wrong is not None:
        click_box(page, candidates, wrong)
        expect(page.locator("#count")).to_have_text("1 object chosen")
        click_box(page, candidates, wrong)
    for object_id in right:
        click_box(page, candidates, object_id)
    expect(page.locator("#count")).to_have_text(objects_chosen(len(right)))
    expect(page.locator("#boxes rect.chosen")).to_have_count(len(right))

    # A reload keeps the chosen objects, and they toggle as if clicked by hand.
    reload_trial(page)
    expect(page.locator("#count")).to_have_text(objects_chosen(len(right)))
    expect(page.locator("#boxes rect.chosen")).to_have_count(len(right))
    for candidate in candidates:
        pressed = candidate["id"] in right
        rect = page.locator(f'#boxes rect[data-object="{candidate["id"]}"]')
        expect(rect).to_have_attribute("aria-pressed", "true" if pressed else "false")
        expect(rect).to_have_class("candidate chosen" if pressed else "candidate")
    toggled = wrong if wrong is not None else right[0]
    click_box(page, candidates, toggled)
    expect(page.locator("#count")).to_have_text(objects_chosen(len(right) + (1 if wrong is not None else -1)))
    click_box(page, candidates, toggled)
    expect(page.locator("#count")).to_have_text(objects_chosen(len(right)))

    expect(page.locator("#nothing")).to_be_hidden()  # no expression of this data refers to nothing
    shots = submit_right_answer(page, screenshot, trial, "clevrref")
    assert trial.answer == {"objects": sorted(right)}
    assert trial.result["mask_iou"] == pytest.approx(1.0)
    compare = page.locator("#compare")
    expect(compare).to_contain_text(", ".join(str(i + 1) for i in right))
    expect(compare).to_contain_text("Mask IoU1.000")
    expect(page.locator("#comparison rect.truth")).to_have_count(len(right))
    publish(shots)


def test_clevrref_nothing_fits_on_data_with_false_premises(page, screenshot, tmp_path):
    """Generated with false premises, the data lets testers answer that nothing fits: offered,
    kept by a reload, cleared by a click on a box, and right on an expression that refers to no
    object."""
    from plugins.clevrref.expressions import generate

    files = generate(tmp_path / "fp", images=1, seed=3, expressions_per_image=8, false_premise_share=0.5)
    dataset = import_dataset(
        benchmark="clevrref",
        data=files.refexps_file.read_bytes(),
        name="false premises",
        split="val",
        images_dir=files.images_dir,
        scenes_data=files.scenes_file.read_bytes(),
        scenes_source=files.scenes_file.name,
    )
    empty = next(
        item.external_id
        for item in dataset.items.order_by("position")
        if not item.ground_truth["program"][-1]["_output"]
    )
    tester = make_user("tess", "tester")
    plan = TestPlan.objects.create(
        name="Nothing fits",
        dataset=dataset,
        setting="",
        draw="fixed",
        fixed_items=[empty],
        seed=1,
        time_limit_s=600,
    )
    plan.testers.add(tester)
    trial = open_trial(page, plan, tester)
    candidates = trial_for("clevrref").view(unit_for(trial))["candidates"]

    expect(page.locator("#nothing")).to_be_visible()
    expect(page.locator("#nothing-hint")).to_be_visible()
    expect_refused(page, trial, "or choose “Nothing fits”")
    page.click("#nothing")
    expect(page.locator("#count")).to_have_text("Nothing fits")
    expect(page.locator("#nothing")).to_have_attribute("aria-pressed", "true")
    # A click on a box takes "nothing" back; choosing nothing again unchooses the box.
    click_box(page, candidates, candidates[0]["id"])
    expect(page.locator("#nothing")).to_have_attribute("aria-pressed", "false")
    expect(page.locator("#count")).to_have_text("1 object chosen")
    page.click("#nothing")
    expect(page.locator("#boxes rect.chosen")).to_have_count(0)
    reload_trial(page)
    expect(page.locator("#count")).to_have_text("Nothing fits")
    page.click("#nothing")  # off and on again, as a tester who hesitates
    expect(page.locator("#count")).to_have_text("0 objects chosen")
    page.click("#nothing")
    submit_right_answer(page, screenshot, trial, "clevrref-nothing")
    assert trial.answer["objects"] == [] and trial.result["false_premise_correct"] is True


def test_stevqa_trial_answer_and_evidence_corners(page, screenshot, tmp_path):
    from plugins.stevqa.demo import generate_demo

    path = generate_demo(tmp_path / "stevqa", count=3, seed=7)
    dataset = import_dataset(
        benchmark="stevqa",
        data=path.read_bytes(),
        name="stevqa widgets",
        split="train",
        images_dir=tmp_path / "stevqa" / "images",
    )
    plan, tester = invite(dataset, "Street signs")
    trial = open_trial(page, plan, tester)
    qa = trial.item.ground_truth["annotation"][trial.part]
    evidence = [float(value) for value in qa["evidence"]]
    layer = page.locator("#evidence")
    expect(layer).to_have_attribute("viewBox", "0 0 640 480")
    expect(page.locator("#question")).to_have_text(qa["question"])

    expect_refused(page, trial, "Type your answer")
    page.fill("#answer-text", qa["answer"])

    def click_corner(x: float, y: float) -> None:
        """Click the image at pixel (x, y) of the 640 x 480 picture, however large it is shown."""
        bounds = layer.bounding_box()
        scale = bounds["width"] / 640
        page.mouse.click(bounds["x"] + x * scale, bounds["y"] + y * scale)

    click_corner(evidence[0], evidence[1])
    click_corner(evidence[2], evidence[3])
    expect(page.locator("#corners")).to_have_text("2 of 4 corners")
    expect(layer.locator("circle.corner")).to_have_count(2)
    expect_refused(page, trial, "(2 so far)")
    page.click("#typed summary")
    page.fill("#coordinates", "1, 2, 3")
    expect_refused(page, trial, "8 numbers")
    # A reload keeps the answer, the 2 corners and the coordinates as typed, still refused.
    reload_trial(page)
    expect(page.locator("#answer-text")).to_have_value(qa["answer"])
    expect(page.locator("#corners")).to_have_text("2 of 4 corners")
    expect(layer.locator("circle.corner")).to_have_count(2)
    expect(page.locator("#typed")).to_have_attribute("open", "")
    expect(page.locator("#coordinates")).to_have_value("1, 2, 3")
    expect(page.locator("#coordinates")).to_have_attribute("aria-invalid", "true")
    expect_refused(page, trial, "8 numbers")
    page.fill("#coordinates", " ".join(qa["evidence"]))
    expect(page.locator("#coordinates")).not_to_have_attribute("aria-invalid", "true")
    expect(page.locator("#corners")).to_contain_text("4 of 4 corners")
    expect(layer.locator("circle.corner")).to_have_count(4)
    page.click("#redraw")
    expect(page.locator("#corners")).to_have_text("0 of 4 corners")
    expect(page.locator("#coordinates")).to_have_value("")
    expect(layer.locator("circle.corner")).to_have_count(0)
    # Redraw left the answer and no corners: so does the reload.
    reload_trial(page)
    expect(layer).to_have_attribute("viewBox", "0 0 640 480")
    expect(page.locator("#answer-text")).to_have_value(qa["answer"])
    expect(page.locator("#corners")).to_have_text("0 of 4 corners")
    expect(page.locator("#coordinates")).to_have_value("")
    expect(layer.locator("circle.corner")).to_have_count(0)

    # 3 corners, a reload, and the 4th corner where the 3 left off.
    for index in range(0, 6, 2):
        click_corner(evidence[index], evidence[index + 1])
    expect(page.locator("#corners")).to_have_text("3 of 4 corners")
    clicked = page.locator("#coordinates").input_value()
    assert len(clicked.split(",")) == 6
    reload_trial(page)
    expect(page.locator("#answer-text")).to_have_value(qa["answer"])
    expect(page.locator("#corners")).to_have_text("3 of 4 corners")
    expect(page.locator("#coordinates")).to_have_value(clicked)
    expect(layer.locator("circle.corner")).to_have_count(3)
    expect(layer.locator("polygon")).to_have_count(1)
    click_corner(evidence[6], evidence[7])
    expect(page.locator("#corners")).to_contain_text("4 of 4 corners")
    expect(layer.locator("polygon")).to_have_count(1)
    typed = [float(value) for value in page.locator("#coordinates").input_value().split(",")]
    assert typed == pytest.approx(evidence, abs=1.5)

    shots = submit_right_answer(page, screenshot, trial, "stevqa")
    assert trial.answer["answer"] == qa["answer"]
    assert trial.answer["evidence"] == pytest.approx(evidence, abs=1.5)
    assert trial.result["TC"] == 1.0 and trial.result["LC"] > 0.8 and trial.result["CLC"] == 1.0
    expect(page.locator("#compare tbody tr").nth(0)).to_contain_text(qa["answer"])
    expect(page.locator("#scores")).to_contain_text("CLC 1.000")
    expect(page.locator("#comparison polygon.truth")).to_have_count(1)
    expect(page.locator("#comparison polygon.yours")).to_have_count(1)
    publish(shots)
