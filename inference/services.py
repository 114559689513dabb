"""Writes of the inference app: starting, running, cancelling and reaping model runs.

`start_run` checks every choice before anything is made (the baseline is the dataset's
benchmark's, the setting is the benchmark's and the baseline's, the checkpoint is one of this
baseline's model, the dataset has the images the baseline looks at) and queues the run on the
Celery `gpu` queue. `execute_run` is the worker's side, also called in-process by
`manage.py run_baseline`: it answers the units in batches, writes progress and a sign of life,
stops at the next batch when a cancel was asked, and hands the prediction file to the
evaluation engine's single writer. `run_lost` ends a run whose worker died (jobs' reaper calls it).
"""

from __future__ import annotations

import logging
import subprocess
import time
from collections.abc import Callable, Mapping
from functools import cache as memoize
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile, File
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from benchmarks.models import Dataset
from benchmarks.spec import ScoringInput
from benchmarks.storage import local_folder
from benchmarks.storage import media as media_store
from evaluation.models import Submission
from evaluation.services import SubmissionRefused, scenes_of, submit_predictions
from inference.baselines import (
    CPU,
    CUDA,
    Baseline,
    BaselineRefused,
    RunChoices,
    Unit,
    file_digest,
    load_baseline,
)
from inference.models import ModelRun
from inference.plugins import Plugin, PluginBaseline, PluginFailed, import_model
from inference.selectors import (
    STORED,
    checkpoint_path,
    checkpoint_reference,
    model_plugins,
    plugin_makers,
    served_makers,
)
from inference.served import OptionsRefused, ServedBaseline, ServedFailed
from jobs import services as jobs
from jobs.models import ACTIVE

logger = logging.getLogger(__name__)

#: The Celery queue model runs go to: a worker on a GPU machine consumes it (`-Q gpu`).
GPU_QUEUE = "gpu"
MAX_BATCH_SIZE = 4096


class RunRefused(ValueError):
    """The run cannot start with these choices; nothing was created."""


class RunCancelled(Exception):
    """Raised inside a run when someone asked to cancel it."""


class RunTakenAway(Exception):
    """Raised inside a run whose row says it is no longer running (declared lost while this worker
    was frozen, or deleted): it stops without writing, and the row keeps what it says."""


# --- starting ----------------------------------------------------------------------------------


def checked_baseline(
    dataset: Dataset,
    baseline_name: str,
    *,
    setting: str = "",
    checkpoint: str | Path | None = None,
    batch_size: int | None = None,
    device: str = ModelRun.Device.AUTO,
    options: Mapping | None = None,
) -> tuple[Baseline, Path | None]:
    """The baseline and its checkpoint file once every choice is checked; RunRefused says what is wrong.

    `options` are a served model's (endpoint, protocol, ...): checked here, each refusal naming its
    option; any other model takes none."""
    spec = dataset.spec
    try:
        baseline = load_baseline(spec, baseline_name, plugin_makers(spec))
    except BaselineRefused as error:
        raise RunRefused(f"{dataset}: {error}{broken_plugins_note(spec)}") from None
    if isinstance(baseline, ServedBaseline):
        try:
            with_site_settings(baseline).configure(options)
        except OptionsRefused as error:
            raise RunRefused(str(error)) from None
    elif options:
        raise RunRefused(
            _("options: only a served model takes options; %(baseline)s takes none")
            % {"baseline": baseline.title}
        )
    if batch_size is None:
        batch_size = baseline.default_batch_size
    problem = spec.setting_problem(setting) or baseline.setting_problem(setting)
    if problem:
        raise RunRefused(_("setting: %(problem)s") % {"problem": problem})
    if device not in ModelRun.Device.values:
        raise RunRefused(
            _("device: expected one of %(choices)s, got %(device)r")
            % {"choices": ", ".join(ModelRun.Device.values), "device": device}
        )
    if not 1 <= batch_size <= MAX_BATCH_SIZE:
        raise RunRefused(
            _("batch size: expected 1 to %(most)s, got %(size)s")
            % {"most": MAX_BATCH_SIZE, "size": batch_size}
        )
    if getattr(baseline, "needs_images", False) and not dataset.has_media:
        raise RunRefused(
            _(
                "%(dataset)s was imported without its images, and %(baseline)s looks at the images: "
                "import it again with its images"
            )
            % {"dataset": dataset, "baseline": baseline.title}
        )
    # A path given here (the command line's) is the caller's, from where they are; a stored one is
    # fetched into this host's cache.
    try:
        if not checkpoint:
            path = None
        elif str(checkpoint).startswith(STORED):
            path = checkpoint_path(checkpoint)
        else:
            path = Path(checkpoint).absolute()
    except FileNotFoundError:
        path = Path(str(checkpoint).removeprefix(STORED))
    if path is not None and not path.is_file():
        raise RunRefused(_("checkpoint: no such file %(path)s") % {"path": path})
    problem = baseline.checkpoint_problem(path)
    if problem:
        raise RunRefused(_("checkpoint: %(problem)s") % {"problem": problem})
    path = baseline.resolved_checkpoint(path)
    if path is not None and checkpoint is None:
        problem = baseline.checkpoint_problem(path)
        if problem:
            raise RunRefused(_("checkpoint: %(problem)s") % {"problem": problem})
    return baseline, path


