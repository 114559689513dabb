"""Reads of the inference app: who sees which runs, what can be run, and a run as JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from benchmarks import registry
from benchmarks.selectors import datasets_for
from inference.baselines import Baseline, baselines_of
from inference.models import ModelRun


def runs_for(user: Any) -> QuerySet[ModelRun]:
    """Runs on the datasets a user may browse (researchers and admins: all of them)."""
    if not user.has_perm("inference.view_modelrun"):
        return ModelRun.objects.none()
    return ModelRun.objects.filter(dataset__in=datasets_for(user)).select_related("dataset", "submission")


def runnable_baselines() -> list[tuple[str, Baseline]]:
    """Every baseline of every benchmark, as (benchmark name, baseline), benchmarks by title."""
    return [(spec.name, baseline) for spec in registry.specs() for baseline in baselines_of(spec)]


def checkpoint_files() -> list[Path]:
    """Checkpoints people can choose on the run form: the *.pt files in CHECKPOINT_DIR."""
    folder = Path(settings.CHECKPOINT_DIR)
    return sorted(folder.glob("*.pt")) if folder.is_dir() else []


def run_json(run: ModelRun) -> dict[str, Any]:
    """What the run page polls and the API returns."""
    return {
        "id": run.pk,
        "dataset": run.dataset_id,
        "benchmark": run.dataset.benchmark,
        "baseline": run.baseline,
        "setting": run.setting,
        "device": run.device,
        "used_device": run.used_device,
        "batch_size": run.batch_size,
        "seed": run.seed,
        "checkpoint": Path(run.checkpoint).name if run.checkpoint else "",
        "checkpoint_sha256": run.checkpoint_sha256,
        "code_version": run.code_version,
        "parameters": run.parameters,
        "status": run.status,
        "stage": run.stage,
        "done": run.done,
        "total": run.total,
        "percent": run.percent,
        "cancel_requested": run.cancel_requested,
        "error": run.error,
        "submission": run.submission_id,
        "summary": run.submission.summary if run.submission_id else None,
        "created_at": run.created_at.isoformat() if run.created_at else None,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "heartbeat_at": run.heartbeat_at.isoformat() if run.heartbeat_at else None,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
    }
