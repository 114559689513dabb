"""Benchmark: import 500,000 generated CRIC-style question records, on SQLite and PostgreSQL.

Usage:  .venv/bin/python -m perf.import_cric [--records N] [--backend sqlite|postgres|both]
(`make perf` runs it with the defaults). PostgreSQL is the throw-away server of
scripts/test-postgres.sh. Results are appended to perf/results/import_cric.jsonl and the
latest run is written to perf/results/import_cric.md.

Targets: at least 25,000 records/s on PostgreSQL and 10,000 on SQLite on the 2-core machine,
measured end to end (parse + validate + insert, one transaction), with the importing process's
peak memory at most 600 MB: the file is streamed, not parsed whole.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "perf" / "results"

FUNCTIONS = ["Find", "Relate", "Relate Reverse", "Find KG", "Recognition", "Verify"]
TYPES = ["QueryObjKG", "QueryObjSG", "QueryAtt", "VerifyKG", "VerifyAtt"]


def generate_questions(count: int) -> bytes:
    """CRIC-shaped records with the field sizes of the released question files."""
    import orjson

    records = []
    for index in range(count):
        image_id = index // 20
        base = image_id * 100
        kind = TYPES[index % 5]
        verify = kind.startswith("Verify")
        records.append(
            {
                "image_id": image_id,
                "question_id": f"{image_id}_{index}",
                "question": f"What is the object on the table {index % 97} used for?",
                "answer": ("yes" if index % 2 else "no") if verify else "cutting",
                "question_type": kind,
                "target": [base + 7] if not verify or index % 2 else [],
                "program": [
                    {"function": "Initial", "text_input": [], "output": [base + k for k in range(8)]},
                    {"function": FUNCTIONS[index % 6], "text_input": ["table"], "output": [base + 3]},
                    {"function": "Relate Reverse", "text_input": ["on"], "output": [base + 7]},
                    {"function": "Find KG", "text_input": ["UsedFor", "cutting"], "output": [base + 7]},
                ],
                "sub_graph": {
                    "relations": [[base + 7, "on", base + 3]],
                    "attributes": [[base + 7, "metal"]],
                    "knowledge_items": [{"triplet": ["knife", "UsedFor", "cutting"]}],
                },
                "wrong_part": "" if not verify or index % 2 else "knowledge: UsedFor cutting",
            }
        )
    return orjson.dumps(records)


def peak_rss_mb() -> float:
    """This process's own peak resident memory (VmHWM). Not getrusage's ru_maxrss, which Linux
    carries over from the parent that forked it (the parent here held the generated file)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(path: Path, count: int) -> dict:
    """Runs inside a process whose environment picks the database."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "yardstick.settings")
    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from benchmarks.models import Dataset
    from benchmarks.services import import_dataset
    from plugins.cric import formats

    call_command("migrate", verbosity=0)
    Dataset.objects.filter(name="perf-cric").delete()
    size = path.stat().st_size

    # The import reads the file as it writes (streamed); its peak is taken before anything else
    # in this process parses the whole document.
    started = time.perf_counter()
    with path.open("rb") as stream:
        dataset = import_dataset(benchmark="cric", data=stream, name="perf-cric", source=path.name)
    total_seconds = time.perf_counter() - started
    import_peak = peak_rss_mb()
    assert dataset.items.count() == count

    data = path.read_bytes()
    started = time.perf_counter()
    parsed = formats.parse(data, source=path.name)
    parse_seconds = time.perf_counter() - started
    assert len(parsed.records) == count
    return {
        "backend": connection.vendor,
        "records": count,
        "file_mb": round(size / 1e6, 1),
        "parse_validate_s": round(parse_seconds, 2),
        "import_s": round(total_seconds, 2),
        "records_per_s": round(count / total_seconds),
        "peak_rss_mb": round(import_peak),
    }


def measure_export(workdir: Path, count: int) -> dict:
    """In a fresh process: export the imported dataset to its official file (streamed), then drop it."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "yardstick.settings")
    django.setup()
    from benchmarks.models import Dataset
    from benchmarks.services import export_dataset

    dataset = Dataset.objects.get(name="perf-cric")
    target = workdir / "exported.json"
    started = time.perf_counter()
    export_dataset(dataset=dataset, path=target)
    seconds = time.perf_counter() - started
    peak = peak_rss_mb()
    size = target.stat().st_size
    target.unlink()
    Dataset.objects.filter(pk=dataset.pk).delete()
    return {
        "export_s": round(seconds, 2),
        "export_peak_rss_mb": round(peak),
        "export_mb": round(size / 1e6, 1),
    }


