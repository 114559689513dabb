"""STE-VQA baselines: OCR tokens chosen at random, by a question-aware ranker, or by the truth.

The images are the demo street scenes of plugins.stevqa.demo, read by the real OCR engine
once for the whole module (about a second per image).
"""

from pathlib import Path

import pytest
from PIL import Image

from benchmarks.spec import ScoringFiles
from inference.baselines import RunChoices, Unit, load_baseline
from plugins.stevqa import demo as demo_data
from plugins.stevqa import metric
from plugins.stevqa.baselines import NO_EVIDENCE, RankerBaseline, SceneText, Token, question_kind
from plugins.stevqa.spec import SPEC

IMAGES = 10

pytestmark = pytest.mark.skipif(
    not (demo_data.CHINESE_FONT_PATH.is_file() and demo_data.ENGLISH_FONT_PATH.is_file()),
    reason="scene-text fonts missing: install fonts-wqy-microhei and fonts-dejavu-core",
)


def demo_units(data: Path, images: Path) -> list[Unit]:
    """The scoring units of a demo file (one per question), as the inference runner builds them."""
    return [
        Unit(
            unit.id,
            unit.part,
            unit.record,
            record.payload,
            {role: str(images / name) for role, name in record.media.items()},
        )
        for record in SPEC.formats.parse(data.read_bytes()).records
        for unit in SPEC.units(record.external_id, record.payload, record.ground_truth)
    ]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo file, its units, and a reader that has OCR'd every image once."""
    folder = tmp_path_factory.mktemp("stevqa")
    data = demo_data.generate_demo(folder, count=IMAGES, seed=1)
    units = demo_units(data, folder / demo_data.IMAGES_FOLDER_NAME)
    reader = SceneText()
    for unit in units:
        reader.tokens(unit.images["image"])
    return data, units, reader


def run(name: str, units: list[Unit], reader: SceneText | None = None, seed: int = 0) -> list[dict]:
    baseline = load_baseline(SPEC, name)
    baseline.load(units, RunChoices(seed=seed))
    if reader is not None:
        baseline.reader = reader  # the module's OCR cache: each image is read once for all tests
    predictions = []
    for batch, inputs in baseline.batches(units, 4):
        predictions += baseline.predict(batch, inputs)
    return predictions


def scored(data: Path, units: list[Unit], predictions: list[dict]) -> dict:
    written = SPEC.write_predictions(
        [(unit.id, prediction) for unit, prediction in zip(units, predictions, strict=True)]
    )
    parsed = metric.parse_predictions(written)
    assert [record["question_id"] for record in parsed] == [int(unit.id) for unit in units]
    assert all(len(record["evidence"]) == 8 for record in parsed)
    return SPEC.score_files(ScoringFiles(data.read_bytes(), written)).summary["overall"]


def test_each_image_is_read_once_for_all_its_questions_and_all_the_baselines(demo):
    _, units, reader = demo
    assert len(units) > IMAGES  # several questions share an image
    assert reader.images_read == IMAGES
    again = SceneText()
    assert [again.tokens(path) for path in sorted({unit.images["image"] for unit in units})]
    assert again.images_read == 0  # the process has read them before: no second OCR pass


def test_upper_bounds_then_ranker_then_random(demo):
    data, units, reader = demo
    results = {
        name: scored(data, units, run(name, units, reader))
        for name in ("random", "ranker", "ocr-upper-bound-1", "ocr-upper-bound")
    }
    # Combining tokens can only bring the answer closer.
    assert results["ocr-upper-bound"]["TC"] >= results["ocr-upper-bound-1"]["TC"]
    for measure in ("TC", "CLC"):
        assert (
            results["ocr-upper-bound-1"][measure] >= results["ranker"][measure] >= results["random"][measure]
        )
    # The demo signs are read well: the ranker finds nearly every answer (spaces the OCR drops
    # in Latin text cost a little TC), with the evidence on it.
    assert results["ranker"]["TC"] >= 0.8 and results["ranker"]["CLC"] >= 0.8
    assert results["random"]["TC"] <= 0.5


