"""TranceNet's inputs and training (pure, no Django; imports torch).

* `read_folder`: the samples of a folder written by ``manage.py generate_trance`` (data.jsonl
  and its renders), each with the two images the model sees (the initial Center view and one
  final view) and its true steps.
* `ImagePairs` and `collate_pairs`: a torch data set that reads and resizes the two images of
  each item (in DataLoader worker processes when there are any) and stacks them into a batch.
  Answering uses it with units as keys, training with sample numbers.
* `train`: teacher forcing with cross-entropy on the object choice (the ten objects and END) and
  on the pair choice (where a step lists several right values, as an "out" move does, the loss
  takes the summed probability of all of them), Adam, a tqdm bar on stderr, a checkpoint
  written atomically at the end of every epoch, held-out accuracy per epoch when asked.

A new model is the paper's layout (``variant: "tvr"``, see model.py) unless the config says
"v1", and trains by the recipe of the paper's released code scaled to the epochs asked for
(`Recipe`): Adam at 1e-3, the learning rate divided by 10 after half the epochs (the released
StepLR: 25 of 50), and each training pair shifted by the same random translation of up to 5% of
the width and height (the released ``img_aug``). "v1" keeps its own: a constant learning rate
and no augmentation.
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader, Dataset

from benchmarks.records import FormatError
from inference.baselines import BaselineRefused, file_digest
from plugins.trance import formats
from plugins.trance.baselines.model import (
    END,
    MODEL_NAME,
    PAIR_END,
    PAIR_INDEX,
    PAIRS,
    Model,
    answers_from_choices,
    build_model,
    full_config,
    load_image,
    object_features,
    pair_of_step,
    parameter_count,
    prepared_inputs,
)
from plugins.trance.formats import BASIC, CENTER_CAMERA, EVENT, MAX_STEPS

DATA_FILE = "data.jsonl"

Log = Callable[[str], None]


@dataclass(frozen=True)
class Example:
    """One sample as the model learns from it."""

    record: dict[str, Any]
    initial_image: str
    final_image: str

    @property
    def objects(self) -> list[dict[str, Any]]:
        return self.record["states"][0]["objects"]

    @property
    def steps(self) -> list[dict[str, Any]]:
        return self.record["transformations"]


def read_folder(folder: Path, camera: str = CENTER_CAMERA) -> list[Example]:
    """The samples of a generated folder; BaselineRefused says what is missing or wrong."""
    folder = Path(folder)
    if not folder.is_dir():
        raise BaselineRefused(f"{folder} is not a folder (expected one written by generate_trance)")
    data_path = folder / DATA_FILE
    if not data_path.is_file():
        raise BaselineRefused(f"{folder} has no {DATA_FILE} (expected a folder written by generate_trance)")
    try:
        samples = formats.read_samples(data_path.read_bytes(), source=str(data_path))
    except FormatError as error:
        raise BaselineRefused(f"{data_path} is not a TRANCE data file: {error}") from None
    if not samples:
        raise BaselineRefused(f"{data_path} holds no samples")
    examples = []
    for sample in samples:
        initial_name = sample["states"][0]["images"].get(CENTER_CAMERA)
        final_name = sample["states"][1]["images"].get(camera)
        if initial_name is None or final_name is None:
            raise BaselineRefused(f"{data_path}: sample {sample['idx']} names no {camera} render")
        examples.append(Example(sample, str(folder / initial_name), str(folder / final_name)))
    missing = [
        path
        for example in examples[:1] + examples[-1:]
        for path in (example.initial_image, example.final_image)
    ]
    for path in missing:
        if not Path(path).is_file():
            raise BaselineRefused(f"{path} is missing: generate the folder with its images (no --no-images)")
    return examples


# --- Batches -----------------------------------------------------------------------------------


class ImagePairs(Dataset):
    """Items (key, initial image path, final image path, initial objects) -> resized tensors."""

    def __init__(
        self, items: Sequence[tuple[Any, str, str, Sequence[Mapping[str, Any]]]], height: int, width: int
    ):
        self.items = items
        self.height, self.width = height, width

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, number: int) -> tuple[Any, torch.Tensor, torch.Tensor, torch.Tensor]:
        key, initial_path, final_path, objects = self.items[number]
        return (
            key,
            load_image(initial_path, self.height, self.width),
            load_image(final_path, self.height, self.width),
            object_features(objects),
        )


def collate_pairs(
    batch: Sequence[tuple[Any, torch.Tensor, torch.Tensor, torch.Tensor]],
) -> tuple[list[Any], dict]:
    """The batch's keys (units, sample numbers) and its stacked uint8 images and object features."""
    keys = [item[0] for item in batch]
    tensors = {
        "initial": torch.stack([item[1] for item in batch]),
        "final": torch.stack([item[2] for item in batch]),
        "objects": torch.stack([item[3] for item in batch]),
    }
    return keys, tensors


