"""Scoring from files read as they are scored (TRANCE's JSON Lines and prediction object, CRIC's
question and prediction lists): the same numbers and rows as from the whole files, every fault
still named, whatever the chunk and batch sizes."""

from __future__ import annotations

import io
import json
import random

import orjson
import pytest

from benchmarks import records
from benchmarks.records import FormatError, stream_json_object
from plugins.cric import metric as cric
from plugins.trance import metric as trance
from plugins.trance.generator import generate
from plugins.trance.tests.helpers import fake_pixel_counter
from tests.benchmarks import builders


@pytest.fixture(scope="module")
def trance_files(tmp_path_factory):
    """120 generated samples and predictions: a third right, a third wrong, some missing, two
    for unknown idx, written with spaces and line breaks in odd places."""
    folder = tmp_path_factory.mktemp("streamed")
    generate(folder, count=120, seed=5, render_images=False, pixel_counter=fake_pixel_counter)
    samples = [orjson.loads(line) for line in (folder / "data.jsonl").read_bytes().splitlines()]
    rng = random.Random(3)
    predictions = {}
    for sample in samples:
        steps = [{key: step[key] for key in ("obj_idx", "attr", "val")} for step in sample["transformations"]]
        roll = rng.random()
        if roll < 0.35:
            predictions[str(sample["idx"])] = steps
        elif roll < 0.7:
            predictions[str(sample["idx"])] = steps[::-1] + steps[:1]
        elif roll < 0.9:
            predictions[str(sample["idx"])] = []
    predictions["90001"] = []
    predictions["90002"] = [{"obj_idx": 1, "attr": "shape", "val": "cube", "options": ["cube"]}]
    (folder / "predictions.json").write_text(json.dumps(predictions, indent=1))
    return folder


@pytest.fixture
def small_pieces(monkeypatch):
    """Chunks of 97 bytes and batches of 7 samples: every boundary falls somewhere awkward."""
    monkeypatch.setattr(records.streaming, "STREAM_CHUNK", 97)
    monkeypatch.setattr(trance.streamed, "BATCH", 7)


@pytest.mark.parametrize("setting", ["event", "view"])
def test_trance_scored_from_open_files_equals_the_whole_files(trance_files, small_pieces, setting):
    data, predictions = trance_files / "data.jsonl", trance_files / "predictions.json"
    whole = trance.score_file(data.read_bytes(), predictions.read_bytes(), setting=setting)
    with data.open("rb") as gt, predictions.open("rb") as answers:
        streamed = trance.score_file(gt, answers, setting=setting)
    assert streamed.summary == whole.summary
    assert streamed.problems == whole.problems
    assert list(streamed.items) == list(whole.items)
    # View scores every sample once per final camera (the released protocol): 3 x 120 units.
    units = 360 if setting == "view" else 120
    assert whole.summary["n"] == units and 0 < whole.summary["Acc"] < 1
    assert whole.summary["extra_predictions"] == 2 and whole.summary["missing_predictions"] > 0
    # The rows are made from arrays when read, and behave as the list they stand for.
    rows = streamed.items
    assert len(rows) == units and rows[-1] == rows[units - 1] == list(rows)[-1]
    assert rows[3:6] == [rows[3], rows[4], rows[5]] and rows == list(rows)
    with pytest.raises(IndexError):
        rows[units]


def test_packed_predictions_score_as_the_parsed_steps(trance_files, small_pieces):
    samples = [orjson.loads(line) for line in (trance_files / "data.jsonl").read_bytes().splitlines()]
    data = (trance_files / "predictions.json").read_bytes()
    parsed = trance.parse_predictions(data)
    packed = trance.read_packed_predictions(io.BytesIO(data))
    assert packed.keys() == parsed.keys()
    assert all(len(packed[idx]) == 2 * len(steps) for idx, steps in parsed.items())
    assert trance.score_event(samples, packed).summary == trance.score_event(samples, parsed).summary


def test_a_streamed_prediction_object_is_cut_only_between_entries(small_pieces):
    # A value holding what looks like the start of an entry (', "12":' in a nested object) is not
    # a place to cut: the entries before it do not parse.
    document = {str(idx): [{"n": idx, str(idx + 1): [idx]}] * (idx % 3) for idx in range(60)}
    data = json.dumps(document, indent=2).encode()
    entries = list(stream_json_object(io.BytesIO(data), source="p.json", what="answers"))
    assert entries == list(document.items())
    assert list(stream_json_object(io.BytesIO(b"  { }\n"), source="p.json", what="answers")) == []


def test_a_streamed_prediction_object_of_other_keys_is_read_whole(small_pieces, monkeypatch):
    monkeypatch.setattr(records.streaming, "RECORD_LIMIT", 500)
    document = {f"key{idx}": [idx] * 5 for idx in range(80)}
    entries = list(stream_json_object(io.BytesIO(json.dumps(document).encode()), source="p", what="answers"))
    assert entries == list(document.items())


