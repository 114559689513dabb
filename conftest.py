"""Test-wide settings: every test gets its own media folder and runs Celery tasks in-process."""

from pathlib import Path

import pytest

#: The project's shared data folder, beside the repository: <repo>/../shared/data.
SHARED_DATA = (Path(__file__).resolve().parent / ".." / "shared" / "data").resolve()


@pytest.fixture
def shared_data():
    """Return a function giving the path of a file under ../shared/data, skipping when it is absent."""

    def locate(relative: str) -> Path:
        path = SHARED_DATA / relative
        if not path.is_file():
            pytest.skip(f"../shared/data is absent: {relative} not found under {SHARED_DATA}")
        return path

    return locate


@pytest.fixture(scope="session", autouse=True)
def plain_http():
    """The tests talk plain HTTP to the test client and the live server: the production defaults
    that DEBUG off brings (HTTPS redirect, HSTS, secure cookies) are relaxed as a plain-HTTP site
    would relax them. For the whole session, before the live server reads its middleware settings
    (a browser told once to use HTTPS for localhost would keep to it)."""
    from django.test import override_settings

    with override_settings(
        SECURE_SSL_REDIRECT=False,
        SECURE_HSTS_SECONDS=0,
        SESSION_COOKIE_SECURE=False,
        CSRF_COOKIE_SECURE=False,
    ):
        yield


@pytest.fixture(autouse=True)
def english_by_default():
    """Each test starts in English: a request in Chinese (the test client runs in this thread, and
    Django's LocaleMiddleware leaves its language active) must not change what the next test reads."""
    from django.conf import settings
    from django.utils import translation

    translation.activate(settings.LANGUAGE_CODE)
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def isolated_storage(settings, tmp_path):
    # Log-in lockout needs the request in authenticate(), which the test client's login() does not
    # pass; tests/yardstick/test_security.py turns it on where it is the subject.
    settings.AXES_ENABLED = False
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.UPLOADS_ROOT = tmp_path / "uploads"
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    from django.core.cache import cache

    cache.clear()  # local-memory caches outlive their settings: no throttle or progress carries over
    from yardstick.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


@pytest.fixture(scope="session")
def trance_files(tmp_path_factory):
    """12 generated TRANCE samples with their renders (made once per test run, ~2 s)."""
    from plugins.trance.generator import generate

    folder = tmp_path_factory.mktemp("trance-samples")
    generate(folder, count=12, seed=11, workers=1)
    return folder


@pytest.fixture
def trance_dataset(trance_files):
    from benchmarks.services import import_dataset

    return import_dataset(
        benchmark="trance",
        data=(trance_files / "data.jsonl").read_bytes(),
        name="TRANCE test sample",
        split="val",
        images_dir=trance_files,
    )