def start_run(
    *,
    dataset: Dataset,
    baseline: str,
    setting: str = "",
    checkpoint: str | Path | None = None,
    device: str = ModelRun.Device.AUTO,
    batch_size: int | None = None,
    seed: int = 0,
    options: Mapping | None = None,
    user=None,
    enqueue: bool = True,
) -> ModelRun:
    """A new queued run (on the `gpu` queue unless `enqueue` is False); RunRefused creates nothing.

    A person has at most settings.MODEL_RUNS_PER_PERSON runs queued or running at once: the queue
    is shared, and one person's 25 runs would keep everybody else's waiting behind them.
    """
    chosen, path = checked_baseline(
        dataset,
        baseline,
        setting=setting,
        checkpoint=checkpoint,
        batch_size=batch_size,
        device=device,
        options=options,
    )
    if user is not None and (problem := run_limit_problem(user)):
        raise RunRefused(problem)
    run = ModelRun.objects.create(
        dataset=dataset,
        baseline=chosen.name,
        plugin=chosen.plugin.path if isinstance(chosen, PluginBaseline) else "",
        options=chosen.options.as_dict() if isinstance(chosen, ServedBaseline) and chosen.options else {},
        setting=setting,
        device=device,
        batch_size=batch_size if batch_size is not None else chosen.default_batch_size,
        seed=seed,
        checkpoint=checkpoint_reference(checkpoint, path),
        checkpoint_sha256=file_digest(path) if path else "",
        code_version=code_version(),
        created_by=user,
        stage="waiting for a worker",
    )
    if enqueue:
        jobs.enqueue("inference.run_model", run.pk, queue=GPU_QUEUE)
    return run


def broken_plugins_note(spec) -> str:
    """For a refusal of an unknown name: the plug-ins that could not be loaded, which may be it."""
    broken = [plugin for plugin in model_plugins() if plugin.problem and plugin.benchmark in ("", spec.name)]
    if not broken:
        return ""
    return "; these model plug-ins could not be loaded: " + "; ".join(
        plugin.problem.splitlines()[0] for plugin in broken
    )


def run_model(run: ModelRun) -> Baseline:
    """The run's baseline, or its plug-in imported again here (a worker may lack what the web
    server had: then PluginBroken says why, with the traceback)."""
    spec = run.dataset.spec
    if not run.plugin:
        baseline = load_baseline(spec, run.baseline, served_makers(spec))
        if isinstance(baseline, ServedBaseline):
            with_site_settings(baseline).configure(run.options)
        return baseline
    known = next((plugin for plugin in model_plugins() if plugin.path == run.plugin), None)
    plugin = known if known is not None and not known.problem else Plugin(path=run.plugin, source="run")
    if plugin.model_class is None:
        plugin.model_class = import_model(run.plugin)
    return PluginBaseline(spec, plugin)


