"""Model plug-ins: a researcher's own model, run on the `gpu` queue like a baseline (pure, no Django).

A plug-in is a `Model` subclass in an installed package, named by an entry point in the group
`yardstick.models`, or a "module:Class" path importable from the configured models folder
(`YARDSTICK_MODELS_DIR`, `YARDSTICK_MODELS`). It declares the benchmark whose items it answers,
its device and batch size; it is loaded once per run (`load`) and then answers batches
(`predict`). It sees each item as people see it (`ModelInput`: the question or scene shown, the
images as files), never the ground truth, and answers in the benchmark's prediction format (one
answer per input: the record a prediction file holds for that unit, as docs/models.md shows per
benchmark).

Yardstick wraps a plug-in in `PluginBaseline`, so a run of it goes through exactly the machinery
of the baselines (queue, progress, cancel, heartbeat, the reaper, scoring through the one writer).
What goes wrong is the plug-in's, and the run says so: an import error, an exception in `load` or
on one batch fails the run with the traceback summarised (`traceback_summary`); an answer that the
benchmark's prediction reader refuses fails it naming the unit and field. Nothing is scored then.

The run's provenance names the plug-in: its path, the package and version it came from, the
sha256 of its module file and of every file it lists in `files()` (weights), and the seed.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import sys
import traceback
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inference.baselines import CPU, CUDA, Baseline, BaselineRefused, RunChoices, Unit, file_digest

if TYPE_CHECKING:
    from benchmarks.spec import BenchmarkSpec

#: The entry-point group an installed package names its models in.
ENTRY_POINT_GROUP = "yardstick.models"
#: What a plug-in may declare as its device: "auto" is CUDA where the worker has a GPU.
AUTO = "auto"
PLUGIN_DEVICES = (AUTO, CPU, CUDA)
#: How much of a traceback a failed run keeps (the last frames and the error itself).
TRACEBACK_FRAMES = 6
TRACEBACK_CHARACTERS = 3000


@dataclass(frozen=True)
class ModelInput:
    """One unit as a plug-in sees it: what people are shown, never the answer.

    `id`: the unit id the prediction names (a string). `setting`: the run's setting (one of the
    benchmark's settings; "" where it has none). `payload`: the item as people see it (the question,
    the initial scene's objects, ...). `images`: media role -> absolute file path.
    """

    id: str
    setting: str
    payload: Mapping[str, Any] = field(default_factory=dict)
    images: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class LoadContext:
    """What `Model.load` is handed: the device chosen for this run, the seed, the batch size."""

    device: str = CPU
    seed: int = 0
    batch_size: int = 16
    setting: str = ""


class Model:
    """A researcher's model. Subclass it, fill in the names, write `load` and `predict`.

    `benchmark`: the name of the benchmark whose items it answers (its spec's `name`).
    `name`: the key people type (`manage.py run_baseline <name> <dataset>`), unique within the
    benchmark. `device`: "cpu", "cuda" or "auto" (CUDA where the worker has a GPU). `batch_size`:
    the batch size a run uses unless it names one. `settings`: the settings it answers (empty:
    all). `needs_images`: whether it looks at the images (a dataset imported without them is refused).
    `version`: the model's own version ("" : the package's).
    """

    benchmark: str = ""
    name: str = ""
    title: str = ""
    description: str = ""
    uses: str = "the images and the question, as people see them"
    device: str = AUTO
    batch_size: int = 16
    settings: tuple[str, ...] = ()
    needs_images: bool = True
    version: str = ""

    def files(self) -> Iterable[Path]:
        """Files the answers depend on (weights, vocabularies): each one's sha256 is recorded."""
        return ()

    def load(self, context: LoadContext) -> None:
        """Get ready once per run: read the weights, move them to `context.device`, seed."""

    def predict(self, batch: Sequence[ModelInput]) -> list[Any]:
        """One answer per input, in order, each as the benchmark's prediction file holds it."""
        raise NotImplementedError

    def parameters(self) -> dict[str, Any]:
        """Anything else a report should say of how the answers were made (model size, ...)."""
        return {}


class PluginBroken(BaselineRefused):
    """The plug-in could not be imported or is not a usable Model: the message says why."""


@dataclass
class Plugin:
    """One plug-in as discovery found it. `model_class` is None when it is broken (`problem`)."""

    path: str
    source: str
    package: str = ""
    package_version: str = ""
    model_class: type[Model] | None = None
    problem: str = ""

    @property
    def benchmark(self) -> str:
        return self.model_class.benchmark if self.model_class else ""

    @property
    def name(self) -> str:
        return self.model_class.name if self.model_class else self.path