def pair_loader(
    items: Sequence[tuple[Any, str, str, Sequence[Mapping[str, Any]]]],
    *,
    config: Mapping[str, Any],
    batch_size: int,
    workers: int,
    device: str,
) -> DataLoader:
    return DataLoader(
        ImagePairs(items, config["image_height"], config["image_width"]),
        batch_size=batch_size,
        shuffle=False,
        num_workers=workers,
        pin_memory=torch.device(device).type == "cuda",
        collate_fn=collate_pairs,
    )


def load_all(examples: Sequence[Example], config: Mapping[str, Any], workers: int) -> dict[str, torch.Tensor]:
    """Every example's images and objects, decoded once (training reads them every epoch)."""
    items = [(number, ex.initial_image, ex.final_image, ex.objects) for number, ex in enumerate(examples)]
    parts: dict[str, list[torch.Tensor]] = {"initial": [], "final": [], "objects": []}
    loader = pair_loader(items, config=config, batch_size=64, workers=workers, device="cpu")
    try:
        for _, tensors in progress_bar(loader, desc="reading images", unit="batch"):
            for key, tensor in tensors.items():
                parts[key].append(tensor)
    except OSError as error:
        raise BaselineRefused(f"cannot read an image: {error}") from None
    return {key: torch.cat(tensors) for key, tensors in parts.items()}


# --- Targets -----------------------------------------------------------------------------------


def targets(examples: Sequence[Example], length: int, end_pair: int | None = None) -> dict[str, torch.Tensor]:
    """Teacher-forcing inputs and the losses' targets for `length` decoder steps.

    objects (N, T): the true object of each step, END after the last one (0 past END, masked);
    pairs (N, T): the true pair of each step; pair_options (N, T, P): every right pair of it;
    object_mask / pair_mask (N, T): which steps the object / pair loss counts. With `end_pair`
    (the "tvr" layout's PAIR_END), the step at END has that pair to learn too, and P = 34; else
    the pair loss skips it and P = 33.
    """
    count = len(examples)
    objects = torch.zeros(count, length, dtype=torch.long)
    pairs = torch.zeros(count, length, dtype=torch.long)
    width = len(PAIRS) if end_pair is None else max(len(PAIRS), end_pair + 1)
    options = torch.zeros(count, length, width, dtype=torch.bool)
    object_mask = torch.zeros(count, length, dtype=torch.bool)
    pair_mask = torch.zeros(count, length, dtype=torch.bool)
    for row, example in enumerate(examples):
        steps = example.steps[:length]
        for column, step in enumerate(steps):
            objects[row, column] = step["obj_idx"]
            pairs[row, column] = pair_of_step(step)
            for value in step.get("options") or [step["val"]]:
                key = (step["attr"], tuple(value) if step["attr"] == "position" else value)
                options[row, column, PAIR_INDEX[key]] = True
            object_mask[row, column] = pair_mask[row, column] = True
        if len(steps) < length:
            objects[row, len(steps)] = END
            object_mask[row, len(steps)] = True
            if end_pair is not None:
                pairs[row, len(steps)] = end_pair
                options[row, len(steps), end_pair] = True
                pair_mask[row, len(steps)] = True
    return {
        "objects": objects,
        "pairs": pairs,
        "pair_options": options,
        "object_mask": object_mask,
        "pair_mask": pair_mask,
    }


