"""Submissions through the catalog: one scoring path, the report table, its exports, the API."""

import copy
import csv
import io
import json

import orjson
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from benchmarks import registry
from benchmarks.records import FormatError
from benchmarks.services import import_dataset
from evaluation.models import Prediction, Submission
from evaluation.selectors import report_table
from evaluation.services import SubmissionRefused, submit_predictions
from tests.benchmarks import builders
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def trance_dataset():
    samples = [builders.trance_sample(idx) for idx in range(3)]
    samples[2]["transformations"] = samples[2]["transformations"][:1]  # a one-step sample
    samples[2]["states"][1]["objects"][2]["position"] = copy.deepcopy(
        samples[2]["states"][0]["objects"][2]["position"]
    )
    data = b"\n".join(orjson.dumps(sample) for sample in samples)
    return import_dataset(benchmark="trance", data=data, name="trance"), samples


def perfect_answers(samples):
    return orjson.dumps(
        {
            str(s["idx"]): [{k: step[k] for k in ("obj_idx", "attr", "val")} for step in s["transformations"]]
            for s in samples
        }
    )


def test_models_and_humans_share_one_table_with_human_last():
    dataset, samples = trance_dataset()
    submit_predictions(dataset=dataset, name="Perfect model", data=perfect_answers(samples), setting="event")
    submit_predictions(dataset=dataset, name="Lazy model", data=b"{}", setting="event")
    submit_predictions(
        dataset=dataset, name="Human", producer="human", data=perfect_answers(samples[:2]), setting="event"
    )
    table = report_table(dataset)
    assert [row.label for row in table.rows] == ["Lazy model", "Perfect model", "Human"]
    acc = next(index for index, c in enumerate(table.columns) if (c.group, c.label) == ("Event", "Acc"))
    assert table.rows[1].cells[acc].value == 1.0 and table.rows[1].cells[acc].n == 3
    assert table.rows[0].cells[acc].value == 0.0
    assert table.rows[2].cells[acc].value == pytest.approx(2 / 3)
    assert table.rows[1].cells[acc].low < 1.0 == table.rows[1].cells[acc].high  # a Wilson interval
    basic = next(index for index, c in enumerate(table.columns) if c.group == "Basic")
    assert table.rows[1].cells[basic].value is None  # no Basic submission for that model


def test_per_item_scores_are_stored_and_match_the_file_scorer(tmp_path):
    dataset, samples = trance_dataset()
    answers = perfect_answers(samples)
    submission = submit_predictions(dataset=dataset, name="m", data=answers, setting="event")
    gt, predictions = tmp_path / "data.jsonl", tmp_path / "answers.json"
    gt.write_bytes(b"\n".join(orjson.dumps(sample) for sample in samples))
    predictions.write_bytes(answers)
    out = io.StringIO()
    call_command(
        "score",
        "trance",
        "--gt",
        str(gt),
        "--predictions",
        str(predictions),
        "--setting",
        "event",
        "--json",
        stdout=out,
    )
    assert json.loads(out.getvalue())["summary"]["Acc"] == submission.summary["Acc"] == 1.0
    rows = Prediction.objects.filter(submission=submission).values_list("score", flat=True)
    assert sorted(row["idx"] for row in rows) == [0, 1, 2]
    assert all(row["dist"] == 0 for row in rows)


def test_a_bad_prediction_file_is_refused_naming_record_and_field_and_stores_nothing():
    dataset, _ = trance_dataset()
    with pytest.raises(FormatError) as raised:
        submit_predictions(
            dataset=dataset,
            name="bad",
            setting="event",
            data=orjson.dumps({"0": [{"obj_idx": 12, "attr": "color", "val": "cyan"}], "7": []}),
        )
    text = str(raised.value)
    assert "idx 0" in text and "obj_idx" in text
    with pytest.raises(FormatError, match="prediction 7: idx: no such idx in TRANCE: trance"):
        submit_predictions(dataset=dataset, name="bad", setting="event", data=orjson.dumps({"7": []}))
    with pytest.raises(
        SubmissionRefused, match="TRANCE takes the setting “Basic” .*: choose one of them, not 'mono'"
    ):
        submit_predictions(dataset=dataset, name="bad", setting="mono", data=b"{}")
    assert not Submission.objects.exists() and not Prediction.objects.exists()


