"""Benchmark: drawing a stratified validation sample of 10,000 from 500,000 CRIC items on PostgreSQL.

Usage:  .venv/bin/python -m perf.validation_draw [--items 500000] [--sample 10000] [--images N]
        [--repeat 3] [--margin 0.01] [--keep] [--quick]

Target (validation issue): "Drawing 10,000 of 500,000 items, stratified, takes under 10 s on
PostgreSQL." A throw-away database on scripts/test-postgres.sh's server is migrated and filled
with a CRIC dataset (10 questions per image by default, every scene with an image file name so
every item is sampleable) by COPY (benchmarks.bulk.insert_rows, the importer's own writer), not
through the JSON importer; then VACUUM ANALYZE, as autovacuum would do shortly after an import.

Then `validation.services.create_plan` is timed (wall clock around the call, and the
`draw_seconds` (reading + drawing) and `total_seconds` (everything, inserts included) it
records in plan.draw) for: all four CRIC stratifiers with proportional and with equal
allocation, question type alone, and all four with a target margin instead of a size. Each
configuration runs --repeat times in a process of its own, so that its peak RSS
(getrusage ru_maxrss) is its own. A separate process checks that the draw is reproducible
(the same seed gives the same Sampled item ids and task order as a plan made in another
process; another seed gives a different sample), and one profiles the draw: the SQL alone,
stratum_rows (SQL + stratum labels in Python), draw_stratified_sample, and the inserts by table.

The database is warm (just written, well inside RAM), as it is right after an import. The
report goes to perf/results/validation_draw.md (not with --quick: 20,000 items, a sample of
1,000, one run, report printed only). The database is dropped at the end unless --keep.
"""

from __future__ import annotations

import argparse
import json
import operator
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "perf" / "results"
PG_SCRIPT = ROOT / "scripts" / "test-postgres.sh"
DB_NAME = "yardstick_validation_draw_perf"
DATASET_NAME = "perf validation draw"
TARGET_S = 10.0
STRATA_ALL = ["question_type", "steps", "answer", "image_group"]

#: CRIC's question types with a made-up, uneven mix; Verify* are answered yes/no.
TYPE_WEIGHTS = {"QueryObjKG": 0.30, "QueryObjSG": 0.25, "QueryAtt": 0.15, "VerifyKG": 0.18, "VerifyAtt": 0.12}
#: Program lengths 3 to 7, uneven (the 7-step strata are the small ones).
STEP_WEIGHTS = {3: 0.25, 4: 0.30, 5: 0.22, 6: 0.15, 7: 0.08}
NOUNS = [
    "table", "chair", "knife", "cup", "plate", "dog", "cat", "man", "woman", "car", "tree", "bottle",
    "bowl", "window", "lamp", "book", "phone", "laptop", "horse", "bus", "bench", "umbrella", "bag",
    "shirt", "hat", "clock", "vase", "sink", "oven", "bed",
]  # fmt: skip
RELATIONS = ["on", "near", "under", "holding", "behind", "in front of", "wearing"]
KG_RELATIONS = ["UsedFor", "IsA", "AtLocation", "CapableOf", "HasProperty"]
MIDDLE_FUNCTIONS = ["Find", "Relate", "Relate Reverse", "Find KG", "Find KG Reverse", "Recognition", "And"]


# --- the parent: PostgreSQL, the child processes, the report ----------------------------------------


def server_url() -> str:
    """The test server's address without a database name."""
    url = subprocess.run([str(PG_SCRIPT), "url"], check=True, capture_output=True, text=True).stdout.strip()
    return url.rsplit("/", 1)[0]


def psql(sql: str, database: str = "postgres") -> str:
    return subprocess.run(
        ["psql", f"{server_url()}/{database}", "-qAtc", sql], check=True, capture_output=True, text=True
    ).stdout.strip()


