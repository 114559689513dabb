"""TranceNet: the TVR paper's image-pair-to-steps model, in plain torch (pure, no Django).

The model (Hong et al., "Transformation Driven Visual Reasoning", the TranceNet baseline):

* Input: the initial and the final render, both resized to 120x160 (HxW), either concatenated
  into 6 channels (``fusion="concat"``) or subtracted, final minus initial (``"subtract"``, 3).
* Encoder: a CNN of four 3x3 stride-2 convolutions (16/32/64/64 channels, BatchNorm + ReLU) or
  a ResNet-18 whose first convolution takes the fused channels; global average pooling gives
  one image feature.
* Decoder: a GRU (hidden 128 by default) that emits up to four steps. At each step its state is
  matched (bilinear: ``h^T W o_j``) against the ten initial objects' attribute vectors
  (one-hot colour, material, shape, size and the position divided by 40, from what people are
  shown of the initial state) and a learned END vector; a linear head chooses one of the 33
  (attribute, value) pairs. The chosen object's embedding plus the chosen pair's embedding, with
  the image feature, are the next step's input. Training feeds the true step (teacher forcing);
  answering feeds its own greedy choice.

Everything that shapes the weights (encoder, fusion, hidden size, image size) is the config
stored in every checkpoint, so `build_model(config)` rebuilds a saved model exactly.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from plugins.trance.formats import ATTRIBUTE_VALUES, DIRECTIONS, GRID_MAX, MOVE_STEPS, OBJECTS_PER_STATE

MODEL_NAME = "trancenet"
ENCODERS = ("cnn", "resnet18")
FUSIONS = ("concat", "subtract")
DEFAULT_CONFIG: dict[str, Any] = {
    "encoder": "cnn",
    "fusion": "concat",
    "hidden": 128,
    "image_height": 120,
    "image_width": 160,
    "max_steps": 4,
}
#: The 33 (attribute, value) pairs the decoder chooses from, in a fixed order (the checkpoint's
#: pair head depends on it): colours, materials, shapes, sizes, then every move.
PAIRS: tuple[tuple[str, Any], ...] = (
    *((attr, value) for attr, values in ATTRIBUTE_VALUES.items() for value in values),
    *(("position", (direction, steps)) for direction in DIRECTIONS for steps in MOVE_STEPS),
)
PAIR_INDEX = {pair: index for index, pair in enumerate(PAIRS)}
#: One-hot colour (8), material (3), shape (3), size (3), then x / 40 and y / 40.
OBJECT_FEATURES = sum(len(values) for values in ATTRIBUTE_VALUES.values()) + 2
#: The object choice after the ten objects: "no more steps".
END = OBJECTS_PER_STATE
#: Pixel normalisation of the renders (values in 0..1 before it).
PIXEL_MEAN, PIXEL_STD = 0.5, 0.25


def full_config(config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The defaults overridden by `config`; ValueError for an unknown key or value."""
    merged = {**DEFAULT_CONFIG, **(config or {})}
    unknown = sorted(set(merged) - set(DEFAULT_CONFIG))
    if unknown:
        raise ValueError(f"unknown TranceNet setting {', '.join(unknown)}")
    if merged["encoder"] not in ENCODERS:
        raise ValueError(f"unknown encoder {merged['encoder']!r} (expected one of {', '.join(ENCODERS)})")
    if merged["fusion"] not in FUSIONS:
        raise ValueError(f"unknown fusion {merged['fusion']!r} (expected one of {', '.join(FUSIONS)})")
    for key in ("hidden", "image_height", "image_width", "max_steps"):
        if type(merged[key]) is not int or merged[key] < 1:
            raise ValueError(f"{key} must be a positive integer, got {merged[key]!r}")
    return merged


def pair_of_step(step: Mapping[str, Any]) -> int:
    """The pair index of a step's (attr, val)."""
    value = step["val"]
    if step["attr"] == "position":
        value = (value[0], value[1])
    return PAIR_INDEX[(step["attr"], value)]


