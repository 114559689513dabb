"""TRANCE dataset generator: balanced samples in the released "simple" format (pure, no Django).

What it makes (see ../shared/FORMATS.md, TRANCE): ``data.jsonl`` with one sample per line, and
four 320x240 renders per sample in the same folder (``img_000000-init.C.png`` and
``img_000000-fin.{L,C,R}.png``). Samples are planned one after another in this process, because
the paper's balancing (Algorithm 1) makes every draw depend on all earlier samples; their
images are then rendered by a pool of worker processes, since rendering is the costly part.
A seed fixes everything: the same seed gives byte-identical files whatever the number of
workers, and the first N samples of a longer run are the N samples of a shorter one.

How a sample is built, following the paper and the released generator:

* Initial state: the number of visible objects (1..10), then for each of the 10 objects its
  shape, size, material and colour, all drawn by Algorithm 1; the object goes to a random free
  integer position in the visible area [-20, 20]^2 or in the rest of the plane [-40, 40]^2.
  A rotation about the vertical axis is drawn too; it only affects the renders, since the
  simple format has no place for it.
* Transformation: its length (1..4) by Algorithm 1, then each step: an (attribute, value) pair
  such as ``color.cyan`` or ``position.behind.2``, drawn by Algorithm 1 on the summed n-gram
  counts (n = 1..4) of the pairs that would end the sequence so far; for a position pair a move
  type (inner / out / in); then an object by Algorithm 1 among those the rules allow. A draw that
  fails is excluded and the next one is drawn; when every pair fails the whole sample is thrown
  away and every count it added is rolled back.

The rules a step must keep (the released generator's "Rule A" and "Rule B", plus two of ours):

1. It changes something, and the state stays valid: every object on the plane, no overlap.
2. Position steps move visible to visible (inner), visible to invisible (out) or invisible to
   visible (in); never invisible to invisible.
3. Occlusion: objects with fewer than 150 pixels in the initial Center render (320x240 id buffer)
   are occluded and are never the subject of a step. Objects outside the visible area are not
   occluded but invisible (the released renders do not draw them): only an "in" move may take one.
4. An object already transformed may not be moved out (its earlier change would not be seen).
5. After each step, no object transformed so far may be occluded in any of the three final views
   (Left, Center, Right); moved-out objects are exempt, being invisible.
6. (Ours) An object moved out is not brought back in: the "in" step would start from a place the
   images never show, so its value could not be inferred. In-moves therefore take objects that
   were invisible from the start and untouched.
7. (Ours) A step may not undo the sample's earlier steps: the changed attribute must end different
   from its initial value (red -> blue -> red, or a move and its reverse, would be invisible).

Rendering is injected: `pixel_counter` counts each drawn object's visible pixels in a view (the
occlusion rules), `image_writer` renders and saves one image. Both default to the renderer in
plugins.clevr.render, imported only when first used.

Training data for models can be made faster with two options that leave the default output
alone: `lengths` restricts the transformation lengths drawn (``(1,)``: single-step samples, what
the Basic setting needs), and `final_cameras` renders only some final views (the initial Center
view is always rendered; ``data.jsonl`` then names only the images that exist). The occlusion
rules still look at all three final views, so the samples are the ones a full run would plan.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import random
import time
from collections import Counter, deque
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import orjson

from plugins.clevr.world import GRID_MAX, GRID_MIN, MIN_GAP, RADII, VISIBLE_MAX, VISIBLE_MIN, SceneObject
from plugins.trance.formats import (
    ATTRIBUTE_VALUES,
    CENTER_CAMERA,
    FINAL_CAMERAS,
    MAX_STEPS,
    MIN_STEPS,
    MOVE_TYPES,
    OBJECT_FIELDS,
    OBJECTS_PER_STATE,
)
from plugins.trance.simulator import (
    OVERLAP_TOLERANCE,
    all_moves,
    apply_step,
    is_visible,
    move_type,
    out_move_options,
)

if TYPE_CHECKING:
    from plugins.clevr.camera import Camera

INITIAL_CAMERAS = (CENTER_CAMERA,)
CAMERA_LETTERS = {"Camera_Left": "L", "Camera_Center": "C", "Camera_Right": "R"}
IMAGE_WIDTH, IMAGE_HEIGHT = 320, 240
#: Fewer visible pixels than this (in a 320x240 view) make an object occluded, as released.
OCCLUSION_MIN_PIXELS = 150
#: Visible objects in an initial state: the released configuration allows 1 to 10.
VISIBLE_COUNTS = tuple(range(1, OBJECTS_PER_STATE + 1))
LENGTHS = tuple(range(MIN_STEPS, MAX_STEPS + 1))
#: The 33 (attribute, value) pairs, written as in the paper: ``color.cyan``, ``position.behind.2``.
PAIRS: tuple[str, ...] = (
    *(f"{attr}.{value}" for attr, values in ATTRIBUTE_VALUES.items() for value in values),
    *(f"position.{direction}.{steps}" for direction, steps in all_moves()),
)
#: Order in which an object's attributes are drawn (fixed, so that seeds reproduce).
DRAW_ORDER = ("shape", "size", "material", "color")
#: Algorithm 1's smoothing term: option i is drawn with weight max(n) - n_i + SMOOTHING.
SMOOTHING = 0.1
#: Samples thrown away in a row before giving up (a safety net: failures are rare).
MAX_SAMPLE_ATTEMPTS = 1000
DATA_FILE = "data.jsonl"

Object = dict[str, Any]
Key = TypeVar("Key", bound=Hashable)

#: (objects drawn in a view, camera name) -> visible pixels of each of those objects.
PixelCounter = Callable[[Sequence[SceneObject], str], Sequence[int]]
#: (objects drawn, camera name, file path) -> None: render one image and save it as PNG.
ImageWriter = Callable[[Sequence[SceneObject], str, Path], None]
#: (samples finished, samples asked for) -> None.
ProgressCallback = Callable[[int, int], None]


class GenerationError(RuntimeError):
    """The generator could not build a sample (the rules left nothing to draw, again and again)."""


# --- Algorithm 1 -------------------------------------------------------------------------------


def balanced_choice(
    counts: Mapping[Key, float], rng: random.Random, exclude: Collection[Key] = ()
) -> Key | None:
    """Draw an option by the paper's Algorithm 1; None when every option is excluded.

    Option i is drawn with probability proportional to ``max(n) - n_i + 0.1`` over the options
    still allowed, so the least used options are the likeliest and counts stay level. Only
    ``rng.random()`` is used, whose stream Python keeps stable across versions.
    """
    options = [option for option in counts if option not in exclude]
    if not options:
        return None
    highest = max(counts[option] for option in options)
    weights = [highest - counts[option] + SMOOTHING for option in options]
    threshold = rng.random() * sum(weights)
    for option, weight in zip(options, weights, strict=True):
        threshold -= weight
        if threshold < 0:
            return option
    return options[-1]


def uniform_index(rng: random.Random, size: int) -> int:
    """A uniform index below `size`, from ``rng.random()`` only (see balanced_choice)."""
    return min(int(rng.random() * size), size - 1)


def shuffled(values: Sequence[Any], rng: random.Random) -> list[Any]:
    """Fisher-Yates on ``rng.random()`` only (see balanced_choice)."""
    result = list(values)
    for last in range(len(result) - 1, 0, -1):
        other = uniform_index(rng, last + 1)
        result[last], result[other] = result[other], result[last]
    return result


def pair_name(attr: str, value: Any) -> str:
    """``color.cyan`` for a colour step, ``position.behind.2`` for a move."""
    if attr == "position":
        direction, steps = value
        return f"position.{direction}.{steps}"
    return f"{attr}.{value}"


def pair_step(pair: str) -> tuple[str, Any]:
    """The (attribute, value) a pair name stands for."""
    attr, _, rest = pair.partition(".")
    if attr == "position":
        direction, _, steps = rest.rpartition(".")
        return attr, [direction, int(steps)]
    return attr, rest


class BalanceCounts:
    """The counts Algorithm 1 levels, with an undo log so a failed sample can be rolled back.

    Everything a sample adds goes through `add` (or `add_pairs`); `commit` accepts the sample,
    `roll_back` takes its additions away again, as the paper prescribes.
    """

    def __init__(self, lengths: Sequence[int] = LENGTHS) -> None:
        self.visible_objects: dict[int, int] = dict.fromkeys(VISIBLE_COUNTS, 0)
        self.attribute_values: dict[str, dict[str, int]] = {
            attr: dict.fromkeys(values, 0) for attr, values in ATTRIBUTE_VALUES.items()
        }
        self.lengths: dict[int, int] = dict.fromkeys(lengths, 0)
        self.objects: dict[int, int] = dict.fromkeys(range(OBJECTS_PER_STATE), 0)
        self.move_types: dict[str, int] = dict.fromkeys(MOVE_TYPES, 0)
        #: n -> {tuple of n pair names: count}; n-grams are counted inside each sample only.
        self.ngrams: dict[int, dict[tuple[str, ...], int]] = {n: {} for n in LENGTHS}
        self.ngrams[1] = {(pair,): 0 for pair in PAIRS}
        self._seen_ngrams = dict.fromkeys(LENGTHS, 0)
        self._undo: list[tuple[dict[Any, int], Any, int | None]] = []

    def add(self, table: dict[Any, int], key: Any) -> None:
        table[key] += 1
        self._undo.append((table, key, None))

    def add_pairs(self, pairs: Sequence[str]) -> None:
        """Count every n-gram that ends with the last of `pairs` (the step just accepted)."""
        for n in range(1, len(pairs) + 1):
            self._change_ngram(n, tuple(pairs[-n:]), +1)
            self._undo.append((self.ngrams[n], tuple(pairs[-n:]), n))

    def _change_ngram(self, n: int, key: tuple[str, ...], delta: int) -> None:
        table = self.ngrams[n]
        before = table.get(key, 0)
        table[key] = before + delta
        self._seen_ngrams[n] += (table[key] > 0) - (before > 0)

    def commit(self) -> None:
        self._undo.clear()

    def roll_back(self) -> None:
        for table, key, n in reversed(self._undo):
            if n is None:
                table[key] -= 1
            else:
                self._change_ngram(n, key, -1)
        self._undo.clear()

    def ngram_minimum(self, n: int) -> int:
        """The smallest count over all possible n-grams (0 while some have never been drawn)."""
        if self._seen_ngrams[n] < len(PAIRS) ** n:
            return 0
        return min(self.ngrams[n].values())

    def pair_scores(self, previous: Sequence[str]) -> dict[str, int]:
        """Per pair, how over-used the sequence ending with it is: the sum over n of the count of
        the n-gram it would complete, less the smallest n-gram count (the released n-gram
        balancing, which levels pairs and their combinations together)."""
        minima = {n: self.ngram_minimum(n) for n in range(1, len(previous) + 2)}
        scores = {}
        for pair in PAIRS:
            sequence = (*previous, pair)
            scores[pair] = sum(
                self.ngrams[n].get(sequence[-n:], 0) - minimum for n, minimum in minima.items()
            )
        return scores

    def tables(self) -> dict[str, dict[str, int]]:
        """The balanced quantities, keyed by option as text (for reports and JSON)."""
        tables = {
            "length": self.lengths,
            "object": self.objects,
            "move_type": self.move_types,
            "visible_objects": self.visible_objects,
            **self.attribute_values,
            "pair": {pair: count for (pair,), count in self.ngrams[1].items()},
        }
        return {name: {str(key): count for key, count in table.items()} for name, table in tables.items()}


# --- Planning ----------------------------------------------------------------------------------

#: The plane's integer points as a square array: entry [i, j] is the point (GRID_MIN + i, GRID_MIN + j).
_AXIS = np.arange(GRID_MIN, GRID_MAX + 1)
_VISIBLE_AXIS = (_AXIS >= VISIBLE_MIN) & (_AXIS <= VISIBLE_MAX)
GRID_VISIBLE = _VISIBLE_AXIS[:, None] & _VISIBLE_AXIS[None, :]


def free_positions(placed: Sequence[Object], new_radius: float, visible: bool) -> np.ndarray:
    """The integer points (N, 2) of the chosen area, ordered by x then y, where an object of
    `new_radius` overlaps none of `placed`, by the simulator's overlap rule.

    Only the square around each placed object, within reach of the rule, is computed: the
    initial states need this ten times per sample.
    """
    allowed = GRID_VISIBLE.copy() if visible else ~GRID_VISIBLE
    for obj in placed:
        x, y = obj["position"]
        reach = RADII[obj["size"]] + new_radius + MIN_GAP
        span = int(np.ceil(reach))
        rows = slice(max(x - span, GRID_MIN) - GRID_MIN, min(x + span, GRID_MAX) - GRID_MIN + 1)
        columns = slice(max(y - span, GRID_MIN) - GRID_MIN, min(y + span, GRID_MAX) - GRID_MIN + 1)
        distance = np.hypot(_AXIS[rows, None] - x, _AXIS[None, columns] - y)
        allowed[rows, columns] &= distance + OVERLAP_TOLERANCE >= reach
    return np.argwhere(allowed) + GRID_MIN


def scene_objects(
    objects: Sequence[Object], rotations: Sequence[float]
) -> tuple[list[SceneObject], list[int]]:
    """The objects a render draws (those in the visible area, as the released renders hide the
    others) as SceneObjects, and the index of each in `objects`."""
    drawn, indices = [], []
    for index, (obj, rotation) in enumerate(zip(objects, rotations, strict=True)):
        if is_visible(obj["position"]):
            x, y = obj["position"]
            drawn.append(
                SceneObject(
                    shape=obj["shape"],
                    radius=RADII[obj["size"]],
                    color=obj["color"],
                    material=obj["material"],
                    x=float(x),
                    y=float(y),
                    rotation=rotation,
                )
            )
            indices.append(index)
    return drawn, indices


@dataclass(slots=True)
class SamplePlan:
    """One planned sample: both states, the steps, and the rotations the renders need."""

    initial: list[Object]
    final: list[Object]
    rotations: list[float]
    transformations: list[dict[str, Any]]

    def record(self, idx: int, final_cameras: Sequence[str] = FINAL_CAMERAS) -> dict[str, Any]:
        """The sample as a line of the released simple format (keys in the released order)."""
        return {
            "idx": idx,
            "states": [
                {"objects": self.initial, "images": image_names(idx, "init", INITIAL_CAMERAS)},
                {"objects": self.final, "images": image_names(idx, "fin", final_cameras)},
            ],
            "transformations": self.transformations,
        }

    def render_job(self, idx: int, final_cameras: Sequence[str] = FINAL_CAMERAS) -> RenderJob:
        initial, _ = scene_objects(self.initial, self.rotations)
        final, _ = scene_objects(self.final, self.rotations)
        return RenderJob(idx, tuple(initial), tuple(final), tuple(final_cameras))


def image_names(idx: int, stage: str, cameras: Sequence[str]) -> dict[str, str]:
    return {camera: f"img_{idx:06d}-{stage}.{CAMERA_LETTERS[camera]}.png" for camera in cameras}


@dataclass(slots=True)
class PlanningStatistics:
    """What planning cost: thrown-away samples, rejected candidate steps by reason, renders."""

    sample_attempts: int = 0
    rejected_steps: Counter[str] = field(default_factory=Counter)
    pixel_renders: int = 0
    seconds: float = 0.0


class SamplePlanner:
    """Plans samples one after another; holds the random stream and the balance counts."""

    def __init__(
        self, rng: random.Random, pixel_counter: PixelCounter, lengths: Sequence[int] = LENGTHS
    ) -> None:
        self.rng = rng
        self.pixel_counter = pixel_counter
        self.counts = BalanceCounts(lengths)
        self.statistics = PlanningStatistics()

    def plan(self) -> SamplePlan:
        """The next sample. Every failed attempt is rolled back before the next one."""
        started = time.perf_counter()
        try:
            for _ in range(MAX_SAMPLE_ATTEMPTS):
                self.statistics.sample_attempts += 1
                plan = SampleAttempt(self).run()
                if plan is not None:
                    self.counts.commit()
                    return plan
                self.counts.roll_back()
            raise GenerationError(f"no valid sample after {MAX_SAMPLE_ATTEMPTS} attempts")
        finally:
            self.statistics.seconds += time.perf_counter() - started


class SampleAttempt:
    """One try at a sample: the state being transformed and what the rules need to remember."""

    def __init__(self, planner: SamplePlanner) -> None:
        self.rng = planner.rng
        self.counts = planner.counts
        self.statistics = planner.statistics
        self.pixel_counter = planner.pixel_counter
        self.rotations: list[float] = []
        self.initial: list[Object] = []
        self.initially_occluded: set[int] = set()
        self.transformed: set[int] = set()
        self.pairs: list[str] = []
        self.steps: list[dict[str, Any]] = []
        #: (camera, geometry of the drawn objects) -> pixels per object index; colour and
        #: material steps leave the geometry alone, so their checks cost no render.
        self._pixel_cache: dict[tuple[str, tuple[Any, ...]], dict[int, int]] = {}

    def run(self) -> SamplePlan | None:
        if not self.build_initial_state():
            return None
        initial_pixels = self.pixels(self.initial, "Camera_Center")
        self.initially_occluded = {
            index
            for index, obj in enumerate(self.initial)
            if is_visible(obj["position"]) and initial_pixels[index] < OCCLUSION_MIN_PIXELS
        }
        length = balanced_choice(self.counts.lengths, self.rng)
        self.counts.add(self.counts.lengths, length)
        state = self.initial
        for _ in range(length):
            state = self.plan_step(state)
            if state is None:
                return None
        return SamplePlan(self.initial, state, self.rotations, self.steps)

    # Initial state.

    def build_initial_state(self) -> bool:
        visible_count = balanced_choice(self.counts.visible_objects, self.rng)
        self.counts.add(self.counts.visible_objects, visible_count)
        visibility = shuffled(
            [True] * visible_count + [False] * (OBJECTS_PER_STATE - visible_count), self.rng
        )
        for visible in visibility:
            attributes = {}
            for attr in DRAW_ORDER:
                table = self.counts.attribute_values[attr]
                attributes[attr] = balanced_choice(table, self.rng)
                self.counts.add(table, attributes[attr])
            self.rotations.append(self.rng.random() * 360.0)
            free = free_positions(self.initial, RADII[attributes["size"]], visible)
            if not len(free):
                return False
            position = [int(coordinate) for coordinate in free[uniform_index(self.rng, len(free))]]
            self.initial.append(
                {attr: attributes[attr] for attr in OBJECT_FIELDS[:-1]} | {"position": position}
            )
        return True

    # Steps.

    def plan_step(self, state: list[Object]) -> list[Object] | None:
        """Draw and apply one step; None when no pair can be applied to any object.

        A failed non-position pair is excluded. A failed move is excluded only with its move
        type: the next draw starts again from the pairs, so the move type the balance asks for
        (often "in", the hardest to place) gets tried with other directions before another
        move type is settled for; falling back at once would leave "in" moves short.
        """
        scores = self.counts.pair_scores(self.pairs)
        exhausted: list[str] = []
        tried_kinds: dict[str, list[str]] = {}
        while (pair := balanced_choice(scores, self.rng, exhausted)) is not None:
            attr, value = pair_step(pair)
            if attr != "position":
                exhausted.append(pair)
                new_state = self.try_objects(state, pair, attr, value, None)
            else:
                kinds = tried_kinds.setdefault(pair, [])
                kind = balanced_choice(self.counts.move_types, self.rng, kinds)
                kinds.append(kind)
                if len(kinds) == len(MOVE_TYPES):
                    exhausted.append(pair)
                new_state = self.try_objects(state, pair, attr, value, kind)
            if new_state is not None:
                return new_state
        return None

    def eligible_objects(self, state: Sequence[Object], kind: str | None) -> list[int]:
        """Objects the rules let a step of this move kind (None: not a move) take."""
        if kind == "in":
            return [
                index
                for index, obj in enumerate(state)
                if not is_visible(obj["position"]) and index not in self.transformed
            ]
        return [
            index
            for index, obj in enumerate(state)
            if is_visible(obj["position"])
            and index not in self.initially_occluded
            and not (kind == "out" and index in self.transformed)
        ]

    def try_objects(
        self, state: list[Object], pair: str, attr: str, value: Any, kind: str | None
    ) -> list[Object] | None:
        candidates = self.eligible_objects(state, kind)
        tried: list[int] = []
        object_counts = {index: self.counts.objects[index] for index in candidates}
        while (index := balanced_choice(object_counts, self.rng, tried)) is not None:
            tried.append(index)
            new_state = self.try_step(state, index, attr, value, kind)
            if new_state is None:
                continue
            options = out_move_options(state, index) if kind == "out" else [value]
            step: dict[str, Any] = {"obj_idx": index, "attr": attr, "val": value, "options": options}
            if kind is not None:
                step["type"] = kind
            self.steps.append(step)
            self.transformed.add(index)
            self.pairs.append(pair)
            self.counts.add(self.counts.objects, index)
            if kind is not None:
                self.counts.add(self.counts.move_types, kind)
            self.counts.add_pairs(self.pairs)
            return new_state
        return None

    def try_step(
        self, state: list[Object], index: int, attr: str, value: Any, kind: str | None
    ) -> list[Object] | None:
        """The state after the step, or None (with the reason counted) if a rule forbids it."""
        result = apply_step(state, {"obj_idx": index, "attr": attr, "val": value})
        reason = None
        if not result.changed:
            reason = "no change"
        elif result.invalid_position:
            reason = "off the plane"
        elif (
            kind is not None
            and move_type(state[index]["position"], result.objects[index]["position"]) != kind
        ):
            reason = "wrong move type"
        elif result.overlap:
            reason = "overlap"
        elif result.objects[index][attr] == self.initial[index][attr]:
            reason = "undoes an earlier step"
        elif self.occludes_transformed(result.objects, self.transformed | {index}):
            reason = "transformed object occluded"
        if reason is not None:
            self.statistics.rejected_steps[reason] += 1
            return None
        return result.objects

    # Occlusion.

    def pixels(self, state: Sequence[Object], camera: str) -> dict[int, int]:
        """Visible pixels per object index in a view of `state` (objects not drawn: absent)."""
        drawn, indices = scene_objects(state, self.rotations)
        geometry = tuple(
            (index, obj.shape, obj.radius, obj.x, obj.y) for index, obj in zip(indices, drawn, strict=True)
        )
        key = (camera, geometry)
        if key not in self._pixel_cache:
            self.statistics.pixel_renders += 1
            counts = self.pixel_counter(drawn, camera) if drawn else []
            self._pixel_cache[key] = {index: int(count) for index, count in zip(indices, counts, strict=True)}
        return self._pixel_cache[key]

    def occludes_transformed(self, state: Sequence[Object], transformed: Collection[int]) -> bool:
        """Whether any transformed object in the visible area is occluded in some final view."""
        watched = [index for index in sorted(transformed) if is_visible(state[index]["position"])]
        if not watched:
            return False
        for camera in FINAL_CAMERAS:
            pixels = self.pixels(state, camera)
            if any(pixels.get(index, 0) < OCCLUSION_MIN_PIXELS for index in watched):
                return True
        return False


# --- Rendering ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RenderJob:
    """What a worker needs to render one sample's images (initial Center, then `final_cameras`)."""

    idx: int
    initial: tuple[SceneObject, ...]
    final: tuple[SceneObject, ...]
    final_cameras: tuple[str, ...] = FINAL_CAMERAS


