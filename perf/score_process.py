"""Benchmark: `manage.py score` from files, the whole process, against a plain standard-library
`json.loads` of the same two files: TRANCE (`--setting event`, 60,000 answers by default) or CRIC.

Usage:  .venv/bin/python -m perf.score_process [--benchmark trance|cric] [--count 60000]
        [--unique 3000] [--setting event] [--repeat 3] [--folder DIR]
        (DIR keeps the generated files and reuses them)

Targets (performance issue): TRANCE, 60,000 answers: the whole scoring process in at most 1.6x
the time the plain parse of the two files takes in the same run, and at most 400 MB peak;
500,000 in constant memory; CRIC and the others on a full split in bounded memory. Each process
runs on its own, in turn, --repeat times; the figures are medians. Peak memory is each process's
maximum resident set (its own rusage, from os.wait4). Results go to
perf/results/score_process[_<benchmark>]_<count>.md (the 60,000-answer TRANCE run to
score_process.md).
"""

from __future__ import annotations

import argparse
import os
import platform
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
    if sys.argv[1].endswith(".jsonl"):
        samples = [json.loads(line) for line in f if line.strip()]
    else:
        samples = json.loads(f.read())
with open(sys.argv[2], "rb") as f:
    answers = json.loads(f.read())
print(len(samples), len(answers))
"""


def run(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak resident MB of one child process."""
    started = time.perf_counter()
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{' '.join(command)} failed with exit code {child.returncode}")
    return elapsed, usage.ru_maxrss / 1024


def cric_files(folder: Path, count: int) -> tuple[Path, Path]:
    """`count` CRIC-shaped questions (perf/import_cric.py's) and predictions for 95% of them."""
    import random

    import orjson

    from perf.import_cric import generate_questions

    questions, answers = folder / "questions.json", folder / "predictions.json"
    if not questions.exists():
        questions.write_bytes(generate_questions(count))
    if not answers.exists():
        rng = random.Random(1)
        predictions = [
            {
                "question_id": question["question_id"],
                "answer": question["answer"] if rng.random() < 0.7 else "no",
                "object": rng.choice(question["target"] or [None]),
            }
            for question in orjson.loads(questions.read_bytes())
            if rng.random() < 0.95
        ]
        answers.write_bytes(orjson.dumps(predictions))
    return questions, answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="trance", choices=("trance", "cric"))
    parser.add_argument("--count", type=int, default=60_000)
    parser.add_argument("--unique", type=int, default=3000)
    parser.add_argument("--setting", default="event", choices=("basic", "event", "view"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--folder", type=Path)
    parser.add_argument("--generate-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    from perf.score_trance import plan_samples, write_predictions

    folder = args.folder or Path(tempfile.mkdtemp(prefix="yardstick-score-process-"))
    folder.mkdir(parents=True, exist_ok=True)
    if not args.generate_only and os.environ.get("YARDSTICK_PERF_CHILD") != "1":
        # The files are made by a child process: a child forked from a process that once held
        # them parsed would report that process's peak as its own (Linux keeps ru_maxrss).
        subprocess.run(
            [
                sys.executable,
                "-m",
                "perf.score_process",
                *sys.argv[1:],
                "--generate-only",
                "--folder",
                str(folder),
            ],
            cwd=ROOT,
            check=True,
            env={**os.environ, "YARDSTICK_PERF_CHILD": "1"},
        )
    if args.benchmark == "trance":
        data, answers = folder / "data.jsonl", folder / "predictions.json"
        if not data.exists():
            plan_samples(folder, count=args.count, unique=args.unique, seed=0)
        if not answers.exists():
            write_predictions(data, answers, seed=1)
        choice = ["--setting", args.setting]
        what = f"`manage.py score trance --setting {args.setting}`"
    else:
        data, answers = cric_files(folder, args.count)
        choice = []
        what = "`manage.py score cric`"
    if args.generate_only:
        return

    python = sys.executable
    plain_command = [python, "-c", PLAIN_PARSE, str(data), str(answers), "on"]
    floor_command = [python, "-c", PLAIN_PARSE, str(data), str(answers), "off"]
    score_command = [
        python, "manage.py", "score", args.benchmark, "--gt", str(data), "--predictions", str(answers), *choice,
    ]  # fmt: skip
    env_note = "DJANGO_SETTINGS_MODULE from manage.py"
    plain, floor, scored = [], [], []
    plain_peaks, score_peaks = [], []
    for _ in range(args.repeat):
        seconds, peak = run(plain_command)
        plain.append(seconds)
        plain_peaks.append(peak)
        floor.append(run(floor_command)[0])
        seconds, peak = run(score_command)
        scored.append(seconds)
        score_peaks.append(peak)
    plain_peak, score_peak = max(plain_peaks), max(score_peaks)
    plain_s = statistics.median(plain)
    floor_s = statistics.median(floor)
    score_s = statistics.median(scored)
    ratio = score_s / plain_s
    floor_ratio = score_s / floor_s
    time_verdict = "met" if ratio <= TIME_FACTOR else "NOT met"
    floor_verdict = "met" if floor_ratio <= TIME_FACTOR else "NOT met"
    peak_verdict = "met" if score_peak <= PEAK_MB else "NOT met"
    lines = [
        f"# Scoring {args.benchmark.upper()} from files, the whole process"
        + (f" ({args.setting})" if args.benchmark == "trance" else ""),
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M:%S')} on {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; load average at the end {', '.join(f'{v:.2f}' for v in os.getloadavg())}.",
        f"Command: `.venv/bin/python -m perf.score_process --benchmark {args.benchmark} --count {args.count} "
        + (f"--unique {args.unique} --setting {args.setting} " if args.benchmark == "trance" else "")
        + f"--repeat {args.repeat}` ({env_note}).",
        f"Files: {data.name} {data.stat().st_size / 1e6:.1f} MB ({args.count:,} records), {answers.name} "
        f"{answers.stat().st_size / 1e6:.1f} MB.",
        "",
        "| process | median s | runs s | peak RSS MB |",
        "|---|---|---|---|",
        f"| plain `json.loads` of both files | {plain_s:.2f} | {', '.join(f'{s:.2f}' for s in plain)} | {plain_peak:.0f} |",
        f"| the same with the garbage collector off (the floor) | {floor_s:.2f} | "
        f"{', '.join(f'{s:.2f}' for s in floor)} | |",
        f"| {what} | {score_s:.2f} | {', '.join(f'{s:.2f}' for s in scored)} | {score_peak:.0f} |",
        "",
        f"Time: the scorer takes **{ratio:.2f}x** the plain parse (target at most {TIME_FACTOR}x): {time_verdict}; "
        f"**{floor_ratio:.2f}x** the parse with the collector off: {floor_verdict}. Python's cyclic garbage "
        "collector, run over the millions of parsed objects as they are made, is most of a plain parse's time here. "
        + (
            f"Memory: **{score_peak:.0f} MB** peak (target at most {PEAK_MB} MB): {peak_verdict}."
            if (args.benchmark, args.count) == ("trance", 60_000)
            else f"Memory: **{score_peak:.0f} MB** peak (the {PEAK_MB} MB target is TRANCE's at 60,000 answers; "
            "here the goal is memory bounded as the split grows: compare the runs of other sizes)."
        ),
        "",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = "score_process" + ("" if args.benchmark == "trance" else f"_{args.benchmark}")
    if (args.benchmark, args.count) != ("trance", 60_000):
        name += f"_{args.count}"
    (RESULTS / f"{name}.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
