"""Model plug-ins: a researcher's package installed with pip, found by its entry points (or a
"module:Class" path in the models folder), run from the page, the API and the command line like a
baseline, with its provenance; a broken one fails the run saying why, and nothing is scored."""

import hashlib
import io
import json
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from evaluation.models import Submission
from inference import selectors
from inference.models import ModelRun
from inference.services import RunRefused, execute_run, start_run
from tests.factories import make_user
from tests.inference.conftest import pip_install_copy

pytestmark = pytest.mark.django_db

PACKAGE = Path(__file__).with_name("toy_models")


@pytest.fixture(scope="module")
def toy_site(tmp_path_factory):
    """The toy package installed by pip into a folder of its own."""
    return pip_install_copy(PACKAGE, tmp_path_factory)


def forget_plugins():
    selectors.model_plugins.cache_clear()
    for name in [name for name in sys.modules if name.startswith(("yardstick_toy_models", "lab_models"))]:
        del sys.modules[name]


@pytest.fixture
def toy_models(toy_site, monkeypatch, settings):
    """The toy package on the path, as if installed in the environment; nothing in the models folder."""
    settings.MODELS = []
    monkeypatch.syspath_prepend(str(toy_site))
    forget_plugins()
    yield toy_site
    forget_plugins()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_installed_package_s_models_are_found_and_a_broken_one_says_why(toy_models, dotcount):
    plugins = {plugin.path: plugin for plugin in selectors.model_plugins()}
    darkness = plugins["yardstick_toy_models.counting:DarkColumns"]
    assert (darkness.package, darkness.package_version, darkness.problem) == (
        "yardstick-toy-models",
        "0.3.1",
        "",
    )
    broken = plugins["yardstick_toy_models.broken:Anything"]
    assert broken.model_class is None
    assert "could not be imported" in broken.problem
    assert "ModuleNotFoundError: No module named 'yardstick_toy_models_missing_dependency'" in broken.problem
    assert "broken.py:3" in broken.problem  # the line that failed, without the server's folders
    assert str(toy_models) not in broken.problem


def test_a_researcher_runs_the_plugin_from_the_page_and_the_row_records_where_it_came_from(
    toy_models, dots, client, django_capture_on_commit_callbacks
):
    client.force_login(make_user("rita", "researcher"))
    page = client.get("/models/new/").content.decode()
    assert 'value="dotcount:darkness"' in page and 'data-batch-size="3"' in page and "(model plug-in)" in page
    assert 'id="broken-plugins"' in page and "yardstick_toy_models_missing_dependency" in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/models/new/", {"dataset": dots.pk, "baseline": "dotcount:darkness", "device": "auto", "seed": 5}
        )
    run = ModelRun.objects.get()
    assert response.status_code == 302
    assert (run.status, run.done, run.total, run.batch_size) == ("succeeded", 8, 8, 3)  # its own batch size
    assert (run.plugin, run.used_device) == ("yardstick_toy_models.counting:DarkColumns", "cpu")
    submission = run.submission
    assert submission.name == "Dark columns" and submission.summary["overall"]["Acc"] == 1.0
    installed = toy_models / "yardstick_toy_models"
    params = submission.parameters
    assert params["plugin"] == "yardstick_toy_models.counting:DarkColumns" and params["seed"] == 5
    assert params["model_package"] == "yardstick-toy-models 0.3.1" and params["model_version"] == "2026.11"
    assert params["model_module_sha256"] == f"counting.py {sha256(installed / 'counting.py')}"
    assert params["model_files_sha256"] == [f"threshold.txt {sha256(installed / 'threshold.txt')}"]
    assert params["model_threshold"] == 128
    shown = client.get(f"/models/{run.pk}/").content.decode()
    assert (
        "Model plug-in" in shown
        and "yardstick-toy-models 0.3.1" in shown
        and sha256(installed / "threshold.txt") in shown
    )


