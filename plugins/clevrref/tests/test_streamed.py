"""CLEVR-Ref+ scored from files open for reading, a record at a time: the same summary, rows and
problems as from the files' bytes and as `score`, the same error for every faulty file, and the
quicker mask arithmetic giving the released scorer's pixels exactly (pure, no database)."""

from __future__ import annotations

import io
import json
import random

import numpy as np
import orjson
import pytest

from benchmarks import records
from benchmarks.records import FormatError
from plugins.clevrref import expressions
from plugins.clevrref import metric as clevrref
from plugins.clevrref.metric import FULL_RESOLUTION
from plugins.clevrref.scenes import decode_mask, encode_mask

VARIANTS = ("official", FULL_RESOLUTION)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """Six generated images, eight expressions each, a fifth of them false premises."""
    files = expressions.generate(
        tmp_path_factory.mktemp("clevrref"),
        images=6,
        seed=11,
        expressions_per_image=8,
        false_premise_share=0.2,
    )
    refexps = orjson.loads(files.refexps_file.read_bytes())
    scenes = orjson.loads(files.scenes_file.read_bytes())
    return refexps, scenes


def referred_mask(scene: dict, objects: list[int]) -> np.ndarray:
    mask = np.zeros((320, 480), dtype=bool)
    for index in objects:
        mask |= decode_mask(scene["obj_mask"][str(index + 1)])
    return mask


def region(scene: dict, objects: list[int], rng: random.Random, *, grid: bool) -> dict:
    """A box and a mask for `objects`, moved by a pixel or two, the mask on the released grid
    (mask_size [320, 320]) when `grid`."""
    mask = np.roll(referred_mask(scene, objects), rng.randint(-2, 2), axis=1)
    answer: dict = {}
    if grid:
        answer.update(mask=encode_mask(clevrref.released_mask(mask)), mask_size=[320, 320])
    else:
        # Commas, and now and then spaces: both the quick and the general reading of runs.
        text = encode_mask(mask)
        answer["mask"] = text.replace(",", " ") if rng.random() < 0.2 else text
    if objects:
        x, y, w, h = scene["obj_bbox"][str(objects[0] + 1)]
        answer["box"] = [x + rng.randint(-3, 3), y, w if rng.random() < 0.9 else 0, h]
    return answer


def predictions_for(refexps: list[dict], scenes: list[dict], *, variant: str, seed: int) -> list[dict]:
    """A prediction for most expressions: boxes (some with no area), masks at full resolution or
    on the grid, per-step predictions for some, none for some; two for no expression."""
    rng = random.Random(seed)
    by_image = {scene["image_index"]: scene for scene in scenes}
    predictions = []
    for refexp in refexps:
        roll = rng.random()
        if roll < 0.1:
            continue
        scene = by_image[refexp["image_index"]]
        grid = variant == "official" and rng.random() < 0.3
        prediction = {"refexp_index": refexp["refexp_index"]}
        if roll < 0.15:
            prediction["box"] = [0, 0, 0, 0]  # names nothing: right for a false premise
        else:
            prediction.update(region(scene, refexp["program"][-1]["_output"], rng, grid=grid))
        if rng.random() < 0.3:
            steps = []
            for step in refexp["program"]:
                output = step["_output"]
                objects = [output] if isinstance(output, int) else output
                steps.append(region(scene, objects, rng, grid=grid) if rng.random() < 0.7 else None)
            prediction["steps"] = steps
        predictions.append(prediction)
    predictions.append({"refexp_index": 9001, "box": [1, 2, 3, 4]})
    predictions.append({"refexp_index": 9002})
    return predictions


def files_of(refexps, scenes, predictions) -> tuple[bytes, bytes, bytes]:
    """The three files, written with indents and line breaks."""
    return (
        json.dumps(refexps, indent=1).encode(),
        json.dumps(scenes, indent=2).encode(),
        json.dumps(predictions, indent=1).encode(),
    )


@pytest.fixture
def small_chunks(monkeypatch):
    """Streamed files read 97 bytes at a time: every record boundary falls somewhere awkward."""
    monkeypatch.setattr(records.streaming, "STREAM_CHUNK", 97)


def streamed(data: tuple[bytes, bytes, bytes], **options) -> clevrref.Scored:
    return clevrref.score_file(*(io.BytesIO(part) for part in data), **options)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("order", ["expressions", "shuffled"])
