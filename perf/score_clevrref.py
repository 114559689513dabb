"""Benchmark: CLEVR-Ref+ scored from files on a full split, `manage.py score clevrref` as a child
process, from the files' bytes and from the files read as they are scored (streamed).

Usage:  .venv/bin/python -m perf.score_clevrref [--images 15000] [--per-image 10] [--pool 150]
        [--variant official] [--modes streamed,bytes] [--repeat 3] [--order file|shuffled]
        [--folder DIR] [--output NAME]
        (DIR keeps the generated files and reuses them)

The split is CLEVR's val split, which CLEVR-Ref+ keeps: 15,000 images, and 10 expressions per
image as in CLEVR-Ref+ (its 998,743 expressions are ten for each of its 99,992 images), so
150,000 expressions. The plugin's generator (`plugins.clevrref.expressions.generate`) renders
every image it makes, a few per second, so it makes `--pool` real scenes with their expressions
and the split repeats them under new image indices: the scenes, masks and programs are the
generator's, each file the size of a split's. The predictions are what a model would write:
each expression's referred masks moved by a few pixels (run lengths at 320 x 480, as the
released masks), a box moved likewise, 2% of the expressions left without a prediction and ten
predictions for no expression; in the expressions' order, or with `--order shuffled` in a
random one (the predictions then wait for their expression in memory: the worst case).

Each measurement is one child process, `manage.py score clevrref --gt ... --scenes ...
--predictions ... --json`, started by a small wrapper process of its own that reads the child's
peak resident set with `resource.getrusage(RUSAGE_CHILDREN)` (a wrapper per run, so that the
figure is that run's alone, and no process that once held the files parsed is its parent). The
bytes mode is the same command with `scores_streamed_files` turned off on the spec, so that the
command reads each file whole and hands the metric its bytes, as it did before. The rounds of
the modes alternate; the figures are medians of `--repeat` rounds. Results go to
perf/results/<output>.md (score_clevrref.md by default).
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "perf" / "results"

#: Runs the command it is given and prints its wall seconds and its peak resident set (KiB).
WRAPPER = """
import resource, subprocess, sys, time
started = time.perf_counter()
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""

#: manage.py, with the spec handing the metric the files' bytes instead of the open files.
BYTES_MANAGE = """
import os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "yardstick.settings")
from plugins.clevrref.spec import ClevrRefSpec
ClevrRefSpec.scores_streamed_files = False
from django.core.management import execute_from_command_line
execute_from_command_line(["manage.py", *sys.argv[1:]])
"""


def write_document(path: Path, meta: dict, key: str, records) -> int:
    """`{**meta, key: [records]}` written a record at a time; the number of records."""
    import orjson

    count = 0
    with path.open("wb") as stream:
        stream.write(orjson.dumps(meta)[:-1] + b"," + orjson.dumps(key) + b":[")
        for record in records:
            stream.write((b"," if count else b"") + orjson.dumps(record))
            count += 1
        stream.write(b"]}")
    return count


def moved(mask, rng: random.Random):
    """A mask moved right by 0 to 4 columns and down by 0 to 2 rows (what falls off is lost)."""
    import numpy as np

    right, down = rng.randint(0, 4), rng.randint(0, 2)
    shifted = np.zeros_like(mask)
    shifted[down:, right:] = mask[: mask.shape[0] - down, : mask.shape[1] - right]
    return shifted, right, down


def prediction_for(refexp: dict, scene: dict, rng: random.Random) -> dict:
    """A model's answer: the referred objects' masks and box, moved by a few pixels."""
    import numpy as np

    from plugins.clevrref.scenes import decode_mask, encode_mask

    referred = refexp["program"][-1]["_output"]
    mask = np.zeros((320, 480), dtype=bool)
    for index in referred:
        mask |= decode_mask(scene["obj_mask"][str(index + 1)])
    mask, right, down = moved(mask, rng)
    prediction = {"refexp_index": refexp["refexp_index"], "mask": encode_mask(mask)}
    if len(referred) == 1:
        x, y, w, h = scene["obj_bbox"][str(referred[0] + 1)]
        prediction["box"] = [x + right, y + down, w, h]
    return prediction