def with_site_settings(baseline: ServedBaseline) -> ServedBaseline:
    """A served model as this site runs it: its backoff, and the hosts a run may reach."""
    baseline.backoff_s = settings.SERVED_BACKOFF_S
    baseline.retry_after_max_s = settings.SERVED_RETRY_AFTER_MAX_S
    baseline.allowed_hosts = tuple(settings.SERVED_ALLOWED_HOSTS)
    return baseline


def run_limit_problem(user) -> str | None:
    """Why `user` may not start another run now (None when they may)."""
    limit = settings.MODEL_RUNS_PER_PERSON
    active = ModelRun.objects.filter(created_by=user, status__in=ACTIVE).count()
    if limit <= 0 or active < limit:
        return None
    return _(
        "you have %(active)s model runs queued or running, the most one person may have at once "
        "(%(most)s): wait for one to finish, or cancel one"
    ) % {"active": active, "most": limit}


@memoize
def code_version() -> str:
    """The commit the code runs from (with "-dirty" when changed since), or "unknown"."""
    try:
        result = subprocess.run(
            # The services run as another user than the one owning the clone: git would refuse
            # the repository as of "dubious ownership" without being told it is safe.
            [
                "git",
                "-c",
                f"safe.directory={settings.BASE_DIR}",
                "describe",
                "--always",
                "--dirty",
                "--abbrev=12",
            ],
            cwd=settings.BASE_DIR,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return result.stdout.strip() if result.returncode == 0 and result.stdout.strip() else "unknown"


# --- cancelling and reaping --------------------------------------------------------------------


def cancel_run(run: ModelRun) -> ModelRun:
    """Stop a run: a queued one at once, a running one at its next batch; a finished one is left."""
    with transaction.atomic():
        run = ModelRun.objects.select_for_update().get(pk=run.pk)
        if run.status == ModelRun.Status.QUEUED:
            finish(run, ModelRun.Status.CANCELLED, stage="cancelled before a worker took it")
        elif run.status == ModelRun.Status.RUNNING:
            run.cancel_requested = True
            run.stage = "cancelling at the next batch"
            run.save(update_fields=["cancel_requested", "stage"])
    return run


def run_lost(run: ModelRun, seconds: int) -> None:
    """End a run whose worker stopped beating (the reaper's handler): nothing was submitted."""
    finish(
        run,
        ModelRun.Status.FAILED,
        error=(
            f"the worker running this model stopped (no sign of life for {seconds} s) after "
            f"{run.done} of {run.total} units; no submission was made: start the run again"
        ),
        stage="worker lost",
    )


def finish(run: ModelRun, status: str, *, error: str = "", stage: str = "") -> None:
    run.status = status
    run.error = error[:5000]
    with translation.override("en"):  # a stored stage is the same whoever's request ended the run
        run.stage = stage or str(run.get_status_display()).lower()
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "error", "stage", "finished_at"])


# --- running -----------------------------------------------------------------------------------


def dataset_units(dataset: Dataset) -> list[Unit]:
    """The dataset's scoring units in file order, as baselines see them (images as file paths). An
    item whose image is its scene's (a scene graph's photo, asked about by several items) has it as
    its "image", as its page shows it.

    The paths are on this machine: from an object store, the dataset's images are fetched into this
    worker's cache first (what is there already is kept; a baseline that never opens them costs one
    download per worker and dataset)."""
    spec = dataset.spec
    media_root = local_folder(media_store, dataset.media_folder) if dataset.has_media else Path(".")
    scenes = dict(dataset.scenes.values_list("pk", "data"))
    scene_images = (
        dict(dataset.scenes.exclude(image="").values_list("pk", "image")) if dataset.has_media else {}
    )
    rows = dataset.items.order_by("position").values_list(
        "external_id", "payload", "ground_truth", "media", "scene_id"
    )
    units = []
    for external_id, payload, ground_truth, media, scene_id in rows.iterator(chunk_size=2000):
        images = {role: str(media_root / name.rsplit("/", 1)[-1]) for role, name in (media or {}).items()}
        if not images and scene_id in scene_images:
            images = {"image": str(media_root / scene_images[scene_id].rsplit("/", 1)[-1])}
        scene = scenes.get(scene_id)
        for unit in spec.units(external_id, payload, ground_truth):
            units.append(Unit(unit.id, unit.part, unit.record, payload, images, scene))
    return units