def test_open_files_give_what_the_bytes_and_score_give(generated, small_chunks, variant, order):
    refexps, scenes = generated
    predictions = predictions_for(refexps["refexps"], scenes["scenes"], variant=variant, seed=4)
    if order == "shuffled":
        random.Random(2).shuffle(predictions)
    data = files_of(refexps, scenes, predictions)
    whole = clevrref.score_file(*data, variant=variant)
    from_streams = streamed(data, variant=variant)
    in_memory = clevrref.score(refexps, scenes, predictions, variant=variant)
    for result in (from_streams, in_memory):
        assert result.summary == whole.summary
        assert result.items == whole.items
        assert result.problems == whole.problems
        assert result.params == whole.params
    # The data reach every path the metric has.
    summary = whole.summary
    assert summary["missing_predictions"] > 0 and summary["extra_predictions"] == 2
    assert summary["false_premise"]["n"] > 0 and summary["by_step"]["type"]
    assert 0 < summary["overall"]["detection_accuracy"] < 1
    assert any("zero or negative width" in problem for problem in whole.problems)


def test_some_files_open_and_some_as_bytes(generated):
    refexps, scenes = generated
    predictions = predictions_for(refexps["refexps"], scenes["scenes"], variant="official", seed=5)
    data = files_of(refexps, scenes, predictions)
    whole = clevrref.score_file(*data)
    mixed = clevrref.score_file(data[0], io.BytesIO(data[1]), data[2])
    assert (mixed.summary, mixed.items, mixed.problems) == (whole.summary, whole.items, whole.problems)


def test_the_spec_hands_the_metric_open_files(generated, tmp_path):
    from benchmarks.spec import ScoringFiles
    from plugins.clevrref.spec import SPEC

    refexps, scenes = generated
    predictions = predictions_for(refexps["refexps"], scenes["scenes"], variant="official", seed=6)
    data = files_of(refexps, scenes, predictions)
    assert SPEC.scores_streamed_files
    whole = SPEC.score_files(ScoringFiles(ground_truth=data[0], scenes=data[1], predictions=data[2]))
    opened = SPEC.score_files(
        ScoringFiles(
            ground_truth=io.BytesIO(data[0]), scenes=io.BytesIO(data[1]), predictions=io.BytesIO(data[2])
        )
    )
    assert opened.summary == whole.summary and opened.items == whole.items
    with pytest.raises(ValueError, match="scenes file"):
        SPEC.score_files(ScoringFiles(ground_truth=data[0], predictions=data[2]))


def test_predictions_in_the_expressions_order_never_wait(generated):
    refexps, scenes = generated
    predictions = predictions_for(refexps["refexps"], scenes["scenes"], variant="official", seed=7)
    data = json.dumps(predictions).encode()
    joined = clevrref.StreamedPredictions(io.BytesIO(data), height=320, width=480, variant="official")
    by_index = {prediction["refexp_index"]: prediction for prediction in predictions}
    for refexp in refexps["refexps"]:
        got = joined.get(refexp["refexp_index"])
        assert (got is None) == (refexp["refexp_index"] not in by_index)
        assert not joined.waiting
    # In another order the predictions read ahead wait for their expression, and are all found.
    shuffled = list(reversed(predictions))
    joined = clevrref.StreamedPredictions(
        io.BytesIO(json.dumps(shuffled).encode()), height=320, width=480, variant="official"
    )
    first = refexps["refexps"][0]["refexp_index"]
    joined.get(first)
    assert len(joined.waiting) == len(predictions) - 1
    for refexp in refexps["refexps"][1:]:
        joined.get(refexp["refexp_index"])
    assert sorted(joined.waiting) == [9001, 9002]
    assert joined.extra({refexp["refexp_index"] for refexp in refexps["refexps"]}) == [9002, 9001]


def test_only_a_few_images_keep_their_decoded_masks(generated):
    refexps, scenes = generated
    many = []
    for copy in range(3):
        for scene in scenes["scenes"]:
            many.append(dict(scene, image_index=scene["image_index"] + 100 * copy))
    masks = clevrref.SceneMasks(many, 320, 480)
    for scene in many:
        first = masks.object_mask(scene["image_index"], 0, "test")
        assert np.array_equal(first, decode_mask(scene["obj_mask"]["1"]))
        assert len(masks.decoded) <= clevrref.DECODED_IMAGES
    assert len(many) > clevrref.DECODED_IMAGES