def traceback_summary(error: BaseException, *, frames: int = TRACEBACK_FRAMES) -> str:
    """The last frames of an error's traceback and the error, short enough for a run's page."""
    stack = traceback.extract_tb(error.__traceback__)[-frames:]
    lines = [
        f"  {Path(frame.filename).name}:{frame.lineno} in {frame.name}: {(frame.line or '').strip()}"
        for frame in stack
    ]
    text = "\n".join([f"{type(error).__name__}: {error}", "Traceback (last calls):", *lines])
    return text if len(text) <= TRACEBACK_CHARACTERS else text[: TRACEBACK_CHARACTERS - 1] + "…"


def import_model(path: str) -> type[Model]:
    """The class a "module:Class" path names; PluginBroken with the traceback when it cannot be had."""
    module_name, colon, class_name = path.partition(":")
    if not colon or not module_name or not class_name:
        raise PluginBroken(f"{path!r}: expected a path like 'package.module:ClassName'")
    try:
        module = importlib.import_module(module_name)
        model_class = getattr(module, class_name)
    except Exception as error:  # a plug-in's import may raise anything: say what, not crash
        raise PluginBroken(f"{path}: could not be imported\n{traceback_summary(error)}") from error
    problem = class_problem(model_class)
    if problem:
        raise PluginBroken(f"{path}: {problem}")
    return model_class


def class_problem(model_class: Any) -> str:
    """Why a class cannot serve as a model plug-in ("" when it can)."""
    if not (isinstance(model_class, type) and issubclass(model_class, Model)):
        return "is not a subclass of inference.plugins.Model"
    if not model_class.benchmark:
        return "declares no benchmark (set `benchmark`)"
    if not model_class.name:
        return "declares no name (set `name`)"
    if model_class.device not in PLUGIN_DEVICES:
        return f"device must be one of {', '.join(PLUGIN_DEVICES)}, not {model_class.device!r}"
    if not isinstance(model_class.batch_size, int) or model_class.batch_size < 1:
        return f"batch_size must be a whole number of at least 1, not {model_class.batch_size!r}"
    return ""


def discover(
    paths: Sequence[str] = (), folder: Path | None = None, *, entry_points: bool = True
) -> list[Plugin]:
    """Every plug-in: the installed packages' entry points, then the folder's paths, in order.

    A plug-in that cannot be imported is listed with its problem (the run form shows it, a run of
    it fails saying why); discovery itself never raises.
    """
    found: list[Plugin] = []
    if entry_points:
        for entry in sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            dist = entry.dist
            found.append(
                loaded(
                    Plugin(
                        path=entry.value,
                        source=f"entry point {entry.name!r}",
                        package=dist.name if dist else "",
                        package_version=dist.version if dist else "",
                    )
                )
            )
    if paths:
        if folder is not None and str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
        for path in paths:
            found.append(loaded(Plugin(path=path, source="models folder")))
    return found


def loaded(plugin: Plugin) -> Plugin:
    try:
        plugin.model_class = import_model(plugin.path)
    except PluginBroken as error:
        plugin.problem = str(error)
    return plugin


def plugins_problems(plugins: Sequence[Plugin], spec_baselines: Mapping[str, Sequence[str]]) -> list[Plugin]:
    """Mark the plug-ins whose name another model of their benchmark already has (a baseline, or an
    earlier plug-in) or whose benchmark does not exist; returns them all, in order."""
    taken: dict[str, set[str]] = {benchmark: set(names) for benchmark, names in spec_baselines.items()}
    for plugin in plugins:
        if plugin.problem:
            continue
        benchmark = plugin.benchmark
        if benchmark not in taken:
            known = ", ".join(sorted(taken)) or "none"
            plugin.problem = f"{plugin.path}: no benchmark {benchmark!r} (there are: {known})"
        elif plugin.name in taken[benchmark]:
            plugin.problem = (
                f"{plugin.path}: the name {plugin.name!r} is taken by another model of {benchmark}"
            )
        else:
            taken[benchmark].add(plugin.name)
    return list(plugins)


