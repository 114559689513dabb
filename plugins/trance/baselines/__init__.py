"""TRANCE baselines (pure, no Django): Random, a symbolic solver, and TranceNet.

* `RandomBaseline`: seeded guesses, the floor (Basic: 1 step in 10 objects x 33 pairs).
* `SymbolicBaseline`: perfect perception. It reads both states' object descriptions and
  works out the steps from their differences, ordered so that they replay without error. It
  bounds what perception costs: whatever it misses is lost to reasoning, not to seeing.
* `TranceNetBaseline`: the TVR paper's learned model on the two renders (see model.py);
  trained with ``manage.py train_baseline trance`` (see training.py).

A prediction is the released answer layout: a list of ``{"obj_idx", "attr", "val"}`` steps,
positions as ``[direction, steps]``. In View, a model that looks at the final render answers
once per final camera (``{"Camera_Left": steps, "Camera_Center": steps, "Camera_Right": steps}``),
as the released ViewEvaluator scores every sample under each; one that does not look at it
(Random, the symbolic solver) answers one list, the same for every camera.
"""

from __future__ import annotations

import functools
import itertools
import logging
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inference.baselines import CPU, CUDA, Baseline, BaselineRefused, RunChoices, Unit, gettext_noop
from plugins.trance.formats import (
    ATTRIBUTE_VALUES,
    BASIC,
    CENTER_CAMERA,
    DIRECTIONS,
    FINAL_CAMERAS,
    MAX_STEPS,
    MOVE_STEPS,
    OBJECTS_PER_STATE,
    VIEW,
)
from plugins.trance.simulator import apply_steps, distance_to, move_delta

if TYPE_CHECKING:
    from inference.baselines.inputs_cache import CacheWriter, ImageCache

Step = dict[str, Any]

#: The 33 (attribute, value) pairs: 8 colours, 3 materials, 3 shapes, 3 sizes, 8 directions x 2.
PAIRS: tuple[tuple[str, Any], ...] = (
    *((attr, value) for attr, values in ATTRIBUTE_VALUES.items() for value in values),
    *(("position", [direction, steps]) for direction in DIRECTIONS for steps in MOVE_STEPS),
)
CHECKPOINTS = Path(__file__).resolve().parent / "checkpoints"
log = logging.getLogger(__name__)


def final_cameras(setting: str) -> tuple[str, ...]:
    """The final renders a model answers from: View, each of the three (the released protocol
    scores every sample under each final camera, one answer per camera); else the Center one."""
    return FINAL_CAMERAS if setting == VIEW else (CENTER_CAMERA,)


# --- Random --------------------------------------------------------------------------------------


class RandomBaseline(Baseline):
    name = "random"
    title = "Random"
    description = gettext_noop("Random steps: each a random object and a random (attribute, value) pair.")
    uses = gettext_noop("nothing of the unit: a seeded random answer (1 step for Basic, 1 to 4 otherwise)")

    def predict(self, units: Sequence[Unit], inputs: Any) -> list[list[Step]]:
        return [self.random_answer() for _ in units]

    def random_answer(self) -> list[Step]:
        length = 1 if self.choices.setting == BASIC else self.rng.randint(1, MAX_STEPS)
        steps = []
        for _ in range(length):
            obj_idx = self.rng.randrange(OBJECTS_PER_STATE)
            attr, value = PAIRS[self.rng.randrange(len(PAIRS))]
            steps.append(
                {"obj_idx": obj_idx, "attr": attr, "val": list(value) if attr == "position" else value}
            )
        return steps


# --- Symbolic ------------------------------------------------------------------------------------

#: Orderings tried before giving up on an error-free one (5! covers every 1-4 step answer
#: plus an object moved twice).
MAX_ORDERINGS = 120


def moves_between(start: Sequence[int], end: Sequence[int]) -> list[list[Any]]:
    """The fewest moves ``[direction, steps]`` (at most three) that add up to ``end - start``."""
    delta = (end[0] - start[0], end[1] - start[1])
    moves = [[direction, steps] for direction in DIRECTIONS for steps in MOVE_STEPS]
    for count in (1, 2, 3):
        for combination in itertools.combinations_with_replacement(range(len(moves)), count):
            chosen = [moves[index] for index in combination]
            offsets = [move_delta(move) for move in chosen]
            if (sum(dx for dx, _ in offsets), sum(dy for _, dy in offsets)) == delta:
                return chosen
    return []


def differences(initial: Sequence[Mapping[str, Any]], final: Sequence[Mapping[str, Any]]) -> list[Step]:
    """One step per changed (object, attribute), moves split into grid moves, in object order."""
    steps: list[Step] = []
    for index, (before, after) in enumerate(zip(initial, final, strict=True)):
        for attr in ATTRIBUTE_VALUES:
            if before[attr] != after[attr]:
                steps.append({"obj_idx": index, "attr": attr, "val": after[attr]})
        if list(before["position"]) != list(after["position"]):
            for move in moves_between(before["position"], after["position"]):
                steps.append({"obj_idx": index, "attr": "position", "val": move})
    return steps