def step_loss(
    object_scores: torch.Tensor, pair_scores: torch.Tensor, batch: Mapping[str, torch.Tensor]
) -> torch.Tensor:
    """Mean cross-entropy of the object choices plus that of the pair choices (any right pair)."""
    object_loss = torch.nn.functional.cross_entropy(
        object_scores[batch["object_mask"]], batch["objects"][batch["object_mask"]]
    )
    scores = pair_scores[batch["pair_mask"]].float()
    right = batch["pair_options"][batch["pair_mask"]]
    pair_loss = (scores.logsumexp(dim=1) - scores.masked_fill(~right, float("-inf")).logsumexp(dim=1)).mean()
    return object_loss + pair_loss


# --- Answers and accuracy ------------------------------------------------------------------------


def setting_of(examples: Sequence[Example]) -> str:
    """Basic when every sample has one step (what Basic scores), else Event."""
    return BASIC if all(len(example.steps) == 1 for example in examples) else EVENT


def decode_answers(model: Model, tensors: Mapping[str, torch.Tensor], device: str, max_steps: int) -> list:
    model.eval()
    answers = []
    with torch.inference_mode():
        for start in range(0, len(tensors["objects"]), 256):
            part = {key: value[start : start + 256] for key, value in tensors.items()}
            initial, final, objects = prepared_inputs(part["initial"], part["final"], part["objects"], device)
            chosen_objects, chosen_pairs = model.decode(initial, final, objects, max_steps)
            answers.extend(answers_from_choices(chosen_objects.cpu(), chosen_pairs.cpu()))
    return answers


def accuracy(
    model: Model, examples: Sequence[Example], tensors: Mapping[str, torch.Tensor], device: str
) -> float:
    """The released metric's Acc on `examples` (Basic when all are single-step, else Event)."""
    from plugins.trance import metric

    setting = setting_of(examples)
    answers = decode_answers(model, tensors, device, 1 if setting == BASIC else MAX_STEPS)
    records = [example.record for example in examples]
    predictions = {record["idx"]: answer for record, answer in zip(records, answers, strict=True)}
    scorer = metric.score_basic if setting == BASIC else metric.score_event
    return scorer(records, predictions).summary["Acc"]


# --- Checkpoints ---------------------------------------------------------------------------------


def checkpoint_dict(model: Model, trained: Mapping[str, Any]) -> dict[str, Any]:
    """What a checkpoint holds: plain dicts, strings, numbers and tensors (loadable weights_only)."""
    return {
        "model": MODEL_NAME,
        "config": dict(model.config),
        "state_dict": {key: value.detach().cpu().clone() for key, value in model.state_dict().items()},
        "trained": dict(trained),
    }