def resolve_device(requested: str) -> str:
    """The device a run uses here: "auto" is CUDA when this worker has a GPU, else the CPU."""
    if requested == CPU:
        return CPU
    try:
        import torch
    except ImportError:
        torch = None
    has_cuda = torch is not None and torch.cuda.is_available()
    if requested == CUDA and not has_cuda:
        raise RunRefused(
            "device: CUDA was asked for, but this worker has no GPU (or no CUDA build of PyTorch)"
        )
    return CUDA if has_cuda else CPU


def execute_run(run: ModelRun, *, progress: Callable[[ModelRun], None] | None = None) -> ModelRun:
    """Run a queued model run to its end here (a worker, or the command line); the row says how it went.

    A run another worker took, or one cancelled while queued, is left as it is.
    """
    if not jobs.take(run, heartbeat_at=timezone.now(), stage="loading the model and the units"):
        return run
    with jobs.beating(run):
        try:
            answer_and_submit(run, progress)
        except RunCancelled:
            finish(run, ModelRun.Status.CANCELLED, stage=f"cancelled after {run.done} of {run.total} units")
        except RunTakenAway:
            logger.warning("model run %s stopped: its row no longer says it is running", run.pk)
            run = ModelRun.objects.filter(pk=run.pk).first() or run
        except (
            RunRefused,
            BaselineRefused,
            SubmissionRefused,
            PluginFailed,
            ServedFailed,
            ValueError,
        ) as error:
            finish(run, ModelRun.Status.FAILED, error=str(error), stage="failed")
        except Exception as error:  # the row must not stay "running": say what broke
            logger.exception("model run %s failed", run.pk)
            finish(run, ModelRun.Status.FAILED, error=f"{type(error).__name__}: {error}", stage="failed")
    if progress is not None:
        progress(run)
    return run


def answer_and_submit(run: ModelRun, progress: Callable[[ModelRun], None] | None) -> None:
    baseline = run_model(run)
    try:
        answer_with(run, baseline, progress)
    finally:
        if isinstance(baseline, ServedBaseline):
            keep_audit(run, baseline)


def run_checkpoint(run: ModelRun) -> Path | None:
    """The run's checkpoint as a file on this machine, the same bytes as when the run was started
    (a checkpoint replaced since would give other answers under the same name)."""
    if not run.checkpoint:
        return None
    path = checkpoint_path(run.checkpoint)
    if run.checkpoint_sha256 and file_digest(path) != run.checkpoint_sha256:
        raise ValueError(
            f"checkpoint {run.checkpoint_name} changed since the run was started: its sha256 is no "
            f"longer {run.checkpoint_sha256}"
        )
    return path


