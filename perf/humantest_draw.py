"""Benchmark: a tester opens a test plan on a 60,000-sample TRANCE dataset (drawing their items).

Usage:  .venv/bin/python -m perf.humantest_draw [--count 60000] [--unique 2000] [--testers 5]
        [--database sqlite|postgres]
Opening a plan draws the tester's items: every item of the dataset is a candidate, filtered and
balanced (here: Event, 100 items per tester, balanced by transformation length). The draw reads
light rows (id, external id and the transformations) instead of whole items. For comparison the
script also times reading the whole items the way the first version of the draw did (item,
scene and dataset rows with their JSON), without drawing. Both are timed per tester, with peak
Python memory from tracemalloc. Results go to perf/results/humantest_draw.md.

The samples are planned by the real generator without renders (see perf/score_trance.py) and
imported without images into a throw-away database (SQLite file in a temporary folder, or a
database of its own on scripts/test-postgres.sh's server).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "perf" / "results"
PG_SCRIPT = ROOT / "scripts" / "test-postgres.sh"
DB_NAME = "yardstick_humantest_draw"


def server_url() -> str:
    """The test server's address without a database name."""
    url = subprocess.run([str(PG_SCRIPT), "url"], check=True, capture_output=True, text=True).stdout.strip()
    return url.rsplit("/", 1)[0]


def psql(sql: str) -> None:
    subprocess.run(["psql", f"{server_url()}/postgres", "-qc", sql], check=True, stdout=subprocess.DEVNULL)


def postgres_url() -> str:
    subprocess.run([str(PG_SCRIPT), "start"], check=True, stdout=subprocess.DEVNULL)
    psql(f"DROP DATABASE IF EXISTS {DB_NAME}")
    psql(f"CREATE DATABASE {DB_NAME}")
    return f"{server_url()}/{DB_NAME}"


def timed(work) -> tuple[float, float]:
    """Seconds and peak MiB of Python allocations while `work()` runs."""
    tracemalloc.start()
    start = time.perf_counter()
    work()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return seconds, peak


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=60_000)
    parser.add_argument("--unique", type=int, default=2_000)
    parser.add_argument("--testers", type=int, default=5)
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument(
        "--balance-by", default="length", help='a balance field ("length"), or "" for a plain random draw'
    )
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="yardstick-perf-draw-"))
    os.environ["YARDSTICK_VAR_DIR"] = str(workdir / "var")
    os.environ["DJANGO_DEBUG"] = "0"
    os.environ.setdefault("DJANGO_SECRET_KEY", "perf-only-secret-key-perf-only-secret-key")
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
    if args.database == "postgres":
        os.environ["DATABASE_URL"] = postgres_url()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "yardstick.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from benchmarks.services import import_dataset
    from humantest import sessions
    from humantest.models import TestPlan
    from perf.score_trance import plan_samples

    call_command("migrate", verbosity=0)
    print(f"planning {args.count} samples ({args.unique} unique) ...", flush=True)
    plan_samples(workdir, count=args.count, unique=args.unique, seed=0)
    with (workdir / "data.jsonl").open("rb") as stream:  # streamed: a million samples are 2 GB
        dataset = import_dataset(benchmark="trance", data=stream, name="draw perf")
    (workdir / "data.jsonl").unlink()
    users = [get_user_model().objects.create_user(f"tester{index}") for index in range(args.testers)]
    plan = TestPlan.objects.create(
        name="Draw",
        dataset=dataset,
        setting="event",
        items_per_tester=100,
        balance_by=args.balance_by,
        seed=1,
    )
    plan.testers.add(*users)

    whole = (
        [timed(lambda: list(dataset.items.select_related("scene", "dataset"))) for _ in users]
        if args.count <= 100_000
        else []  # a million whole items do not fit the comparison's memory
    )
    draws = [timed(lambda user=user: sessions.start_session(plan, user)) for user in users]
    assert all(session.trials.count() == 100 for session in plan.sessions.all())

    def median(rows, index):
        return statistics.median(row[index] for row in rows)

    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    database = "PostgreSQL (scripts/test-postgres.sh)" if args.database == "postgres" else "SQLite (file)"
    lines = [
        "# Opening a test plan on a large dataset (drawing a tester's items)",
        "",
        f"Latest run {time.strftime('%Y-%m-%d %H:%M:%S')} on {machine}; {database}.",
        f"Command: `.venv/bin/python -m perf.humantest_draw --count {args.count} --unique {args.unique} "
        f"--testers {args.testers} --database {args.database} --balance-by '{args.balance_by}'`.",
        f"Dataset: {args.count:,} TRANCE samples without images; plan: Event, 100 items per tester, "
        + (f"balanced by {args.balance_by}" if args.balance_by else "a plain random draw")
        + ". Median over the testers; peak is Python's own allocations (tracemalloc, which also slows "
        "both rows down alike). Target: under 2 s and 100 MB on 1,000,000 items.",
        "",
        "| what | seconds | peak MiB |",
        "|---|---|---|",
        f"| start_session (draw, create 100 trials) | {median(draws, 0):.2f} | {median(draws, 1):.0f} |",
    ]
    if whole:
        lines.append(
            f"| for comparison: read every whole item (the first version's draw, reading only) "
            f"| {median(whole, 0):.2f} | {median(whole, 1):.0f} |"
        )
    lines.append("")
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = "humantest_draw.md" if args.database == "sqlite" else "humantest_draw_postgres.md"
    if args.count >= 1_000_000:
        name = name.replace(".md", "_million_balanced.md" if args.balance_by else "_million.md")
    (RESULTS / name).write_text("\n".join(lines))
    print("\n".join(lines))
    if args.database == "postgres":
        from django.db import connections

        connections.close_all()
        psql(f"DROP DATABASE IF EXISTS {DB_NAME}")


if __name__ == "__main__":
    main()