def save_atomically(checkpoint: Mapping[str, Any], path: Path) -> None:
    """Write to a temporary file beside `path`, then rename it over: never a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # A plain open (not mkstemp) so the file gets the usual permissions, not owner-only.
    temporary = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        with temporary.open("wb") as stream:
            torch.save(dict(checkpoint), stream)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


# --- Training ------------------------------------------------------------------------------------


def progress_bar(iterable: Any, **options: Any) -> Any:
    from tqdm import tqdm

    return tqdm(iterable, file=sys.stderr, leave=False, dynamic_ncols=True, **options)


def shuffled_batches(count: int, batch_size: int, generator: torch.Generator) -> Iterator[torch.Tensor]:
    order = torch.randperm(count, generator=generator)
    for start in range(0, count, batch_size):
        yield order[start : start + batch_size]


#: The variant a new model is trained as when the config names none.
TRAINING_VARIANT = "tvr"
#: The released training's translation augmentation: up to 5% of the width and of the height.
SHIFT_FRACTION = 0.05


@dataclass(frozen=True)
class Recipe:
    """How a run trains: `decay_after` epochs of this run at the learning rate, then a tenth of
    it (None: constant); `shift` (a fraction of the width and height, 0: none) is the largest
    random translation of a training pair."""

    decay_after: int | None
    shift: float

    @classmethod
    def of(cls, variant: str, epochs: int) -> Recipe:
        """The paper's recipe scaled to `epochs` for "tvr" (50 epochs, StepLR at 25: here after
        half of them, rounded up), a constant rate without augmentation for "v1"."""
        if variant == "tvr":
            return cls(decay_after=(epochs + 1) // 2 if epochs > 1 else None, shift=SHIFT_FRACTION)
        return cls(decay_after=None, shift=0.0)

    def learning_rate(self, base: float, epoch: int) -> float:
        """The rate of this run's `epoch` (0-based)."""
        return base * 0.1 if self.decay_after is not None and epoch >= self.decay_after else base


