"""Validation fixtures: a generated CRIC dataset with images and scene graphs, validators, a plan."""

from __future__ import annotations

import pytest

from benchmarks.services import import_dataset
from tests.factories import make_user
from validation import services


@pytest.fixture(autouse=True)
def expire_on_every_claim(settings):
    settings.ANNOTATION_EXPIRY_EVERY_S = 0


@pytest.fixture
def cric(cric_files, db):
    """The shared generated CRIC files (plugins/cric/tests/fixtures.py: 5 images, seed 2), imported."""
    return import_dataset(
        benchmark="cric",
        data=cric_files.questions.read_bytes(),
        name="generated",
        images_dir=cric_files.images_dir,
        scenes_data=cric_files.scene_graphs.read_bytes(),
    )


@pytest.fixture
def people(db):
    return {
        "val": make_user("val", "reviewer"),
        "vic": make_user("vic", "annotator"),
        "res": make_user("res", "researcher"),
        "tess": make_user("tess", "tester"),
    }


@pytest.fixture
def plan(cric, people):
    return services.create_plan(
        dataset=cric,
        name="Check CRIC",
        strata=["question_type"],
        sample_size=10,
        overlap=0.5,
        seed=4,
        validators=[people["val"], people["vic"]],
        created_by=people["res"],
    )


FINE = {"answer_correct": True, "grounding_correct": True, "natural": 5, "wrong_step": None, "comment": ""}
WRONG = {"answer_correct": False, "grounding_correct": True, "natural": 2, "wrong_step": 1, "comment": "no"}