class PluginBaseline(Baseline):
    """A plug-in as the run machinery sees it: a baseline whose answers come from `Model.predict`."""

    learned = True  # it runs on a device; it takes no checkpoint from the checkpoint folder

    def __init__(self, spec: BenchmarkSpec, plugin: Plugin):
        super().__init__(spec)
        if plugin.model_class is None:
            raise PluginBroken(plugin.problem)
        model_class = plugin.model_class
        self.plugin = plugin
        self.plugin_path = plugin.path
        self.model_class = model_class
        self.model: Model | None = None
        self.name = model_class.name
        self.title = model_class.title or model_class.name
        self.description = model_class.description
        self.uses = model_class.uses
        self.needs_images = model_class.needs_images
        self.settings = tuple(model_class.settings)
        self.default_batch_size = model_class.batch_size
        self.declared_device = model_class.device

    def checkpoint_problem(self, checkpoint: Path | None) -> str | None:
        if checkpoint is not None:
            return f"{self.title} is a model plug-in: it loads its own weights and takes no checkpoint"
        return None

    def resolved_checkpoint(self, checkpoint: Path | None) -> Path | None:
        return None

    def device_for(self, requested: str) -> str:
        """The run's device choice, where it names one, else what the plug-in declares."""
        return self.declared_device if requested == AUTO else requested

    def load(self, units: Sequence[Unit], choices: RunChoices) -> None:
        super().load(units, choices)
        model = self.model_class()
        context = LoadContext(
            device=choices.device, seed=choices.seed, batch_size=choices.batch_size, setting=choices.setting
        )
        try:
            model.load(context)
        except Exception as error:
            raise PluginFailed(f"{self.plugin.path} failed to load\n{traceback_summary(error)}") from error
        self.model = model

    def predict(self, units: Sequence[Unit], inputs: Any) -> list[Any]:
        assert self.model is not None, "load() first"
        batch = [ModelInput(unit.id, self.choices.setting, unit.payload, unit.images) for unit in units]
        try:
            answers = self.model.predict(batch)
        except Exception as error:
            first, last = units[0].id, units[-1].id
            raise PluginFailed(
                f"{self.plugin.path} failed on the batch of units {first} to {last}\n{traceback_summary(error)}"
            ) from error
        if not isinstance(answers, list | tuple):
            raise PluginFailed(
                f"{self.plugin.path}: predict returned {type(answers).__name__}, expected a list of "
                f"{len(units)} answers"
            )
        self.check_answers(units, list(answers))
        return list(answers)

    def check_answers(self, units: Sequence[Unit], answers: list[Any]) -> None:
        """Refuse a batch whose answers the benchmark's prediction reader refuses, naming the unit."""
        if len(answers) != len(units):
            raise PluginFailed(
                f"{self.plugin.path}: predict gave {len(answers)} answers for a batch of {len(units)} units"
            )
        for unit, answer in zip(units, answers, strict=True):
            # One answer at a time, so that a refusal names the unit, not a place in the batch.
            try:
                data = self.spec.write_predictions([(unit.id, answer)])
                read = self.spec.read_predictions(data, source=f"{self.title}'s answer")
            except ValueError as error:
                raise PluginFailed(
                    f"{self.plugin.path}: the answer for unit {unit.id} is in the wrong shape: {error}"
                ) from error
            except (TypeError, KeyError, AttributeError) as error:
                raise PluginFailed(
                    f"{self.plugin.path}: the answer for unit {unit.id} is in the wrong shape "
                    f"({type(error).__name__}: {error})"
                ) from error
            named = [str(key) for key in read]
            if named != [unit.id]:
                raise PluginFailed(
                    f"{self.plugin.path}: the answer for unit {unit.id} names "
                    f"{', '.join(named) or 'no unit'} (answers come in the order of the batch, each "
                    "naming its own unit)"
                )

    def parameters(self) -> dict[str, Any]:
        own = self.model.parameters() if self.model is not None else {}
        return {**provenance(self.plugin, self.model), **(own if isinstance(own, dict) else {})}


class PluginFailed(Exception):
    """The plug-in raised, or answered in a shape the benchmark refuses: the run fails with this."""


def provenance(plugin: Plugin, model: Model | None) -> dict[str, Any]:
    """What a report says of where a plug-in's answers came from."""
    model_class = plugin.model_class
    facts: dict[str, Any] = {"plugin": plugin.path, "plugin_source": plugin.source}
    if plugin.package:
        facts["package"] = f"{plugin.package} {plugin.package_version}".strip()
    if model_class is not None and model_class.version:
        facts["version"] = model_class.version
    try:
        module_file = Path(inspect.getfile(model_class)) if model_class else None
    except (TypeError, OSError):
        module_file = None
    if module_file is not None and module_file.is_file():
        facts["module_sha256"] = f"{module_file.name} {file_digest(module_file)}"
    if model is not None:
        hashes = []
        for path in model.files():
            path = Path(path)
            hashes.append(f"{path.name} {file_digest(path) if path.is_file() else 'missing'}")
        if hashes:
            facts["files_sha256"] = hashes
    return facts
