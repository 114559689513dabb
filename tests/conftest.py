"""Test-wide settings: every test gets its own media folder and runs Celery tasks in-process."""

from pathlib import Path

import pytest

#: The project's shared data folder, beside the repository: <repo>/../shared/data.
SHARED_DATA = (Path(__file__).resolve().parents[1] / ".." / "shared" / "data").resolve()


@pytest.fixture
def shared_data():
    """Return a function giving the path of a file under ../shared/data, skipping when it is absent."""

    def locate(relative: str) -> Path:
        path = SHARED_DATA / relative
        if not path.is_file():
            pytest.skip(f"../shared/data is absent: {relative} not found under {SHARED_DATA}")
        return path

    return locate


@pytest.fixture(autouse=True)
def isolated_storage(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    from yardstick.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


@pytest.fixture(scope="session")
def trance_files(tmp_path_factory):
    """12 generated TRANCE samples with their renders (made once per test run, ~2 s)."""
    from benchmarks.trance.generator import generate

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
