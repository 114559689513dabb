"""Test-wide settings: every test gets its own media folder and runs Celery tasks in-process."""

from pathlib import Path

import pytest

#: Each benchmark folder's test fixtures (plugins/<name>/tests/fixtures.py: its sample files and
#: datasets, used by the apps' tests too), found as the registry finds the folders.
pytest_plugins = sorted(
    f"plugins.{path.parent.parent.name}.tests.fixtures"
    for path in (Path(__file__).resolve().parent / "plugins").glob("*/tests/fixtures.py")
)

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


@pytest.fixture(scope="session", autouse=True)
def quick_password_hashing():
    """Passwords hashed with one round of MD5 in the tests: the production hasher (Django's PBKDF2,
    a million rounds: tests/yardstick/test_security.py checks it is the one the settings keep)
    costs 0.3 s a user made and a log-in, minutes over the suite. What the tests check of log-ins
    (lockout, throttling, one-time links) is the same with either hasher."""
    from django.test import override_settings

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
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
    settings.FILE_CACHE_DIR = tmp_path / "file-cache"
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    from django.core.cache import cache

    cache.clear()  # local-memory caches outlive their settings: no throttle or progress carries over
    from yardstick.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


@pytest.fixture(scope="session")
def s3_server():
    """An S3-compatible server (moto's, a process of its own) for this test process's session."""
    from tests.s3 import start_s3_server

    server = start_s3_server()
    yield server
    server.stop()


@pytest.fixture
def object_store(settings, tmp_path, s3_server):
    """The app keeps its files in a fresh bucket of the test S3 server, as a site with
    YARDSTICK_S3_BUCKET set does; local copies go to this test's own cache folder. Gives the server
    (its `client()` reads the bucket behind the app's back) with the bucket's name as `.bucket`."""
    from tests.s3 import ACCESS_KEY, REGION, SECRET_KEY
    from yardstick.settings import object_store as stores

    bucket = s3_server.new_bucket()
    settings.STORAGES = {
        **settings.STORAGES,
        **stores(
            bucket,
            endpoint_url=s3_server.endpoint,
            region_name=REGION,
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            signed_url_seconds=settings.SIGNED_URL_SECONDS,
        ),
    }
    settings.FILE_STORE = "s3"
    settings.FILE_CACHE_DIR = tmp_path / "file-cache"
    s3_server.bucket = bucket
    return s3_server
