"""STE-VQA models and people in one report: the demo tester's Human row beside a model's row.

The demo STE-VQA dataset is a training-layout file (QA pairs grouped per image, the only layout
that names images, so the only one people can be tested on). Every QA pair gets a question id
at import, so a model's predictions in the official prediction format score on it too. The demo
tester takes the demo test in the browser; the researcher uploads a model's predictions on the
report page and finds both rows, the model's first and Human last.
"""

import json

import pytest
from playwright.sync_api import expect

from accounts.roles import sync_roles
from benchmarks import registry
from humantest.models import TestPlan, TestSession, Trial
from tests.e2e.conftest import for_docs, log_in
from yardstick.management.commands.load_demo import (
    DEMO_USERS,
    create_demo_plan,
    create_demo_users,
    load_demo,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def model_predictions(dataset) -> list[dict]:
    """A model that reads English signs right and answers every Chinese question wrong."""
    predictions = []
    for item in dataset.items.order_by("position"):
        for question_id, qa in zip(
            item.payload["question_ids"], item.ground_truth["annotation"], strict=True
        ):
            english = qa["question"].isascii()
            predictions.append(
                {
                    "question_id": question_id,
                    "answer": qa["answer"] if english else "不知道",
                    "evidence": qa["evidence"],
                }
            )
    return predictions


def test_stevqa_report_shows_a_model_row_and_the_demo_testers_human_row(page, screenshot, tmp_path):
    spec = registry.get("stevqa")
    sync_roles()
    create_demo_users()
    dataset, _ = load_demo(spec, tmp_path / "stevqa", seed=0)
    create_demo_plan(spec, dataset)
    plan = TestPlan.objects.get(dataset=dataset)
    assert dataset.unit_count > dataset.item_count  # several questions per image

    # The demo tester takes the demo test: six questions, answered right, evidence typed in.
    log_in(page, "tester", DEMO_USERS["tester"])
    page.goto("/test/")
    page.locator("#my-tests tbody tr", has_text=plan.name).get_by_role("button", name="Open").click()
    page.click("#begin")
    session = TestSession.objects.get(plan=plan)
    for _ in range(plan.items_per_tester):
        expect(page.locator("body")).to_have_attribute("data-trial-ready", "1")
        trial = session.trials.get(phase=Trial.Phase.TEST, status=Trial.Status.SERVED)
        qa = trial.item.ground_truth["annotation"][trial.part]
        page.fill("#answer-text", qa["answer"])
        page.click("#typed summary")
        page.fill("#coordinates", " ".join(qa["evidence"]))
        page.click("#submit")
        expect(page.locator("#verdict")).to_have_text("Correct")
        page.click("#next")
    expect(page.locator("h1")).to_contain_text(plan.name)
    session.refresh_from_db()
    assert session.status == TestSession.Status.FINISHED

    # The researcher adds a model, its predictions keyed by the question ids the import gave.
    upload = tmp_path / "model.json"
    upload.write_text(json.dumps(model_predictions(dataset), ensure_ascii=False))
    page.context.clear_cookies()
    log_in(page, "researcher", DEMO_USERS["researcher"])
    page.goto(f"/datasets/{dataset.pk}/report/")
    page.fill("#id_name", "English-only reader")
    page.set_input_files("#id_file", str(upload))
    page.click("#submission-form button[type=submit]")

    rows = page.locator("#report tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0).locator("th")).to_have_text("English-only reader")
    expect(rows.nth(1).locator("th")).to_have_text("Human")
    expect(rows.nth(1)).to_have_class("human")
    columns = [
        text.strip() for text in page.locator("#report thead tr").nth(1).locator("th").all_inner_texts()
    ]
    clc_all = len(columns) - 1  # the last column: CLC over both languages
    assert columns[clc_all] == "CLC"
    # Every answer of the tester was right: CLC 1 over the six questions answered.
    expect(rows.nth(1).locator("td").nth(clc_all)).to_contain_text("1.0000")
    expect(rows.nth(1).locator("td").nth(clc_all)).to_contain_text(f"n={plan.items_per_tester}")
    expect(rows.nth(0).locator("td").nth(clc_all)).to_contain_text(f"n={dataset.unit_count}")
    expect(page.locator("#submissions")).to_contain_text(f"{dataset.unit_count} of {dataset.unit_count}")
    for_docs(screenshot("report-stevqa"))