def test_the_command_line_and_the_api_run_it_too(toy_models, dots):
    out = io.StringIO()
    call_command("run_baseline", "darkness", str(dots.pk), "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert result["status"] == "succeeded" and result["summary"]["overall"]["Acc"] == 1.0
    api = APIClient()
    api.force_authenticate(make_user("rita", "researcher"))
    answer = api.post("/api/v1/model-runs/", {"dataset": dots.pk, "baseline": "darkness"}, format="json")
    assert answer.status_code == 201
    assert (
        answer.json()["plugin"] == "yardstick_toy_models.counting:DarkColumns"
        and answer.json()["batch_size"] == 3
    )


def test_answers_in_the_wrong_shape_fail_the_run_and_nothing_is_scored(toy_models, dots):
    run = execute_run(start_run(dataset=dots, baseline="shape-error", enqueue=False))
    assert run.status == "failed" and run.done == 0
    assert "yardstick_toy_models.faulty:WrongShape: the answer for unit d0 is in the wrong shape" in run.error
    assert run.submission is None and not Submission.objects.exists()
    run = execute_run(start_run(dataset=dots, baseline="other-unit", batch_size=4, enqueue=False))
    assert run.status == "failed" and "the answer for unit d0 names d1" in run.error
    assert not Submission.objects.exists()


def test_an_exception_on_one_batch_fails_the_run_with_its_traceback_and_nothing_is_scored(toy_models, dots):
    run = execute_run(start_run(dataset=dots, baseline="third-batch", enqueue=False))
    assert (run.status, run.done) == ("failed", 4)  # two batches of 2 answered, the third raised
    assert "failed on the batch of units d4 to d5" in run.error
    assert "ZeroDivisionError: division by zero" in run.error
    assert "faulty.py" in run.error and "in divide: return size / 0" in run.error
    assert run.submission is None and not Submission.objects.exists()
    with pytest.raises(CommandError, match="ZeroDivisionError"):
        call_command("run_baseline", "third-batch", str(dots.pk), stdout=io.StringIO())


def test_a_plugin_that_cannot_be_imported_is_refused_and_fails_on_a_worker_that_cannot_import_it(
    toy_models, dots
):
    with pytest.raises(RunRefused, match="could not be loaded: yardstick_toy_models.broken:Anything"):
        start_run(dataset=dots, baseline="anything", enqueue=False)
    # The web server could import it; the worker cannot (a dependency missing on that host).
    run = start_run(dataset=dots, baseline="darkness", enqueue=False)
    ModelRun.objects.filter(pk=run.pk).update(plugin="yardstick_toy_models.broken:Anything")
    forget_plugins()
    run = execute_run(ModelRun.objects.get(pk=run.pk))
    assert run.status == "failed" and "ModuleNotFoundError" in run.error and "broken.py:3" in run.error
    assert not Submission.objects.exists()


LAB_MODEL = """
from inference.plugins import Model


class Ones(Model):
    benchmark = "dotcount"
    name = "ones"
    title = "Always one"
    needs_images = False
    device = "cpu"

    def predict(self, batch):
        return [{"id": unit.id, "answer": "1"} for unit in batch]


class Blobs(Ones):
    name = "blobs"  # the benchmark's own baseline has this name


class NotAModel:
    pass
"""


def test_a_module_in_the_models_folder_is_found_by_its_path_and_name_clashes_are_refused(
    dotcount, dots, tmp_path, settings, monkeypatch
):
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "lab_models.py").write_text(LAB_MODEL)
    settings.MODELS_DIR = folder
    settings.MODELS = ["lab_models:Ones", "lab_models:Blobs", "lab_models:NotAModel", "lab_models"]
    monkeypatch.setattr(sys, "path", list(sys.path))  # discovery puts the folder on the path
    forget_plugins()
    try:
        problems = {
            plugin.path: plugin.problem
            for plugin in selectors.model_plugins()
            if plugin.source == "models folder"
        }
        assert problems["lab_models:Ones"] == ""
        assert "the name 'blobs' is taken by another model of dotcount" in problems["lab_models:Blobs"]
        assert "is not a subclass of inference.plugins.Model" in problems["lab_models:NotAModel"]
        assert "expected a path like 'package.module:ClassName'" in problems["lab_models"]
        run = execute_run(start_run(dataset=dots, baseline="ones", enqueue=False))
        assert (
            run.status == "succeeded" and run.submission.summary["overall"]["Acc"] == 0.25
        )  # 2 of 8 have one dot
        assert run.submission.parameters["model_plugin_source"] == "models folder"
        # The benchmark's own baseline keeps its name.
        assert (
            execute_run(start_run(dataset=dots, baseline="blobs", enqueue=False)).submission.name
            == "Blob counter"
        )
    finally:
        forget_plugins()


def test_a_plugin_takes_no_checkpoint_from_the_checkpoint_folder(toy_models, dots, tmp_path):
    checkpoint = tmp_path / "weights.pt"
    checkpoint.write_bytes(b"x")
    with pytest.raises(RunRefused, match="is a model plug-in: it loads its own weights"):
        start_run(dataset=dots, baseline="darkness", checkpoint=checkpoint, enqueue=False)
