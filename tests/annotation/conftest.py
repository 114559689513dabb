"""Annotation fixtures: STE-VQA datasets with images, projects with annotators and reviewers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from annotation import services
from benchmarks.services import import_dataset
from tests.factories import make_user


def blank_dataset(folder: Path, count: int, *, name: str = "blank", size=(200, 100)):
    """An STE-VQA training-layout dataset of `count` plain images (what the queue needs, no more)."""
    images = folder / "images"
    images.mkdir(parents=True, exist_ok=True)
    records = []
    for index in range(count):
        Image.new("RGB", size, (200, 200, 200)).save(images / f"img_{index:04d}.png")
        evidence = ["10", "10", "60", "10", "60", "40", "10", "40"]
        records.append(
            {
                "id": index,
                "image": f"img_{index:04d}.png",
                "annotation": [{"question": "what?", "answer": "x", "evidence": evidence}],
            }
        )
    return import_dataset(
        benchmark="stevqa", data=json.dumps(records).encode(), name=name, split="train", images_dir=images
    )


@pytest.fixture(autouse=True)
def expire_on_every_claim(settings):
    """Tests move lease ends by hand and claim at once: no once-a-second wait for the expiry."""
    settings.ANNOTATION_EXPIRY_EVERY_S = 0


@pytest.fixture(scope="session")
def demo_stevqa_files(tmp_path_factory):
    """8 generated STE-VQA street scenes with their signs' text and quadrilaterals (made once)."""
    from plugins.stevqa.demo import generate_demo

    folder = tmp_path_factory.mktemp("stevqa-samples")
    path = generate_demo(folder, count=8, seed=5)
    return path, folder / "images"


@pytest.fixture
def demo_stevqa(demo_stevqa_files):
    path, images = demo_stevqa_files
    return import_dataset(
        benchmark="stevqa", data=path.read_bytes(), name="demo", split="train", images_dir=images
    )


@pytest.fixture
def people(db):
    return {
        "ann": make_user("ann", "annotator"),
        "bob": make_user("bob", "annotator"),
        "rev": make_user("rev", "reviewer"),
        "res": make_user("res", "researcher"),
    }


@pytest.fixture
def project(demo_stevqa, people, settings):
    settings.ANNOTATION_OCR_BUDGET_S = 0  # OCR has tests of its own; these are about the workflow
    return services.create_project(
        dataset=demo_stevqa,
        name="Signs",
        created_by=people["res"],
        pairs_per_item=2,
        overlap=0.5,
        seed=3,
        annotators=[people["ann"], people["bob"]],
        reviewers=[people["rev"]],
    )
