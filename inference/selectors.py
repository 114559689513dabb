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
from benchmarks.storage import checkpoints, is_local, listing, local_path
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


#: How a run names a checkpoint of an object store (a local one is named by its path).
STORED = "stored:"


def checkpoint_files() -> dict[str, str]:
    """Checkpoints people can choose on the run form, by file name: the *.pt files of the
    checkpoints store (CHECKPOINT_DIR, or checkpoints/ of the bucket), each as the reference a run
    keeps: its path on a local store, "stored:<name>" in an object store (each host fetches it)."""
    if is_local(checkpoints):
        folder = Path(checkpoints.path(""))
        return {path.name: str(path) for path in sorted(folder.glob("*.pt"))} if folder.is_dir() else {}
    return {name: STORED + name for name in sorted(listing(checkpoints, "")) if name.endswith(".pt")}


def checkpoint_path(reference: str | Path) -> Path:
    """The checkpoint a run names, as a file on this machine (fetched from the object store into
    this host's cache when the run names a stored one); FileNotFoundError when there is none."""
    reference = str(reference)
    if reference.startswith(STORED):
        return local_path(checkpoints, reference.removeprefix(STORED), checked=True)
    # A checkpoint shipped with the code is named from the code's folder, wherever a host keeps it.
    return Path(settings.BASE_DIR) / reference if not Path(reference).is_absolute() else Path(reference)


def checkpoint_reference(checkpoint: str | Path | None, path: Path | None) -> str:
    """How a run names its checkpoint: as stored ("stored:<name>"), by its path from the code's
    folder when it ships with the code (each host has its own copy), else by its path."""
    if str(checkpoint or "").startswith(STORED):
        return str(checkpoint)
    if path is None:
        return ""
    if path.resolve().is_relative_to(Path(settings.BASE_DIR).resolve()):
        return path.resolve().relative_to(Path(settings.BASE_DIR).resolve()).as_posix()
    return str(path)


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
