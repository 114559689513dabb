"""TranceNet: the TVR paper's image-pair-to-steps model, in plain torch (pure, no Django).

The paper: Hong et al., "Transformation Driven Visual Reasoning", CVPR 2021, its TranceNet
baseline. Yardstick's first reading of it, the "v1" layout below, is that of the shipped
checkpoint; the "tvr" layout (further below) follows the paper's released code.

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

Everything that shapes the weights (variant, encoder, fusion, hidden size, image size) is the
config stored in every checkpoint, so `build_model(config)` rebuilds a saved model exactly.

Two layouts, chosen by the config's ``variant``:

* ``"v1"`` (above): Yardstick's first layout, that of the shipped checkpoint; a checkpoint whose
  config names no variant is one.
* ``"tvr"``: the layout of the paper's released code (github.com/hughplay/TVR, src/model/
  trancenet.py, encoder.py, decoder.py, block.py, its configs event.ConcatResNet.yaml and
  basic.SingleConcatResNet.yaml), written here from that description (docs/inference.md,
  "TranceNet", sets the two side by side with their sources). Pixels in 0..1, the two
  renders concatenated (6 channels) or subtracted (initial minus final). Encoder: the paper's CNN
  (four stride-2 convolutions of 16/32/64/64 channels, 5x5 then 3x3, BatchNorm and ReLU after the
  middle two only, the output map flattened) or ResNet-18 (its first convolution taking the fused
  channels, Kaiming-normal initialised as torchvision does, average pooled to 512). A linear layer
  of the image feature is the first state of a GRU (hidden 128) whose input at each step is the
  previous step's object vector (the 19 attribute features) and an 8-wide embedding of its pair
  (learned start vectors at the first step). From each GRU output, an MLP (128, ReLU, 19) gives a
  query matched by dot product against the ten initial objects' vectors and a learned END vector;
  the pair head (a linear layer of the output, joined with the chosen object's vector, then an
  MLP of 128, ReLU, 34) chooses one of the 33 pairs or "no more steps". Up to four steps and the
  END after them (five decoder steps in training).
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
#: "v1": Yardstick's first layout (the shipped checkpoint); "tvr": the paper's (see above).
VARIANTS = ("v1", "tvr")
DEFAULT_CONFIG: dict[str, Any] = {
    # The default of a checkpoint's config that names no variant: those were all written before
    # "tvr" existed. Training a new model defaults to "tvr" (training.TRAINING_VARIANT).
    "variant": "v1",
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
    if merged["variant"] not in VARIANTS:
        raise ValueError(f"unknown variant {merged['variant']!r} (expected one of {', '.join(VARIANTS)})")
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


def normalise_pixels(images: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """uint8 (or 0..255 float) images to the model's input scale, in `out` (a float32 tensor of
    their shape) when given.

    The same operations in the same order as ``(images / 255 - mean) / std``, so the same bits,
    done in place on one float tensor: a third of the time (3.0 -> 0.9 ms for 64 renders at
    120x160 here), which a run pays per batch and the raw forward pass does not.
    """
    scaled = images.to(torch.float32, copy=True) if out is None else out.copy_(images)
    return scaled.div_(255.0).sub_(PIXEL_MEAN).div_(PIXEL_STD)


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
    """Images in, per-step object and pair scores out: the "v1" layout (see the module docstring)."""

    #: Pair choices per step: the 33 pairs (the END is an object choice only).
    pair_outputs = len(PAIRS)

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

    def target_length(self, longest: int) -> int:
        """Decoder steps trained on data whose longest sample has `longest` steps: those and the
        END after them, at most `max_steps` (a four-step sample's END is not learned)."""
        return min(self.config["max_steps"], longest + 1)

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


# --- The paper's layout ("variant": "tvr") ---------------------------------------------------------

#: Width of the pair embedding fed back to the GRU (the released code's c_pair_embed).
PAIR_EMBEDDING = 8
#: The pair choice after the 33 pairs in the "tvr" layout: "no more steps" (the released PAIR_EOS).
PAIR_END = len(PAIRS)


def strided_conv(in_channels: int, out_channels: int, kernel: int, stride: int) -> nn.Sequential:
    """A convolution padded with ``kernel - stride`` zeros, the odd one after (below and to the
    right), as the paper's ConvBlock pads: a side of n gives floor(n / stride)."""
    total = kernel - stride
    before = total // 2
    return nn.Sequential(
        nn.ZeroPad2d((before, total - before, before, total - before)),
        nn.Conv2d(in_channels, out_channels, kernel, stride),
    )


class PaperCNN(nn.Module):
    """The paper's CNN encoder: four stride-2 convolutions (16, 32, 64, 64 channels; 5x5, then
    3x3), BatchNorm and ReLU after the middle two only, the last map flattened (no pooling)."""

    channels = (16, 32, 64, 64)
    kernels = (5, 3, 3, 3)

    def __init__(self, in_channels: int, height: int, width: int) -> None:
        super().__init__()
        widths = (in_channels, *self.channels)
        layers: list[nn.Module] = []
        for number, (a, b, kernel) in enumerate(zip(widths[:-1], widths[1:], self.kernels, strict=True)):
            layers.append(strided_conv(a, b, kernel, 2))
            if 0 < number < len(self.channels) - 1:
                layers += [nn.BatchNorm2d(b), nn.ReLU(inplace=True)]
        self.layers = nn.Sequential(*layers)
        for _ in self.channels:
            height, width = height // 2, width // 2
        if height < 1 or width < 1:
            raise ValueError("the CNN encoder needs images of at least 16x16 pixels")
        self.out_features = self.channels[-1] * height * width

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.layers(images).flatten(1)


def torchvision_init(module: nn.Module) -> None:
    """torchvision's ResNet initialisation: Kaiming-normal (fan out) convolutions, BatchNorm 1 and 0."""
    if isinstance(module, nn.Conv2d):
        nn.init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
    elif isinstance(module, nn.BatchNorm2d):
        nn.init.ones_(module.weight)
        nn.init.zeros_(module.bias)


class PaperTranceNet(nn.Module):
    """The "tvr" layout: the paper's TranceNet as its released code builds it (module docstring).

    The same interface as `TranceNet`: `forward` (teacher forcing) and `decode` (greedy), object
    choices with END = 10, pair choices with PAIR_END = 33 ("no more steps"; `decode` reports a
    step that chooses it as an END object).
    """

    pair_outputs = len(PAIRS) + 1

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        self.config = full_config(config)
        hidden = self.config["hidden"]
        in_channels = 6 if self.config["fusion"] == "concat" else 3
        self.encoder: nn.Module
        if self.config["encoder"] == "cnn":
            self.encoder = PaperCNN(in_channels, self.config["image_height"], self.config["image_width"])
        else:
            self.encoder = ResNet18(in_channels)
            self.encoder.apply(torchvision_init)
        self.initial_state = nn.Linear(self.encoder.out_features, hidden)
        self.end_object = nn.Parameter(torch.randn(OBJECT_FEATURES))
        self.start_object = nn.Parameter(torch.randn(OBJECT_FEATURES))
        self.start_pair = nn.Parameter(torch.randn(PAIR_EMBEDDING))
        self.pair_embedding = nn.Embedding(self.pair_outputs, PAIR_EMBEDDING)
        self.gru = nn.GRU(OBJECT_FEATURES + PAIR_EMBEDDING, hidden, batch_first=True)
        self.object_query = nn.Sequential(
            nn.Linear(hidden, hidden), nn.ReLU(inplace=True), nn.Linear(hidden, OBJECT_FEATURES)
        )
        self.pair_image = nn.Linear(hidden, hidden)
        self.pair_head = nn.Sequential(
            nn.Linear(hidden + OBJECT_FEATURES, hidden),
            nn.ReLU(inplace=True),
            nn.Linear(hidden, self.pair_outputs),
        )

    def target_length(self, longest: int) -> int:
        """Decoder steps trained on data whose longest sample has `longest` steps: those (at
        most `max_steps`) and the END after them."""
        return min(self.config["max_steps"], longest) + 1

    def encode(
        self, initial: torch.Tensor, final: torch.Tensor, objects: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The GRU's first state (1, B, H) and the candidates: the objects' vectors and END (B, 11, 19).

        The inputs come normalised as `prepared_inputs` gives them; the paper's pixels are 0..1.
        """
        initial = initial * PIXEL_STD + PIXEL_MEAN
        final = final * PIXEL_STD + PIXEL_MEAN
        fused = torch.cat((initial, final), dim=1) if self.config["fusion"] == "concat" else initial - final
        state = self.initial_state(self.encoder(fused))
        end = self.end_object.to(objects.dtype).expand(objects.shape[0], 1, -1)
        return state.unsqueeze(0), torch.cat((objects, end), dim=1)

    def start(self, batch: int) -> torch.Tensor:
        return torch.cat((self.start_object, self.start_pair)).expand(batch, 1, -1)

    def scores(
        self, outputs: torch.Tensor, candidates: torch.Tensor, chosen: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Object scores (B, T, 11) of GRU outputs (B, T, H); pair scores (B, T, 34) given the
        chosen objects' vectors (B, T, 19)."""
        query = self.object_query(outputs)
        object_scores = torch.einsum("bth,boh->bto", query, candidates.to(query.dtype))
        pair_input = torch.cat((self.pair_image(outputs), chosen.to(outputs.dtype)), dim=2)
        return object_scores, self.pair_head(pair_input)

    def forward(
        self,
        initial: torch.Tensor,
        final: torch.Tensor,
        objects: torch.Tensor,
        target_objects: torch.Tensor,
        target_pairs: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher forcing: scores (B, T, 11) and (B, T, 34) given the true steps (B, T), END and
        PAIR_END at each sample's last step; steps past it carry any valid index (masked)."""
        state, candidates = self.encode(initial, final, objects)
        rows = torch.arange(candidates.shape[0], device=candidates.device).unsqueeze(1)
        chosen = candidates[rows, target_objects]
        previous = torch.cat((chosen[:, :-1], self.pair_embedding(target_pairs[:, :-1])), dim=2)
        inputs = torch.cat((self.start(candidates.shape[0]).to(previous.dtype), previous), dim=1)
        outputs, _ = self.gru(inputs, state.to(inputs.dtype))
        return self.scores(outputs, candidates, chosen)

    def decode(
        self, initial: torch.Tensor, final: torch.Tensor, objects: torch.Tensor, max_steps: int
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Greedy answers: object (B, T) and pair (B, T) indices, object END from the step that
        chose END or PAIR_END. The first step chooses neither (every sample has a step)."""
        state, candidates = self.encode(initial, final, objects)
        batch = candidates.shape[0]
        rows = torch.arange(batch, device=candidates.device)
        inputs = self.start(batch)
        chosen_objects, chosen_pairs = [], []
        for step in range(max_steps):
            output, state = self.gru(inputs.to(state.dtype), state)
            query = self.object_query(output[:, 0])
            object_scores = torch.einsum("bh,boh->bo", query, candidates.to(query.dtype))
            if step == 0:
                object_scores[:, END] = float("-inf")
            object_choice = object_scores.argmax(dim=1)
            vectors = candidates[rows, object_choice]
            pair_input = torch.cat((self.pair_image(output[:, 0]), vectors.to(output.dtype)), dim=1)
            pair_scores = self.pair_head(pair_input)
            if step == 0:
                pair_scores[:, PAIR_END] = float("-inf")
            pair_choice = pair_scores.argmax(dim=1)
            ended = pair_choice == PAIR_END
            chosen_objects.append(torch.where(ended, torch.full_like(object_choice, END), object_choice))
            chosen_pairs.append(torch.where(ended, torch.zeros_like(pair_choice), pair_choice))
            embedded = self.pair_embedding(pair_choice)
            inputs = torch.cat((vectors.to(embedded.dtype), embedded), dim=1).unsqueeze(1)
        return torch.stack(chosen_objects, dim=1), torch.stack(chosen_pairs, dim=1)


Model = TranceNet | PaperTranceNet


def build_model(config: Mapping[str, Any] | None = None) -> Model:
    """The model of `config`'s variant ("v1" when it names none)."""
    merged = full_config(config)
    return PaperTranceNet(merged) if merged["variant"] == "tvr" else TranceNet(merged)


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
    model: Model, *, batch_size: int, steps: int, device: str, max_steps: int = 4, warmup: int = 2
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
    initial: torch.Tensor,
    final: torch.Tensor,
    objects: torch.Tensor,
    device: str,
    reuse: dict[str, torch.Tensor] | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Batch tensors on `device`, normalised; channels_last on CUDA.

    `reuse` (CPU only; the caller's dict, empty at first): the normalised images are written into
    float tensors kept there from one batch to the next, instead of new ones. A batch's fresh
    30 MB of floats otherwise costs its page faults every time (about 6 ms a batch of 64 here);
    the returned images are then overwritten by the next call with the same dict.
    """
    on_cuda = torch.device(device).type == "cuda"
    if reuse is not None and not on_cuda:
        pictures = []
        for role, images in (("initial", initial), ("final", final)):
            kept = reuse.get(role)
            if kept is None or kept.shape[1:] != images.shape[1:] or len(kept) < len(images):
                kept = reuse[role] = torch.empty(images.shape, dtype=torch.float32)
            pictures.append(normalise_pixels(images, out=kept[: len(images)]))
        return pictures[0], pictures[1], objects
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


def image_method() -> str:
    """What, beyond the size, shapes `load_image`'s pixels: kept with cached inputs, so that a
    cache made by another way of decoding (or another Pillow) is not read. Change the version
    whenever `load_image` changes."""
    import PIL

    return f"trance-render:rgb:halve-or-bilinear:v1:pillow-{PIL.__version__}"


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
