"""Tests for reading the text inside an evidence quadrilateral (pure Python, no database).

The images are the demo street scenes of plugins.stevqa.demo: real rendered signs, English
and Chinese, some in perspective, each answer with the quadrilateral around its text.
"""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest
from PIL import Image

from plugins.stevqa import demo
from plugins.stevqa import evidence as ocr
from plugins.stevqa.formats import language

pytestmark = pytest.mark.skipif(
    not (demo.CHINESE_FONT_PATH.is_file() and demo.ENGLISH_FONT_PATH.is_file()),
    reason="scene-text fonts missing: install fonts-wqy-microhei and fonts-dejavu-core",
)


@pytest.fixture(scope="module")
def signs(tmp_path_factory):
    """(image path, answer, evidence as 8 floats) of every QA pair on 6 demo images."""
    folder = tmp_path_factory.mktemp("ocr-signs")
    records = json.loads(demo.generate_demo(folder, count=6, seed=1).read_text(encoding="utf-8"))
    return [
        (
            folder / demo.IMAGES_FOLDER_NAME / record["image"],
            pair["answer"],
            [float(v) for v in pair["evidence"]],
        )
        for record in records
        for pair in record["annotation"]
    ]


def test_each_sign_reads_close_to_its_own_answer_in_both_languages(signs):
    by_language = {"en": [], "ch": []}
    for path, answer, evidence in signs:
        by_language[language(answer)].append((path, answer, evidence))
    assert len(by_language["en"]) >= 2 and len(by_language["ch"]) >= 2
    for path, answer, evidence in by_language["en"][:3] + by_language["ch"][:3]:
        reading = ocr.check_answer(path, evidence, answer)
        assert reading.text, f"nothing read for {answer!r}"
        assert reading.similarity >= ocr.THRESHOLD, (answer, reading)
        assert not reading.far
        assert 0 < reading.seconds < 10


def test_a_wrong_answer_is_far_from_what_the_sign_says(signs):
    english = next(sign for sign in signs if language(sign[1]) == "en")
    chinese = next(sign for sign in signs if language(sign[1]) == "ch")
    for (path, answer, evidence), wrong in ((english, "PHARMACY"), (chinese, "银行")):
        reading = ocr.check_answer(path, evidence, wrong)
        assert reading.similarity < ocr.THRESHOLD, (answer, wrong, reading)
        assert reading.far
        # The text itself is still what the sign says: the answer only changes the comparison.
        assert ocr.similarity(answer, reading.text) >= ocr.THRESHOLD


def test_a_quadrilateral_over_empty_background_reads_nothing(signs):
    path, answer, _ = signs[0]
    gray = np.asarray(Image.open(path).convert("L"), dtype=float)
    # The flattest 160 x 40 window of the scene: sky, wall or pavement, no sign.
    _, x, y = min(
        (gray[top : top + 40, left : left + 160].std(), left, top)
        for top in range(0, gray.shape[0] - 40, 10)
        for left in range(0, gray.shape[1] - 160, 10)
    )
    reading = ocr.check_answer(path, [x, y, x + 160, y, x + 160, y + 40, x, y + 40], answer)
    assert reading.text == ""
    assert reading.similarity == 0.0 and reading.far


def test_the_corner_order_the_annotator_drew_in_does_not_matter(signs):
    path, answer, evidence = next(sign for sign in signs if language(sign[1]) == "en")
    corners = [evidence[index : index + 2] for index in range(0, 8, 2)]
    # Counter-clockwise, starting at the bottom-right corner.
    reordered = [value for corner in (corners[2], corners[1], corners[0], corners[3]) for value in corner]
    assert ocr.similarity(answer, ocr.read_quad(path, reordered)) >= ocr.THRESHOLD


def test_a_pil_image_reads_like_its_file(signs):
    path, answer, evidence = next(sign for sign in signs if language(sign[1]) == "ch")
    with Image.open(path) as image:
        assert ocr.read_quad(image, evidence) == ocr.read_quad(str(path), evidence)


@pytest.mark.parametrize("evidence", [[1, 2, 3], [0, 0, 10, 0, 10, 10, 0, float("nan")], None, ["a"] * 8])
def test_bad_evidence_is_a_value_error(evidence):
    with pytest.raises(ValueError):
        ocr.read_quad(Image.new("RGB", (100, 50)), evidence)


@pytest.mark.parametrize(
    "evidence",
    [[200, 200, 300, 200, 300, 250, 200, 250], [10, 10, 10.5, 10, 10.5, 10.5, 10, 10.5]],
)
def test_a_quadrilateral_off_the_image_or_under_a_pixel_reads_nothing(evidence):
    assert ocr.read_quad(Image.new("RGB", (100, 50), "white"), evidence) == ""


@pytest.mark.parametrize(
    ("answer", "text", "expected"),
    [
        ("GOLDEN BAKERY", "golden bakery", 1.0),
        ("GOLDEN BAKERY", "GOLDENBAKERY", 1.0),  # spaces do not count
        ("东风路", "东 风 路", 1.0),
        ("ＡＣＥ　ＳＨＯＥＳ", "ACE SHOES", 1.0),  # full width
        ("STOP", "", 0.0),
        ("银行", "东风路", 0.0),
        ("$7.75", "$2.75", 0.8),
    ],
)
def test_similarity(answer, text, expected):
    assert ocr.similarity(answer, text) == pytest.approx(expected)


def test_the_engine_is_made_once_even_when_threads_race(monkeypatch):
    import rapidocr_onnxruntime

    made = []

    class SlowEngine:
        def __init__(self, **options):
            time.sleep(0.05)
            made.append(options)

    monkeypatch.setattr(rapidocr_onnxruntime, "RapidOCR", SlowEngine)
    monkeypatch.setattr(ocr, "_engine", None)
    engines = []
    threads = [threading.Thread(target=lambda: engines.append(ocr.engine())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 1 and len(engines) == 8
    assert all(engine is engines[0] for engine in engines)
    assert made[0]["intra_op_num_threads"] == ocr.THREADS
