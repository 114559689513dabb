"""Benchmark: TranceNet answering TRANCE units end to end, against its raw forward throughput.

Usage:  .venv/bin/python -m perf.inference_throughput [--units 2048] [--batch-size 64]
        [--workers 0 1 2] [--repeat 3] [--device cpu|cuda] [--data DIR] [--quick]

Target (inference issue): the pipeline (reading and resizing the renders in DataLoader workers,
batching, moving to the device, greedy decoding, answers back as step lists) reaches at least 70%
of the raw forward throughput of the same model on the same device.

* raw: `TranceNetBaseline.forward_only` -- greedy decoding of one pre-built batch already on the
  device (random pixels; decoding always runs four steps), after two unmeasured passes;
* pipeline: `baseline.batches(units)` + `baseline.predict` over `--units` units, exactly what a
  model run does between loading the model and writing the prediction file (no database).

The units point at the renders of 64 generated samples (initial Center and final Center, 320x240
PNG, the size the generator and the released data use), cycled to `--units`: every unit's two
images are opened, decoded and resized, as in a run; the page cache holds the files, as it would on
a second pass over a dataset. The shipped checkpoint (CNN-concat, 120x160) answers in the Event
setting. Each figure is the median of --repeat passes in this process. Results go to
perf/results/inference_throughput.md and .jsonl (not with --quick: 256 units, one pass).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "perf" / "results"
TARGET = 0.70


def make_units(folder: Path, count: int):
    from benchmarks.records import RecordChecker, RecordErrors
    from inference.baselines import Unit
    from plugins.trance.formats import read_samples, record_to_catalog

    samples = read_samples((folder / "data.jsonl").read_bytes())
    units = []
    for number in range(count):
        raw = samples[number % len(samples)]
        record = record_to_catalog(raw, RecordChecker(RecordErrors(), "perf"))
        images = {role: str(folder / name) for role, name in record.media.items()}
        units.append(Unit(str(number), 0, dict(raw, idx=number), record.payload, images, None))
    return units


def machine() -> str:
    model = ""
    with contextlib.suppress(OSError, StopIteration):
        model = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    import torch

    gpu = f", GPU {torch.cuda.get_device_name(0)}" if torch.cuda.is_available() else ", no GPU"
    return (
        f"{platform.machine()}, {os.cpu_count()} cores ({model}){gpu}, Python {platform.python_version()}, "
        f"torch {torch.__version__} ({torch.get_num_threads()} threads)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=2048)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument(
        "--data", type=Path, help="a generate_trance folder with renders (default: made here)"
    )
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.units, args.repeat = 256, 1

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "yardstick.settings")
    from benchmarks import registry
    from inference.baselines import RunChoices, load_baseline
    from plugins.trance.generator import generate

    with tempfile.TemporaryDirectory(prefix="yardstick-inference-perf-") as workdir:
        folder = args.data
        if folder is None:
            folder = Path(workdir) / "samples"
            started = time.perf_counter()
            generate(folder, count=64, seed=5, workers=2, final_cameras=("Camera_Center",))
            print(f"64 samples rendered in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        units = make_units(folder, args.units)
        spec = registry.get("trance")

        def loaded(workers: int):
            baseline = load_baseline(spec, "trancenet")
            baseline.load(
                units,
                RunChoices(setting="event", device=args.device, batch_size=args.batch_size, workers=workers),
            )
            return baseline

        baseline = loaded(0)
        raw_runs = [
            baseline.forward_only(args.batch_size, max(4, 1024 // args.batch_size))["samples_per_second"]
            for _ in range(args.repeat)
        ]
        raw = statistics.median(raw_runs)
        print(
            f"raw forward: {raw:.0f} units/s ({', '.join(f'{value:.0f}' for value in raw_runs)})",
            file=sys.stderr,
        )
        from plugins.trance.baselines.model import load_image

        paths = sorted({path for unit in units[:128] for path in unit.images.values()})[:256]
        started = time.perf_counter()
        for path in paths:
            load_image(path, 120, 160)
        decode_ms = (time.perf_counter() - started) * 1000 / len(paths)
        rows = []
        for workers in args.workers:
            baseline = loaded(workers)
            passes = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                answered = 0
                for batch, inputs in baseline.batches(units, args.batch_size):
                    answered += len(baseline.predict(batch, inputs))
                seconds = time.perf_counter() - started
                assert answered == len(units)
                passes.append(len(units) / seconds)
            rate = statistics.median(passes)
            rows.append(
                {"workers": workers, "units_per_second": rate, "passes": passes, "share_of_raw": rate / raw}
            )
            print(
                f"pipeline, {workers} loader workers: {rate:.0f} units/s = {rate / raw:.0%} of raw",
                file=sys.stderr,
            )

    result = {
        "run_at": time.strftime("%Y-%m-%d %H:%M:%S"),
        "command": "-m perf.inference_throughput " + " ".join(sys.argv[1:]),
        "machine": machine(),
        "device": args.device,
        "units": args.units,
        "batch_size": args.batch_size,
        "raw_units_per_second": raw,
        "raw_runs": raw_runs,
        "image_load_ms": decode_ms,
        "pipeline": rows,
        "load_average": os.getloadavg(),
    }
    if args.quick:
        print(json.dumps(result, indent=2))
        return
    RESULTS.mkdir(exist_ok=True)
    with (RESULTS / "inference_throughput.jsonl").open("a") as log:
        log.write(json.dumps(result) + "\n")
    best = max(rows, key=lambda row: row["units_per_second"])
    verdict = "meets the target" if best["share_of_raw"] >= TARGET else "below the target"
    lines = [
        "# Inference: TranceNet end to end against its raw forward pass",
        "",
        f"Run {result['run_at']}. Command: `.venv/bin/python {result['command']}`.",
        f"Machine: {result['machine']}; load average at the end {', '.join(f'{v:.2f}' for v in result['load_average'])}.",
        "",
        f"Target: the pipeline reaches at least {TARGET:.0%} of the raw forward throughput on the same device. "
        f"Here ({args.device}, batch {args.batch_size}, {args.units} units, median of {args.repeat}): best pipeline "
        f"{best['units_per_second']:.0f} units/s with {best['workers']} loader workers = "
        f"{best['share_of_raw']:.0%} of raw {raw:.0f} units/s -- **{verdict}**.",
        "",
        "| configuration | units/s (median) | passes | share of raw |",
        "|---|---|---|---|",
        f"| raw forward (pre-built batch on the device) | {raw:.0f} | {', '.join(f'{v:.0f}' for v in raw_runs)} | 100% |",
    ]
    for row in rows:
        lines.append(
            f"| pipeline, {row['workers']} DataLoader workers | {row['units_per_second']:.0f} | "
            f"{', '.join(f'{v:.0f}' for v in row['passes'])} | {row['share_of_raw']:.0%} |"
        )
    import torch

    threads = torch.get_num_threads()
    cores = os.cpu_count() or 1
    forward_cpu_ms = threads * 1000 / raw
    ceiling = cores * 1000 / (2 * decode_ms + forward_cpu_ms) if args.device == "cpu" else None
    lines += ["", "## Where the time goes", ""]
    lines.append(
        f"Reading one render (open, PNG decode, halve to 160x120) takes {decode_ms:.2f} ms on one core here; a unit "
        f"needs two, so {2 * decode_ms:.1f} ms of CPU per unit before the model sees it, against "
        f"{forward_cpu_ms:.2f} ms of CPU per unit for the forward pass ({threads} threads at {raw:.0f} units/s)."
    )
    if ceiling is not None:
        lines.append(
            f"On {cores} cores that share both jobs, no pipeline can pass about {ceiling:.0f} units/s "
            f"({ceiling / raw:.0%} of raw): on a CPU the 70% target is out of reach for a model this small, "
            "whose forward pass is cheaper than decoding its inputs."
        )
    lines += [
        "",
        "What would close the gap: decoded, resized inputs kept once per dataset and image size (a second run, "
        "or another checkpoint at the same size, would then read uint8 arrays at memory speed); on a GPU machine, "
        "the forward pass leaves the CPU to the DataLoader workers (the lent H100 machines have 16 cores). No GPU "
        "was lent to the session that wrote this, so the CUDA path (float16 autocast, channels-last, pinned "
        "memory) is written and unit-tested on the CPU path only.",
        "",
    ]
    (RESULTS / "inference_throughput.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