def step_of(obj_idx: int, pair: int) -> dict[str, Any]:
    """A prediction step (the released answer layout) from an object and a pair index."""
    attr, value = PAIRS[pair]
    return {"obj_idx": obj_idx, "attr": attr, "val": list(value) if attr == "position" else value}


def object_features(objects: Sequence[Mapping[str, Any]]) -> torch.Tensor:
    """(10, OBJECT_FEATURES) float tensor of the initial objects' attribute vectors."""
    rows = []
    for obj in objects:
        row = [0.0] * OBJECT_FEATURES
        offset = 0
        for attr, values in ATTRIBUTE_VALUES.items():
            row[offset + values.index(obj[attr])] = 1.0
            offset += len(values)
        row[offset] = obj["position"][0] / GRID_MAX
        row[offset + 1] = obj["position"][1] / GRID_MAX
        rows.append(row)
    # One tensor from lists: writing element by element into a tensor cost 0.8 ms per sample.
    return torch.tensor(rows, dtype=torch.float32).reshape(len(objects), OBJECT_FEATURES)


def normalise_pixels(images: torch.Tensor) -> torch.Tensor:
    """uint8 (or 0..255 float) images to the model's input scale."""
    return (images.float() / 255.0 - PIXEL_MEAN) / PIXEL_STD


# --- Encoders ----------------------------------------------------------------------------------


def conv_block(in_channels: int, out_channels: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(in_channels, out_channels, 3, stride=2, padding=1, bias=False),
        nn.BatchNorm2d(out_channels),
        nn.ReLU(inplace=True),
    )


class SmallCNN(nn.Module):
    """Four 3x3 stride-2 convolutions (16, 32, 64, 64 channels) with BatchNorm and ReLU."""

    channels = (16, 32, 64, 64)

    def __init__(self, in_channels: int) -> None:
        super().__init__()
        widths = (in_channels, *self.channels)
        self.layers = nn.Sequential(*(conv_block(a, b) for a, b in zip(widths, widths[1:], strict=False)))
        self.out_features = self.channels[-1]

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.layers(images).mean(dim=(2, 3))


class BasicBlock(nn.Module):
    """ResNet's two-convolution residual block (He et al. 2016), with a projection when the shape changes."""

    def __init__(self, in_channels: int, out_channels: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or in_channels != out_channels:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_channels),
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + self.shortcut(x))


class ResNet18(nn.Module):
    """ResNet-18 (a 7x7 stem, then 2 blocks each of 64, 128, 256, 512 channels), any input channels."""

    def __init__(self, in_channels: int) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, 64, 7, stride=2, padding=3, bias=False),
            nn.BatchNorm2d(64),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(3, stride=2, padding=1),
        )
        blocks: list[nn.Module] = []
        in_width = 64
        for stage, width in enumerate((64, 128, 256, 512)):
            stride = 1 if stage == 0 else 2
            blocks += [BasicBlock(in_width, width, stride), BasicBlock(width, width, 1)]
            in_width = width
        self.blocks = nn.Sequential(*blocks)
        self.out_features = 512

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.blocks(self.stem(images)).mean(dim=(2, 3))


# --- The model ---------------------------------------------------------------------------------


