"""A crowd of annotators on one project at once, with leases running out under some of them.

`run_crowd` is used by tests/annotation/test_concurrency.py: in-process on PostgreSQL, and on a
SQLite file (where rows cannot be locked) through `python -m tests.annotation.crowd`, which sets
up its own database in YARDSTICK_VAR_DIR and prints the report as JSON.

Each annotator is a thread with its own database connection that takes task after task until
none is left. Most tasks are saved as a draft and submitted; some are abandoned (the annotator
waits past the lease, then submits: the submit must be refused and the task go to someone else);
some drafts are saved with an old version (must be refused). The report lists what each thread
was told, and `check` verifies it against the database.
"""

from __future__ import annotations

import json
import random
import threading
import time
from typing import Any

ABANDON, STALE = 0.1, 0.1
#: Leases in the crowd: short, so that abandoned ones run out during the run.
LEASE_S = 3
EVIDENCE = [10, 10, 60, 10, 60, 40, 10, 40]


def run_crowd(project, users, *, seed: int = 0, patience_s: float = 20.0) -> dict[str, Any]:
    from django.db import connections

    from annotation import queue, services

    barrier = threading.Barrier(len(users))
    report: dict[str, Any] = {"submitted": [], "lost": [], "late": [], "stale": [], "errors": [], "claims": 0}
    lock = threading.Lock()

    def note(kind: str, value: Any) -> None:
        with lock:
            report[kind].append(value)

    def annotator(index: int, user) -> None:
        chance = random.Random(seed * 1000 + index)
        try:
            barrier.wait()
            idle_since = None
            while True:
                assignment = queue.claim(project, user)
                if assignment is None:
                    # Others' leases may still run out and hand their tasks back: wait a little.
                    idle_since = idle_since or time.monotonic()
                    if time.monotonic() - idle_since > project.lease_seconds * 2 + 1:
                        return
                    time.sleep(0.1)
                    continue
                idle_since = None
                with lock:
                    report["claims"] += 1
                pairs = pairs_for(assignment, index)
                roll = chance.random()
                if roll < ABANDON:
                    time.sleep(project.lease_seconds + 0.3)
                    try:
                        services.submit(assignment, user, version=assignment.version, pairs=pairs)
                        note("errors", f"{user.username}: a submit after the lease ran out was stored")
                    except queue.LeaseLost:
                        note("lost", assignment.pk)
                    continue
                if roll < ABANDON + STALE:
                    try:
                        queue.save_draft(assignment, user, assignment.version + 7, {"pairs": pairs})
                        note("errors", f"{user.username}: a draft with a wrong version was stored")
                    except queue.Stale:
                        note("stale", assignment.pk)
                    except queue.LeaseLost:  # the lease lapsed while this one waited to write
                        note("late", assignment.pk)
                        continue
                try:
                    version, _ = queue.save_draft(assignment, user, assignment.version, {"pairs": pairs})
                    services.submit(assignment, user, version=version, pairs=pairs)
                except queue.LeaseLost:  # the database was slow to let this one write: refused, not lost
                    note("late", assignment.pk)
                    continue
                note("submitted", {"assignment": assignment.pk, "pairs": len(pairs)})
        except Exception as error:  # noqa: BLE001 - the report says what went wrong, the test fails
            note("errors", f"{user.username}: {type(error).__name__}: {error}")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=annotator, args=(i, user)) for i, user in enumerate(users)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=patience_s + 120)
    report["seconds"] = round(time.monotonic() - started, 1)
    report["hung"] = sum(thread.is_alive() for thread in threads)
    return report


def pairs_for(assignment, index: int) -> list[dict[str, Any]]:
    from annotation import services

    if assignment.round > 1:
        return [
            {"source": pair.pk, "question": pair.question, "answer": "x", "evidence": EVIDENCE}
            for pair in services.first_round_pairs(assignment.task)
        ]
    return [
        {
            "question": f"What does sign {assignment.task.position} of {index} say?",
            "answer": "x",
            "evidence": EVIDENCE,
        }
    ]


def check(project, report: dict[str, Any]) -> list[str]:
    """What went wrong, by the database: an empty list when every promise held."""
    from django.db.models import Count

    from annotation.models import Assignment, Task

    problems = list(report["errors"])
    if report["hung"]:
        problems.append(f"{report['hung']} annotators never finished")
    live = Assignment.objects.filter(task__project=project, status__in=Assignment.LIVE)
    for row in live.values("task", "round").annotate(n=Count("pk")).filter(n__gt=1):
        problems.append(f"task {row['task']} round {row['round']} held by {row['n']} people")
    for task in Task.objects.filter(project=project).annotate(
        people=Count("assignments__annotator", filter=live_filter(), distinct=True)
    ):
        if task.people > task.opinions:
            problems.append(f"task {task.pk} given to {task.people} people, overlap asks {task.opinions}")
        done = task.assignments.filter(status=Assignment.Status.SUBMITTED).count()
        if done != task.opinions:
            problems.append(f"task {task.pk}: {done} of {task.opinions} annotations submitted at the end")
    for entry in report["submitted"]:
        stored = Assignment.objects.filter(pk=entry["assignment"], status=Assignment.Status.SUBMITTED).first()
        if stored is None or stored.pairs.count() != entry["pairs"]:
            problems.append(f"assignment {entry['assignment']} was accepted but is not stored as submitted")
    for pk in report["lost"] + report["late"]:
        if Assignment.objects.filter(pk=pk, status=Assignment.Status.SUBMITTED).exists():
            problems.append(f"assignment {pk} was refused after its lease ran out but is submitted")
    return problems


def live_filter():
    from django.db.models import Q

    from annotation.models import Assignment

    return Q(assignments__status__in=Assignment.LIVE)


def main() -> None:  # python -m tests.annotation.crowd ANNOTATORS IMAGES (in a fresh YARDSTICK_VAR_DIR)
    import sys
    import tempfile
    from pathlib import Path

    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from annotation.models import Project, Task
    from tests.annotation.conftest import blank_dataset
    from tests.factories import make_user

    annotators, images = int(sys.argv[1]), int(sys.argv[2])
    settings.ANNOTATION_OCR_BUDGET_S = 0
    call_command("migrate", verbosity=0)
    users = [make_user(f"crowd{i:02d}", "annotator") for i in range(annotators)]
    dataset = blank_dataset(Path(tempfile.mkdtemp()), images)
    project = Project.objects.create(name="crowd", dataset=dataset, lease_seconds=LEASE_S, overlap=0.5)
    Task.objects.bulk_create(
        [
            Task(project=project, item=item, position=item.position, opinions=1 + item.position % 2)
            for item in dataset.items.all()
        ]
    )
    project.annotators.set(users)
    report = run_crowd(project, users)
    report["problems"] = check(project, report)
    counts = {key: len(value) if isinstance(value, list) else value for key, value in report.items()}
    print(json.dumps(counts | {"problems": report["problems"]}))


if __name__ == "__main__":
    main()
