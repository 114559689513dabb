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