def file_paths(folder: Path, images: int, order: str) -> dict[str, Path]:
    return {
        "refexps": folder / f"clevrref_val_{images}_refexps.json",
        "scenes": folder / f"clevrref_val_{images}_scenes.json",
        "predictions": folder / f"clevrref_val_{images}_predictions_{order}.json",
    }


def make_files(folder: Path, *, images: int, per_image: int, pool: int, order: str) -> dict[str, Path]:
    """The split's refexps, scenes and predictions files in `folder` (kept and reused)."""
    import orjson

    from plugins.clevrref.expressions import generate

    paths = file_paths(folder, images, order)
    if all(path.exists() for path in paths.values()):
        return paths
    generated = generate(folder / "pool", images=pool, seed=0, expressions_per_image=per_image, split="val")
    pool_scenes = orjson.loads(generated.scenes_file.read_bytes())
    pool_refexps = orjson.loads(generated.refexps_file.read_bytes())
    meta = {key: value for key, value in pool_scenes.items() if key != "scenes"}
    scenes = pool_scenes["scenes"]
    by_image: dict[int, list[dict]] = {}
    for refexp in pool_refexps["refexps"]:
        by_image.setdefault(refexp["image_index"], []).append(refexp)
    rng = random.Random(1)
    # One prediction per pool expression, moved at random once: decoding and encoding masks
    # for every expression of the split would take longer than scoring them.
    answers = {
        refexp["refexp_index"]: prediction_for(refexp, scenes[refexp["image_index"]], rng)
        for refexp in pool_refexps["refexps"]
    }

    def split_scenes():
        for image_index in range(images):
            scene = copy.deepcopy(scenes[image_index % pool])
            scene["image_index"] = image_index
            scene["image_filename"] = f"CLEVR_val_{image_index:06d}.png"
            yield scene

    def split_refexps():
        refexp_index = 0
        for image_index in range(images):
            for original in by_image.get(image_index % pool, ()):
                refexp = copy.deepcopy(original)
                refexp.update(
                    image_index=image_index,
                    image_filename=f"CLEVR_val_{image_index:06d}.png",
                    image=f"CLEVR_val_{image_index:06d}",
                    refexp_index=refexp_index,
                )
                yield refexp, original["refexp_index"]
                refexp_index += 1

    write_document(paths["scenes"], meta, "scenes", split_scenes())
    predictions = []
    count = 0
    with paths["refexps"].open("wb") as stream:
        stream.write(orjson.dumps(meta)[:-1] + b',"refexps":[')
        for refexp, original in split_refexps():
            stream.write((b"," if count else b"") + orjson.dumps(refexp))
            count += 1
            if rng.random() >= 0.02:
                predictions.append(dict(answers[original], refexp_index=refexp["refexp_index"]))
        stream.write(b"]}")
    predictions += [{"refexp_index": count + 1000 + extra, "box": [0, 0, 10, 10]} for extra in range(10)]
    if order == "shuffled":
        rng.shuffle(predictions)
    paths["predictions"].write_bytes(orjson.dumps(predictions))
    return paths


