"""Test-wide settings: every test gets its own media folder and runs Celery tasks in-process."""

import pytest


@pytest.fixture(autouse=True)
def isolated_storage(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    from yardstick.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False
