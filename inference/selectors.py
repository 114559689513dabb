"""Reads of the inference app: who sees which runs, what can be run, and a run as JSON."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache as memoize
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from benchmarks import registry
from benchmarks.selectors import datasets_for
from benchmarks.spec import BenchmarkSpec
from inference.baselines import Baseline, baseline_names, baselines_of
from inference.models import ModelRun
from inference.plugins import Plugin, PluginBaseline, discover, plugins_problems
from inference.served import SERVED, ServedBaseline


def runs_for(user: Any) -> QuerySet[ModelRun]:
    """Runs on the datasets a user may browse (researchers and admins: all of them)."""
    if not user.has_perm("inference.view_modelrun"):
        return ModelRun.objects.none()
    return ModelRun.objects.filter(dataset__in=datasets_for(user)).select_related("dataset", "submission")


def runnable_baselines() -> list[tuple[str, Baseline]]:
    """Every baseline and working model plug-in of every benchmark, and its served model, as
    (benchmark name, baseline), benchmarks by title, each benchmark's baselines before its plug-ins."""
    return [
        (spec.name, baseline)
        for spec in registry.specs()
        for baseline in [*baselines_of(spec), *(make() for make in plugin_makers(spec).values())]
    ]


def checkpoint_files() -> list[Path]:
    """Checkpoints people can choose on the run form: the *.pt files in CHECKPOINT_DIR."""
    folder = Path(settings.CHECKPOINT_DIR)
    return sorted(folder.glob("*.pt")) if folder.is_dir() else []


@memoize
def model_plugins() -> tuple[Plugin, ...]:
    """The model plug-ins this process can see (read once per process: installing one means
    restarting the web server and the workers), each with its problem if it is broken."""
    found = discover(settings.MODELS, Path(settings.MODELS_DIR))
    names = {spec.name: [*baseline_names(spec), *served_makers(spec)] for spec in registry.specs()}
    return tuple(plugins_problems(found, names))


def plugin_makers(spec: BenchmarkSpec) -> dict[str, Callable[[], Baseline]]:
    """The benchmark's working plug-ins by name, each as a maker of its baseline wrapper, then the
    built-in served model where the benchmark has a served format."""
    return {
        **{
            plugin.name: partial(PluginBaseline, spec, plugin)
            for plugin in model_plugins()
            if not plugin.problem and plugin.benchmark == spec.name
        },
        **served_makers(spec),
    }


def served_makers(spec: BenchmarkSpec) -> dict[str, Callable[[], Baseline]]:
    """The model `served` (not yet given its options) where the benchmark declares a served format."""
    return {SERVED: partial(ServedBaseline, spec)} if spec.served else {}


def broken_plugins() -> list[Plugin]:
    return [plugin for plugin in model_plugins() if plugin.problem]
