"""A researcher compares two models and the human baseline on the report page."""

import csv
import io
import urllib.request

import orjson
import pytest
from playwright.sync_api import expect

from benchmarks.services import import_dataset
from evaluation.services import submit_predictions
from tests.benchmarks import builders
from tests.e2e.conftest import log_in
from tests.factories import PASSWORD, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def answers(samples, keep=lambda sample: True):
    return orjson.dumps(
        {
            str(sample["idx"]): [
                {k: step[k] for k in ("obj_idx", "attr", "val")} for step in sample["transformations"]
            ]
            for sample in samples
            if keep(sample)
        }
    )


def test_report_shows_models_and_human_side_by_side_with_exports(page, screenshot, tmp_path, live_server):
    samples = [builders.trance_sample(idx) for idx in range(6)]
    dataset = import_dataset(
        benchmark="trance", data=b"\n".join(orjson.dumps(s) for s in samples), name="trance"
    )
    submit_predictions(
        dataset=dataset,
        name="CNN baseline",
        data=answers(samples, lambda s: s["idx"] % 2 == 0),
        setting="event",
    )
    submit_predictions(
        dataset=dataset, name="Human", producer="human", data=answers(samples), setting="event"
    )
    make_user("rita", "researcher")
    upload = tmp_path / "transformer.json"
    upload.write_bytes(answers(samples, lambda s: s["idx"] < 4))

    log_in(page, "rita", PASSWORD)
    page.goto(f"/datasets/{dataset.pk}/")
    page.click("text=Report")
    page.fill("#id_name", "Transformer")
    page.select_option("#id_setting", "event")
    page.set_input_files("#id_file", str(upload))
    page.click("#submission-form button[type=submit]")

    rows = page.locator("#report tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(0).locator("th")).to_have_text("CNN baseline")
    expect(rows.nth(1).locator("th")).to_have_text("Transformer")
    expect(rows.nth(2).locator("th")).to_have_text("Human")
    # Event's plots by transformation length: LAcc as the paper draws it, and Acc.
    expect(page.locator(".plots svg")).to_have_count(2)
    screenshot("report")

    cookies = {cookie["name"]: cookie["value"] for cookie in page.context.cookies()}
    for extension in ("csv", "tex"):
        href = page.locator(f"a[href$='/report.{extension}']").get_attribute("href")
        request = urllib.request.Request(
            live_server.url + href, headers={"Cookie": f"sessionid={cookies['sessionid']}"}
        )
        body = urllib.request.urlopen(request).read().decode()
        if extension == "csv":
            acc = {
                r["row"]: float(r["value"])
                for r in csv.DictReader(io.StringIO(body))
                if (r["group"], r["metric"]) == ("Event", "Acc")
            }
            assert acc == {"CNN baseline": 0.5, "Transformer": pytest.approx(4 / 6), "Human": 1.0}
        else:
            assert body.count(r"\\") == 2 + 3 and r"\textbf{1.0000}" in body
