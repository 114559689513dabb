"""`check --deploy` refuses what cannot work with workers on other hosts (yardstick/checks.py):
each check fires on its configuration, naming the setting, and is silent once it is fixed."""

import os
import socket
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.checks import run_checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import OperationalError, ProgrammingError
from django.utils import timezone

from jobs.models import WorkerBeat
from yardstick import checks

ROOT = Path(__file__).resolve().parents[2]
REDIS_CACHE = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://r:6379/1"}
}
FILE_CACHE = {
    "default": {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache", "LOCATION": "/tmp/c"}
}


def reported(databases=None) -> dict[str, str]:
    """Yardstick's own findings of `check --deploy` (Django's security warnings left out), by id."""
    found = run_checks(include_deployment_checks=True, databases=databases)
    return {message.id: message.msg for message in found if message.id.startswith("yardstick.")}


@pytest.fixture
def elsewhere(settings):
    """A site whose workers run on other hosts, set up as `make run` (nothing shared)."""
    settings.WORKERS_ELSEWHERE = True
    settings.SHARED_FOLDERS = False
    settings.FILE_STORE = "local"
    settings.CELERY_BROKER_URL = "filesystem://"
    settings.CACHES = FILE_CACHE
    return settings


def test_e101_a_filesystem_broker_with_workers_elsewhere(elsewhere):
    assert "CELERY_BROKER_URL" in reported()["yardstick.E101"]
    assert "filesystem://" in reported()["yardstick.E101"]
    elsewhere.CELERY_BROKER_URL = "redis://redis.example.org:6379/0"
    assert "yardstick.E101" not in reported()


def test_e102_a_file_or_memory_cache_with_workers_elsewhere(elsewhere):
    message = reported()["yardstick.E102"]
    assert "CACHES" in message and "FileBasedCache" in message and "heartbeats and progress" in message
    elsewhere.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    assert "LocMemCache" in reported()["yardstick.E102"]
    elsewhere.CACHES = REDIS_CACHE
    assert "yardstick.E102" not in reported()


def test_e103_local_files_with_workers_elsewhere(elsewhere):
    message = reported()["yardstick.E103"]
    assert "FILE_STORE is 'local'" in message
    elsewhere.SHARED_FOLDERS = True  # the admin says the three folders are one shared mount
    assert "yardstick.E103" not in reported()
    elsewhere.SHARED_FOLDERS = False
    elsewhere.FILE_STORE = "s3"
    assert "yardstick.E103" not in reported()


def test_the_hints_name_the_variables_to_set(elsewhere):
    found = {
        message.id: message.hint for message in run_checks(include_deployment_checks=True, tags=["yardstick"])
    }
    assert (
        "CELERY_BROKER_URL" in found["yardstick.E101"]
        and "YARDSTICK_WORKERS_ELSEWHERE" in found["yardstick.E101"]
    )
    assert "CACHE_URL" in found["yardstick.E102"]
    assert (
        "YARDSTICK_S3_BUCKET" in found["yardstick.E103"]
        and "YARDSTICK_SHARED_FOLDERS=1" in found["yardstick.E103"]
    )


def test_all_workers_on_this_host_is_silent(elsewhere):
    elsewhere.WORKERS_ELSEWHERE = False
    assert reported() == {}


def test_a_check_deploy_with_an_error_stops_and_plain_check_never_runs_them(elsewhere):
    with pytest.raises(SystemCheckError, match="yardstick.E101"):
        call_command("check", "--deploy")
    assert not [message for message in run_checks() if message.id.startswith("yardstick.")]


@pytest.mark.django_db
def test_a_fresh_beat_from_another_host_counts_as_workers_elsewhere(settings):
    settings.WORKERS_ELSEWHERE = False
    settings.CELERY_BROKER_URL = "filesystem://"
    now = timezone.now()
    WorkerBeat.objects.create(name="gpu@gpu-host-7", queues=["gpu"], started_at=now, beat_at=now)
    message = reported(databases=["default"])["yardstick.E101"]
    assert "gpu@gpu-host-7" in message and "CELERY_BROKER_URL" in message
    # Without databases (plain `check --deploy`) the database is not read: the flag alone decides.
    assert "yardstick.E101" not in reported()
    # A beat older than ten minutes is a worker gone, not one running.
    WorkerBeat.objects.update(beat_at=now - timedelta(minutes=11))
    assert "yardstick.E101" not in reported(databases=["default"])


@pytest.mark.django_db
def test_a_beat_from_this_host_is_not_elsewhere(settings):
    settings.WORKERS_ELSEWHERE = False
    settings.CELERY_BROKER_URL = "filesystem://"
    here = socket.gethostname()
    now = timezone.now()
    WorkerBeat.objects.create(name=f"celery@{here}", queues=["celery"], started_at=now, beat_at=now)
    WorkerBeat.objects.create(
        name=f"gpu@{here.split('.')[0].upper()}.lan", queues=["gpu"], started_at=now, beat_at=now
    )
    assert reported(databases=["default"]) == {}


@pytest.mark.django_db  # Django's own checks given databases ask the database what it supports
@pytest.mark.parametrize("error", [OperationalError("no such server"), ProgrammingError("no such table")])
def test_an_unreachable_or_unmigrated_database_skips_the_observed_part(settings, monkeypatch, error):
    settings.WORKERS_ELSEWHERE = False
    settings.CELERY_BROKER_URL = "filesystem://"

    class Failing:
        def using(self, alias):
            raise error

    monkeypatch.setattr(WorkerBeat, "objects", Failing())
    assert checks.workers_seen_elsewhere(["default"]) == []
    assert "yardstick.E101" not in reported(databases=["default"])
    settings.WORKERS_ELSEWHERE = True  # the flag still counts
    assert "yardstick.E101" in reported(databases=["default"])


@pytest.mark.parametrize(
    "hosts, public",
    [
        (["*"], "*"),
        ([".example.org"], ".example.org"),
        (["localhost", "yardstick.example.org"], "yardstick.example.org"),
        (["10.0.0.5"], "10.0.0.5"),
        (["127.0.0.1", "[2001:db8::1]"], "[2001:db8::1]"),
    ],
)
def test_e104_debug_with_a_public_host(settings, hosts, public):
    settings.DEBUG = True
    settings.ALLOWED_HOSTS = hosts
    message = reported()["yardstick.E104"]
    assert "DEBUG" in message and "ALLOWED_HOSTS" in message and public in message
    settings.DEBUG = False
    assert "yardstick.E104" not in reported()


def test_e104_debug_on_loopback_names_only_is_silent(settings):
    settings.DEBUG = True
    settings.ALLOWED_HOSTS = ["localhost", "127.0.0.1", "::1", "[::1]", "testserver", "127.0.0.2", ""]
    assert "yardstick.E104" not in reported()


def test_e105_an_unknown_media_delivery_or_signed_urls_without_a_store(settings):
    settings.FILE_STORE = "local"
    settings.MEDIA_DELIVERY = "sign"
    message = reported()["yardstick.E105"]
    assert "MEDIA_DELIVERY is 'sign'" in message
    settings.MEDIA_DELIVERY = "signed"
    message = reported()["yardstick.E105"]
    assert "MEDIA_DELIVERY is 'signed'" in message and "FILE_STORE is 'local'" in message
    settings.FILE_STORE = "s3"
    assert "yardstick.E105" not in reported()
    settings.FILE_STORE = "local"
    settings.MEDIA_DELIVERY = "stream"
    assert "yardstick.E105" not in reported()


def test_default_settings_pass_check_and_check_deploy_reports_no_e101_to_e103(tmp_path):
    """`make run`'s settings, in a process of their own (its var/ in tmp_path, whose database has no
    tables: the observed part is skipped, not a crash): nothing to report on `check`, and nothing of
    Yardstick's on `check --deploy --database default`."""
    env = {key: value for key, value in os.environ.items() if key in ("PATH", "LANG", "HOME")}
    env["YARDSTICK_VAR_DIR"] = str(tmp_path / "var")
    plain = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "System check identified no issues" in plain.stdout
    for extra in ([], ["--database", "default"]):
        deploy = subprocess.run(
            [sys.executable, "manage.py", "check", "--deploy", *extra],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert deploy.returncode == 0, deploy.stdout + deploy.stderr
        assert "yardstick." not in deploy.stdout + deploy.stderr, deploy.stdout + deploy.stderr