def child(stage: str, env: dict[str, str], config: dict) -> dict:
    """Run one stage in a fresh process (its own peak RSS, its own hash seed); its last line is JSON."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "perf.validation_draw", "--child", stage, "--config", json.dumps(config)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-8000:])
        raise SystemExit(f"stage {stage} failed ({done.returncode})")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"  {stage} {config.get('label', '')}: {time.perf_counter() - started:.1f} s", flush=True)
    return result


def machine() -> dict[str, str]:
    memory = "?"
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            memory = f"{int(line.split()[1]) / 1024**2:.1f} GiB RAM"
    model = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    return {
        "machine": f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores ({model}), {memory}, "
        f"Python {platform.python_version()}",
        "postgres": psql("SHOW server_version"),
        "postgres_settings": "shared_buffers "
        + psql("SHOW shared_buffers")
        + ", work_mem "
        + psql("SHOW work_mem")
        + "; fsync and synchronous_commit off (scripts/test-postgres.sh)",
        "load_before": " ".join(Path("/proc/loadavg").read_text().split()[:3]),
    }


def configurations(args) -> list[dict]:
    size = {"sample_size": args.sample}
    return [
        {"label": "all four, proportional", "strata": STRATA_ALL, "allocation": "proportional", **size},
        {"label": "all four, equal", "strata": STRATA_ALL, "allocation": "equal", **size},
        {
            "label": "question type only, proportional",
            "strata": ["question_type"],
            "allocation": "proportional",
            **size,
        },
        {
            "label": f"all four, proportional, margin {args.margin:g}",
            "strata": STRATA_ALL,
            "allocation": "proportional",
            "margin": args.margin,
        },
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=500_000)
    parser.add_argument("--sample", type=int, default=10_000)
    parser.add_argument("--images", type=int, default=0, help="scenes (default: items / 10)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per configuration; medians reported")
    parser.add_argument("--margin", type=float, default=0.01)
    parser.add_argument("--keep", action="store_true", help="keep the database")
    parser.add_argument(
        "--quick", action="store_true", help="20,000 items, a sample of 1,000, one run, no report"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args.child, json.loads(args.config))
        return
    if args.quick:
        args.items, args.sample, args.repeat = 20_000, 1_000, 1
    args.images = args.images or max(1, args.items // 10)
    command = " ".join([".venv/bin/python -m perf.validation_draw", *sys.argv[1:]])

    subprocess.run([str(PG_SCRIPT), "start"], check=True, stdout=subprocess.DEVNULL)
    info = machine()
    psql(f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")
    psql(f"CREATE DATABASE {DB_NAME}")
    workdir = Path(tempfile.mkdtemp(prefix="yardstick-perf-validation-"))
    env = {
        **os.environ,
        "DATABASE_URL": f"{server_url()}/{DB_NAME}",
        "DJANGO_SETTINGS_MODULE": "yardstick.settings",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "perf-validation-draw-not-a-secret-" + "x" * 30,
        "YARDSTICK_VAR_DIR": str(workdir / "var"),
        "LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
    }
    try:
        print(f"building {args.items:,} items on {args.images:,} images ...", flush=True)
        build = child("build", env, {"items": args.items, "images": args.images})
        configs = configurations(args)
        measured = [child("measure", env, {**config, "repeat": args.repeat}) for config in configs]
        reproduce = child(
            "reproduce",
            env,
            {**configs[0], "label": configs[0]["label"], "reference": measured[0]["plans"][0]},
        )
        profile = child("profile", env, configs[0])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        if not args.keep:
            psql(f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")
    report = write_report(args, command, info, build, measured, reproduce, profile)
    print(report)
    if not args.quick:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "validation_draw.md").write_text(report)
        print(f"written to {(RESULTS / 'validation_draw.md').relative_to(ROOT)}")
    if args.keep:
        print(f"kept database {DB_NAME}")


def write_report(args, command, info, build, measured, reproduce, profile) -> str:
    def median(runs, key):
        return statistics.median(run[key] for run in runs)

    main_runs = measured[0]["runs"]
    verdict = "meets" if median(main_runs, "wall_s") < TARGET_S else "MISSES"
    lines = [
        "# Validation: drawing a stratified sample on PostgreSQL",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M:%S')}. Command: `{command}`.",
        f"Machine: {info['machine']}; PostgreSQL {info['postgres']} ({info['postgres_settings']}); "
        f"load average before: {info['load_before']}.",
        "",
        f"Target: drawing 10,000 of 500,000 items, stratified, under {TARGET_S:g} s on PostgreSQL. "
        f"Here: {args.sample:,} of {build['items']:,}, all four CRIC stratifiers, proportional: median "
        f"{median(main_runs, 'wall_s'):.2f} s for the whole `create_plan` (reading, drawing, and writing the "
        f"project, {args.sample:,} tasks and sampled rows) -- **{verdict} the target**.",
        "",
        "## The dataset",
        "",
        f"{build['items']:,} CRIC items on {build['images']:,} images (scenes with an image file name, so every "
        "item is sampleable), payload {image_id, question_id, question, question_type}, ground truth "
        "{answer, target, program of 3-7 steps, sub_graph, wrong_part}; question types and program lengths "
        "drawn unevenly (seed 0). Written with COPY (benchmarks.bulk.insert_rows), not through the JSON importer.",
        "",
        "| step | seconds |",
        "|---|---|",
        f"| migrate | {build['migrate_s']:.1f} |",
        f"| {build['images']:,} scenes: generate + COPY | {build['scenes_s']:.1f} |",
        f"| {build['items']:,} items: generate + COPY (with the table's indexes) | {build['items_s']:.1f} |",
        f"| VACUUM ANALYZE | {build['analyze_s']:.1f} |",
        "",
        f"Item table on disk (with indexes and TOAST): {build['item_table_mb']:,} MB; "
        f"average ground_truth {build['avg_ground_truth_bytes']} bytes, payload {build['avg_payload_bytes']} bytes.",
        "",
        f"## create_plan ({args.repeat} runs per configuration, each configuration in a process of its own)",
        "",
        "Wall: around the `create_plan` call. draw_seconds / total_seconds: what it records in plan.draw "
        "(reading + drawing; everything but the last UPDATE). Peak RSS: the process's ru_maxrss "
        "(after Django set-up it was the 'base' figure). Overlap 0.1 with 2 validators per overlap item. "
        "Load avg after: the 1-minute load average when the configuration's process ended (the machine has "
        "2 cores; anything above about 1 means other work was competing with the run). Python CPU s: the "
        "CPU time of the Python process during the call (wall minus this is waiting for PostgreSQL or for a core).",
        "",
        "| configuration | strata | requested | sampled | wall s (median) | wall s (all runs) | draw_seconds | "
        "total_seconds | Python CPU s | peak RSS MB (base) | load avg after | under 10 s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for result in measured:
        runs = result["runs"]
        wall = median(runs, "wall_s")
        lines.append(
            f"| {result['label']} | {runs[0]['strata']} | {runs[0]['requested']:,} | {runs[0]['sampled']:,} | "
            f"{wall:.2f} | {', '.join(format(run['wall_s'], '.2f') for run in runs)} | "
            f"{median(runs, 'draw_s'):.2f} | {median(runs, 'total_s'):.2f} | {median(runs, 'cpu_s'):.2f} | "
            f"{result['peak_rss_mb']:,} ({result['base_rss_mb']:,}) | {result['load_after']} | "
            f"{'yes' if wall < TARGET_S else 'NO'} |"
        )
    lines += [
        "",
        "## Reproducibility",
        "",
        f"A plan with the same configuration and seed 0, made in another process (another hash seed), against "
        f"the first measured plan: same sampled item ids: **{reproduce['same_ids']}**; same task order: "
        f"**{reproduce['same_order']}**; same strata and labels: **{reproduce['same_strata']}**; same overlap "
        f"items: **{reproduce['same_overlap']}**. With seed 1: {reproduce['seed1_shared']:,} of "
        f"{reproduce['sampled']:,} items in common (different sample: **{reproduce['seed1_differs']}**; a "
        f"random overlap of two independent samples would be about {reproduce['expected_shared']:,}).",
        "",
        f"## Where the time goes ({profile['label']}, one run, timed piece by piece)",
        "",
        "| piece | seconds |",
        "|---|---|",
        f"| the stratum query inside PostgreSQL (EXPLAIN ANALYZE execution time) | {profile['explain_s']:.2f} |",
        f"| of which JIT compilation | {profile['jit_s']:.2f} |",
        f"| the same query, rows fetched into Python by a plain cursor | {profile['sql_fetch_s']:.2f} |",
        "| stratum_rows: the query through the ORM (values() + iterator) + stratum labels "
        f"(second call; first call in the process {profile['stratum_rows_first_s']:.2f}) | {profile['stratum_rows_s']:.2f} |",
        f"| of which the stratum labels alone, over rows already read | {profile['labels_s']:.2f} |",
        f"| of which the image-group label alone (SHA-256 of each image id) | {profile['image_group_s']:.2f} |",
        "| for comparison, a sketch of a cheaper stratum_rows (values_list tuples, each label computed once "
        f"per distinct value; same strata, same ids; perf/validation_draw.py memoised_rows) | {profile['memoised_s']:.2f} |",
        f"| draw_stratified_sample ({profile['strata']} strata, {profile['population']:,} ids) | {profile['draw_s']:.2f} |",
        f"| create_plan, whole (in the profiling process, a further plan) | {profile['create_plan_s']:.2f} |",
        f"| its draw_seconds (stratum_rows + draw) / total_seconds | {profile['draw_seconds']:.2f} / {profile['total_seconds']:.2f} |",
        f"| its writes (create_plan − draw_seconds) | {profile['create_plan_s'] - profile['draw_seconds']:.2f} |",
        f"| of which INSERT annotation_task ({profile['sampled']:,} rows, batches of 2,000) | {profile['queries'].get('INSERT annotation_task', 0):.2f} |",
        f"| of which INSERT validation_sampled | {profile['queries'].get('INSERT validation_sampled', 0):.2f} |",
        f"| of which other statements (project, plan, annotators, UPDATE of plan.draw) | {profile['other_queries_s']:.2f} |",
        f"| of which COMMIT (PostgreSQL runs the deferred foreign-key checks of every new row) | {profile['commit_s']:.2f} |",
        "| of which Python around the statements (model instances, bulk_create's SQL, shuffle) | "
        f"{profile['create_plan_s'] - profile['draw_seconds'] - sum(profile['queries'].values()) - profile['other_queries_s'] - profile['commit_s']:.2f} |",
        "",
        f"Query plan: {profile['plan_summary']}.",
        "",
        "## What it means",
        "",
    ]
    lines += interpretation(measured, profile, info)
    return "\n".join(lines) + "\n"


def interpretation(measured, profile, info) -> list[str]:
    main = measured[0]
    loads = [float(result["load_after"]) for result in measured]
    walls = [statistics.median(run["wall_s"] for run in result["runs"]) for result in measured]
    reading, drawing = profile["stratum_rows_s"], profile["draw_s"]
    writing = profile["create_plan_s"] - profile["draw_seconds"]
    parts = {"reading the strata (stratum_rows)": reading, "drawing": drawing, "writing": writing}
    largest = max(parts, key=parts.get)
    return [
        f"- Main configuration: median {walls[0]:.2f} s, "
        + (
            f"under the {TARGET_S:g} s target by {TARGET_S - walls[0]:.2f} s."
            if walls[0] < TARGET_S
            else f"OVER the {TARGET_S:g} s target by {walls[0] - TARGET_S:.2f} s."
        )
        + f" Slowest configuration: median {max(walls):.2f} s "
        f"({'all under' if max(walls) < TARGET_S else 'not all under'} {TARGET_S:g} s). The Python process "
        f"itself used {statistics.median(run['cpu_s'] for run in main['runs']):.2f} s of CPU per run of the "
        f"main configuration ({statistics.median(run['cpu_s'] / run['wall_s'] for run in main['runs']):.0%} of "
        "its wall time): the time goes mostly to Python, not to PostgreSQL.",
        f"- Where the time goes (profiled run): {', '.join(f'{name} {value:.2f} s' for name, value in parts.items())}; "
        f"the largest part is {largest}. Of the reading, PostgreSQL's own execution is "
        f"{profile['explain_s']:.2f} s (JIT {profile['jit_s']:.2f} s) and a plain cursor fetches every row in "
        f"{profile['sql_fetch_s']:.2f} s; the rest of stratum_rows is Python: the labels "
        f"{profile['labels_s']:.2f} s (the image-group SHA-256 alone {profile['image_group_s']:.2f} s) and the "
        "ORM's values() dict and converters per row. Of the writing, the INSERTs are "
        f"{sum(profile['queries'].values()):.2f} s and COMMIT (deferred foreign-key checks) "
        f"{profile['commit_s']:.2f} s; the rest is Django building {2 * profile['sampled']:,} model instances "
        "and bulk_create's SQL in Python.",
        f"- Room to speed up: the sketch memoised_rows (above) reads the same strata, same ids, in "
        f"{profile['memoised_s']:.2f} s instead of {reading:.2f} s, which would put the main configuration at "
        f"about {walls[0] - reading + profile['memoised_s']:.1f} s; the writes ({writing:.2f} s, most of it "
        "Django building model instances and the deferred foreign-key checks at COMMIT) could go the importer's "
        "way (rows as tuples, COPY) for a further second or two.",
        f"- Peak RSS of a process running the main configuration {main['peak_rss_mb']:,} MB "
        f"({main['base_rss_mb']:,} MB after Django set-up): one small row per candidate item, never whole records.",
        f"- Contention: the 1-minute load average was {info['load_before'].split()[0]} before the run and "
        f"{min(loads):.2f}-{max(loads):.2f} as the configurations ended, on {os.cpu_count()} cores. Above about "
        "1, another process (such as a test run) was using a core the draw's Python process and PostgreSQL "
        "would otherwise share, and the wall times are higher than on an idle machine.",
        "- Numbers are for a warm database (the rows just written, within RAM), as right after an import. "
        "A cold read of the item table from disk adds its size over the disk's read speed.",
    ]


# --- the children -----------------------------------------------------------------------------------


def run_child(stage: str, config: dict) -> None:
    import django

    django.setup()
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = {"build": build_dataset, "measure": measure, "reproduce": reproduce, "profile": profile}[stage](
        config
    )
    result["base_rss_mb"] = round(base_rss / 1024)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    result["load_after"] = Path("/proc/loadavg").read_text().split()[0]
    print(json.dumps(result))


def scene_rows(dataset_id: int, images: int):
    import orjson

    for image in range(images):
        image_id = 1_000_000 + image
        base = image * 40
        objects = [
            {
                "object_id": base + k,
                "names": [NOUNS[(image + k) % len(NOUNS)]],
                "x": 10 * k,
                "y": 5 * k,
                "w": 50 + k,
                "h": 40 + k,
                "attributes": ["red"] if k % 3 == 0 else [],
            }
            for k in range(8)
        ]
        data = {"image_id": image_id, "width": 800, "height": 600, "objects": objects, "relationships": []}
        yield (dataset_id, image, str(image_id), orjson.dumps(data).decode(), f"{image_id}.jpg")


def item_rows(dataset_id: int, items: int, images: int, scene_ids: dict[str, int]):
    """CRIC items: realistic payload and ground truth, uneven types and program lengths (seed 0)."""
    import numpy as np
    import orjson

    rng = np.random.default_rng(0)
    types = list(TYPE_WEIGHTS)
    kinds = rng.choice(len(types), size=items, p=list(TYPE_WEIGHTS.values())).tolist()
    lengths = rng.choice(list(STEP_WEIGHTS), size=items, p=list(STEP_WEIGHTS.values())).tolist()
    coins = rng.integers(0, 1000, size=items).tolist()
    dumps = orjson.dumps
    for index in range(items):
        image = index % images
        image_id = 1_000_000 + image
        base = image * 40
        kind = types[kinds[index]]
        verify = kind.startswith("Verify")
        coin = coins[index]
        noun, other = NOUNS[coin % len(NOUNS)], NOUNS[(coin // 7) % len(NOUNS)]
        relation = RELATIONS[coin % len(RELATIONS)]
        kg = KG_RELATIONS[coin % len(KG_RELATIONS)]
        steps = lengths[index]
        program = [{"function": "Initial", "text_input": [], "output": [base + k for k in range(8)]}]
        for step in range(1, steps - 1):
            function = MIDDLE_FUNCTIONS[(coin + step) % len(MIDDLE_FUNCTIONS)]
            program.append(
                {
                    "function": function,
                    "text_input": [noun] if step % 2 else [relation, other],
                    "output": [base + (coin + step) % 8],
                }
            )
        program.append(
            {
                "function": "Verify" if verify else "Find KG",
                "text_input": [kg, other],
                "output": [] if verify else [base + coin % 8],
            }
        )
        answer = ("yes" if coin % 2 else "no") if verify else other
        payload = {
            "image_id": image_id,
            "question_id": f"{image_id}_{index}",
            "question": f"What is the {noun} {relation} the {other} used for?"
            if not verify
            else f"Is the {noun} {relation} the {other}?",
            "question_type": kind,
        }
        truth = {
            "answer": answer,
            "target": [base + coin % 8] if not verify or coin % 2 else [],
            "program": program,
            "sub_graph": {
                "relations": [[base + coin % 8, relation, base + (coin + 1) % 8]],
                "attributes": [[base + coin % 8, "red"]] if coin % 3 == 0 else [],
                "knowledge_items": [{"triplet": [noun, kg, other]}] if kind.endswith("KG") else [],
            },
            "wrong_part": "",
        }
        yield (
            dataset_id,
            index,
            payload["question_id"],
            dumps(payload).decode(),
            dumps(truth).decode(),
            "{}",
            scene_ids[str(image_id)],
        )


def build_dataset(config: dict) -> dict:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection, transaction

    from benchmarks.bulk import insert_rows
    from benchmarks.models import Dataset, Item, Scene

    items, images = config["items"], config["images"]
    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    migrate_s = time.perf_counter() - started
    users = get_user_model()
    users.objects.bulk_create([users(username=f"perf-validator-{n}") for n in range(3)])

    started = time.perf_counter()
    with transaction.atomic():
        dataset = Dataset.objects.create(
            benchmark="cric", name=DATASET_NAME, has_media=True, item_count=items, unit_count=items
        )
        insert_rows(
            Scene, ("dataset_id", "position", "external_id", "data", "image"), scene_rows(dataset.pk, images)
        )
    scene_ids = dict(Scene.objects.filter(dataset=dataset).values_list("external_id", "pk"))
    scenes_s = time.perf_counter() - started

    started = time.perf_counter()
    with transaction.atomic():
        insert_rows(
            Item,
            ("dataset_id", "position", "external_id", "payload", "ground_truth", "media", "scene_id"),
            item_rows(dataset.pk, items, images, scene_ids),
        )
    items_s = time.perf_counter() - started

    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {Scene._meta.db_table}")
        cursor.execute(f"VACUUM ANALYZE {Item._meta.db_table}")
    analyze_s = time.perf_counter() - started
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT pg_total_relation_size('{Item._meta.db_table}'), count(*), "
            f"avg(pg_column_size(ground_truth)), avg(pg_column_size(payload)) FROM {Item._meta.db_table}"
        )
        size, count, truth_bytes, payload_bytes = cursor.fetchone()
    assert count == items, (count, items)
    return {
        "items": items,
        "images": images,
        "migrate_s": migrate_s,
        "scenes_s": scenes_s,
        "items_s": items_s,
        "analyze_s": analyze_s,
        "item_table_mb": round(size / 2**20),
        "avg_ground_truth_bytes": round(float(truth_bytes)),
        "avg_payload_bytes": round(float(payload_bytes)),
    }


def plan_arguments(config: dict, *, seed: int, name: str) -> dict:
    from django.contrib.auth import get_user_model

    from benchmarks.models import Dataset

    return {
        "dataset": Dataset.objects.get(name=DATASET_NAME),
        "name": name,
        "strata": config["strata"],
        "allocation": config["allocation"],
        "sample_size": config.get("sample_size"),
        "margin": config.get("margin"),
        "confidence": 0.95,
        "seed": seed,
        "overlap": 0.1,
        "validators_per_overlap": 2,
        "validators": list(get_user_model().objects.filter(username__startswith="perf-validator-")),
    }


def measure(config: dict) -> dict:
    from validation.services import create_plan

    runs, plans = [], []
    for number in range(config["repeat"]):
        arguments = plan_arguments(config, seed=0, name=f"{config['label']} #{number + 1}")
        cpu_before = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        plan = create_plan(**arguments)
        wall = time.perf_counter() - started
        cpu_after = resource.getrusage(resource.RUSAGE_SELF)
        plans.append(plan.pk)
        runs.append(
            {
                "wall_s": wall,
                "cpu_s": cpu_after.ru_utime + cpu_after.ru_stime - cpu_before.ru_utime - cpu_before.ru_stime,
                "draw_s": plan.draw["draw_seconds"],
                "total_s": plan.draw["total_seconds"],
                "strata": len(plan.draw["strata"]),
                "requested": plan.draw["requested_size"],
                "sampled": plan.draw["sample_size"],
            }
        )
        assert plan.sampled.count() == plan.draw["sample_size"] == plan.project.tasks.count()
    return {"label": config["label"], "runs": runs, "plans": plans}


def plan_contents(plan) -> dict:
    from annotation.models import Task

    tasks = list(
        Task.objects.filter(project=plan.project).order_by("position").values_list("item_id", "opinions")
    )
    return {
        "ids": sorted(item for item, _ in tasks),
        "order": [item for item, _ in tasks],
        "overlap": sorted(item for item, opinions in tasks if opinions > 1),
        "strata": sorted(plan.sampled.values_list("item_id", "stratum")),
        "sizes": {label: info["sample_size"] for label, info in plan.draw["strata"].items()},
    }


def reproduce(config: dict) -> dict:
    from validation.models import Plan
    from validation.services import create_plan

    reference = plan_contents(Plan.objects.get(pk=config["reference"]))
    again = plan_contents(create_plan(**plan_arguments(config, seed=0, name="reproduce seed 0")))
    other = plan_contents(create_plan(**plan_arguments(config, seed=1, name="reproduce seed 1")))
    population = Plan.objects.get(pk=config["reference"]).draw["population_size"]
    shared = len(set(reference["ids"]) & set(other["ids"]))
    return {
        "label": config["label"],
        "same_ids": reference["ids"] == again["ids"],
        "same_order": reference["order"] == again["order"],
        "same_strata": reference["strata"] == again["strata"] and reference["sizes"] == again["sizes"],
        "same_overlap": reference["overlap"] == again["overlap"],
        "sampled": len(reference["ids"]),
        "seed1_shared": shared,
        "seed1_differs": reference["ids"] != other["ids"],
        "expected_shared": round(len(reference["ids"]) ** 2 / population),
    }


def memoised_rows(dataset, strata: list[str]) -> dict[str, list[int]]:
    """A sketch of a cheaper stratum_rows (not the app's code): tuples instead of dicts, and each
    stratifier's label computed once per distinct value it reads (the image-group hash once per
    image, not once per item), the joined label once per distinct combination."""
    from validation.checks import check_for
    from validation.services import ALL_ITEMS

    check = check_for(dataset.benchmark)
    stratifiers = [check.stratifier(key) for key in strata]
    aliases = [list(stratifier.fields()) for stratifier in stratifiers]
    fields = {}
    for stratifier in stratifiers:
        fields.update(stratifier.fields())
    names = list(fields)
    plans = [
        (operator.itemgetter(*[names.index(alias) + 1 for alias in group]), {}, stratifier)
        for group, stratifier in zip(aliases, stratifiers, strict=True)
    ]
    by_key: dict[tuple, list[int]] = {}
    rows = check.sampleable(dataset.items.all()).annotate(**fields).values_list("pk", *names).order_by()
    for row in rows.iterator(chunk_size=20000):
        key = []
        for getter, memo, stratifier in plans:
            raw = getter(row)
            label = memo.get(raw)
            if label is None:
                label = memo[raw] = stratifier.value(dict(zip(names, row[1:], strict=True)))
            key.append(label)
        ids = by_key.get(key := tuple(key))
        if ids is None:
            ids = by_key[key] = []
        ids.append(row[0])
    by_stratum: dict[str, list[int]] = {}
    for key, ids in by_key.items():
        by_stratum.setdefault(" · ".join(key) or ALL_ITEMS, []).extend(ids)
    return by_stratum


def profile(config: dict) -> dict:
    import re
    from collections import defaultdict

    from django.db import connection

    from evaluation.sampling import draw_stratified_sample
    from validation.checks import check_for
    from validation.services import create_plan, stratum_rows

    arguments = plan_arguments(config, seed=0, name="profile")
    dataset = arguments["dataset"]
    check = check_for(dataset.benchmark)
    fields = {}
    for key in config["strata"]:
        fields.update(check.stratifier(key).fields())
    queryset = check.sampleable(dataset.items.all()).values("pk", **fields).order_by()
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        explained = cursor.fetchone()[0]
        explained = json.loads(explained) if isinstance(explained, str) else explained
        started = time.perf_counter()
        cursor.execute(sql, params)
        fetched = len(cursor.fetchall())
        sql_fetch_s = time.perf_counter() - started
    top = explained[0]["Plan"]

    def nodes(node):
        yield node
        for inner in node.get("Plans", []):
            yield from nodes(inner)

    plan_summary = ", ".join(
        f"{node['Node Type']}{' on ' + node['Relation Name'] if 'Relation Name' in node else ''}"
        for node in nodes(top)
    )

    stratum_rows_runs = []
    for _ in range(2):  # the first call in a process also pays for warming up; both are reported
        started = time.perf_counter()
        by_stratum = stratum_rows(dataset, config["strata"])
        stratum_rows_runs.append(time.perf_counter() - started)
    population = sum(len(ids) for ids in by_stratum.values())
    assert population == fetched
    started = time.perf_counter()
    sketch = memoised_rows(dataset, config["strata"])
    memoised_s = time.perf_counter() - started
    assert {label: sorted(ids) for label, ids in sketch.items()} == {
        label: sorted(ids) for label, ids in by_stratum.items()
    }
    started = time.perf_counter()
    draw_stratified_sample(
        by_stratum, sample_size=config["sample_size"], allocation=config["allocation"], seed=0
    )
    draw_s = time.perf_counter() - started

    spent: dict[str, float] = defaultdict(float)
    insert = re.compile(r'^\s*INSERT INTO "(\w+)"')

    def timer(execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            found = insert.match(sql)
            key = f"INSERT {found.group(1)}" if found else "other"
            if 'FROM "benchmarks_item"' in sql:
                key = "read"  # the stratum query (part of draw_seconds)
            spent[key] += time.perf_counter() - started

    # COMMIT does not pass through execute_wrapper; it runs the deferred foreign-key checks.
    plain_commit = connection.commit

    def timed_commit():
        started = time.perf_counter()
        try:
            return plain_commit()
        finally:
            spent["COMMIT"] += time.perf_counter() - started

    connection.commit = timed_commit
    started = time.perf_counter()
    with connection.execute_wrapper(timer):
        plan = create_plan(**arguments)
    create_plan_s = time.perf_counter() - started
    connection.commit = plain_commit

    # stratum_rows's Python side, apart: the labels alone over rows already read, and the
    # image-group label (a SHA-256 per item) alone.
    rows = list(queryset.iterator(chunk_size=20000))
    stratifiers = [check.stratifier(key) for key in config["strata"]]
    started = time.perf_counter()
    for row in rows:
        " · ".join(stratifier.value(row) for stratifier in stratifiers)
    labels_s = time.perf_counter() - started
    image_group = check.stratifier("image_group").value
    started = time.perf_counter()
    for row in rows:
        image_group(row)
    image_group_s = time.perf_counter() - started
    return {
        "label": config["label"],
        "explain_s": explained[0]["Execution Time"] / 1000,
        "sql_fetch_s": sql_fetch_s,
        "plan_summary": plan_summary,
        "stratum_rows_s": stratum_rows_runs[-1],
        "stratum_rows_first_s": stratum_rows_runs[0],
        "jit_s": explained[0].get("JIT", {}).get("Timing", {}).get("Total", 0) / 1000,
        "draw_s": draw_s,
        "strata": len(by_stratum),
        "population": population,
        "create_plan_s": create_plan_s,
        "draw_seconds": plan.draw["draw_seconds"],
        "total_seconds": plan.draw["total_seconds"],
        "sampled": plan.draw["sample_size"],
        "queries": {key: value for key, value in spent.items() if key.startswith("INSERT")},
        "other_queries_s": spent["other"],
        "commit_s": spent["COMMIT"],
        "memoised_s": memoised_s,
        "labels_s": labels_s,
        "image_group_s": image_group_s,
    }


if __name__ == "__main__":
    main()
