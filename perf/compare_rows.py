"""Benchmark: the comparison page of a 60,000-item TRANCE report with five rows, first and again.

Usage:  .venv/bin/python -m perf.compare_rows [--count 60000] [--unique 3000] [--rows 5] [--repeat 3]

Target (human-model gap issue): "On 60,000 TRANCE items with five rows, the report page with all
pairwise comparisons renders in under 2 s after the first computation (cache keyed by the
submissions' versions)."

A throw-away SQLite database (the embedded default) in a temporary folder is migrated; 60,000 TRANCE
samples (`--unique` planned ones repeated under new idx, as perf/score_trance.py makes them) are
imported without images, and `--rows` prediction files of mixed quality (perf/score_trance.py's
answer mix, one seed each) are scored in the Event setting as model submissions. Then the
worker's job is run once, in this process (`evaluation.tasks.compute_pairwise`: the table of every
pair of rows on the headline accuracy, 10 pairs for 5 rows), and the report page, which shows that
table, is requested --repeat times through Django's test client; the two-row comparison page
(the first and the last row on every column) is requested once cold and --repeat times again.
The cache is the file cache of the embedded set-up. Results go to perf/results/compare_rows.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "perf" / "results"
TARGET_S = 2.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=60_000)
    parser.add_argument("--unique", type=int, default=3000)
    parser.add_argument("--rows", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="yardstick-compare-perf-"))
    os.environ.update(
        YARDSTICK_VAR_DIR=str(workdir / "var"),
        DJANGO_SETTINGS_MODULE="yardstick.settings",
        DJANGO_ALLOWED_HOSTS="testserver",
    )
    for name in ("DATABASE_URL", "CACHE_URL"):
        os.environ.pop(name, None)
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import override_settings

    from accounts.roles import sync_roles
    from benchmarks.services import import_dataset
    from evaluation.services import submit_predictions
    from perf.score_trance import plan_samples, write_predictions
    from tests.factories import make_user

    steps: dict[str, float] = {}
    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    sync_roles()
    steps["migrate"] = time.perf_counter() - started
    started = time.perf_counter()
    plan_samples(workdir, count=args.count, unique=args.unique, seed=0)
    steps[f"plan {args.unique} samples, repeat to {args.count}"] = time.perf_counter() - started
    started = time.perf_counter()
    dataset = import_dataset(benchmark="trance", data=(workdir / "data.jsonl").read_bytes(), name="perf")
    steps[f"import {args.count} samples"] = time.perf_counter() - started
    for row in range(args.rows):
        started = time.perf_counter()
        predictions = workdir / f"model-{row}.json"
        write_predictions(workdir / "data.jsonl", predictions, seed=row + 1)
        submit_predictions(
            dataset=dataset, name=f"Model {row + 1}", setting="event", data=predictions.read_bytes()
        )
        steps[f"score row {row + 1}"] = time.perf_counter() - started

    from evaluation.selectors import pairwise_key
    from evaluation.tasks import compute_pairwise

    researcher = make_user("rita", "researcher")
    client = Client()
    client.force_login(researcher)
    report_url = f"/datasets/{dataset.pk}/report/"
    compare_url = f"/datasets/{dataset.pk}/report/compare/"
    with override_settings(SECURE_SSL_REDIRECT=False):
        started = time.perf_counter()
        compute_pairwise(dataset.pk, pairwise_key(dataset))  # what the worker does, once
        worker_s = time.perf_counter() - started
        print(f"worker: every pair in {worker_s:.2f} s", file=sys.stderr)

        def request(url: str, marker: str) -> float:
            started = time.perf_counter()
            response = client.get(url)
            seconds = time.perf_counter() - started
            page = response.content.decode()
            assert response.status_code == 200 and marker in page, (url, response.status_code)
            return seconds

        compare_cold = request(compare_url, 'id="comparison"')
        report_timings = [request(report_url, 'id="pairwise"') for _ in range(args.repeat)]
        compare_timings = [request(compare_url, 'id="comparison"') for _ in range(args.repeat)]
        print(f"report: {report_timings}; compare: {compare_timings}", file=sys.stderr)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    again = statistics.median(report_timings)
    verdict = "meets the target" if again < TARGET_S else "misses the target"
    lines = [
        "# Comparing report rows: 60,000 TRANCE items, five rows",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M:%S')}. Command: `.venv/bin/python -m perf.compare_rows "
        + " ".join(sys.argv[1:])
        + "`.",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; SQLite "
        f"(embedded default), file cache; load average at the end {', '.join(f'{v:.2f}' for v in os.getloadavg())}.",
        "",
        f"Target: the report page with every pair of rows under {TARGET_S:.0f} s after the first computation. "
        f"Here: {args.count:,} items, {args.rows} rows, median of {args.repeat} requests of the report page "
        f"(its table of every pair kept from the worker's computation): **{again:.2f} s -- {verdict}**. "
        f"The first computation, in a worker: {worker_s:.1f} s. Peak RSS of the whole process (the import "
        f"and the scorings included) {peak_mb:.0f} MB.",
        "",
        "| request | seconds |",
        "|---|---|",
        f"| worker: every pair of the {args.rows} rows on the headline column (1,000 resamples each) | {worker_s:.2f} |",
        f"| two-row comparison page, first (all Event columns, 2,000 resamples), in the request | {compare_cold:.2f} |",
    ]
    lines += [
        f"| report page {number} (pairs kept) | {value:.2f} |"
        for number, value in enumerate(report_timings, 1)
    ]
    lines += [
        f"| two-row comparison page {number} (kept) | {value:.2f} |"
        for number, value in enumerate(compare_timings, 1)
    ]
    lines += ["", "Set-up:", "", "| step | seconds |", "|---|---|"]
    lines += [f"| {name} | {value:.1f} |" for name, value in steps.items()]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "compare_rows.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