def test_broken_json_in_a_streamed_prediction_file_is_named_with_its_place(trance_files, small_pieces):
    text = (trance_files / "predictions.json").read_text()
    cut = text[: len(text) // 2] + "\n  ]]\n}"
    with (
        open(trance_files / "data.jsonl", "rb") as gt,
        pytest.raises(FormatError, match=r"line \d+: column \d+: not valid JSON") as raised,
    ):
        trance.score_file(gt, io.BytesIO(cut.encode()), setting="event", predictions_source="p.json")
    assert raised.value.source == "p.json"
    with pytest.raises(FormatError, match="expected a JSON object of sample idx"):
        trance.score_file(b"", io.BytesIO(b"[]"), setting="event")


def test_bad_streamed_predictions_are_all_named():
    data = b'{"0": [{"obj_idx": 0, "attr": "color", "val": "pink"}], "x": [], "00": [], "1": 3}'
    with pytest.raises(FormatError) as streamed:
        trance.read_packed_predictions(io.BytesIO(data))
    with pytest.raises(FormatError) as whole:
        trance.parse_predictions(data)
    assert [str(error) for error in streamed.value.errors] == [str(error) for error in whole.value.errors]
    assert len(whole.value.errors) == 4


def test_every_fault_of_a_streamed_ground_truth_is_named_and_no_number_comes_out(trance_files, small_pieces):
    lines = (trance_files / "data.jsonl").read_bytes().splitlines()
    broken_sample = orjson.loads(lines[40])
    broken_sample["states"][0]["objects"][3]["color"] = "pink"
    lines[40] = orjson.dumps(broken_sample)
    lines[60] = lines[7]  # the same idx twice
    lines[90] = b'{"idx": 5, "states": '  # JSON that breaks off, found after the bad samples
    data = b"\n".join(lines) + b"\n"
    with pytest.raises(FormatError) as raised:
        trance.score_file(io.BytesIO(data), b"{}", setting="event")
    assert [(error.record, error.field.split()[0]) for error in raised.value.errors] == [
        ("line 41", "states[0].objects[3].color"),
        ("line 61", "idx"),
        ("line 91", "column"),
    ]


def test_cric_scored_from_open_files_equals_the_whole_files(tmp_path, small_pieces):
    questions = [
        builders.cric_question(f"q{index}", image_id=index // 4, answer=["cutting", "yes", "no"][index % 3])
        for index in range(150)
    ]
    for question in questions[1::3]:
        question["question_type"] = "VerifyAtt"
    predictions = [
        {"question_id": question["question_id"], "answer": question["answer"], "object": 17}
        for question in questions[::2]
    ] + [{"question_id": "nowhere", "answer": "no"}]
    question_path, prediction_path = tmp_path / "questions.json", tmp_path / "predictions.json"
    question_path.write_text(json.dumps(questions, indent=2))
    prediction_path.write_text(json.dumps(predictions))
    whole = cric.score_file(question_path.read_bytes(), prediction_path.read_bytes())
    with question_path.open("rb") as gt, prediction_path.open("rb") as answers:
        streamed = cric.score_file(gt, answers)
    assert streamed.summary == whole.summary and streamed.items == whole.items
    assert streamed.problems == whole.problems and whole.summary["extra_predictions"] == 1
    assert whole.summary["overall"]["count"] == 150 and 0 < whole.summary["overall"]["Final"] < 1

    questions[100]["question_type"] = "CountObj"
    question_path.write_text(json.dumps(questions))
    with question_path.open("rb") as gt, pytest.raises(FormatError, match="record 100: question_type"):
        cric.score_file(gt, prediction_path.read_bytes())


@pytest.mark.parametrize("variant", ["official", "paper", "ocr", "paper-ocr"])
def test_stevqa_scored_from_open_files_equals_the_whole_files(tmp_path, small_pieces, monkeypatch, variant):
    # 150 questions, a third Chinese, most with OCR tokens; answered right, one character short,
    # with evidence, without it (no field, or null), or not at all; two answers for unknown ids.
    # Written indented and not ASCII-escaped, so 97-byte chunks also split characters in two.
    from plugins.stevqa import metric as stevqa

    rng = random.Random(11)
    questions, predictions = [], []
    for question_id in range(150):
        x, y = rng.randint(0, 300), rng.randint(0, 300)
        quad = [x, y, x + 40, y + rng.randint(-3, 3), x + 40, y + 20, x, y + 20]
        answer = rng.choice(["軟體", "牛街礼拜寺", "KFC", "city of London", "1899"])
        record = {
            "question_id": question_id,
            "question": "招牌上写了什么?" if question_id % 3 == 0 else "What is written on the sign?",
            "answer": answer,
            "evidence": [str(value) for value in quad],
        }
        if question_id % 4:
            record["ocr_tokens"] = [
                {"text": "noise", "quad": [0, 0, 5, 0, 5, 5, 0, 5]},
                {"text": answer.upper(), "quad": [value + rng.randint(-8, 8) for value in quad]},
            ]
        questions.append(record)
        roll = rng.random()
        if roll < 0.1:
            continue
        predicted = {"question_id": question_id, "answer": answer if roll < 0.6 else answer[:-1]}
        if roll < 0.75:
            predicted["evidence"] = [value + rng.randint(-12, 12) for value in quad]
        elif roll < 0.85:
            predicted["evidence"] = None
        predictions.append(predicted)
    predictions += [
        {"question_id": 9001, "answer": "exit", "evidence": None},
        {"question_id": 9002, "answer": "x"},
    ]
    rng.shuffle(predictions)
    truth_path, prediction_path = tmp_path / "gt.json", tmp_path / "pred.json"
    truth_path.write_text(json.dumps(questions, indent=2, ensure_ascii=False), encoding="utf-8")
    prediction_path.write_text(json.dumps(predictions, indent=1, ensure_ascii=False), encoding="utf-8")

    whole = stevqa.score_file(truth_path.read_bytes(), prediction_path.read_bytes(), variant=variant)
    in_memory = stevqa.score(questions, predictions, variant=variant)
    monkeypatch.setattr(stevqa, "EVIDENCE_BATCH", 7)  # evidence scored 7 pairs at a time
    with truth_path.open("rb") as gt, prediction_path.open("rb") as answers:
        streamed = stevqa.score_file(gt, answers, variant=variant)
    for other in (streamed, in_memory):
        assert other.summary == whole.summary
        assert other.problems == whole.problems
        assert list(other.items) == list(whole.items)
    summary = whole.summary
    assert summary["overall"]["count"] == 150 and 0 < summary["overall"]["CLC"] < summary["overall"]["TC"] < 1
    assert summary["extra_predictions"] == 2 and summary["missing_predictions"] > 0
    assert summary["evidence"] == "partial"
    if variant in stevqa.OCR_VARIANTS:
        assert summary["ocr"]["attached"] > 0 and summary["ocr"]["unavailable"] > 0


@pytest.mark.parametrize("variant", ["official", "full-resolution"])
def test_clevrref_scored_from_open_files_equals_the_whole_files(tmp_path, small_pieces, variant):
    from plugins.clevrref import metric as clevrref
    from plugins.clevrref.expressions import generate as generate_clevrref
    from plugins.clevrref.scenes import decode_mask, encode_mask

    files = generate_clevrref(tmp_path, images=4, seed=2, expressions_per_image=6, false_premise_share=0.2)
    refexps = orjson.loads(files.refexps_file.read_bytes())["refexps"]
    scenes = {scene["image_index"]: scene for scene in orjson.loads(files.scenes_file.read_bytes())["scenes"]}
    rng = random.Random(4)
    predictions = []
    for refexp in refexps:
        if rng.random() < 0.15:
            continue  # no prediction
        scene, referred = scenes[refexp["image_index"]], refexp["program"][-1]["_output"]
        masks = [decode_mask(scene["obj_mask"][str(index + 1)]) for index in referred]
        mask = sum(masks, start=decode_mask("0")) > 0  # the union; nothing for a false premise
        prediction = {"refexp_index": refexp["refexp_index"], "mask": encode_mask(mask[:, ::-1])}
        if referred:
            prediction["box"] = scene["obj_bbox"][str(referred[0] + 1)]
        if rng.random() < 0.3:
            prediction["steps"] = [{"mask": prediction["mask"]} for _ in refexp["program"]]
        predictions.append(prediction)
    predictions.insert(3, {"refexp_index": 777, "box": [0, 0, 4, 4]})
    predictions[5:12] = predictions[5:12][::-1]  # some predictions before their expression
    paths = [tmp_path / name for name in ("refexps.json", "scenes.json", "predictions.json")]
    paths[0].write_bytes(files.refexps_file.read_bytes())
    paths[1].write_text(json.dumps({"info": {}, "scenes": list(scenes.values())}, indent=2))
    paths[2].write_text(json.dumps(predictions, indent=1))
    whole = clevrref.score_file(*(path.read_bytes() for path in paths), variant=variant)
    with paths[0].open("rb") as gt, paths[1].open("rb") as scene_file, paths[2].open("rb") as answers:
        streamed = clevrref.score_file(gt, scene_file, answers, variant=variant)
    assert streamed.summary == whole.summary and streamed.items == whole.items
    assert streamed.problems == whole.problems
    assert whole.summary["extra_predictions"] == 1 and whole.summary["missing_predictions"] > 0
    assert whole.summary["false_premise"]["n"] > 0 and whole.summary["by_step"]["type"]
