"""Benchmark: `manage.py score` from files, the whole process, against the floor: a streaming
standard-library parse of the same two files that keeps nothing. TRANCE (`--setting event`,
60,000 answers by default; `--setting event,view` gives View a line too) or CRIC.

Usage:  .venv/bin/python -m perf.score_process [--benchmark trance|cric] [--count 60000]
        [--unique 3000] [--setting event[,view]] [--repeat 3] [--folder DIR] [--against TREE]
        (DIR keeps the generated files and reuses them; --count says how many to generate;
        TREE, another checkout, e.g. of the commit before a change, is timed in the same rounds)

The floor (performance issue 33) is what any scorer of these files must at least do: parse them.
A JSON Lines file is parsed a line at a time with `json.loads` and each value dropped; a JSON
document (the predictions, CRIC's questions) with one `json.load`, dropped too. Nothing is kept,
so the parse pays neither for memory that grows nor for the collector walking what was kept (the
old "plain parse" kept every sample, and took several times as long as this).

Targets: TRANCE, 60,000 Event answers: the whole scoring process in at most 1.6x the floor, with
peak memory as before (216 MB; at most 230). Larger splits: memory bounded as the split grows.
Each round runs the floor and then each scorer, one process at a time; --repeat rounds; the
figures are medians. Peak memory is each process's maximum resident set (its own rusage, from
os.wait4). The load average is written down at the start and the end: the machine is shared.
Results go to perf/results/score_process[_<benchmark>]_<count>.md (the 60,000-answer TRANCE run
to score_process.md).
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
PEAK_MB = 230

FLOOR_PARSE = """
import json, sys
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        if path.endswith(".jsonl"):
            for line in f:
                if line.strip():
                    json.loads(line)
        else:
            json.load(f)
"""


def run(command: list[str], cwd: Path = ROOT) -> tuple[float, float]:
    """Wall seconds and peak resident MB of one child process."""
    started = time.perf_counter()
    child = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL)
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
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--benchmark", default="trance", choices=("trance", "cric"))
    parser.add_argument("--count", type=int, default=60_000)
    parser.add_argument("--unique", type=int, default=3000)
    parser.add_argument(
        "--setting", default="event", help="TRANCE: basic, event or view, or several with commas (event,view)"
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--folder", type=Path)
    parser.add_argument(
        "--against",
        type=Path,
        help="another checkout (the code before a change, say) whose scorer runs too, in the same rounds",
    )
    parser.add_argument("--generate-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    settings = (
        [setting.strip() for setting in args.setting.split(",")] if args.benchmark == "trance" else [""]
    )
    if not set(settings) <= {"basic", "event", "view"}:
        parser.error(f"unknown --setting {args.setting!r} (basic, event or view, or several with commas)")
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
    else:
        data, answers = cric_files(folder, args.count)
    if args.generate_only:
        return

    python = sys.executable
    floor_command = [python, "-c", FLOOR_PARSE, str(data), str(answers)]
    trees = [ROOT, *([args.against.resolve()] if args.against else [])]
    scorers = [
        (
            tree,
            setting,
            [python, "manage.py", "score", args.benchmark, "--gt", str(data), "--predictions", str(answers)]
            + (["--setting", setting] if setting else []),
        )
        for tree in trees
        for setting in settings
    ]
    load_before = os.getloadavg()
    floor, floor_peaks = [], []
    scored: list[list[float]] = [[] for _ in scorers]
    score_peaks: list[list[float]] = [[] for _ in scorers]
    for _ in range(args.repeat):
        seconds, peak = run(floor_command)
        floor.append(seconds)
        floor_peaks.append(peak)
        for number, (tree, _, command) in enumerate(scorers):
            seconds, peak = run(command, cwd=tree)
            scored[number].append(seconds)
            score_peaks[number].append(peak)
    load_after = os.getloadavg()
    floor_s = statistics.median(floor)
    rows = [
        f"| the floor: {'`json.loads` of each line of ' + data.name if data.suffix == '.jsonl' else '`json.load` of ' + data.name}"
        f" and `json.load` of {answers.name}, nothing kept | {floor_s:.2f} | "
        f"{', '.join(f'{s:.2f}' for s in floor)} | {max(floor_peaks):.0f} | |"
    ]
    verdicts = []
    for (tree, setting, _), runs, peaks in zip(scorers, scored, score_peaks, strict=True):
        what = f"`manage.py score {args.benchmark}" + (f" --setting {setting}`" if setting else "`")
        what += f" in {tree}" if tree != ROOT else ""
        median, peak = statistics.median(runs), max(peaks)
        ratio = median / floor_s
        rows.append(
            f"| {what} | {median:.2f} | {', '.join(f'{s:.2f}' for s in runs)} | {peak:.0f} | **{ratio:.2f}x** |"
        )
        time_verdict = "met" if ratio <= TIME_FACTOR else "NOT met"
        if (args.benchmark, args.count) == ("trance", 60_000):
            memory = f"**{peak:.0f} MB** peak (target at most {PEAK_MB} MB): {'met' if peak <= PEAK_MB else 'NOT met'}"
        else:
            memory = f"**{peak:.0f} MB** peak (compare the runs of other sizes: the goal is memory bounded as the split grows)"
        verdicts.append(
            f"- {what}: **{ratio:.2f}x** the floor (target at most {TIME_FACTOR}x): {time_verdict}; {memory}."
        )
    load = (
        ", ".join(f"{v:.2f}" for v in load_before)
        + " at the start, "
        + ", ".join(f"{v:.2f}" for v in load_after)
    )
    lines = [
        f"# Scoring {args.benchmark.upper()} from files, the whole process, against a streaming parse",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M:%S')} on {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; load average (1, 5, 15 min) {load} at the end.",
        f"Command: `flock /tmp/perf.lock .venv/bin/python -m perf.score_process --benchmark {args.benchmark} "
        f"--count {args.count} "
        + (f"--unique {args.unique} --setting {','.join(settings)} " if args.benchmark == "trance" else "")
        + f"--repeat {args.repeat}"
        + (f" --against {args.against}" if args.against else "")
        + "` (DJANGO_SETTINGS_MODULE from manage.py).",
        f"Files: {data.name} {data.stat().st_size / 1e6:.1f} MB ({args.count:,} records), {answers.name} "
        f"{answers.stat().st_size / 1e6:.1f} MB.",
        "",
        "| process | median s | runs s (in turn, round by round) | peak RSS MB | x the floor |",
        "|---|---|---|---|---|",
        *rows,
        "",
        *verdicts,
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
