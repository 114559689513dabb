"""A benchmark is one plug-in: a toy benchmark defined only under tests/ goes everywhere the four do.

Dot count (tests/dotcount/) is registered by the fixture and nothing else: it is imported from
the command line, scored from the command line and through the API, shown in a report with its
own columns and plot, put in a test plan, answered by a tester, and pooled into the Human row.
No file outside tests/ names it. An unknown benchmark is refused everywhere instead of being
routed to another benchmark's code.
"""

import io
import json
import subprocess
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from PIL import Image, ImageDraw
from rest_framework.test import APIClient

from benchmarks import registry
from benchmarks.models import Dataset
from evaluation.agreement_reports import dataset_agreement
from evaluation.models import Submission
from evaluation.services import score_submission
from humantest.models import TestPlan, TestSession
from humantest.trials import load_trial
from tests.dotcount.spec import SPEC
from tests.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[1]
COUNTS = [1, 2, 3, 2, 4, 3]


@pytest.fixture
def dotcount(settings):
    registry.register(SPEC)
    templates = ROOT / "tests" / "dotcount" / "templates"
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [*settings.TEMPLATES[0]["DIRS"], templates]}]
    yield SPEC
    registry.unregister(SPEC.name)
    load_trial.cache_clear()


def write_files(folder: Path) -> tuple[Path, Path]:
    """Six images with 1 to 4 dots, their official file, and a model that miscounts one of them."""
    images = folder / "images"
    images.mkdir()
    records = []
    for index, count in enumerate(COUNTS):
        image = Image.new("RGB", (80, 40), "white")
        draw = ImageDraw.Draw(image)
        for dot in range(count):
            draw.ellipse((5 + 18 * dot, 15, 15 + 18 * dot, 25), fill="black")
        image.save(images / f"dots{index}.png")
        records.append(
            {
                "id": f"d{index}",
                "image": f"dots{index}.png",
                "question": "How many dots?",
                "answer": str(count),
            }
        )
    truth = folder / "dots.json"
    truth.write_text(json.dumps(records))
    predictions = folder / "model.json"
    answers = [
        {"id": f"d{index}", "answer": str(count if index != 4 else 3)} for index, count in enumerate(COUNTS)
    ]
    predictions.write_text(json.dumps(answers))
    return truth, predictions


