"""STE-VQA official files <-> catalog records (pure Python, no Django)."""

import orjson
import pytest

from benchmarks.records import FormatError
from plugins.stevqa import formats


def make_questions():
    return [
        {
            "question_id": 0,
            "question": "这家店的名字是什么?",
            "answer": "禾不锈钢",
            "evidence": ["53", "680", "50", "727", "415", "711", "414", "661"],
        },
        {
            "question_id": 1,
            "question": "What is the name of the shop?",
            "answer": "KFC",
            "evidence": ["10", "20", "110", "20", "110", "60", "10", "60"],
            "source": "网络",  # unknown field
        },
        {
            "question_id": 2,
            "question": "What number is on the bus?",
            "answer": "42",
            "evidence": [1, 2, 3, 4.5, 5, 6, 7, 8],
        },
    ]


def train_images():
    return [
        {
            "id": 7,
            "image": "train_000007.jpg",
            "annotation": [
                {
                    "question": "店名是什么?",
                    "answer": "小颜家电维修",
                    "evidence": ["1", "2", "3", "4", "5", "6", "7", "8"],
                },
                {
                    "question": "What is the phone number?",
                    "answer": "12345",
                    "evidence": ["9", "8", "7", "6", "5", "4", "3", "2"],
                },
            ],
        },
        {"id": 8, "image": "train_000008.jpg", "annotation": [], "城市": "北京"},
    ]


def dumps(value):
    return orjson.dumps(value, option=orjson.OPT_INDENT_2)


def round_trip(data):
    parsed = formats.parse(data, source="gt.json")
    official = [formats.to_official(record.payload, record.ground_truth) for record in parsed.records]
    return parsed, orjson.loads(b"".join(formats.serialize(parsed.meta, official)))


def errors_of(data):
    with pytest.raises(FormatError) as caught:
        formats.parse(data, source="gt.json")
    return caught.value


def only_error(error):
    assert len(error.errors) == 1, error.errors
    return error.errors[0]


def test_test_layout_round_trips():
    questions = make_questions()
    parsed, written = round_trip(dumps(questions))
    assert parsed.meta == {"layout": "test"}
    assert written == questions
    first = parsed.records[0]
    assert first.external_id == "0"
    assert first.payload == {"question_id": 0, "question": "这家店的名字是什么?"}
    assert set(first.ground_truth) == {"answer", "evidence"}
    assert parsed.records[1].ground_truth["source"] == "网络"


def test_train_layout_round_trips():
    images = train_images()
    parsed, written = round_trip(dumps(images))
    assert parsed.meta == {"layout": "train"}
    assert written == images
    first = parsed.records[0]
    assert first.external_id == "7"
    assert first.media == {"image": "train_000007.jpg"}
    assert first.payload["questions"] == ["店名是什么?", "What is the phone number?"]
    assert b"12345" not in orjson.dumps(first.payload)


@pytest.mark.shared
def test_real_sample_round_trips(shared_data):
    path = shared_data("estvqa_sample/gt_sample.json")
    original = orjson.loads(path.read_bytes())
    parsed, written = round_trip(path.read_bytes())
    assert written == original
    assert len(parsed.records) == len(original)
    assert any(formats.is_chinese(record.payload["question"]) for record in parsed.records)
    assert all("answer" not in record.payload for record in parsed.records)


def test_evidence_of_seven_numbers():
    questions = make_questions()
    questions[0]["evidence"] = questions[0]["evidence"][:7]
    error = only_error(errors_of(dumps(questions)))
    assert (error.record, error.field) == ("record 0", "evidence")
    assert "8 numbers" in error.message and "got 7" in error.message


def test_non_numeric_coordinate():
    questions = make_questions()
    questions[1]["evidence"][2] = "abc"
    error = only_error(errors_of(dumps(questions)))
    assert (error.record, error.field) == ("record 1", "evidence[2]")
    assert "'abc'" in error.message


def test_missing_answer():
    questions = make_questions()
    del questions[2]["answer"]
    error = only_error(errors_of(dumps(questions)))
    assert (error.record, error.field, error.message) == ("record 2", "answer", "missing field")


def test_missing_answer_in_training_file():
    images = train_images()
    del images[0]["annotation"][1]["answer"]
    error = only_error(errors_of(dumps(images)))
    assert (error.record, error.field) == ("record 0", "annotation[1].answer")


def test_every_bad_record_is_listed_and_duplicates_caught():
    questions = make_questions() + [dict(make_questions()[0])]
    questions[0]["evidence"] = ["1"] * 7
    del questions[2]["answer"]
    error = errors_of(dumps(questions))
    assert {(record.record, record.field) for record in error.errors} == {
        ("record 0", "evidence"),
        ("record 2", "answer"),
    }
    questions[0]["evidence"] = ["1"] * 8
    questions[2]["answer"] = "42"
    error = only_error(errors_of(dumps(questions)))
    assert (error.record, error.field) == ("record 3", "question_id")


def test_invalid_json_names_its_line():
    error = only_error(errors_of(b'[\n {"question_id": 0,\n  "question": "?"\n  "answer": "a"}\n]'))
    assert error.record == "line 4"