def measure(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak resident MB of one run of `command`, through its own wrapper."""
    out = subprocess.run(
        [sys.executable, "-c", WRAPPER, *command], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split()
    return float(out[0]), int(out[1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=15_000)
    parser.add_argument("--per-image", type=int, default=10)
    parser.add_argument("--pool", type=int, default=150)
    parser.add_argument("--variant", default="official", choices=("official", "full-resolution"))
    parser.add_argument("--modes", default="streamed,bytes")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--order", default="file", choices=("file", "shuffled"))
    parser.add_argument("--folder", type=Path)
    parser.add_argument("--output", default="score_clevrref")
    parser.add_argument("--generate-only", action="store_true")
    args = parser.parse_args()
    modes = args.modes.split(",")
    folder = args.folder or Path(tempfile.mkdtemp(prefix="yardstick-score-clevrref-"))
    folder.mkdir(parents=True, exist_ok=True)
    if args.generate_only:
        started = time.perf_counter()
        make_files(folder, images=args.images, per_image=args.per_image, pool=args.pool, order=args.order)
        print(f"files in {folder} ({time.perf_counter() - started:.0f} s)")
        return
    paths = file_paths(folder, args.images, args.order)
    if not all(path.exists() for path in paths.values()):
        # Made by a child process, so that this one (the wrappers' parent) never holds them.
        generate = [sys.executable, "-m", "perf.score_clevrref", *sys.argv[1:], "--generate-only"]
        subprocess.run([*generate, "--folder", str(folder)], cwd=ROOT, check=True)

    files = ["--gt", str(paths["refexps"]), "--scenes", str(paths["scenes"])]
    files += ["--predictions", str(paths["predictions"]), "--variant", args.variant, "--json"]
    commands = {
        "streamed": [sys.executable, "manage.py", "score", "clevrref", *files],
        "bytes": [sys.executable, "-c", BYTES_MANAGE, "score", "clevrref", *files],
    }
    seconds: dict[str, list[float]] = {mode: [] for mode in modes}
    peaks: dict[str, list[float]] = {mode: [] for mode in modes}
    load_before = os.getloadavg()[0]
    for _ in range(args.repeat):
        for mode in modes:
            elapsed, peak = measure(commands[mode])
            seconds[mode].append(elapsed)
            peaks[mode].append(peak)
            print(f"{mode}: {elapsed:.2f} s, {peak:.0f} MB", flush=True)
    load_after = os.getloadavg()[0]

    import orjson

    expressions = len(orjson.loads(paths["refexps"].read_bytes())["refexps"])
    sizes = " / ".join(
        f"{paths[name].stat().st_size / 1e6:.0f}" for name in ("refexps", "scenes", "predictions")
    )
    command = (
        f"flock /tmp/perf.lock .venv/bin/python -m perf.score_clevrref --images {args.images} "
        f"--per-image {args.per_image} --pool {args.pool} --variant {args.variant} --modes {args.modes} "
        f"--repeat {args.repeat} --order {args.order}"
        + (f" --output {args.output}" if args.output != "score_clevrref" else "")
    )
    when = f"{time.strftime('%Y-%m-%d %H:%M')}, {load_before:.2f} / {load_after:.2f}"
    rows = {}
    for mode in modes:
        key = (f"{args.images:,}", f"{expressions:,}", mode, args.variant, ORDERS[args.order])
        rows[key] = [
            sizes,
            f"{statistics.median(seconds[mode]):.1f}",
            ", ".join(f"{value:.1f}" for value in seconds[mode]),
            f"{statistics.median(peaks[mode]):.0f}",
            ", ".join(f"{value:.0f}" for value in peaks[mode]),
            when,
            f"`{command}`",
        ]
    path = RESULTS / f"{args.output}.md"
    kept = earlier_rows(path)
    kept.update(rows)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path.write_text(report(kept))
    print(path.read_text())


ORDERS = {"file": "expressions' order", "shuffled": "shuffled"}
HEADER = (
    "| images | expressions | mode | variant | predictions | files MB (refexps / scenes / predictions) "
    "| median s | runs s | peak RSS MB (median) | runs MB | run at, load average (1 min) before / after "
    "| command |"
)
KEY_CELLS = 5


def earlier_rows(path: Path) -> dict[tuple[str, ...], list[str]]:
    """The table rows of the results file, by (images, expressions, mode, variant, order): a run
    replaces its own rows and keeps the others (each mode or size is measured by its own run, to
    keep each under five minutes on the shared machine)."""
    if not path.exists():
        return {}
    rows = {}
    lines = path.read_text().splitlines()
    if HEADER not in lines:
        return {}
    for line in lines[lines.index(HEADER) + 2 :]:
        if not line.startswith("| "):
            break
        cells = [cell.strip() for cell in line.strip("|").split(" | ")]
        rows[tuple(cells[:KEY_CELLS])] = cells[KEY_CELLS:]
    return rows


def report(rows: dict[tuple[str, ...], list[str]]) -> str:
    def order(key: tuple[str, ...]) -> tuple:
        return (-int(key[0].replace(",", "")), key[3], key[4], key[2] != "streamed")

    lines = [
        "# Scoring CLEVR-Ref+ from files: a full split",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        "shared with other work (the load average of each run is in its row: 2 means both cores were busy beside it). "
        "Every run was made under `flock /tmp/perf.lock`, so no two measurements overlapped.",
        "",
        "Each run is one child process, `manage.py score clevrref --gt ... --scenes ... --predictions ... "
        "--variant ... --json`: Python and Django starting, the three files read and checked, every "
        "expression scored, the summary printed. *streamed*: the command as it is, the files handed "
        "over open (`score_file` reads them a record at a time); *bytes*: the same command with "
        "`scores_streamed_files` off on the spec, each file read whole and handed over as bytes, "
        "then parsed whole. Peak RSS: `resource.getrusage(RUSAGE_CHILDREN).ru_maxrss` in a wrapper "
        "process of the run's own. The modes' rounds alternate within a run; figures are medians; a "
        "row's time is when its run ended. The files: see the script's docstring (real scenes, masks and "
        "programs of the plugin's generator, repeated to a split's size).",
        "",
        HEADER,
        "|---" * HEADER.count(" | ") + "|---|",
    ]
    for key in sorted(rows, key=order):
        lines.append("| " + " | ".join([*key, *rows[key]]) + " |")
    lines += ["", *comparisons(rows), ""]
    return "\n".join(lines)


def comparisons(rows: dict[tuple[str, ...], list[str]]) -> list[str]:
    """What the table says, worked out from it: streamed against bytes at each size, and how
    each mode's peak grows with the split (predictions in the expressions' order)."""
    figures: dict[tuple[str, str, str, str], tuple[float, float]] = {}
    commands: dict[tuple[str, str, str, str], str] = {}
    for (images, expressions, mode, variant, predictions), cells in rows.items():
        if predictions == ORDERS["file"]:
            figures[(expressions, mode, variant, images)] = (float(cells[1]), float(cells[3]))
            commands[(expressions, mode, variant, images)] = cells[-1]
    lines = []
    for (expressions, mode, variant, images), (seconds, peak) in sorted(figures.items()):
        other = figures.get((expressions, "bytes", variant, images))
        if mode == "streamed" and other:
            apart = (
                commands[(expressions, mode, variant, images)]
                != commands[(expressions, "bytes", variant, images)]
            )
            lines.append(
                f"- {images} images, {variant}: streamed takes {seconds / other[0]:.2f}x the time of bytes "
                f"and {peak / other[1]:.2f}x its memory ({peak:.0f} MB against {other[1]:.0f} MB)"
                + (" (measured by separate runs: see their load averages)." if apart else ".")
            )
    for mode in ("streamed", "bytes"):
        for variant in sorted({key[2] for key in figures}):
            sizes = sorted(
                (int(key[0].replace(",", "")), value[1])
                for key, value in figures.items()
                if key[1] == mode and key[2] == variant
            )
            if len(sizes) >= 2:
                (small, small_peak), (large, large_peak) = sizes[0], sizes[-1]
                per = (large_peak - small_peak) * 1024 / (large - small)
                lines.append(
                    f"- {mode}, {variant}: the peak grows by {per:.1f} KB per expression from {small:,} to "
                    f"{large:,} expressions ({small_peak:.0f} to {large_peak:.0f} MB)."
                )
    return lines


if __name__ == "__main__":
    main()