def test_a_benchmark_defined_only_in_tests_goes_through_every_app(
    dotcount, tmp_path, client, django_capture_on_commit_callbacks
):
    truth, predictions = write_files(tmp_path)

    # Imported from the command line, with its images.
    out = io.StringIO()
    call_command(
        "import_dataset",
        "dot-count",
        str(truth),
        "--name",
        "dots",
        "--images",
        str(tmp_path / "images"),
        "--json",
        stdout=out,
    )
    dataset = Dataset.objects.get(pk=json.loads(out.getvalue())["id"])
    assert (dataset.benchmark, dataset.item_count, dataset.has_media) == ("dotcount", 6, True)

    # Scored from the command line ...
    out = io.StringIO()
    call_command(
        "score", "dotcount", "--gt", str(truth), "--predictions", str(predictions), "--json", stdout=out
    )
    from_files = json.loads(out.getvalue())["summary"]["overall"]
    assert from_files["Acc"] == pytest.approx(5 / 6) and from_files["MAE"] == pytest.approx(1 / 6)

    # ... and through the API, with the same numbers.
    researcher = make_user("rita", "researcher")
    api = APIClient()
    api.force_authenticate(researcher)
    response = api.post(
        "/api/v1/submissions/",
        {
            "dataset": dataset.pk,
            "name": "Counter",
            "file": SimpleUploadedFile("model.json", predictions.read_bytes()),
        },
        format="multipart",
    )
    assert response.status_code == 201, response.content
    assert response.json()["summary"]["overall"] == from_files

    # Put in a test plan, answered by a tester in the browser's way (pages and the answer endpoint).
    tester = make_user("tess", "tester")
    response = api.post(
        "/api/v1/test-plans/",
        {"name": "Count", "dataset": dataset.pk, "items_per_tester": 3, "testers": ["tess"], "seed": 1},
        format="json",
    )
    assert response.status_code == 201, response.content
    plan = TestPlan.objects.get(pk=response.json()["id"])
    assert client.login(username="tess", password=PASSWORD)
    client.post(f"/test/plans/{plan.pk}/start/")
    session = TestSession.objects.get(plan=plan, tester=tester)
    assert "dot-count-brief" in client.get(f"/test/sessions/{session.pk}/").content.decode()
    client.post(f"/test/sessions/{session.pk}/begin/")
    for _ in range(3):
        with django_capture_on_commit_callbacks(execute=True):  # the summaries are refreshed after commit
            page = client.get(f"/test/sessions/{session.pk}/")
        assert page.templates[0].name == "humantest/trial.html"
        data = page.context["data"]
        assert data["view"]["question"] == "How many dots?" and data["widget"].endswith("dotcount/widget.js")
        assert 'id="answer-text"' in page.content.decode()  # the plug-in's own widget template
        with django_capture_on_commit_callbacks(execute=True):
            result = client.post(
                f"/test/trials/{data['trial']}/answer/",
                {"answer": {"answer": "2"}},
                content_type="application/json",
            )
        assert result.status_code == 200, result.content
        assert result.json()["truth"]["answer"] in {str(count) for count in COUNTS}
    refused = client.post(
        f"/test/trials/{data['trial']}/answer/", {"answer": {"answer": "2"}}, content_type="application/json"
    )
    assert refused.status_code == 409
    assert client.get(f"/test/sessions/{session.pk}/").templates[0].name == "humantest/finished.html"
    session.refresh_from_db()
    assert session.status == TestSession.Status.FINISHED

    # Both rows in the report, with the benchmark's own columns and plot; Human last.
    client.force_login(researcher)
    page = client.get(f"/datasets/{dataset.pk}/report/").content.decode()
    assert page.index('<tr class="model"><th>Counter</th>') < page.index('<tr class="human"><th>Human</th>')
    assert "MAE" in page and "Accuracy by number of dots" in page
    report = api.get(f"/api/v1/datasets/{dataset.pk}/report/").json()
    assert [row["label"] for row in report["rows"]] == ["Counter", "Human"]
    assert [column["metric"] for column in report["columns"]] == ["Acc", "MAE"]
    # Its diagnostic table under the main one: a column per count some row has (no 5-dot item),
    # the model's miss on the one 4-dot item, and its own exports.
    diagnostic = client.get(f"/datasets/{dataset.pk}/report/").context["diagnostics"][0][0]
    assert [column.group for column in diagnostic.columns] == ["1 dots", "2 dots", "3 dots", "4 dots"]
    counter = diagnostic.rows[0]
    assert [cell.value for cell in counter.cells] == [1.0, 1.0, 1.0, 0.0]
    assert [cell.n for cell in counter.cells] == [1, 2, 2, 1]
    assert 'id="report-by-count"' in page
    tex = client.get(f"/datasets/{dataset.pk}/report.tex?table=by-count").content.decode()
    assert r"\caption{Dot count: accuracy by number of dots" in tex and r"\multicolumn{1}{c}{4 dots}" in tex
    exported_table = client.get(f"/datasets/{dataset.pk}/report.json?table=by-count").json()
    assert exported_table["table"] == "by-count" and exported_table["rows"][0]["cells"][3]["value"] == 0.0
    assert client.get(f"/datasets/{dataset.pk}/report.csv?table=nothing").status_code == 404
    by_api = api.get(f"/api/v1/datasets/{dataset.pk}/report/?table=by-count").json()
    assert by_api["title"] == "Accuracy by number of dots" and by_api["rows"] == exported_table["rows"]
    assert api.get(f"/api/v1/datasets/{dataset.pk}/report/?table=nothing").status_code == 404
    plan.refresh_from_db()
    human = report["rows"][1]["cells"][0]
    assert human["n"] == 3 and human["value"] == pytest.approx(
        plan.pooled_submission.summary["overall"]["Acc"]
    )
    assert plan.pooled_submission.origin == Submission.Origin.TEST_PLAN

    # The item pages and the export know it too.
    item = dataset.items.get(external_id="d0")
    assert "How many dots?" in client.get(f"/datasets/{dataset.pk}/items/{item.pk}/").content.decode()
    exported = b"".join(client.get(f"/datasets/{dataset.pk}/export/").streaming_content)
    assert json.loads(exported) == json.loads(truth.read_text())


def test_no_file_outside_tests_names_the_toy_benchmark():
    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    naming = [
        name
        for name in files
        if not name.startswith("tests/")
        and (ROOT / name).is_file()
        and "dotcount" in (ROOT / name).read_bytes().decode("utf-8", "ignore").lower()
        and not name.startswith("docs/")
    ]
    assert naming == []


def test_an_unknown_benchmark_is_refused_everywhere_instead_of_falling_through(tmp_path):
    with pytest.raises(registry.UnknownBenchmark, match="unknown benchmark 'nosuch'"):
        registry.get("nosuch")
    with pytest.raises(CommandError, match="unknown benchmark 'nosuch'"):
        call_command("score", "nosuch", "--gt", str(tmp_path / "a"), "--predictions", str(tmp_path / "b"))
    with pytest.raises(CommandError, match="unknown benchmark 'nosuch'"):
        call_command("import_dataset", "nosuch", str(tmp_path / "a"), "--name", "x")
    # A dataset whose benchmark is no longer installed: scoring and agreement refuse it by name.
    dataset = Dataset.objects.create(benchmark="nosuch", name="orphan")
    submission = Submission.objects.create(dataset=dataset, name="m")
    with pytest.raises(registry.UnknownBenchmark):
        score_submission(submission)
    with pytest.raises(registry.UnknownBenchmark):
        dataset_agreement(dataset)
    assert dataset.benchmark_title == "nosuch"