# --- faults: the same error from open files as from their bytes -----------------------------------


def broken(generated, what: str) -> tuple[bytes, bytes, bytes]:
    """The generated files with one kind of fault (or several, for the order of errors)."""
    refexps, scenes = json.loads(json.dumps(generated[0])), json.loads(json.dumps(generated[1]))
    predictions = predictions_for(refexps["refexps"], scenes["scenes"], variant="official", seed=8)
    data = None
    if what in ("refexp field", "several"):
        del refexps["refexps"][3]["refexp"]
        refexps["refexps"][5]["program"][0]["inputs"] = [4]
    if what == "refexp twice":
        refexps["refexps"][7]["refexp_index"] = refexps["refexps"][2]["refexp_index"]
    if what in ("scene object", "several"):
        scenes["scenes"][1]["objects"][0]["color"] = "pink"
    if what == "scene twice":
        scenes["scenes"][4]["image_index"] = 0
    if what in ("prediction box", "several"):
        predictions[2]["box"] = [1, 2, 3]
        predictions[4]["mask"] = "1,x"
    if what == "prediction twice":
        predictions[6]["refexp_index"] = predictions[1]["refexp_index"]
    if what in ("steps", "several"):
        with_steps = [prediction for prediction in predictions if "steps" in prediction]
        with_steps[0]["steps"].append(None)
        with_steps[-1]["steps"] = with_steps[-1]["steps"][:1]
    if what == "no scene":
        del scenes["scenes"][2]
    if what == "no mask":
        referred = next(refexp for refexp in refexps["refexps"] if refexp["program"][-1]["_output"])
        scene = next(scene for scene in scenes["scenes"] if scene["image_index"] == referred["image_index"])
        del scene["obj_mask"][str(referred["program"][-1]["_output"][0] + 1)]
    data = list(files_of(refexps, scenes, predictions))
    if what == "refexps a list":
        data[0] = json.dumps(refexps["refexps"]).encode()
    if what == "no refexps key":
        data[0] = json.dumps({"info": {}, "expressions": []}).encode()
    if what == "refexps an object":
        data[0] = json.dumps({"info": {}, "refexps": {"item": refexps["refexps"][0]}}).encode()
    if what == "refexps a number":
        data[0] = b'{"refexps": 3}'
    if what == "scenes a string":
        data[1] = b'{"info": {"x": [1, {"y": 2}]}, "scenes": "none"}'
    if what == "refexps cut":
        data[0] = data[0][: len(data[0]) // 2]
    if what == "scenes cut":
        data[1] = data[1][: len(data[1]) * 3 // 4]
    if what == "refexps empty":
        data[0] = b""
    if what == "scenes trailing":
        data[1] += b"\n{}"
    return tuple(data)


FAULTS = [
    "refexp field",
    "refexp twice",
    "scene object",
    "scene twice",
    "prediction box",
    "prediction twice",
    "steps",
    "no scene",
    "no mask",
    "several",
    "refexps a list",
    "no refexps key",
    "refexps an object",
    "refexps a number",
    "scenes a string",
    "refexps cut",
    "scenes cut",
    "refexps empty",
    "scenes trailing",
]


@pytest.mark.parametrize("what", FAULTS)
def test_a_faulty_file_gives_the_same_error_open_as_in_bytes(generated, small_chunks, what):
    data = broken(generated, what)
    with pytest.raises(ValueError) as whole:
        clevrref.score_file(*data)
    with pytest.raises(ValueError) as from_streams:
        streamed(data)
    assert type(from_streams.value) is type(whole.value)
    assert str(from_streams.value) == str(whole.value)
    if isinstance(whole.value, FormatError):
        assert from_streams.value.source == whole.value.source


def test_the_errors_name_record_and_field(generated):
    with pytest.raises(FormatError) as raised:
        streamed(broken(generated, "several"))
    assert raised.value.source == "refexps"
    assert [(error.record, error.field) for error in raised.value.errors] == [
        ("refexps[3]", "refexp"),
        ("refexps[5]", "program[0].inputs[0]"),
    ]
    with pytest.raises(FormatError, match=r"record 2: box: expected 4 elements") as raised:
        streamed(broken(generated, "prediction box"))
    assert "record 4: mask: expected run lengths" in str(raised.value)
    with pytest.raises(FormatError, match=r"refexp_index \d+: steps: \d+ step predictions for a program"):
        streamed(broken(generated, "steps"))
    with pytest.raises(ValueError, match=r"refexp \d+: image 2 has no scene"):
        streamed(broken(generated, "no scene"))


def test_a_cut_prediction_file_is_named_with_its_place(generated, small_chunks):
    data = list(broken(generated, "none"))
    data[2] = data[2][: len(data[2]) // 2]
    with pytest.raises(FormatError, match="not valid JSON") as whole:
        clevrref.score_file(*data)
    with pytest.raises(FormatError, match=r"after record \d+: byte \d+: not valid JSON") as from_streams:
        streamed(data)
    assert from_streams.value.source == whole.value.source == "predictions"


# --- the mask arithmetic --------------------------------------------------------------------------


def blobs(rng: np.random.Generator, height: int, width: int, count: int) -> np.ndarray:
    """A boolean mask of `count` random rectangles, some on the image's edges."""
    mask = np.zeros((height, width), dtype=bool)
    for _ in range(count):
        top, left = rng.integers(0, height), rng.integers(0, width)
        mask[top : top + rng.integers(1, height + 1), left : left + rng.integers(1, 6)] = True
    return mask


@pytest.mark.parametrize("shape", [(320, 480), (4, 6), (7, 3), (1, 9)])
def test_the_grid_in_integers_is_the_released_grid(shape):
    rng = np.random.default_rng(3)
    height, width = shape
    cases = [np.zeros(shape, dtype=bool), np.ones(shape, dtype=bool)]
    cases += [blobs(rng, height, width, count) for count in (1, 2, 5, 20) for _ in range(5)]
    cases += [rng.random(shape) < share for share in (0.1, 0.5, 0.9)]
    for mask in cases:
        assert np.array_equal(clevrref.grid_mask(mask), clevrref.released_mask(mask))
    for _ in range(20):
        masks = [blobs(rng, height, width, 3) for _ in range(rng.integers(2, 5))]
        heat = np.sum(masks, axis=0)
        for dtype in (np.uint8, np.int64):
            assert np.array_equal(clevrref.grid_mask(heat.astype(dtype)), clevrref.released_mask(heat))
    lone = np.zeros(shape, dtype=np.uint8)
    lone[-1, -1] = 4  # one pixel of heat 4: 0.75 * 4 = 3 survives, 0.25 * 4 = 1 too
    assert np.array_equal(clevrref.grid_mask(lone), clevrref.released_mask(lone))


@pytest.mark.parametrize(
    "text",
    ["0,2", "7,3", "10 1 4 1", " 3 , 2 ", "00,2", "0", "3", "0,20", "1,2,3,4,0,5", "\t5\n,1"],
)
def test_quickly_decoded_runs_are_the_decoded_mask(text):
    assert np.array_equal(clevrref.decode_runs(text, 5, 4), decode_mask(text, 5, 4))


@pytest.mark.parametrize("text", ["21", "1,x", "1.5", "99999999999999999999999", "-1,2"])
def test_runs_that_do_not_decode_raise_what_decode_mask_raises(text):
    with pytest.raises(ValueError) as quick:
        clevrref.decode_runs(text, 5, 4)
    with pytest.raises(ValueError) as general:
        decode_mask(text, 5, 4)
    assert str(quick.value) == str(general.value)


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        ("3,2", None),
        ("3 2", None),
        ("", None),
        ("007,1", None),
        ("20", None),
        ("21", "runs cover 21 pixels, more than the 5x4 image"),
        ("1,x", "expected run lengths"),
        ("1.5", "expected run lengths"),
        ("-1", "expected run lengths"),
        ("１2", "expected run lengths"),
    ],
)
def test_mask_texts_are_checked_as_before(text, fault):
    errors = records.RecordErrors()
    clevrref.check_mask_text(records.RecordChecker(errors, "record 0"), text, 4, 5)
    assert [error.message[: len(fault)] for error in errors] == ([fault] if fault else [])
