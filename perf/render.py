"""Benchmark: render random 10-object TRANCE scenes at 320x240 with the numpy renderer.

Usage:  .venv/bin/python -m perf.render [--scenes 30] [--repeat 3] [--seed 0]

Single process, one thread (BLAS threads pinned to 1 before numpy is imported). Scenes follow
TRANCE's rules (10 objects, integer positions in [-40, 40], no overlaps); two sets are timed:
every object in the visible area (the worst case: TRANCE hides the others) and a TRANCE-like
set where 1 to 10 objects are visible. The three cameras are used in turn. Reported: images
per second for the full render at the default supersampling (2) and at 1 and 3, and for the
id buffer alone (render_ids), from CPU time of this process (wall time is also shown; it is
noisier when the machine is shared). The camera cache is warmed first; its one-off cost per
camera is shown separately. The latest run is written to perf/results/render.md.

Target (the renderer's brief): at least 10 full images per second per core at 320x240.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

from plugins.clevr.camera import CAMERA_NAMES, fitted_camera  # noqa: E402
from plugins.clevr.render import render, render_ids  # noqa: E402
from plugins.clevr.world import (  # noqa: E402
    COLORS,
    GRID_MAX,
    GRID_MIN,
    MATERIALS,
    MIN_GAP,
    RADII,
    SHAPES,
    VISIBLE_MAX,
    VISIBLE_MIN,
    SceneObject,
    is_visible_position,
)

RESULTS = ROOT / "perf" / "results"
TARGET_IMAGES_PER_SECOND = 10.0


def random_scene(generator: random.Random, visible: int, total: int = 10) -> list[SceneObject]:
    """`total` non-overlapping objects, the first `visible` of them inside the visible area."""
    objects: list[SceneObject] = []
    while len(objects) < total:
        radius = RADII[generator.choice(list(RADII))]
        inside = len(objects) < visible
        low, high = (VISIBLE_MIN, VISIBLE_MAX) if inside else (GRID_MIN, GRID_MAX)
        x, y = generator.randint(low, high), generator.randint(low, high)
        if not inside and is_visible_position(x, y):
            continue
        if any(
            math.hypot(x - other.x, y - other.y) + 1e-4 < radius + other.radius + MIN_GAP for other in objects
        ):
            continue
        objects.append(
            SceneObject(
                shape=generator.choice(SHAPES),
                radius=radius,
                color=generator.choice(list(COLORS)),
                material=generator.choice(MATERIALS),
                x=x,
                y=y,
                rotation=generator.uniform(0.0, 90.0),
            )
        )
    return objects


def time_per_image(work: Callable[[], None], images: int, repeat: int) -> tuple[float, float]:
    """Median seconds per image over `repeat` runs: (CPU time, wall time)."""
    cpu, wall = [], []
    for _ in range(repeat):
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        work()
        cpu.append((time.process_time() - cpu_start) / images)
        wall.append((time.perf_counter() - wall_start) / images)
    return statistics.median(cpu), statistics.median(wall)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=30, help="scenes per set")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per measurement (median)")
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args()

    generator = random.Random(arguments.seed)
    sets = {
        "all 10 visible": [random_scene(generator, 10) for _ in range(arguments.scenes)],
        "TRANCE-like (1-10 visible)": [
            random_scene(generator, generator.randint(1, 10)) for _ in range(arguments.scenes)
        ],
    }
    cameras = [fitted_camera(name) for name in CAMERA_NAMES]

    cold_start = time.perf_counter()
    for camera in cameras:  # fills the per-camera cache (rays, empty floor)
        render([], camera)
    cold_seconds = (time.perf_counter() - cold_start) / len(cameras)
    for supersample in (1, 3):
        for camera in cameras:
            render([], camera, supersample=supersample)

    rows = []
    for set_name, scenes in sets.items():
        pairs = [(scene, cameras[index % len(cameras)]) for index, scene in enumerate(scenes)]
        measurements: list[tuple[str, Callable[[], None]]] = [
            ("render, supersample 2 (default)", lambda pairs=pairs: [render(s, c) for s, c in pairs]),
            ("render, supersample 1", lambda pairs=pairs: [render(s, c, supersample=1) for s, c in pairs]),
            ("render, supersample 3", lambda pairs=pairs: [render(s, c, supersample=3) for s, c in pairs]),
            ("render_ids only", lambda pairs=pairs: [render_ids(s, c) for s, c in pairs]),
        ]
        for label, work in measurements:
            cpu, wall = time_per_image(work, len(pairs), arguments.repeat)
            rows.append((set_name, label, cpu, wall))
            print(
                f"{set_name:28s} {label:34s} {1 / cpu:8.1f} images/s  ({cpu * 1000:6.1f} ms CPU, {wall * 1000:6.1f} ms wall)"
            )

    default_rate = min(1 / cpu for _, label, cpu, _ in rows if label.endswith("(default)"))
    verdict = "met" if default_rate >= TARGET_IMAGES_PER_SECOND else "NOT met"
    print(
        f"target {TARGET_IMAGES_PER_SECOND:.0f} full images/s per core: {verdict} (worst set {default_rate:.1f}/s)"
    )

    cpu_model = _cpu_model()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    machine = (
        f"{platform.machine()}, {cpu_model}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"numpy {np.__version__}"
    )
    command = f".venv/bin/python -m perf.render --scenes {arguments.scenes} --repeat {arguments.repeat} --seed {arguments.seed}"
    lines = [
        "# Render benchmark: 320x240 TRANCE scenes, numpy renderer",
        "",
        f"Latest run {stamp} on {machine}.",
        f"Command: `{command}`.",
        "",
        "Single process, one thread. Random 10-object scenes under TRANCE's rules, the three cameras in",
        f"turn, {arguments.scenes} scenes per set, median of {arguments.repeat} runs. Rates come from the",
        "process's CPU time; wall time is shown too (noisier on a shared machine). The first render with",
        f"each camera builds its rays and empty floor, then cached: {cold_seconds * 1000:.0f} ms once per camera.",
        "",
        "| scenes | measurement | images/s (CPU) | ms/image (CPU) | ms/image (wall) |",
        "|---|---|---|---|---|",
    ]
    for set_name, label, cpu, wall in rows:
        lines.append(f"| {set_name} | {label} | {1 / cpu:.1f} | {cpu * 1000:.1f} | {wall * 1000:.1f} |")
    lines += [
        "",
        f"Target: {TARGET_IMAGES_PER_SECOND:.0f} full images/s per core at the default quality: **{verdict}** "
        f"(slowest set: {default_rate:.1f} images/s).",
        "",
        "Supersampling only adds visibility rays everywhere; shading per sub-pixel ray is done only on",
        "edge pixels (see plugins/clevr/render.py), so its cost grows with the objects' outlines.",
        "",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "render.md").write_text("\n".join(lines))
    print(f"wrote {(RESULTS / 'render.md').relative_to(ROOT)}")
    return 0


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
