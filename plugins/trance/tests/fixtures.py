"""TRANCE's test fixtures, for its own tests and the apps' (the root conftest.py loads them)."""

import pytest


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