def answer_with(run: ModelRun, baseline: Baseline, progress: Callable[[ModelRun], None] | None) -> None:
    dataset = run.dataset
    spec = dataset.spec
    device = resolve_device(baseline.device_for(run.device)) if baseline.learned else CPU
    units = dataset_units(dataset)
    check_scorable(run, units)
    run.total = len(units)
    run.used_device = device
    run.save(update_fields=["total", "used_device"])
    baseline.load(
        units,
        RunChoices(
            setting=run.setting,
            device=device,
            seed=run.seed,
            checkpoint=run_checkpoint(run),
            batch_size=run.batch_size,
            workers=settings.INFERENCE_LOADER_WORKERS if baseline.learned else 0,
            cache_dir=Path(settings.INFERENCE_CACHE_DIR),
        ),
    )
    run.parameters = baseline.parameters()
    run.stage = "answering"
    run.save(update_fields=["parameters", "stage"])
    answers: list[tuple[str, Any]] = []
    started = time.perf_counter()
    for batch, inputs in baseline.batches(units, run.batch_size):
        predictions = baseline.predict(batch, inputs)
        if len(predictions) != len(batch):
            raise ValueError(
                f"{baseline.title} gave {len(predictions)} answers for a batch of {len(batch)} units"
            )
        answers.extend((unit.id, prediction) for unit, prediction in zip(batch, predictions, strict=True))
        run.done = len(answers)
        run.heartbeat_at = timezone.now()
        run.save(update_fields=["done", "heartbeat_at"])
        if progress is not None:
            progress(run)
        state = ModelRun.objects.filter(pk=run.pk).values_list("status", "cancel_requested").first()
        if state is None or state[0] != ModelRun.Status.RUNNING:
            raise RunTakenAway(state[0] if state else "deleted")
        if state[1]:
            raise RunCancelled
    seconds = time.perf_counter() - started
    if isinstance(baseline, ServedBaseline):
        keep_audit(run, baseline)  # before the run ends, so its page shows the link when it does
    run.stage = "scoring"
    # Read again once answered: what a model counts while answering (failed programs, a served
    # model's requests and retries) belongs in the report too.
    run.parameters = {**run.parameters, **baseline.parameters(), "answer_seconds": round(seconds, 3)}
    data = spec.write_predictions(answers)
    run.predictions.save(f"run-{run.pk}-predictions.json", ContentFile(data), save=False)
    run.save(update_fields=["stage", "parameters", "predictions"])
    submission = submit_predictions(
        dataset=dataset,
        name=submission_name(run, baseline),
        data=data,
        producer=Submission.Producer.MODEL,
        origin=Submission.Origin.MODEL_RUN,
        setting=run.setting,
        source=f"model run {run.pk}",
        parameters=run_parameters(run, baseline),
        created_by=run.created_by,
    )
    run.submission = submission
    run.save(update_fields=["submission"])
    finish(run, ModelRun.Status.SUCCEEDED, stage=f"{run.done} units answered and scored")


def keep_audit(run: ModelRun, baseline: ServedBaseline) -> None:
    """A served model's requests and responses, kept with the run however it ends (a failed run's
    audit is where people see why), with what it counted (requests, retries) in its parameters;
    once (a second call finds nothing left to keep). A row deleted meanwhile gets nothing; a problem
    saving is logged, never raised over the run's own."""
    path = baseline.close()
    if path is None:
        return
    try:
        with path.open("rb") as handle:
            run.audit.save(f"run-{run.pk}-requests.jsonl", File(handle), save=False)
        run.parameters = {**run.parameters, **baseline.parameters()}
        ModelRun.objects.filter(pk=run.pk).update(audit=run.audit.name, parameters=run.parameters)
    except Exception:
        logger.exception("model run %s: its requests and responses could not be kept", run.pk)
    finally:
        path.unlink(missing_ok=True)


def check_scorable(run: ModelRun, units: list[Unit]) -> None:
    """Fail before answering when the metric cannot score this dataset in the run's setting (a
    single-step setting on samples of several steps, say): scoring no answers raises what scoring them would."""
    spec = run.dataset.spec
    spec.score(
        ScoringInput(
            records=[unit.record for unit in units],
            answers={},
            setting=run.setting,
            scenes=scenes_of(run.dataset) if spec.scores_with_scenes else (),
        )
    )


def submission_name(run: ModelRun, baseline: Baseline) -> str:
    """The report row's label: the baseline's title, with the run's number when the title is taken."""
    taken = Submission.objects.filter(dataset=run.dataset, name=baseline.title, setting=run.setting).exists()
    return f"{baseline.title} (run {run.pk})" if taken else baseline.title


def run_parameters(run: ModelRun, baseline: Baseline) -> dict[str, Any]:
    """How the answers were made, kept on the submission and shown with the report."""
    return {
        "model_run": run.pk,
        "baseline": run.baseline,
        **({"plugin": run.plugin} if run.plugin else {}),
        "baseline_uses": baseline.uses,
        "checkpoint": run.checkpoint_name if run.checkpoint else "",
        "checkpoint_sha256": run.checkpoint_sha256,
        "device": run.used_device,
        "seed": run.seed,
        "batch_size": run.batch_size,
        "code_version": run.code_version,
        **{f"model_{key}": value for key, value in run.parameters.items()},
    }