def solve(initial: Sequence[Mapping[str, Any]], final: Sequence[Mapping[str, Any]]) -> list[Step]:
    """Steps from `initial` to `final`, in the first order (of at most MAX_ORDERINGS) that replays
    through the simulator to the final state with no overlap and no object off the plane; the
    object order when none does (the answer is then at best loosely right)."""
    steps = differences(initial, final)
    for ordering in itertools.islice(itertools.permutations(steps), MAX_ORDERINGS):
        outcome = apply_steps(initial, ordering)
        if (
            not outcome.overlap_error
            and not outcome.invalid_position_error
            and distance_to(outcome.objects, final) == 0
        ):
            return list(ordering)
    return steps


class SymbolicBaseline(Baseline):
    name = "symbolic"
    title = "Symbolic solver"
    description = gettext_noop(
        "Perfect perception: compares the two states' object descriptions and replays candidate "
        "orderings in the simulator. An upper bound on what seeing the images could give."
    )
    uses = gettext_noop(
        "both states' object descriptions (the initial objects shown to people and the final "
        "objects from the ground truth), not the images: perfect perception"
    )

    def predict(self, units: Sequence[Unit], inputs: Any) -> list[list[Step]]:
        answers = []
        for unit in units:
            steps = solve(unit.payload["initial"]["objects"], unit.record["states"][1]["objects"])
            answers.append(steps[:1] if self.choices.setting == BASIC else steps)
        return answers


# --- TranceNet -----------------------------------------------------------------------------------


def read_checkpoint(path: Path) -> dict[str, Any]:
    """A TranceNet checkpoint, checked: BaselineRefused names the file and what is wrong."""
    import torch

    from plugins.trance.baselines.model import MODEL_NAME, build_model

    path = Path(path)
    if not path.is_file():
        raise BaselineRefused(f"checkpoint {path} does not exist")
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch's unpickler raises many kinds (IndexError on junk bytes, ...)
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise BaselineRefused(f"{path} is not a torch checkpoint TranceNet can read ({reason})") from None
    if not isinstance(checkpoint, dict) or "model" not in checkpoint:
        raise BaselineRefused(f"{path} is not a TranceNet checkpoint (no 'model' entry)")
    if checkpoint["model"] != MODEL_NAME:
        raise BaselineRefused(f"{path} is a checkpoint of model {checkpoint['model']!r}, not {MODEL_NAME!r}")
    try:
        model = build_model(checkpoint.get("config"))
        model.load_state_dict(checkpoint.get("state_dict") or {})
    except (ValueError, RuntimeError, TypeError) as error:
        first = str(error).strip().splitlines()[0]
        raise BaselineRefused(
            f"{path}: the weights do not fit the stored TranceNet config ({first})"
        ) from None
    checkpoint["loaded_model"] = model
    return checkpoint


@functools.lru_cache(maxsize=32)
def checkpoint_verdict(path: str, size: int, modified_ns: int) -> str | None:
    """What is wrong with the checkpoint file at `path` (None: nothing), kept per file version: a
    full read imports torch and builds the model (seconds), which a web request starting a run
    should pay once per file, not on every start. `size` and `modified_ns` key the cache."""
    try:
        read_checkpoint(Path(path))
    except BaselineRefused as error:
        return str(error)
    return None