def shifted(
    initial: torch.Tensor, final: torch.Tensor, fraction: float, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Each pair of (B, C, H, W) images moved by one random whole-pixel translation, the same
    for both images, of up to `fraction` of the width and of the height either way; the
    uncovered border is 0 (black), as the released training's affine translation fills it."""
    count, _, height, width = initial.shape
    most_x, most_y = int(fraction * width), int(fraction * height)
    if count == 0 or (most_x == 0 and most_y == 0):
        return initial, final
    dx = torch.randint(-most_x, most_x + 1, (count,), generator=generator).tolist()
    dy = torch.randint(-most_y, most_y + 1, (count,), generator=generator).tolist()
    moved = []
    for images in (initial, final):
        out = torch.zeros_like(images)
        for row, (x, y) in enumerate(zip(dx, dy, strict=True)):
            out[row, :, max(y, 0) : height + min(y, 0), max(x, 0) : width + min(x, 0)] = images[
                row, :, max(-y, 0) : height + min(-y, 0), max(-x, 0) : width + min(-x, 0)
            ]
        moved.append(out)
    return moved[0], moved[1]


def train(
    *,
    data: Path,
    out: Path,
    epochs: int,
    device: str,
    batch_size: int,
    seed: int,
    config: Mapping[str, Any] | None = None,
    resume: Mapping[str, Any] | None = None,
    val: Path | None = None,
    learning_rate: float = 1e-3,
    recipe: Recipe | None = None,
    workers: int = 0,
    log: Log = print,
) -> dict[str, Any]:
    """Train TranceNet on a generated folder and write `out` after every epoch.

    `config`: the model's (`model.full_config`); a new model is the "tvr" layout unless it says
    otherwise. `resume`: a loaded checkpoint to continue from (its config and weights; Adam and
    the recipe start afresh, since Adam's moments would triple the file). `recipe`: None for the
    variant's own (`Recipe.of`). Returns the final checkpoint's "trained" entry with the loss,
    learning rate, seconds and held-out accuracy (when `val` was given) per epoch.
    """
    if epochs < 1:
        raise BaselineRefused(f"epochs must be at least 1, got {epochs}")
    if batch_size < 1:
        raise BaselineRefused(f"batch size must be at least 1, got {batch_size}")
    examples = read_folder(data)
    held_out = read_folder(val) if val is not None else []
    random.seed(seed)
    torch.manual_seed(seed)
    previous_epochs = 0
    try:
        if resume is not None:
            stored = full_config(resume["config"])
            config = {**stored, **(config or {})}
            if full_config(config) != stored:
                raise BaselineRefused(
                    "the checkpoint to resume was trained with other settings: leave them out"
                )
            previous_epochs = int(resume.get("trained", {}).get("epochs", 0))
        else:
            config = {"variant": TRAINING_VARIANT, **(config or {})}
        model = build_model(config)
    except ValueError as error:
        raise BaselineRefused(str(error)) from None
    if resume is not None:
        model.load_state_dict(resume["state_dict"])
    model.to(device)
    recipe = recipe or Recipe.of(model.config["variant"], epochs)
    log(
        f"TranceNet ({model.config['variant']} layout, {model.config['encoder']}, {model.config['fusion']}, "
        f"{parameter_count(model):,} parameters): "
        f"{len(examples)} training samples from {data}"
        + (f", {len(held_out)} held-out samples from {val}" if held_out else "")
    )
    train_tensors = load_all(examples, model.config, workers)
    val_tensors = load_all(held_out, model.config, workers) if held_out else None
    end_pair = PAIR_END if model.pair_outputs > len(PAIRS) else None
    length = model.target_length(max(len(example.steps) for example in examples))
    train_targets = targets(examples, length, end_pair)
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    generator = torch.Generator().manual_seed(seed)
    trained: dict[str, Any] = {
        "samples": len(examples),
        "epochs": previous_epochs,
        "seed": seed,
        "setting": setting_of(examples),
        "data": str(Path(data).resolve()),
        "data_sha256": file_digest(Path(data) / DATA_FILE),
        "batch_size": batch_size,
        "learning_rate": learning_rate,
        "lr_decay_after": recipe.decay_after,
        "shift": recipe.shift,
    }
    history: list[dict[str, Any]] = []
    epoch_bar = progress_bar(range(epochs), desc="epochs", unit="epoch")
    for epoch in epoch_bar:
        started = time.perf_counter()
        rate = recipe.learning_rate(learning_rate, epoch)
        for group in optimizer.param_groups:
            group["lr"] = rate
        model.train()
        total, batches = 0.0, 0
        batch_bar = progress_bar(
            shuffled_batches(len(examples), batch_size, generator),
            total=(len(examples) + batch_size - 1) // batch_size,
            desc=f"epoch {previous_epochs + epoch + 1}",
            unit="batch",
        )
        for rows in batch_bar:
            batch = {key: value[rows].to(device) for key, value in train_targets.items()}
            initial, final = train_tensors["initial"][rows], train_tensors["final"][rows]
            if recipe.shift:
                initial, final = shifted(initial, final, recipe.shift, generator)
            initial, final, objects = prepared_inputs(initial, final, train_tensors["objects"][rows], device)
            object_scores, pair_scores = model(initial, final, objects, batch["objects"], batch["pairs"])
            loss = step_loss(object_scores, pair_scores, batch)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
            batch_bar.set_postfix(loss=f"{total / batches:.3f}")
        trained["epochs"] = previous_epochs + epoch + 1
        line: dict[str, Any] = {
            "epoch": trained["epochs"],
            "loss": round(total / max(batches, 1), 4),
            "lr": rate,
            "seconds": round(time.perf_counter() - started, 1),
        }
        if val_tensors is not None:
            line["val_acc"] = round(accuracy(model, held_out, val_tensors, device), 4)
            trained["val"] = {
                "data": str(Path(val).resolve()),
                "samples": len(held_out),
                "acc": line["val_acc"],
            }
        history.append(line)
        epoch_bar.set_postfix(loss=f"{line['loss']:.3f}")
        save_atomically(checkpoint_dict(model, trained), out)
        log(
            f"epoch {line['epoch']}: loss {line['loss']:.4f}, lr {rate:g}, {line['seconds']:.0f} s"
            + (f", held-out {setting_of(held_out)} Acc {line['val_acc']:.4f}" if "val_acc" in line else "")
            + f" -> {out}"
        )
    return {**trained, "history": history}
