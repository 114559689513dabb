"""The whole path on TRANCE with the shipped TranceNet on the CPU: run, score, compare with `manage.py score`."""

import io
import json

import pytest
import torch
from django.core.management import call_command

from inference.models import ModelRun
from inference.services import RunRefused, execute_run, start_run

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("setting", ["event", "view"])
def test_trancenet_answers_on_the_cpu_and_scores_as_manage_py_score_does(
    trance_dataset, trance_files, tmp_path, setting
):
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "run_baseline", "trancenet", str(trance_dataset.pk), "--setting", setting, "--device", "cpu",
        "--batch-size", "5", "--json", stdout=out, stderr=err,
    )  # fmt: skip
    result = json.loads(out.getvalue())
    assert (result["status"], result["answered"], result["units"], result["device"]) == (
        "succeeded",
        12,
        12,
        "cpu",
    )
    run = ModelRun.objects.get(pk=result["run"])
    predictions = tmp_path / "predictions.json"
    predictions.write_bytes(run.predictions.read())
    answers = json.loads(predictions.read_text())
    assert sorted(answers, key=int) == [str(i) for i in range(12)]
    # View: an answer per final camera, each from that camera's render (the released protocol).
    per_answer = [
        steps for answer in answers.values() for steps in (answer.values() if setting == "view" else [answer])
    ]
    assert len(per_answer) == (36 if setting == "view" else 12)
    assert all(1 <= len(steps) <= 4 for steps in per_answer)
    scored = io.StringIO()
    call_command(
        "score", "trance", "--gt", str(trance_files / "data.jsonl"), "--predictions", str(predictions),
        "--setting", setting, "--json", stdout=scored,
    )  # fmt: skip
    assert json.loads(scored.getvalue())["summary"] == run.submission.summary
    assert run.submission.summary["n"] == (36 if setting == "view" else 12)
    params = run.submission.parameters
    assert params["checkpoint"] == "trancenet-basic.pt" and len(params["checkpoint_sha256"]) == 64
    assert params["model_encoder"] == "cnn" and params["model_parameters"] > 0


def test_a_setting_the_dataset_cannot_be_scored_in_fails_before_any_unit_is_answered(trance_dataset):
    run = execute_run(start_run(dataset=trance_dataset, baseline="trancenet", setting="basic", enqueue=False))
    assert run.status == "failed" and run.done == 0 and run.submission is None
    assert "Basic needs one transformation" in run.error


def test_the_same_seed_repeats_the_random_baseline_and_the_model_is_deterministic(trance_dataset):
    def answers(baseline, seed):
        run = execute_run(
            start_run(dataset=trance_dataset, baseline=baseline, setting="event", seed=seed, enqueue=False)
        )
        assert run.status == "succeeded", run.error
        return run.predictions.read()

    assert answers("random", 5) == answers("random", 5) != answers("random", 6)
    assert answers("trancenet", 0) == answers("trancenet", 0)


def test_the_symbolic_solver_answers_every_sample_exactly(trance_dataset):
    run = execute_run(start_run(dataset=trance_dataset, baseline="symbolic", setting="event", enqueue=False))
    assert run.submission.summary["Acc"] == 1.0


def test_a_checkpoint_of_another_model_or_no_checkpoint_at_all_is_refused_at_start(trance_dataset, tmp_path):
    other = tmp_path / "other.pt"
    torch.save({"model": "resnet-classifier", "config": {}, "state_dict": {}}, other)
    with pytest.raises(
        RunRefused, match="other.pt is a checkpoint of model 'resnet-classifier', not 'trancenet'"
    ):
        start_run(dataset=trance_dataset, baseline="trancenet", setting="basic", checkpoint=other)
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"these are not weights")
    with pytest.raises(RunRefused, match="junk.pt is not a torch checkpoint TranceNet can read"):
        start_run(dataset=trance_dataset, baseline="trancenet", setting="basic", checkpoint=junk)
    assert not ModelRun.objects.exists()


def test_trancenet_is_refused_at_start_on_a_dataset_imported_without_its_images(trance_files):
    from benchmarks.services import import_dataset

    blind = import_dataset(
        benchmark="trance", data=(trance_files / "data.jsonl").read_bytes(), name="no renders", split="val"
    )
    with pytest.raises(RunRefused, match="imported without its images, and TranceNet looks at the images"):
        start_run(dataset=blind, baseline="trancenet", setting="event", enqueue=False)
    assert not ModelRun.objects.exists()


def test_the_shipped_checkpoint_is_named_from_the_code_folder_so_each_host_reads_its_own_copy(
    trance_dataset, settings, tmp_path
):
    import shutil
    from pathlib import Path

    from inference.selectors import checkpoint_path

    run = start_run(dataset=trance_dataset, baseline="trancenet", setting="event", enqueue=False)
    assert run.checkpoint == "plugins/trance/baselines/checkpoints/trancenet-basic.pt"
    # A worker whose code is in another folder reads its own copy (the same bytes: the sha256 agrees).
    elsewhere = tmp_path / "code"
    (elsewhere / run.checkpoint).parent.mkdir(parents=True)
    shutil.copyfile(Path(settings.BASE_DIR) / run.checkpoint, elsewhere / run.checkpoint)
    settings.BASE_DIR = elsewhere
    assert checkpoint_path(run.checkpoint) == elsewhere / run.checkpoint
    assert execute_run(run).status == "succeeded", run.error
