"""CRIC's test fixtures, for the apps' tests (the root conftest.py loads them)."""

import pytest


@pytest.fixture(scope="session")
def cric_files(tmp_path_factory):
    """Generated CRIC demo files for 5 images (questions, scene graphs, images; made once per test
    run). Tests that depend on particular items generate their own."""
    from plugins.cric.demo import generate_demo

    return generate_demo(tmp_path_factory.mktemp("cric"), images=5, seed=2)
