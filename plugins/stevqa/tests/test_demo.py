"""Tests for the synthetic STE-VQA sample generator (pure Python, no Django)."""

import json
import random

import numpy as np
import pytest
from PIL import Image, ImageDraw

from plugins.stevqa import demo

pytestmark = pytest.mark.skipif(
    not (demo.CHINESE_FONT_PATH.is_file() and demo.ENGLISH_FONT_PATH.is_file()),
    reason=(
        "scene-text fonts missing: install the Debian packages fonts-wqy-microhei "
        "(WenQuanYi Micro Hei) and fonts-dejavu-core"
    ),
)


def _is_chinese(text):
    return any("\u4e00" <= character <= "\u9fa5" for character in text)


def _evidence_points(evidence):
    values = [int(value) for value in evidence]
    return list(zip(values[0::2], values[1::2], strict=True))


def _is_axis_aligned(points):
    (x1, y1), (x2, y2), (x3, y3), (x4, y4) = points
    return y1 == y2 and y3 == y4 and x1 == x4 and x2 == x3


def _polygon_mask(points, size):
    mask = Image.new("L", size, 0)
    ImageDraw.Draw(mask).polygon(points, fill=255, outline=255)
    return np.asarray(mask) > 0


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """One default-sized sample set, shared by the tests that only read it."""
    out_dir = tmp_path_factory.mktemp("stevqa")
    annotation_path = demo.generate_demo(out_dir, count=40, seed=0)
    return out_dir, annotation_path


def test_generated_file_follows_training_format(generated):
    out_dir, annotation_path = generated
    assert annotation_path == out_dir / "stevqa_train.json"
    records = json.loads(annotation_path.read_text(encoding="utf-8"))

    assert isinstance(records, list)
    assert len(records) == 40
    assert [record["id"] for record in records] == list(range(40))
    questions = []
    quads = []
    for record in records:
        assert set(record) == {"id", "image", "annotation"}
        assert isinstance(record["id"], int)
        assert isinstance(record["image"], str)
        with Image.open(out_dir / "images" / record["image"]) as image:
            assert image.format == "PNG"
            assert image.size == (demo.IMAGE_WIDTH, demo.IMAGE_HEIGHT)
        assert 1 <= len(record["annotation"]) <= 3
        for entry in record["annotation"]:
            assert set(entry) == {"question", "answer", "evidence"}
            assert isinstance(entry["question"], str) and entry["question"]
            assert isinstance(entry["answer"], str) and entry["answer"]
            assert entry["answer"].lower() not in {"yes", "no", "是", "否"}
            evidence = entry["evidence"]
            assert len(evidence) == 8
            assert all(isinstance(value, str) and value.lstrip("-").isdigit() for value in evidence)
            points = _evidence_points(evidence)
            assert all(0 <= x < demo.IMAGE_WIDTH and 0 <= y < demo.IMAGE_HEIGHT for x, y in points)
            questions.append(entry["question"])
            quads.append(points)

    assert any(_is_chinese(question) for question in questions)
    assert any(not _is_chinese(question) for question in questions)
    perspective_share = sum(not _is_axis_aligned(quad) for quad in quads) / len(quads)
    assert perspective_share >= 0.25


def test_file_is_utf8_without_escapes(generated):
    _, annotation_path = generated
    text = annotation_path.read_text(encoding="utf-8")
    assert "\\u" not in text
    assert _is_chinese(text)


def test_evidence_covers_ink_in_the_image(generated):
    """Inside every quadrilateral the pixels must vary strongly: text on a board."""
    out_dir, annotation_path = generated
    for record in json.loads(annotation_path.read_text(encoding="utf-8")):
        with Image.open(out_dir / "images" / record["image"]) as image:
            luminance = np.asarray(image.convert("L"), dtype=int)
        for entry in record["annotation"]:
            inside = _polygon_mask(_evidence_points(entry["evidence"]), image.size)
            values = luminance[inside]
            assert values.size > 50
            assert values.max() - values.min() > 80, entry


def test_same_seed_gives_identical_files(tmp_path, generated):
    first_dir, first_json = generated
    second_json = demo.generate_demo(tmp_path / "again", count=40, seed=0)
    assert first_json.read_bytes() == second_json.read_bytes()
    for name in ("stevqa_000.png", "stevqa_017.png", "stevqa_039.png"):
        assert (first_dir / "images" / name).read_bytes() == (
            tmp_path / "again" / "images" / name
        ).read_bytes()


def test_different_seed_gives_different_samples(tmp_path):
    first = demo.generate_demo(tmp_path / "first", count=4, seed=1)
    second = demo.generate_demo(tmp_path / "second", count=4, seed=2)
    assert first.read_bytes() != second.read_bytes()
    assert (tmp_path / "first" / "images" / "stevqa_000.png").read_bytes() != (
        tmp_path / "second" / "images" / "stevqa_000.png"
    ).read_bytes()


def test_generation_leaves_global_random_state_alone(tmp_path):
    random.seed(1234)
    expected = random.random()
    random.seed(1234)
    demo.generate_demo(tmp_path, count=2, seed=5)
    assert random.random() == expected


def test_quadrilateral_encloses_the_answer_ink():
    """At least 99% of each answer's ink (as warped onto the scene) lies in its quad."""
    perspective_seen = False
    for seed in range(30):
        scene = demo.compose_scene(random.Random(seed))
        assert 1 <= len(scene.questions) <= 3
        for question in scene.questions:
            ink = np.asarray(question.text_mask, dtype=float)
            assert ink.sum() > 0
            inside = _polygon_mask(list(question.evidence), scene.image.size)
            assert ink[inside].sum() / ink.sum() >= 0.99, (seed, question.answer)
            # The box should hug the text, not the whole sign.
            assert inside.sum() < 6 * np.count_nonzero(ink > 0) + 2000
            perspective_seen |= not _is_axis_aligned(question.evidence)
    assert perspective_seen


def test_homography_maps_correspondences_and_matches_pillow():
    source = [(0.0, 0.0), (200.0, 0.0), (200.0, 80.0), (0.0, 80.0)]
    target = [(30.0, 40.0), (210.0, 60.0), (205.0, 120.0), (25.0, 125.0)]
    forward = demo.solve_homography(source, target)
    assert np.allclose(demo.apply_homography(forward, source), target)

    # Pillow maps output pixels back to input ones: the coefficients must be the inverse.
    coefficients = demo.pillow_perspective_coefficients(forward)
    backward = np.append(coefficients, 1.0).reshape(3, 3)
    assert np.allclose(demo.apply_homography(backward, target), source)


def test_missing_font_names_the_debian_package(monkeypatch, tmp_path):
    missing = tmp_path / "wqy-microhei.ttc"
    monkeypatch.setattr(demo, "FONT_PACKAGES", {missing: "fonts-wqy-microhei"})
    with pytest.raises(FileNotFoundError, match="fonts-wqy-microhei"):
        demo.generate_demo(tmp_path / "out", count=1)
    assert not (tmp_path / "out").exists()