def test_the_random_token_repeats_with_its_seed(demo):
    _, units, reader = demo
    first, again = run("random", units, reader, seed=3), run("random", units, reader, seed=3)
    other = run("random", units, reader, seed=4)
    assert first == again
    assert first != other


def test_nothing_read_is_answered_with_an_empty_answer(tmp_path):
    blank = tmp_path / "blank.png"
    Image.new("RGB", (320, 240), (200, 200, 200)).save(blank)
    record = {
        "question_id": 7,
        "question": "What street is this?",
        "answer": "MAIN STREET",
        "evidence": ["1"] * 8,
    }
    units = [
        Unit("7", 0, record, {}, {"image": str(blank)}),
        Unit("8", 0, {**record, "question_id": 8}, {}, {}),
        Unit("9", 0, {**record, "question_id": 9}, {}, {"image": str(tmp_path / "missing.png")}),
    ]
    for name in ("random", "ranker", "ocr-upper-bound", "ocr-upper-bound-1"):
        baseline = load_baseline(SPEC, name)
        baseline.load(units, RunChoices())
        predictions = baseline.predict(units, None)
        assert [prediction["answer"] for prediction in predictions] == ["", "", ""]
        assert all(prediction["evidence"] == list(NO_EVIDENCE) for prediction in predictions)
        assert baseline.parameters()["images_missing"] == 1


def token(
    text: str, left: float, top: float, width: float = 60, height: float = 20, confidence: float = 0.99
):
    return Token(
        text, (left, top, left + width, top, left + width, top + height, left, top + height), confidence
    )


def answer(question: str, tokens: list[Token]) -> Token:
    scored = RankerBaseline(SPEC).rank(question, tokens)
    return max(scored, key=lambda pair: pair[0])[1]


def test_the_ranker_reads_the_price_on_the_item_row():
    board = [
        token("MENU", 100, 10),
        token("MUFFIN", 100, 40),
        token("$7.75", 200, 40),
        token("LATTE", 100, 70),
        token("$2.50", 200, 70),
    ]
    assert answer("What is the price of the latte?", board).text == "$2.50"
    assert answer("What is the price of the muffin?", board).text == "$7.75"


def test_the_ranker_splits_an_item_read_together_with_its_price():
    board = [
        token("价目表", 100, 10),
        token("橙子7.5元", 100, 40, width=100),
        token("猪肉46元", 100, 70, width=100),
    ]
    chosen = answer("猪肉的价格是多少?", board)
    assert chosen.text == "46元"
    # The evidence is cut to the price: its left edge moved right, its right edge kept.
    assert 130 < chosen.quad[0] < 170 and chosen.quad[2] == 200


def test_the_ranker_prefers_the_question_language_and_the_asked_kind():
    street = [
        token("东风路", 100, 40, width=90, height=36),
        token("DONGFENG RD", 100, 80, width=90, height=14),
    ]
    assert answer("这条路叫什么名字?", street).text == "东风路"
    scene = [token("GOLDEN BAKERY", 50, 20, width=300, height=40), token("MAIN STREET", 400, 100, height=24)]
    assert answer("What street is this?", scene).text == "MAIN STREET"
    assert answer("What is the name of this shop?", scene).text == "GOLDEN BAKERY"
    hours = [token("SUNRISE CAFE", 50, 20, width=300, height=40), token("OPEN7AM-10PM", 50, 70, width=120)]
    assert answer("What are the opening hours?", hours).text == "7AM-10PM"


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What is the price of the donut?", "price"),
        ("苹果的价格是多少?", "price"),
        ("这家店的营业时间是什么?", "hours"),
        ("What street is this?", "street"),
        ("这条路叫什么名字?", "street"),
        ("这家店的名字是什么?", "name"),
        ("What is written on the bus?", "other"),
    ],
)
def test_question_kinds(question, kind):
    assert question_kind(question) == kind
