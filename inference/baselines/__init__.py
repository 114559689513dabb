"""Baselines: models and programs that answer a benchmark's units the way people do (pure, no Django).

A benchmark lists its baselines in its spec (`BenchmarkSpec.baselines`, "module:Class" paths into
`inference/baselines/<benchmark>`, its own module here). The inference app loads one by name, feeds it the dataset's scoring units in
batches, and turns what it returns into a prediction file in the benchmark's official format,
which the evaluation engine then scores like any upload. Nothing here knows about the database:
a unit arrives with its images as file paths and its scene as a dict.

A baseline's life: `check_checkpoint` (before a run is created: a learned baseline refuses a
checkpoint of another model), `load` (weights, priors fitted on the units, the random stream),
then `batches` and `predict` for each batch. Learned baselines import torch inside these methods,
so that listing baselines costs nothing.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.spec import plugged

if TYPE_CHECKING:
    from benchmarks.spec import BenchmarkSpec

CPU = "cpu"
CUDA = "cuda"
DEVICES = (CPU, CUDA)


def gettext_noop(text: str) -> str:
    """Marks a baseline's `description` and `uses` for the translation catalogue (`make messages`
    finds them by this name) without Django: the run form translates them where it shows them."""
    return text


class BaselineRefused(ValueError):
    """A run cannot start with these choices (unknown baseline, wrong checkpoint, no such device)."""


@dataclass(frozen=True)
class Unit:
    """One scoring unit as a baseline sees it.

    `id`: the unit id predictions name it by (a string). `record`: the unit's official
    ground-truth record. It holds the answer: only baselines that declare an upper bound on
    perception (an OCR upper bound, a symbolic solver, a program executor) read more of it than
    the question; `Baseline.uses` says what each one reads. `payload`: what people are shown
    of the item. `images`: media role -> absolute path of the file. `scene`: the item's scene
    record (a scene graph, a rendered scene's objects), or None.
    """

    id: str
    part: int
    record: Mapping[str, Any]
    payload: Mapping[str, Any] = field(default_factory=dict)
    images: Mapping[str, str] = field(default_factory=dict)
    scene: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class RunChoices:
    """What a run was started with, handed to `Baseline.load`."""

    setting: str = ""
    device: str = CPU
    seed: int = 0
    checkpoint: Path | None = None
    batch_size: int = 32
    #: Processes that read and decode inputs for learned baselines (0: in the running process).
    workers: int = 0
    #: Where image models keep decoded, resized inputs between runs (None: no cache; see inputs_cache).
    cache_dir: Path | None = None


class Baseline:
    """One way of answering a benchmark's units. Subclass it in `inference/baselines/<benchmark>`.

    `name` is the key people type (`manage.py run_baseline <name> <dataset>`), unique within the
    benchmark. `uses` says in a sentence what the baseline reads of a unit (shown on the run
    form and in reports). `learned` baselines need a checkpoint (or ship a default one) and run
    on a device; the others ignore the device.
    """

    name: str = ""
    title: str = ""
    description: str = ""
    uses: str = ""
    learned: bool = False
    #: Whether it looks at the images (a dataset imported without them is refused).
    needs_images: bool = False
    #: The settings it answers (empty: every setting of the benchmark).
    settings: tuple[str, ...] = ()
    #: The checkpoint used when a run names none (learned baselines only), relative to this module.
    default_checkpoint: Path | None = None
    #: The batch size a run uses when it names none.
    default_batch_size: int = 32
    #: A model plug-in's "module:Class" path ("" for the benchmark's own baselines).
    plugin_path: str = ""

    @property
    def takes_checkpoint(self) -> bool:
        """Whether a run may choose its checkpoint from the checkpoint folder."""
        return self.learned and not self.plugin_path

    def __init__(self, spec: BenchmarkSpec):
        self.spec = spec
        self.choices = RunChoices()
        self.rng = random.Random(0)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec.name}:{self.name}>"

    # --- before a run ---------------------------------------------------------------------------

    def setting_problem(self, setting: str) -> str | None:
        if self.settings and setting not in self.settings:
            names = ", ".join(self.spec.setting_label(value) for value in self.settings)
            return f"{self.title} answers the setting {names} only, not {self.spec.setting_label(setting) or 'none'}"
        return None

    def checkpoint_problem(self, checkpoint: Path | None) -> str | None:
        """Why this checkpoint cannot be used (None when it can); learned baselines look inside."""
        if checkpoint is not None and not self.learned:
            return f"{self.title} is not a learned model: it takes no checkpoint"
        if self.learned and checkpoint is None and self.default_checkpoint is None:
            return (
                f"{self.title} needs a checkpoint: train one with manage.py train_baseline {self.spec.name}"
            )
        return None

    def resolved_checkpoint(self, checkpoint: Path | None) -> Path | None:
        if checkpoint is not None or not self.learned:
            return checkpoint
        return self.default_checkpoint

    def device_for(self, requested: str) -> str:
        """The device a run asks for ("auto", "cpu", "cuda"), as this model reads the choice."""
        return requested

    # --- a run ----------------------------------------------------------------------------------

    def load(self, units: Sequence[Unit], choices: RunChoices) -> None:
        """Get ready to answer `units` (all of them, before the first batch): weights, priors, seed."""
        self.choices = choices
        self.rng = random.Random(choices.seed)

    def batches(self, units: Sequence[Unit], batch_size: int) -> Iterator[tuple[Sequence[Unit], Any]]:
        """The units in batches, each with its model input (None: `predict` reads the units)."""
        for start in range(0, len(units), batch_size):
            yield units[start : start + batch_size], None

    def predict(self, units: Sequence[Unit], inputs: Any) -> list[Any]:
        """One answer per unit, in order, as the benchmark's prediction file holds it."""
        raise NotImplementedError

    def parameters(self) -> dict[str, Any]:
        """What else a report should say about how the answers were made (model size, ...)."""
        return {}


def load_baseline(
    spec: BenchmarkSpec, name: str, extra: Mapping[str, Callable[[], Baseline]] | None = None
) -> Baseline:
    """A fresh instance of the benchmark's baseline called `name`, or of one of the `extra` models
    (name -> maker: the model plug-ins of this benchmark); BaselineRefused names the choices."""
    for path in spec.baselines:
        baseline_class = import_baseline(path)
        if baseline_class.name == name:
            return baseline_class(spec)
    if extra and name in extra:
        return extra[name]()
    known = ", ".join([*baseline_names(spec), *(extra or {})]) or "none"
    raise BaselineRefused(f"{spec.title} has no baseline or model {name!r} (it has: {known})")


def import_baseline(path: str) -> type[Baseline]:
    return plugged(path)


def baseline_names(spec: BenchmarkSpec) -> list[str]:
    return [import_baseline(path).name for path in spec.baselines]


def baselines_of(spec: BenchmarkSpec) -> list[Baseline]:
    return [import_baseline(path)(spec) for path in spec.baselines]


def file_digest(path: Path) -> str:
    """The sha256 of a file, read in blocks: how reports name a checkpoint."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
