"""The report: estimates equal to the statistics computed by hand, exports and the command agree,
rejected items marked on the dataset and the evaluation report recomputed without them."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter

from django.core.management import call_command
from django.test import Client
from statsmodels.stats.proportion import proportion_confint

from annotation import queue
from benchmarks.models import ItemMark
from evaluation.sampling import stratified_error_rate
from evaluation.services import submit_predictions
from tests.validation.conftest import FINE, WRONG
from validation import selectors, services
from validation.models import Sampled, Verdict


def judge_all(plan, people, faulty_positions=(0, 3)):
    """Validators work the whole queue; items at these positions of the queue are found faulty by all."""
    faulty = set(
        Sampled.objects.filter(plan=plan, task__position__in=faulty_positions).values_list(
            "task_id", flat=True
        )
    )
    for person in (people["val"], people["vic"]) * 20:
        held = queue.claim(plan.project, person)
        if held is None:
            continue
        answers = WRONG if held.task_id in faulty else FINE
        services.submit_verdict(held, person, version=held.version, answers=answers)
    return faulty


def test_the_estimates_are_the_stratified_statistics_of_the_first_verdicts(plan, people):
    faulty = judge_all(plan, people)
    report = selectors.report(plan, resamples=50)
    first = Verdict.objects.filter(sampled__plan=plan, round=1).select_related("sampled")
    assert report.judged == first.count() == 10
    judged = Counter(v.sampled.stratum for v in first)
    errors = Counter(v.sampled.stratum for v in first if v.error)
    expected = stratified_error_rate(
        {
            name: (info["population_size"], judged[name], errors[name])
            for name, info in plan.draw["strata"].items()
        }
    )
    assert (
        report.error["value"] == expected.value and report.error["standard_error"] == expected.standard_error
    )
    assert report.error["errors"] == len(faulty) == 2
    for stratum in report.strata:
        if stratum["judged"]:
            low, high = proportion_confint(stratum["errors"], stratum["judged"], method="wilson")
            assert (
                abs(stratum["low"] - max(0.0, low)) < 1e-12 and abs(stratum["high"] - min(1.0, high)) < 1e-12
            )
    # The two faulty items were rejected by every validator; the failing step is counted per verdict.
    assert {row["item_pk"] for row in report.rejected_by_all} == set(
        Sampled.objects.filter(task_id__in=faulty).values_list("item_id", flat=True)
    )
    assert sum(row["count"] for row in report.failing_steps) == Verdict.objects.filter(error=True).count()
    # Agreement on the overlap items, per question, with the statistics the data support.
    statistics = {(row["question"], row["statistic"]) for row in report.agreement}
    assert ("answer_correct", "percent_agreement") in statistics
    assert any(name.startswith("krippendorff") for _q, name in statistics)


def test_no_error_found_still_gives_an_interval_that_is_not_a_point(plan, people):
    judge_all(plan, people, faulty_positions=())
    report = selectors.report(plan, resamples=0)
    assert report.error["value"] == 0 and report.error["standard_error"] == 0
    # The normal interval would be [0, 0]: it is not given, Wilson's stands alone.
    assert report.error["normal_low"] is None and report.error["normal_high"] is None
    assert report.error["low"] == 0 and report.error["high"] > 0.1  # 10 checked, none faulty: up to ~28%
    client = Client()
    client.force_login(people["res"])
    page = client.get(f"/validate/plans/{plan.pk}/").content.decode()
    assert "standard error 0.0000" not in page and "The normal interval p ± z·se" not in page
    assert "No normal interval: with a standard error of 0 it would be the estimate itself." in page


def test_page_exports_and_command_say_the_same(plan, people, capsys):
    judge_all(plan, people)
    client = Client()
    client.force_login(people["res"])
    page = client.get(f"/validate/plans/{plan.pk}/").content.decode()
    exported = json.loads(client.get(f"/validate/plans/{plan.pk}/export.json").content)
    assert exported["parameters"]["seed"] == 4 and exported["parameters"]["strata"] == ["question_type"]
    value = exported["report"]["error"]["value"]
    assert f"{value:.4f}" in page
    rows = list(
        csv.DictReader(io.StringIO(client.get(f"/validate/plans/{plan.pk}/export.csv").content.decode()))
    )
    assert {"kind": "parameter", "name": "allocation", "value": "proportional"}.items() <= rows[
        [r["name"] for r in rows].index("allocation")
    ].items()
    assert float(next(r for r in rows if r["kind"] == "estimate")["value"]) == value
    assert client.get(f"/validate/plans/{plan.pk}/error-rates.png")["Content-Type"] == "image/png"
    call_command("validation_report", str(plan.pk), "--json", "--resamples", "50")
    assert json.loads(capsys.readouterr().out)["report"]["error"]["value"] == value
    call_command("validation_report", plan.name, "--resamples", "50")
    assert f"item error rate {value:.4f}" in capsys.readouterr().out


def test_rejected_items_are_marked_and_the_report_recomputed_on_the_rest(plan, people, cric):
    judge_all(plan, people)
    report = selectors.report(plan, resamples=0)
    rejected = [row["item_pk"] for row in report.rejected_by_all]
    # A model that answers the rejected items wrong and every other item right.
    truth = {item.external_id: item for item in cric.items.all()}
    predictions = [
        {
            "question_id": key,
            "answer": "wrong" if item.pk in rejected else item.ground_truth["answer"],
            "object": (item.ground_truth["target"] or [None])[0],
        }
        for key, item in truth.items()
    ]
    submit_predictions(
        dataset=cric, name="model", data=json.dumps(predictions).encode(), created_by=people["res"]
    )
    client = Client()
    client.force_login(people["res"])
    assert "report-passed" not in client.get(f"/datasets/{cric.pk}/report/").content.decode()
    client.post(f"/validate/plans/{plan.pk}/mark/", {"action": "mark"})
    assert set(ItemMark.objects.values_list("item_id", flat=True)) == set(rejected)
    page = client.get(f"/datasets/{cric.pk}/report/")
    passed = page.context["passed"]
    assert passed["units"] == cric.item_count - len(rejected)
    # Answer accuracy over all items misses the rejected ones; over the rest it is perfect.
    (full_row,) = page.context["table"].rows
    (kept_row,) = [row for row, _cells in passed["rows"]]
    columns = [column.label for column in page.context["table"].columns]
    overall_answer = len(columns) - 3  # Overall: Ans, Grd, Final
    assert full_row.cells[overall_answer].value == 1 - len(rejected) / cric.item_count
    assert kept_row.cells[overall_answer].value == 1.0
    assert kept_row.cells[overall_answer].n == cric.item_count - len(rejected)
    client.post(f"/validate/plans/{plan.pk}/mark/", {"action": "unmark"})
    assert not ItemMark.objects.exists()
