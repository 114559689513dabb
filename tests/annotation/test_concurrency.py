"""50 annotators claiming and submitting at once, leases running out under some of them.

On PostgreSQL in this process (row locks, SKIP LOCKED); on SQLite in a subprocess with a database
file of its own (the in-memory test database cannot be shared by threads), where rows cannot be
locked and the IMMEDIATE transactions and the unique constraints must keep the same promises.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from annotation.models import Assignment, Project, Task
from tests.annotation.conftest import blank_dataset
from tests.annotation.crowd import LEASE_S, check, run_crowd
from tests.factories import make_user

ROOT = Path(__file__).resolve().parents[2]
ANNOTATORS, IMAGES = 50, 40


@pytest.mark.django_db(transaction=True)
def test_fifty_annotators_on_postgresql_never_share_a_round_and_lose_nothing(tmp_path, settings):
    if connection.vendor != "postgresql":
        pytest.skip("row locks: this one runs on PostgreSQL; the SQLite crowd runs in a subprocess")
    settings.ANNOTATION_OCR_BUDGET_S = 0
    users = [make_user(f"crowd{i:02d}", "annotator") for i in range(ANNOTATORS)]
    dataset = blank_dataset(tmp_path, IMAGES)
    project = Project.objects.create(name="crowd", dataset=dataset, lease_seconds=LEASE_S, overlap=0.5)
    project.annotators.set(users)
    Task.objects.bulk_create(
        [
            Task(project=project, item=item, position=item.position, opinions=1 + item.position % 2)
            for item in dataset.items.all()
        ]
    )
    report = run_crowd(project, users)
    assert check(project, report) == []
    assert report["lost"] and report["stale"], "the crowd should have lost leases and sent stale drafts"
    # Every abandoned task went to someone after its lease ran out.
    assert Assignment.objects.filter(task__project=project, status=Assignment.Status.EXPIRED).count() >= len(
        report["lost"]
    )


@pytest.mark.django_db
def test_fifty_annotators_on_a_sqlite_file_never_share_a_round_and_lose_nothing(tmp_path):
    if connection.vendor != "sqlite":
        pytest.skip("the SQLite crowd runs once, in the SQLite pass")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DATABASE_URL", "CELERY_", "CACHE_"))
    }
    env.update(YARDSTICK_VAR_DIR=str(tmp_path / "var"), DJANGO_SETTINGS_MODULE="yardstick.settings")
    result = subprocess.run(
        [sys.executable, "-m", "tests.annotation.crowd", str(ANNOTATORS), str(IMAGES)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["problems"] == []
    assert report["submitted"] >= IMAGES * 1.5 and report["lost"] and report["stale"], report