class TranceNet(nn.Module):
    """Images in, per-step object and pair scores out (see the module docstring)."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        self.config = full_config(config)
        hidden = self.config["hidden"]
        in_channels = 6 if self.config["fusion"] == "concat" else 3
        self.encoder = SmallCNN(in_channels) if self.config["encoder"] == "cnn" else ResNet18(in_channels)
        self.image_projection = nn.Linear(self.encoder.out_features, hidden)
        self.initial_state = nn.Linear(hidden, hidden)
        self.object_embedding = nn.Linear(OBJECT_FEATURES, hidden)
        self.end_embedding = nn.Parameter(torch.zeros(hidden))
        self.start_embedding = nn.Parameter(torch.zeros(hidden))
        self.pair_embedding = nn.Embedding(len(PAIRS), hidden)
        self.gru = nn.GRUCell(2 * hidden, hidden)
        self.object_query = nn.Linear(hidden, hidden, bias=False)
        self.pair_head = nn.Linear(2 * hidden, len(PAIRS))
        nn.init.normal_(self.end_embedding, std=0.1)
        nn.init.normal_(self.start_embedding, std=0.1)

    def fuse(self, initial: torch.Tensor, final: torch.Tensor) -> torch.Tensor:
        if self.config["fusion"] == "concat":
            return torch.cat((initial, final), dim=1)
        return final - initial

    def encode(
        self, initial: torch.Tensor, final: torch.Tensor, objects: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Image feature (B, H), first GRU state (B, H), object + END embeddings (B, 11, H)."""
        feature = torch.relu(self.image_projection(self.encoder(self.fuse(initial, final))))
        state = torch.tanh(self.initial_state(feature))
        embedded = self.object_embedding(objects)
        end = self.end_embedding.to(embedded.dtype).expand(embedded.shape[0], 1, -1)
        return feature, state, torch.cat((embedded, end), dim=1)

    def step(
        self, feature: torch.Tensor, state: torch.Tensor, candidates: torch.Tensor, previous: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One decoder step: new state, object scores (B, 11), pair scores (B, 33)."""
        state = self.gru(torch.cat((feature, previous), dim=1).to(state.dtype), state)
        query = self.object_query(state)
        object_scores = torch.einsum("bh,boh->bo", query, candidates.to(query.dtype))
        pair_scores = self.pair_head(torch.cat((state, feature.to(state.dtype)), dim=1))
        return state, object_scores, pair_scores

    def previous_input(
        self, candidates: torch.Tensor, objects: torch.Tensor, pairs: torch.Tensor
    ) -> torch.Tensor:
        """The next step's input: the chosen object's embedding plus the chosen pair's."""
        rows = torch.arange(candidates.shape[0], device=candidates.device)
        return candidates[rows, objects] + self.pair_embedding(pairs).to(candidates.dtype)

    def forward(
        self,
        initial: torch.Tensor,
        final: torch.Tensor,
        objects: torch.Tensor,
        target_objects: torch.Tensor,
        target_pairs: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher forcing: scores (B, T, 11) and (B, T, 33) given the true steps (B, T) before each.

        Steps past a sample's END carry any index (their scores are masked out by the loss).
        """
        feature, state, candidates = self.encode(initial, final, objects)
        previous = self.start_embedding.expand(feature.shape[0], -1)
        object_scores, pair_scores = [], []
        for step in range(target_objects.shape[1]):
            state, object_score, pair_score = self.step(feature, state, candidates, previous)
            object_scores.append(object_score)
            pair_scores.append(pair_score)
            previous = self.previous_input(candidates, target_objects[:, step], target_pairs[:, step])
        return torch.stack(object_scores, dim=1), torch.stack(pair_scores, dim=1)

    def decode(
        self, initial: torch.Tensor, final: torch.Tensor, objects: torch.Tensor, max_steps: int
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Greedy answers: object (B, T) and pair (B, T) indices, object END after the last step.

        The first step never chooses END (every sample has at least one step).
        """
        feature, state, candidates = self.encode(initial, final, objects)
        previous = self.start_embedding.expand(feature.shape[0], -1)
        chosen_objects, chosen_pairs = [], []
        for step in range(max_steps):
            state, object_scores, pair_scores = self.step(feature, state, candidates, previous)
            if step == 0:
                object_scores = object_scores.clone()
                object_scores[:, END] = float("-inf")
            object_choice = object_scores.argmax(dim=1)
            pair_choice = pair_scores.argmax(dim=1)
            chosen_objects.append(object_choice)
            chosen_pairs.append(pair_choice)
            # An END choice feeds the END vector; its pair is ignored.
            previous = self.previous_input(candidates, object_choice, pair_choice)
        return torch.stack(chosen_objects, dim=1), torch.stack(chosen_pairs, dim=1)


def build_model(config: Mapping[str, Any] | None = None) -> TranceNet:
    return TranceNet(config)


def answers_from_choices(objects: torch.Tensor, pairs: torch.Tensor) -> list[list[dict[str, Any]]]:
    """Decoded indices to prediction steps: each row up to its first END."""
    answers = []
    for object_row, pair_row in zip(objects.tolist(), pairs.tolist(), strict=True):
        steps = []
        for obj_idx, pair in zip(object_row, pair_row, strict=True):
            if obj_idx == END:
                break
            steps.append(step_of(obj_idx, pair))
        answers.append(steps)
    return answers


def parameter_count(model: nn.Module) -> int:
    return sum(parameter.numel() for parameter in model.parameters())


def forward_throughput(
    model: TranceNet, *, batch_size: int, steps: int, device: str, max_steps: int = 4, warmup: int = 2
) -> dict[str, float]:
    """Samples per second of the bare forward pass (greedy decoding) on one pre-built batch.

    For a performance benchmark: compare this with the whole answering pipeline (reading and
    resizing images, moving batches to the device) to see what the input pipeline costs. The
    batch is random pixels already on `device`; runs the same precision and memory format as
    answering (float16 autocast and channels_last on CUDA, float32 on CPU), `warmup` unmeasured
    passes first. Returns samples_per_second, seconds, batch_size and steps.
    """
    height, width = model.config["image_height"], model.config["image_width"]
    on_cuda = torch.device(device).type == "cuda"
    generator = torch.Generator().manual_seed(0)
    initial = torch.randint(0, 256, (batch_size, 3, height, width), generator=generator, dtype=torch.uint8)
    final = torch.randint(0, 256, (batch_size, 3, height, width), generator=generator, dtype=torch.uint8)
    objects = torch.rand((batch_size, OBJECTS_PER_STATE, OBJECT_FEATURES), generator=generator)
    initial, final, objects = prepared_inputs(initial, final, objects, device)
    model.eval()

    def run() -> None:
        with torch.inference_mode(), inference_precision(device):
            model.decode(initial, final, objects, max_steps)

    for _ in range(warmup):
        run()
    if on_cuda:
        torch.cuda.synchronize(device)
    started = time.perf_counter()
    for _ in range(steps):
        run()
    if on_cuda:
        torch.cuda.synchronize(device)
    seconds = time.perf_counter() - started
    return {
        "samples_per_second": batch_size * steps / seconds if seconds else float("inf"),
        "seconds": seconds,
        "batch_size": batch_size,
        "steps": steps,
    }


def prepared_inputs(
    initial: torch.Tensor, final: torch.Tensor, objects: torch.Tensor, device: str
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Batch tensors on `device`, normalised; channels_last on CUDA."""
    on_cuda = torch.device(device).type == "cuda"
    memory_format = torch.channels_last if on_cuda else torch.contiguous_format
    initial = normalise_pixels(initial.to(device, non_blocking=on_cuda)).contiguous(
        memory_format=memory_format
    )
    final = normalise_pixels(final.to(device, non_blocking=on_cuda)).contiguous(memory_format=memory_format)
    return initial, final, objects.to(device, non_blocking=on_cuda)


def inference_precision(device: str) -> Any:
    """float16 autocast on CUDA; nothing (float32) elsewhere."""
    if torch.device(device).type == "cuda":
        return torch.autocast("cuda", dtype=torch.float16)
    return torch.autocast("cpu", enabled=False)


def load_image(path: str, height: int, width: int) -> torch.Tensor:
    """A render as a (3, height, width) uint8 tensor.

    A render exactly twice the size (the generator's and the released 320x240 renders for the
    model's 160x120) is halved by averaging 2x2 blocks, which costs a third of a bilinear resize
    (decoding the PNG is most of what is left); any other size is resized with bilinear filtering.
    The shipped checkpoint was trained on bilinear resizes: on its 500 held-out samples it scores
    Basic Acc .496 with halved inputs and .502 with resized ones (3 samples of 500).
    """
    import numpy as np
    from PIL import Image

    with Image.open(path) as image:
        rgb = image.convert("RGB")
        if rgb.size == (2 * width, 2 * height):
            resized = rgb.reduce(2)
        else:
            resized = rgb.resize((width, height), Image.Resampling.BILINEAR)
    return torch.from_numpy(np.asarray(resized).copy()).permute(2, 0, 1).contiguous()
