"""Benchmark: generate 1,000 TRANCE samples with their 4 renders each, on 2 workers.

Usage:  .venv/bin/python -m perf.generate_trance [--count N] [--workers K]
Target (issue 3): under four minutes for 1,000 samples on the 2-core machine. Results go to
perf/results/generate_trance.md (latest) and perf/results/generate_trance.jsonl (history).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "perf" / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from plugins.trance.generator import generate

    with tempfile.TemporaryDirectory(prefix="yardstick-perf-trance-") as folder:
        started = time.perf_counter()
        generate(Path(folder), count=args.count, seed=args.seed, workers=args.workers)
        seconds = time.perf_counter() - started
        images = len(list(Path(folder).glob("*.png")))
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "samples": args.count,
        "workers": args.workers,
        "images": images,
        "seconds": round(seconds, 1),
        "samples_per_s": round(args.count / seconds, 2),
        "images_per_s": round(images / seconds, 1),
        "peak_rss_mb_main": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        "peak_rss_mb_worker": children,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    with open(RESULTS / "generate_trance.jsonl", "a") as log:
        log.write(json.dumps(result) + "\n")
    lines = [
        "# TRANCE generation benchmark",
        "",
        f"Latest run {result['date']} on {result['machine']}; command: `.venv/bin/python -m perf.generate_trance"
        f" --count {args.count} --workers {args.workers}`. Planning (balancing, occlusion checks on id"
        " buffers) runs in the main process; the 4 full renders per sample run in the workers.",
        "",
        "| samples | workers | images | wall s | samples/s | images/s | target | peak RSS MB (main / worker) |",
        "|---|---|---|---|---|---|---|---|",
        f"| {args.count:,} | {args.workers} | {images:,} | {result['seconds']} | {result['samples_per_s']} |"
        f" {result['images_per_s']} | 1,000 samples < 240 s | {result['peak_rss_mb_main']} / {children} |",
    ]
    (RESULTS / "generate_trance.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