@functools.cache
def trance_view(camera_name: str) -> Camera:
    """The TRANCE camera at the generator's image size (imported late: the renderer is optional)."""
    from plugins.clevr.camera import fitted_camera

    return fitted_camera(camera_name, IMAGE_WIDTH, IMAGE_HEIGHT)


def count_visible_pixels(objects: Sequence[SceneObject], camera_name: str) -> Sequence[int]:
    """The default PixelCounter: the renderer's id buffer at 320x240."""
    from plugins.clevr.render import render_ids, visible_pixel_counts

    ids = render_ids(objects, trance_view(camera_name))
    return visible_pixel_counts(ids, len(objects))


def write_image(objects: Sequence[SceneObject], camera_name: str, path: Path) -> None:
    """The default ImageWriter: the renderer's shaded image, saved as PNG."""
    from plugins.clevr.render import render, save_png

    save_png(render(objects, trance_view(camera_name)).image, path)


def render_sample(job: RenderJob, out_dir: Path, image_writer: ImageWriter) -> int:
    """Render and save one sample's images (runs in a worker process)."""
    for camera, name in image_names(job.idx, "init", INITIAL_CAMERAS).items():
        image_writer(job.initial, camera, out_dir / name)
    for camera, name in image_names(job.idx, "fin", job.final_cameras).items():
        image_writer(job.final, camera, out_dir / name)
    return job.idx


