"""Benchmark: `manage.py score trance --setting event` on 60,000 answers, the whole process, against
a plain standard-library `json.loads` of the same two files.

Usage:  .venv/bin/python perf/score_process.py [--count 60000] [--unique 3000] [--setting event]
        [--repeat 3] [--folder DIR]   (keep the generated files in DIR and reuse them)

Target (performance issue): the whole scoring process in at most 1.6x the time the plain parse of
the two files takes in the same run, and at most 400 MB peak. Each is run as its own process, in
turn, --repeat times; the figures are medians. Peak memory is the process's maximum resident set
(getrusage of the finished child). Results go to perf/results/score_process.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "perf" / "results"
TIME_FACTOR = 1.6
PEAK_MB = 400

PLAIN_PARSE = """
import gc, json, sys
if sys.argv[3] == "off":
    gc.disable()
with open(sys.argv[1], "rb") as f:
    samples = [json.loads(line) for line in f if line.strip()]
with open(sys.argv[2], "rb") as f:
    answers = json.loads(f.read())
print(len(samples), len(answers))
"""


def run(command: list[str]) -> float:
    """Wall seconds of one child process (its peak memory is read from the children's maximum)."""
    started = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=60_000)
    parser.add_argument("--unique", type=int, default=3000)
    parser.add_argument("--setting", default="event", choices=("basic", "event", "view"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--folder", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "perf"))
    sys.path.insert(0, str(ROOT))
    from score_trance import plan_samples, write_predictions

    folder = args.folder or Path(tempfile.mkdtemp(prefix="yardstick-score-process-"))
    folder.mkdir(parents=True, exist_ok=True)
    data, answers = folder / "data.jsonl", folder / "predictions.json"
    if not data.exists():
        plan_samples(folder, count=args.count, unique=args.unique, seed=0)
    if not answers.exists():
        write_predictions(data, answers, seed=1)

    python = sys.executable
    plain_command = [python, "-c", PLAIN_PARSE, str(data), str(answers), "on"]
    floor_command = [python, "-c", PLAIN_PARSE, str(data), str(answers), "off"]
    score_command = [
        python, "manage.py", "score", "trance", "--gt", str(data), "--predictions", str(answers),
        "--setting", args.setting,
    ]  # fmt: skip
    env_note = "DJANGO_SETTINGS_MODULE from manage.py"
    plain, floor, scored = [], [], []
    for _ in range(args.repeat):
        plain.append(run(plain_command))
        floor.append(run(floor_command))
    # getrusage(RUSAGE_CHILDREN) keeps the largest child so far: the plain parse runs first, and the
    # scorer's peak is read after its runs (it is the larger; if not, the figure is the parse's).
    plain_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    for _ in range(args.repeat):
        scored.append(run(score_command))
    score_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    plain_s = statistics.median(plain)
    floor_s = statistics.median(floor)
    score_s = statistics.median(scored)
    ratio = score_s / plain_s
    floor_ratio = score_s / floor_s
    time_verdict = "met" if ratio <= TIME_FACTOR else "NOT met"
    floor_verdict = "met" if floor_ratio <= TIME_FACTOR else "NOT met"
    peak_verdict = "met" if score_peak <= PEAK_MB else "NOT met"
    lines = [
        f"# Scoring TRANCE from files, the whole process ({args.setting})",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M:%S')} on {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; load average at the end {', '.join(f'{v:.2f}' for v in os.getloadavg())}.",
        f"Command: `.venv/bin/python perf/score_process.py --count {args.count} --unique {args.unique} "
        f"--setting {args.setting} --repeat {args.repeat}` ({env_note}).",
        f"Files: data.jsonl {data.stat().st_size / 1e6:.1f} MB ({args.count:,} samples), predictions.json "
        f"{answers.stat().st_size / 1e6:.1f} MB.",
        "",
        "| process | median s | runs s | peak RSS MB |",
        "|---|---|---|---|",
        f"| plain `json.loads` of both files | {plain_s:.2f} | {', '.join(f'{s:.2f}' for s in plain)} | {plain_peak:.0f} |",
        f"| the same with the garbage collector off (the floor) | {floor_s:.2f} | "
        f"{', '.join(f'{s:.2f}' for s in floor)} | |",
        f"| `manage.py score trance --setting {args.setting}` | {score_s:.2f} | "
        f"{', '.join(f'{s:.2f}' for s in scored)} | {score_peak:.0f} |",
        "",
        f"Time: the scorer takes **{ratio:.2f}x** the plain parse (target at most {TIME_FACTOR}x): {time_verdict}; "
        f"**{floor_ratio:.2f}x** the parse with the collector off: {floor_verdict}. Python's cyclic garbage "
        "collector, run over the millions of parsed objects as they are made, is most of a plain parse's time here. "
        f"Memory: **{score_peak:.0f} MB** peak (target at most {PEAK_MB} MB): {peak_verdict}.",
        "",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "score_process.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