class TranceNetBaseline(Baseline):
    name = "trancenet"
    title = "TranceNet"
    description = gettext_noop(
        "The TVR paper's model: a CNN or ResNet-18 encoder on the fused initial and final renders, "
        "a GRU decoder choosing an object (or END) and an (attribute, value) pair per step."
    )
    uses = gettext_noop(
        "the initial Center render and the final Center render (View: each of the three final "
        "renders, one answer per camera), and the initial objects' descriptions shown to people"
    )
    learned = True
    needs_images = True
    default_checkpoint = CHECKPOINTS / "trancenet-basic.pt"

    def __init__(self, spec: Any):
        super().__init__(spec)
        self.model: Any = None
        self.checkpoint: dict[str, Any] = {}
        #: The normalised images' tensors, kept from one batch to the next (model.prepared_inputs).
        self.input_buffers: dict[str, Any] = {}

    def checkpoint_problem(self, checkpoint: Path | None) -> str | None:
        problem = super().checkpoint_problem(checkpoint)
        if problem is not None:
            return problem
        resolved = self.resolved_checkpoint(checkpoint)
        if resolved is None:
            return "no checkpoint: train one with `manage.py train_baseline trance`"
        path = Path(resolved)
        try:
            stat = path.stat()
        except OSError:
            return f"checkpoint {path} does not exist"
        return checkpoint_verdict(str(path), stat.st_size, stat.st_mtime_ns)

    def load(self, units: Sequence[Unit], choices: RunChoices) -> None:
        import torch

        super().load(units, choices)
        if choices.device not in (CPU, CUDA):
            raise BaselineRefused(f"unknown device {choices.device!r} (expected cpu or cuda)")
        if choices.device == CUDA and not torch.cuda.is_available():
            raise BaselineRefused("device cuda was asked for, but torch sees no CUDA GPU here")
        torch.manual_seed(choices.seed)
        self.checkpoint = read_checkpoint(self.resolved_checkpoint(choices.checkpoint))
        model = self.checkpoint.pop("loaded_model").to(choices.device).eval()
        if choices.device == CUDA:
            model = model.to(memory_format=torch.channels_last)
        self.model = model

    def batches(self, units: Sequence[Unit], batch_size: int) -> Iterator[tuple[Sequence[Unit], Any]]:
        """Batches of `batch_size` units: one image pair per unit and final camera
        (`final_cameras`), a unit's pairs in one batch, their cameras in ``inputs["cameras"]``.

        Without `choices.cache_dir`, a DataLoader reads and resizes the images (in
        `choices.workers` processes). With it, the images come from the cache of the units'
        renders at the model's input size (inference.baselines.inputs_cache) when it holds them
        as the files are now; else the DataLoader reads them and fills the cache while answering,
        which the next run then reads. The answers are the same either way.
        """
        cameras = final_cameras(self.choices.setting)
        items = [
            (
                (unit, camera),
                unit.images[f"init.{CENTER_CAMERA}"],
                unit.images[f"fin.{camera}"],
                unit.payload["initial"]["objects"],
            )
            for unit in units
            for camera in cameras
        ]
        per_batch = batch_size * len(cameras)
        cache = self.input_cache(items)
        if cache is None:
            yield from self.decoded_batches(items, per_batch, len(cameras), None)
            return
        images = cache.open()
        if images is not None:
            yield from self.cached_batches(items, per_batch, len(cameras), cache, images)
            return
        if cache.problem:
            log.info("TranceNet inputs: %s; decoding the images again", cache.problem)
        try:
            writer = cache.writer()
        except OSError as error:
            log.warning("TranceNet inputs: not cached in %s (%s)", cache.folder, error)
            writer = None
        if writer is None:
            yield from self.decoded_batches(items, per_batch, len(cameras), None)
            return
        with writer:
            yield from self.decoded_batches(items, per_batch, len(cameras), (cache, writer))
            try:
                if not writer.commit():
                    log.info("TranceNet inputs: an image changed while answering; %s not kept", cache.file)
            except OSError as error:
                log.warning("TranceNet inputs: cannot keep the cache %s (%s)", cache.file, error)

    def input_cache(self, items: Sequence[tuple[Any, str, str, Any]]) -> ImageCache | None:
        """The cache of these items' renders (each image once) at the model's input size, or None
        when the run keeps no cache."""
        if self.choices.cache_dir is None:
            return None
        from inference.baselines.inputs_cache import ImageCache
        from plugins.trance.baselines.model import image_method

        config = self.model.config
        return ImageCache(
            self.choices.cache_dir,
            sorted({path for _, initial, final, _ in items for path in (initial, final)}),
            height=config["image_height"],
            width=config["image_width"],
            channels=3,
            method=image_method(),
        )

    def decoded_batches(
        self,
        items: Sequence[tuple[Any, str, str, Any]],
        per_batch: int,
        per_unit: int,
        filling: tuple[ImageCache, CacheWriter] | None,
    ) -> Iterator[tuple[Sequence[Unit], Any]]:
        """Batches read and resized by a DataLoader; each batch's images written to `filling`'s
        cache writer (by row) when there is one."""
        from plugins.trance.baselines.training import pair_loader

        loader = pair_loader(
            items,
            config=self.model.config,
            batch_size=per_batch,
            workers=self.choices.workers,
            device=self.choices.device,
        )
        done = 0
        for keys, tensors in loader:
            if filling is not None:
                cache, writer = filling
                chunk = items[done : done + len(keys)]
                for role, column in (("initial", 1), ("final", 2)):
                    rows = [cache.rows[item[column]][0] for item in chunk]
                    writer.put(rows, tensors[role].permute(0, 2, 3, 1).numpy())
            done += len(keys)
            yield (
                [unit for unit, _ in keys[::per_unit]],
                {**tensors, "cameras": [camera for _, camera in keys]},
            )

    def cached_batches(
        self,
        items: Sequence[tuple[Any, str, str, Any]],
        per_batch: int,
        per_unit: int,
        cache: ImageCache,
        images: Any,
    ) -> Iterator[tuple[Sequence[Unit], Any]]:
        """Batches gathered from the cached images: the tensors the DataLoader would give."""
        import numpy as np
        import torch

        from plugins.trance.baselines.model import object_features

        def pixels_first(rows: Any) -> Any:
            return torch.from_numpy(rows).permute(0, 3, 1, 2).contiguous()

        initial_rows = np.array([cache.rows[initial][0] for _, initial, _, _ in items], dtype=np.int64)
        final_rows = np.array([cache.rows[final][0] for _, _, final, _ in items], dtype=np.int64)
        pin = torch.device(self.choices.device).type == CUDA
        for start in range(0, len(items), per_batch):
            chunk = items[start : start + per_batch]
            # [B, H, W, C] rows copied out of the mapped file, laid out as load_image gives them.
            tensors = {
                role: pixels_first(images[rows[start : start + per_batch]])
                for role, rows in (("initial", initial_rows), ("final", final_rows))
            }
            tensors["objects"] = torch.stack([object_features(objects) for *_, objects in chunk])
            if pin:
                tensors = {role: tensor.pin_memory() for role, tensor in tensors.items()}
            keys = [key for key, *_ in chunk]
            yield (
                [unit for unit, _ in keys[::per_unit]],
                {**tensors, "cameras": [camera for _, camera in keys]},
            )

    def predict(self, units: Sequence[Unit], inputs: Mapping[str, Any]) -> list[Any]:
        """Greedy answers: float16 autocast and channels_last on CUDA, float32 on CPU. View: an
        answer per final camera, each from that camera's render."""
        import torch

        from plugins.trance.baselines.model import (
            answers_from_choices,
            inference_precision,
            prepared_inputs,
        )

        device = self.choices.device
        initial, final, objects = prepared_inputs(
            inputs["initial"], inputs["final"], inputs["objects"], device, reuse=self.input_buffers
        )
        max_steps = 1 if self.choices.setting == BASIC else self.model.config["max_steps"]
        with torch.inference_mode(), inference_precision(device):
            chosen_objects, chosen_pairs = self.model.decode(initial, final, objects, max_steps)
        answers = answers_from_choices(chosen_objects.cpu(), chosen_pairs.cpu())
        if self.choices.setting != VIEW:
            return answers
        per_unit = len(FINAL_CAMERAS)
        return [
            dict(
                zip(
                    inputs["cameras"][start : start + per_unit],
                    answers[start : start + per_unit],
                    strict=True,
                )
            )
            for start in range(0, len(answers), per_unit)
        ]

    def forward_only(self, batch_size: int, steps: int) -> dict[str, float]:
        """Throughput of the bare forward pass on one pre-built batch (after `load`).

        For a performance benchmark: compare with the pipeline (`batches` + `predict`) over real
        units to see what reading and resizing images costs. See model.forward_throughput.
        """
        from plugins.trance.baselines.model import forward_throughput

        if self.model is None:
            raise RuntimeError("load() the baseline first")
        return forward_throughput(self.model, batch_size=batch_size, steps=steps, device=self.choices.device)

    def parameters(self) -> dict[str, Any]:
        if self.model is None:
            return {}
        from plugins.trance.baselines.model import parameter_count

        config = self.model.config
        return {
            "variant": config["variant"],
            "encoder": config["encoder"],
            "fusion": config["fusion"],
            "hidden": config["hidden"],
            "image_size": f"{config['image_height']}x{config['image_width']}",
            "parameters": parameter_count(self.model),
            "trained": self.checkpoint.get("trained", {}),
        }

    def train(
        self,
        *,
        data: Path,
        out: Path,
        epochs: int = 10,
        device: str = CPU,
        batch_size: int = 32,
        seed: int = 0,
        config: Mapping[str, Any] | None = None,
        resume: Path | None = None,
        val: Path | None = None,
        workers: int = 0,
        log: Any = print,
    ) -> dict[str, Any]:
        """Train on a folder written by ``manage.py generate_trance``; see training.train (a new
        model is the paper's "tvr" layout and recipe unless `config` says ``"variant": "v1"``)."""
        import torch

        from plugins.trance.baselines import training

        if device not in (CPU, CUDA):
            raise BaselineRefused(f"unknown device {device!r} (expected cpu or cuda)")
        if device == CUDA and not torch.cuda.is_available():
            raise BaselineRefused("device cuda was asked for, but torch sees no CUDA GPU here")
        resumed = None
        if resume is not None:
            resumed = read_checkpoint(resume)
            resumed.pop("loaded_model")
        return training.train(
            data=Path(data),
            out=Path(out),
            epochs=epochs,
            device=device,
            batch_size=batch_size,
            seed=seed,
            config=config,
            resume=resumed,
            val=Path(val) if val is not None else None,
            workers=workers,
            log=log,
        )