# --- Driver ------------------------------------------------------------------------------------


@dataclass(slots=True)
class GenerationReport:
    """What a run produced and what it cost; `tables` holds the balanced counts."""

    out_dir: Path
    count: int
    seed: int
    workers: int
    images: int
    sample_attempts: int
    rejected_steps: dict[str, int]
    pixel_renders: int
    planning_seconds: float
    total_seconds: float
    tables: dict[str, dict[str, int]]

    def as_dict(self) -> dict[str, Any]:
        return {
            "out_dir": str(self.out_dir),
            "count": self.count,
            "seed": self.seed,
            "workers": self.workers,
            "images": self.images,
            "sample_attempts": self.sample_attempts,
            "rejected_steps": self.rejected_steps,
            "pixel_renders": self.pixel_renders,
            "planning_seconds": round(self.planning_seconds, 3),
            "total_seconds": round(self.total_seconds, 3),
            "tables": self.tables,
        }

    def describe(self) -> str:
        """A readable summary: costs, then each balance table with shares and its spread."""
        lines = [
            f"{self.count} samples in {self.out_dir} (seed {self.seed}), {self.images} images, "
            f"{self.total_seconds:.1f} s ({self.planning_seconds:.1f} s planning, {self.workers} workers)",
            f"{self.sample_attempts} sample attempts, {self.pixel_renders} occlusion renders; rejected steps: "
            + (
                ", ".join(f"{reason} {number}" for reason, number in sorted(self.rejected_steps.items()))
                or "none"
            ),
        ]
        for name, table in self.tables.items():
            total = sum(table.values()) or 1
            shares = [count / total for count in table.values()]
            spread = (max(shares) - min(shares)) * len(shares)
            lines.append(f"{name} (max-min spread {spread:.1%} of uniform):")
            cells = [f"{key} {count} ({count / total:.1%})" for key, count in table.items()]
            lines.extend("  " + "  ".join(cells[start : start + 6]) for start in range(0, len(cells), 6))
        return "\n".join(lines)