def run_backend(backend: str, path: Path, count: int, workdir: Path) -> dict:
    env = dict(os.environ)
    env.pop("DATABASE_URL", None)
    env["YARDSTICK_VAR_DIR"] = str(workdir / "var")
    if backend == "postgres":
        subprocess.run([str(ROOT / "scripts" / "test-postgres.sh"), "start"], check=True)
        url = subprocess.run(
            [str(ROOT / "scripts" / "test-postgres.sh"), "url"], check=True, capture_output=True, text=True
        ).stdout.strip()
        base, _ = url.rsplit("/", 1)
        subprocess.run(
            ["psql", f"{base}/postgres", "-qc", "DROP DATABASE IF EXISTS yardstick_perf"], check=True
        )
        subprocess.run(["psql", f"{base}/postgres", "-qc", "CREATE DATABASE yardstick_perf"], check=True)
        env["DATABASE_URL"] = f"{base}/yardstick_perf"
    else:
        env["SQLITE_PATH"] = str(workdir / "perf.sqlite3")
    results = {}
    for mode in ("--measure", "--measure-export"):
        output = subprocess.run(
            [sys.executable, "-m", "perf.import_cric", mode, str(path), "--records", str(count)],
            env=env,
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        results.update(json.loads(output.strip().splitlines()[-1]))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--repeat", type=int, default=3, help="runs per backend; the median is reported")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--measure-export", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.records)))
        return
    if args.measure_export:
        print(json.dumps(measure_export(args.measure_export.parent, args.records)))
        return

    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    with tempfile.TemporaryDirectory(prefix="yardstick-perf-") as folder:
        workdir = Path(folder)
        path = workdir / "questions.json"
        path.write_bytes(generate_questions(args.records))
        runs = {
            backend: [run_backend(backend, path, args.records, workdir) for _ in range(args.repeat)]
            for backend in backends
        }

    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    RESULTS.mkdir(parents=True, exist_ok=True)
    with open(RESULTS / "import_cric.jsonl", "a") as log:
        for backend_runs in runs.values():
            for result in backend_runs:
                log.write(json.dumps({"date": stamp, "machine": machine, **result}) + "\n")
    lines = [
        "# Import benchmark: CRIC-style question records",
        "",
        f"Latest run {stamp} on {machine}; command: `.venv/bin/python -m perf.import_cric"
        f" --records {args.records} --backend {args.backend} --repeat {args.repeat}`. Median run per backend;",
        "the range is over all runs. The whole import is parse + validate + insert in one transaction,",
        "reading the file as it writes (ijson's C parser, one record at a time); 'parse + validate' is the",
        "same file parsed whole in memory, for comparison. Peak RSS is the importing process's, taken",
        "before that whole-file parse (target: 600 MB). Export: the same records written back as the official",
        "file by a fresh process (streamed from the database: constant memory is the goal).",
        "",
        "| backend | records | file MB | parse + validate s | whole import s | records/s (median) | records/s (range) |"
        " target | peak RSS MB | export s | export peak RSS MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    targets = {"sqlite": "10,000", "postgresql": "25,000"}
    for backend_runs in runs.values():
        speeds = sorted(run["records_per_s"] for run in backend_runs)
        result = sorted(backend_runs, key=lambda run: run["records_per_s"])[len(backend_runs) // 2]
        lines.append(
            f"| {result['backend']} | {result['records']:,} | {result['file_mb']} | {result['parse_validate_s']} |"
            f" {result['import_s']} | {result['records_per_s']:,} | {speeds[0]:,}–{speeds[-1]:,} |"
            f" {targets.get(result['backend'], '')} |"
            f" {result['peak_rss_mb']:,} | {result['export_s']} | {result['export_peak_rss_mb']:,} |"
        )
    (RESULTS / "import_cric.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