def test_stevqa_sample_scores_the_same_through_the_app_and_the_command(shared_data):
    gt = shared_data("estvqa_sample/gt_sample.json")
    pred = shared_data("estvqa_sample/pred_sample.json")
    dataset = import_dataset(benchmark="stevqa", data=gt.read_bytes(), name="est", split="test")
    submission = submit_predictions(dataset=dataset, name="sample", data=pred.read_bytes(), setting="bi")
    out = io.StringIO()
    call_command("score", "stevqa", "--gt", str(gt), "--predictions", str(pred), "--json", stdout=out)
    assert submission.summary["overall"] == json.loads(out.getvalue())["summary"]["overall"]
    assert submission.summary["overall"]["CLC"] == pytest.approx(0.25)


def test_report_page_and_exports(client):
    dataset, samples = trance_dataset()
    submit_predictions(dataset=dataset, name="Model A", data=perfect_answers(samples), setting="event")
    submit_predictions(dataset=dataset, name="Human", producer="human", data=b"{}", setting="event")
    client.force_login(make_user("rita", "researcher"))
    page = client.get(reverse("evaluation:report", args=[dataset.pk])).content.decode()
    assert page.index("Model A") < page.index(">Human<")
    assert "<svg" in page  # the by-length plot
    rows = list(
        csv.DictReader(io.StringIO(client.get(f"/datasets/{dataset.pk}/report.csv").content.decode()))
    )
    acc = [r for r in rows if r["group"] == "Event" and r["metric"] == "Acc"]
    assert [(r["row"], float(r["value"])) for r in acc] == [("Model A", 1.0), ("Human", 0.0)]
    latex = client.get(f"/datasets/{dataset.pk}/report.tex").content.decode()
    assert latex.startswith(r"\begin{tabular}") and latex.index(
        r"\midrule", latex.index("Model A")
    ) < latex.index("Human")
    assert (
        json.loads(client.get(f"/datasets/{dataset.pk}/report.json").content)["rows"][1]["label"] == "Human"
    )


def test_uploading_through_the_page_shows_bad_records(client):
    dataset, _ = trance_dataset()
    client.force_login(make_user("rita", "researcher"))
    upload = SimpleUploadedFile("answers.json", b'{"0": [{"obj_idx": 1, "attr": "colour", "val": "red"}]}')
    response = client.post(
        reverse("evaluation:report", args=[dataset.pk]),
        {"name": "m", "producer": "model", "setting": "event", "variant": "official", "file": upload},
    )
    assert response.status_code == 200
    assert "idx 0" in response.content.decode() and "attr" in response.content.decode()
    assert not Submission.objects.exists()


