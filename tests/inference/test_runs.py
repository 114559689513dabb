"""Model runs: started, answered in batches with progress, cancelled, reaped, and scored like an upload."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from benchmarks.services import import_dataset
from evaluation.models import Submission
from inference.models import ModelRun
from inference.services import RunRefused, cancel_run, execute_run, start_run
from jobs.services import declare_lost_jobs
from tests.factories import make_user
from tests.inference.conftest import COUNTS, write_dot_files

pytestmark = pytest.mark.django_db


def test_a_run_answers_every_unit_in_batches_and_becomes_a_scored_model_row(dots):
    user = make_user("rita", "researcher")
    run = start_run(dataset=dots, baseline="blobs", batch_size=3, user=user, enqueue=False)
    seen = []
    run = execute_run(run, progress=lambda current: seen.append((current.done, current.total)))
    assert run.status == "succeeded" and run.error == ""
    assert seen[:3] == [(3, 8), (6, 8), (8, 8)]
    submission = run.submission
    assert (submission.name, submission.producer, submission.origin) == ("Blob counter", "model", "model_run")
    assert submission.summary["overall"]["Acc"] == 1.0
    params = submission.parameters
    assert params["model_run"] == run.pk and params["baseline"] == "blobs" and params["device"] == "cpu"
    assert params["code_version"] == run.code_version != ""
    assert run.predictions.name.endswith(".json")


def test_the_run_scores_exactly_what_manage_py_score_gives_for_its_predictions_file(dots, tmp_path):
    run = execute_run(start_run(dataset=dots, baseline="guess", seed=7, enqueue=False))
    predictions = tmp_path / "guess.json"
    predictions.write_bytes(run.predictions.read())
    truth = write_dot_files(tmp_path / "again")
    out = io.StringIO()
    call_command(
        "score", "dotcount", "--gt", str(truth), "--predictions", str(predictions), "--json", stdout=out
    )
    assert json.loads(out.getvalue())["summary"] == run.submission.summary
    assert run.submission.summary["overall"]["Acc"] < 1.0


def test_the_same_seed_gives_the_same_answers_and_another_seed_others(dots):
    def answers(seed):
        run = execute_run(start_run(dataset=dots, baseline="guess", seed=seed, enqueue=False))
        return json.loads(run.predictions.read())

    assert answers(3) == answers(3)
    assert answers(3) != answers(4)
    names = list(Submission.objects.filter(dataset=dots).order_by("pk").values_list("name", flat=True))
    assert names[0] == "Random count" and names[1].startswith("Random count (run ")


def test_a_cancel_mid_run_stops_at_the_next_batch_and_makes_no_submission(dots):
    run = start_run(dataset=dots, baseline="blobs", batch_size=2, enqueue=False)

    def cancel_after_first_batch(current):
        if current.done == 2 and current.status == "running":
            cancel_run(current)

    run = execute_run(run, progress=cancel_after_first_batch)
    assert (run.status, run.done, run.total) == ("cancelled", 2, 8)
    assert "cancelled after 2 of 8" in run.stage
    assert run.submission is None and not Submission.objects.filter(dataset=dots).exists()


def test_a_queued_run_cancelled_never_runs(dots):
    run = start_run(dataset=dots, baseline="blobs", enqueue=False)
    cancel_run(run)
    run = execute_run(ModelRun.objects.get(pk=run.pk))
    assert run.status == "cancelled" and run.started_at is None and run.done == 0


def test_a_queued_run_is_taken_by_the_gpu_queue_worker(dots, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = start_run(dataset=dots, baseline="blobs")
    run.refresh_from_db()
    assert run.status == "succeeded" and run.submission.summary["overall"]["Acc"] == 1.0


def test_a_running_run_without_a_sign_of_life_is_declared_failed(dots, settings):
    settings.JOB_LOST_AFTER_S = 60
    long_ago = timezone.now() - timezone.timedelta(minutes=5)
    lost = start_run(dataset=dots, baseline="blobs", enqueue=False)
    alive = start_run(dataset=dots, baseline="blobs", enqueue=False)
    ModelRun.objects.filter(pk=lost.pk).update(
        status="running", started_at=long_ago, heartbeat_at=long_ago, done=2, total=8
    )
    ModelRun.objects.filter(pk=alive.pk).update(
        status="running", started_at=long_ago, heartbeat_at=timezone.now()
    )
    assert declare_lost_jobs() == {"model-run": [lost.pk]}
    lost.refresh_from_db()
    assert (
        lost.status == "failed" and "stopped (no sign of life" in lost.error and "after 2 of 8" in lost.error
    )
    assert ModelRun.objects.get(pk=alive.pk).status == "running"


@pytest.mark.parametrize(
    ("choices", "message"),
    [
        ({"baseline": "oracle"}, "has no baseline or model 'oracle' (it has: blobs, guess, served)"),
        ({"baseline": "blobs", "setting": "event"}, "setting: Dot count has no settings"),
        ({"baseline": "guess", "checkpoint": "__FILE__"}, "is not a learned model: it takes no checkpoint"),
        ({"baseline": "guess", "checkpoint": "/nonexistent/model.pt"}, "no such file /nonexistent/model.pt"),
        ({"baseline": "guess", "batch_size": 0}, "batch size: expected 1 to"),
        ({"baseline": "guess", "device": "tpu"}, "device: expected one of auto, cpu, cuda"),
    ],
)
def test_bad_choices_are_refused_at_start_and_nothing_is_created(dots, tmp_path, choices, message):
    if choices.get("checkpoint") == "__FILE__":
        (tmp_path / "model.pt").write_bytes(b"not a model")
        choices = {**choices, "checkpoint": str(tmp_path / "model.pt")}
    with pytest.raises(RunRefused, match=message.replace("(", r"\(").replace(")", r"\)")):
        start_run(dataset=dots, **choices)
    assert not ModelRun.objects.exists()


def test_a_baseline_that_looks_at_images_is_refused_on_a_dataset_imported_without_them(dotcount, tmp_path):
    truth = write_dot_files(tmp_path)
    bare = import_dataset(benchmark="dotcount", data=truth.read_bytes(), name="bare")
    with pytest.raises(RunRefused, match="imported without its images, and Blob counter looks at the images"):
        start_run(dataset=bare, baseline="blobs")
    assert start_run(dataset=bare, baseline="guess", enqueue=False).status == "queued"


def test_a_baseline_of_another_benchmark_is_refused(dots, trance_dataset):
    with pytest.raises(RunRefused, match="has no baseline or model 'blobs'"):
        start_run(dataset=trance_dataset, baseline="blobs")
    assert not ModelRun.objects.exists()


def test_the_command_runs_with_a_progress_bar_and_prints_the_scores(dots):
    out, err = io.StringIO(), io.StringIO()
    call_command("run_baseline", "blobs", str(dots.pk), "--batch-size", "4", stdout=out, stderr=err)
    assert "succeeded, 8/8 units" in out.getvalue()
    assert "8/8" in err.getvalue()  # the bar's last state
    out = io.StringIO()
    call_command("run_baseline", "guess", "dots", "--seed", "1", "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert result["status"] == "succeeded" and result["answered"] == len(COUNTS)
    with pytest.raises(CommandError, match="has no baseline or model 'nope'"):
        call_command("run_baseline", "nope", "dots")
    with pytest.raises(CommandError, match="no dataset with id or name 'nothing'"):
        call_command("run_baseline", "guess", "nothing")
    assert ModelRun.objects.count() == 2


def test_a_run_declared_lost_while_its_worker_was_frozen_stops_without_a_submission(dots):
    run = start_run(dataset=dots, baseline="blobs", batch_size=2, enqueue=False)

    def reaped_meanwhile(current):
        if current.done == 4:  # the reaper saw no sign of life and declared the run failed
            ModelRun.objects.filter(pk=current.pk).update(status="failed", error="the worker stopped")

    run = execute_run(run, progress=reaped_meanwhile)
    assert (run.status, run.error) == ("failed", "the worker stopped")
    assert not Submission.objects.filter(dataset=dots).exists()