def generate(
    out_dir: Path,
    *,
    count: int,
    seed: int,
    workers: int = 1,
    render_images: bool = True,
    lengths: Sequence[int] = LENGTHS,
    final_cameras: Sequence[str] = FINAL_CAMERAS,
    progress: ProgressCallback | None = None,
    pixel_counter: PixelCounter | None = None,
    image_writer: ImageWriter | None = None,
) -> GenerationReport:
    """Generate `count` samples into `out_dir` (created if needed) and return what was made.

    Planning runs here, sample after sample; with `render_images`, each planned sample's four
    images are handed to `workers` processes (none for workers = 1) while planning goes on.
    ``data.jsonl`` appears only once everything is written; files of the same names are replaced.
    `pixel_counter` and `image_writer` replace the renderer (tests use fakes); an image writer
    for several workers must be picklable, that is, a module-level function.
    `lengths` (a subset of 1..4) limits the transformation lengths; `final_cameras` (a subset of
    FINAL_CAMERAS) the final views rendered and named in ``data.jsonl``.
    """
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if not lengths or not set(lengths) <= set(LENGTHS):
        raise ValueError(f"lengths must be some of {', '.join(map(str, LENGTHS))}, got {list(lengths)}")
    if not final_cameras or not set(final_cameras) <= set(FINAL_CAMERAS):
        raise ValueError(
            f"final cameras must be some of {', '.join(FINAL_CAMERAS)}, got {list(final_cameras)}"
        )
    lengths = tuple(sorted(set(lengths)))
    final_cameras = tuple(camera for camera in FINAL_CAMERAS if camera in final_cameras)
    started = time.perf_counter()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    planner = SamplePlanner(random.Random(seed), pixel_counter or count_visible_pixels, lengths)
    writer = image_writer or write_image
    partial_path = out_dir / f".{DATA_FILE}.partial"
    finished = 0

    def advance() -> None:
        nonlocal finished
        finished += 1
        if progress is not None:
            progress(finished, count)

    pool = None
    if render_images and workers > 1:
        pool = multiprocessing.get_context("spawn").Pool(workers)
    try:
        pending: deque[Any] = deque()
        with partial_path.open("wb") as data_file:
            for idx in range(count):
                plan = planner.plan()
                data_file.write(orjson.dumps(plan.record(idx, final_cameras)) + b"\n")
                if not render_images:
                    advance()
                elif pool is None:
                    render_sample(plan.render_job(idx, final_cameras), out_dir, writer)
                    advance()
                else:
                    job = plan.render_job(idx, final_cameras)
                    pending.append(pool.apply_async(render_sample, (job, out_dir, writer)))
                    while len(pending) > 2 * workers:
                        pending.popleft().get()
                        advance()
            while pending:
                pending.popleft().get()
                advance()
        os.replace(partial_path, out_dir / DATA_FILE)
        if pool is not None:
            pool.close()
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
        partial_path.unlink(missing_ok=True)
    statistics = planner.statistics
    return GenerationReport(
        out_dir=out_dir,
        count=count,
        seed=seed,
        workers=workers,
        images=(len(INITIAL_CAMERAS) + len(final_cameras)) * count if render_images else 0,
        sample_attempts=statistics.sample_attempts,
        rejected_steps=dict(statistics.rejected_steps),
        pixel_renders=statistics.pixel_renders,
        planning_seconds=statistics.seconds,
        total_seconds=time.perf_counter() - started,
        tables=planner.counts.tables(),
    )