def test_the_api_is_an_evaluation_server():
    dataset, samples = trance_dataset()
    client = APIClient()
    client.force_authenticate(make_user("script", "researcher"))
    upload = SimpleUploadedFile("answers.json", perfect_answers(samples))
    response = client.post(
        "/api/v1/submissions/",
        {"dataset": dataset.pk, "name": "api model", "setting": "view", "file": upload},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    assert response.json()["summary"]["Acc"] == 1.0
    assert set(response.json()["summary"]["by_camera"]) <= {"Camera_Left", "Camera_Center", "Camera_Right"}
    bad = SimpleUploadedFile("answers.json", b"[1, 2]")
    response = client.post(
        "/api/v1/submissions/",
        {"dataset": dataset.pk, "name": "x", "setting": "view", "file": bad},
        format="multipart",
    )
    assert response.status_code == 400 and response.json()["file"]
    report = client.get(f"/api/v1/datasets/{dataset.pk}/report/").json()
    assert report["rows"][0]["label"] == "api model"


def test_testers_cannot_see_reports_or_submit(client):
    dataset, _ = trance_dataset()
    client.force_login(make_user("tom", "tester"))
    assert client.get(reverse("evaluation:report", args=[dataset.pk])).status_code == 403
    api = APIClient()
    api.force_authenticate(make_user("tim", "tester"))
    assert api.get("/api/v1/submissions/").status_code == 403


def test_mean_intervals_stay_within_the_possible_range():
    from evaluation.reports import ScoredSubmission, build_table

    rows = [{"lang": "en", "TC": value, "LC": value, "CLC": value} for value in (0.0, 0.0, 0.0, 1.0)]
    summary = {"by_language": {"en": {"TC": 0.25, "LC": 0.25, "CLC": 0.25}}, "overall": {"TC": 0.25}}
    table = build_table(registry.get("stevqa"), [ScoredSubmission("model", "m", "", summary, rows)])
    cell = table.rows[0].cells[0]
    assert cell.value == 0.25 and cell.low == 0.0 and cell.high <= 1.0 and cell.n == 4


def test_cric_scored_in_the_app_reads_the_scene_graphs_for_its_object_size_table(cric_files):
    """CRIC's object sizes come from its scene graphs: the app passes a dataset's scene graphs to
    the metric, so its by-size figures equal the command line's with --scenes, and the report
    shows the table."""
    from plugins.cric import metric

    dataset = import_dataset(
        benchmark="cric",
        data=cric_files.questions.read_bytes(),
        name="cric",
        scenes_data=cric_files.scene_graphs.read_bytes(),
    )
    questions = json.loads(cric_files.questions.read_text())
    answers = [{"question_id": q["question_id"], "answer": q["answer"], "object": None} for q in questions]
    submission = submit_predictions(dataset=dataset, name="answers only", data=json.dumps(answers).encode())
    by_file = metric.score_file(
        cric_files.questions.read_bytes(),
        json.dumps(answers).encode(),
        scenes_data=cric_files.scene_graphs.read_bytes(),
    )
    assert submission.summary["by_object_size"] == by_file.summary["by_object_size"]
    assert sum(group["count"] for group in submission.summary["by_object_size"].values()) > 0
    size_table = report_table(dataset, diagnostic=dataset.spec.diagnostic("by-size"))
    assert size_table.columns and size_table.rows[0].cells[0].value is not None


def test_a_trance_view_upload_keeps_every_camera_s_row_and_the_report_counts_them(trance_dataset):
    """View is scored once per final camera (3 x N units): each prediction keeps its sample's three
    rows, so the report's intervals, the by-camera table and a re-scoring use all of them."""
    from evaluation.services import rescore
    from tests.factories import steps_of

    items = list(trance_dataset.items.order_by("position"))[:6]
    # Right from the left camera everywhere, from the centre on the first two samples, never from
    # the right (an empty answer there, and no answer at all for the other samples).
    answers = {
        item.external_id: {
            "Camera_Left": steps_of(item),
            "Camera_Center": steps_of(item) if index < 2 else [],
            "Camera_Right": [],
        }
        for index, item in enumerate(items)
    }
    submission = submit_predictions(
        dataset=trance_dataset, name="per camera", data=json.dumps(answers).encode(), setting="view"
    )
    samples = trance_dataset.item_count
    assert submission.summary["n"] == 3 * samples
    stored = Prediction.objects.get(submission=submission, item=items[0]).score
    assert isinstance(stored, list) and sorted(row["camera"] for row in stored) == [
        "Camera_Center",
        "Camera_Left",
        "Camera_Right",
    ]
    table = report_table(trance_dataset)
    view_acc = next(
        cell
        for column, cell in zip(table.columns, table.rows[0].cells, strict=True)
        if column.setting == "view" and column.label == "Acc"
    )
    assert view_acc.n == 3 * samples
    by_camera = report_table(trance_dataset, diagnostic=trance_dataset.spec.diagnostic("by-camera"))
    acc = {
        column.summary_path[1]: cell
        for column, cell in zip(by_camera.columns, by_camera.rows[0].cells, strict=True)
        if column.label == "Acc"
    }
    left, center, right = acc["Camera_Left"], acc["Camera_Center"], acc["Camera_Right"]
    assert (left.value, left.n) == (6 / samples, samples)
    assert (center.value, center.n) == (2 / samples, samples)
    assert (right.value, right.n) == (0.0, samples)
    assert rescore(submission).summary == submission.summary
