"""CRIC question files and scene graphs <-> catalog records (pure Python, no Django)."""

import orjson
import pytest

from benchmarks.records import FormatError
from plugins.cric import formats
from tests.benchmarks import builders
from tests.benchmarks.builders import cric_question as make_question
from tests.benchmarks.builders import cric_scene as make_scene


def hand_written_questions():
    """The shared hand-written questions, with unknown fields nested deeper and optional keys absent."""
    first, second, third = builders.cric_questions()
    first["program"][1]["注释"] = "找到桌子"  # unknown field on a program step
    first["sub_graph"]["source"] = "ConceptNet 5"  # unknown field inside sub_graph
    del third["sub_graph"]  # optional keys may be absent
    del third["wrong_part"]
    return [first, second, third]


def hand_written_scenes():
    first = make_scene()
    first["objects"][1]["names"] = ["knife", "刀"]
    first["objects"][1]["synsets"] = ["knife.n.01"]  # unknown per-object field
    first["url"] = "https://example.org/3.jpg"  # unknown top-level field
    second = make_scene(4, (40, 41))
    second["file_name"] = "VG_100K/4.jpg"
    return [first, second]


def dumps(value):
    return orjson.dumps(value, option=orjson.OPT_INDENT_2)


def round_trip(data):
    parsed = formats.parse(data, source="val_questions.json")
    official = [formats.to_official(record.payload, record.ground_truth) for record in parsed.records]
    return parsed, orjson.loads(b"".join(formats.serialize(parsed.meta, official)))


def errors_of(data, parse=formats.parse):
    with pytest.raises(FormatError) as caught:
        parse(data, source="val_questions.json")
    return caught.value


def only_error(error):
    assert len(error.errors) == 1, error.errors
    return error.errors[0]


def test_hand_written_questions_round_trip():
    questions = hand_written_questions()
    parsed, written = round_trip(dumps(questions))
    assert written == questions
    assert [record.external_id for record in parsed.records] == ["q1", "q2", "q3"]
    assert [record.scene for record in parsed.records] == ["3", "3", "4"]


def test_payload_holds_only_what_testers_see():
    record = formats.parse(dumps(hand_written_questions())).records[0]
    assert record.payload == {
        "image_id": 3,
        "question_id": "q1",
        "question": "What is the object on the table used for?",
        "question_type": "QueryObjKG",
    }
    assert set(record.ground_truth) == {
        "answer",
        "target",
        "program",
        "sub_graph",
        "wrong_part",
        "difficulty",
    }


def test_hand_written_scenes_round_trip():
    scenes = hand_written_scenes()
    parsed = formats.parse_scenes(dumps(scenes))
    assert [scene.external_id for scene in parsed.scenes] == ["3", "4"]
    assert [scene.image for scene in parsed.scenes] == ["3.jpg", "VG_100K/4.jpg"]
    assert parsed.scenes[0].data == scenes[0]
    written = b"".join(formats.serialize_scenes(parsed.meta, [scene.data for scene in parsed.scenes]))
    assert orjson.loads(written) == scenes


def test_missing_field():
    question = make_question()
    del question["answer"]
    error = only_error(errors_of(dumps([question])))
    assert (error.record, error.field, error.message) == ("record 0", "answer", "missing field")


def test_wrong_types():
    questions = [
        make_question("q1", image_id="3"),
        make_question("q2", target=[17, "18"]),
        make_question("q3", wrong_part=["color"]),
        make_question("q4", sub_graph={"relations": {}, "knowledge_items": [{"triplet": ["a", "b"]}]}),
    ]
    questions[0]["program"][2]["output"] = 17
    found = {(error.record, error.field) for error in errors_of(dumps(questions)).errors}
    assert found == {
        ("record 0", "image_id"),
        ("record 0", "program[2].output"),
        ("record 1", "target[1]"),
        ("record 2", "wrong_part"),
        ("record 3", "sub_graph.relations"),
        ("record 3", "sub_graph.knowledge_items[0].triplet"),
    }


def test_unknown_question_type_and_function():
    question = make_question(question_type="CountObj")
    question["program"][1]["function"] = "Count"
    error = errors_of(dumps([question]))
    messages = {record.field: record.message for record in error.errors}
    assert set(messages) == {"question_type", "program[1].function"}
    assert "'CountObj'" in messages["question_type"] and "VerifyKG" in messages["question_type"]
    assert (
        "'Count'" in messages["program[1].function"] and "Find KG Reverse" in messages["program[1].function"]
    )


def test_invalid_json_names_its_line():
    data = b'[\n  {"image_id": 1,\n   "question_id": "q1",,\n  }\n]'
    error = only_error(errors_of(data))
    assert error.record == "line 3"
    assert "not valid JSON" in error.message


def test_top_level_must_be_a_list():
    error = only_error(errors_of(dumps({"questions": []})))
    assert (error.record, error.field) == ("file", "top level")


def test_duplicate_question_ids():
    error = only_error(errors_of(dumps([make_question("q1"), make_question("q2"), make_question("q1")])))
    assert (error.record, error.field) == ("record 2", "question_id")
    assert "duplicate id 'q1' (first at record 0)" in error.message


def test_every_bad_record_is_listed():
    questions = [make_question(f"q{index}") for index in range(6)]
    del questions[1]["question"]
    questions[3]["program"] = "Find"
    questions[4] = "not a question"
    questions[5]["question_type"] = None
    error = errors_of(dumps(questions))
    assert {(record.record, record.field) for record in error.errors} == {
        ("record 1", "question"),
        ("record 3", "program"),
        ("record 4", "record"),
        ("record 5", "question_type"),
    }
    assert "4 problems in 4 records" in str(error)


def test_scene_errors():
    scenes = [make_scene(3), make_scene(4, (5, 6, 5)), make_scene(7), make_scene(7)]
    del scenes[0]["objects"][1]["object_id"]
    scenes[0]["objects"][2]["names"] = "knife"
    scenes[1]["relationships"][0]["predicate"] = 7
    error = errors_of(dumps(scenes), formats.parse_scenes)
    assert {(record.record, record.field) for record in error.errors} == {
        ("record 0", "objects[1].object_id"),
        ("record 0", "objects[2].names"),
        ("record 1", "objects[2].object_id"),
        ("record 1", "relationships[0].predicate"),
        ("record 3", "image_id"),
    }


def test_painted_text_regions_are_four_numbers_each():
    """Yardstick's demo lists the names it paints on each picture (`text_regions`, [x, y, w, h]):
    kept as given, and a malformed one is named by record and field."""
    good, bad = make_scene(3), make_scene(4)
    good["text_regions"] = [[10, 20, 30.5, 12]]
    bad["text_regions"] = [[10, 20, 30], "label", [1, 2, 3, True]]
    parsed = formats.parse_scenes(dumps([good]))
    assert parsed.scenes[0].data["text_regions"] == [[10, 20, 30.5, 12]]
    error = errors_of(dumps([good, bad]), formats.parse_scenes)
    assert {(record.record, record.field) for record in error.errors} == {
        ("record 1", "text_regions[0]"),
        ("record 1", "text_regions[1]"),
        ("record 1", "text_regions[2]"),
    }


def test_check_against_scenes():
    questions = hand_written_questions()
    questions[1]["target"] = [17, 99]
    questions[1]["program"][1]["output"] = [98]
    questions.append(make_question("q4", image_id=5))
    records = formats.parse(dumps(questions)).records
    scenes = formats.parse_scenes(dumps(hand_written_scenes())).scenes
    errors = formats.check_against_scenes(records, scenes)
    assert [(error.record, error.field, error.message) for error in errors] == [
        ("question q2", "target[1]", "object id 99 is not in image 3's scene graph"),
        ("question q2", "program[1].output[0]", "object id 98 is not in image 3's scene graph"),
        ("question q4", "image_id", "image 5 has no scene graph"),
    ]


def test_check_against_scenes_accepts_consistent_files():
    records = formats.parse(dumps(hand_written_questions())).records
    scenes = formats.parse_scenes(dumps(hand_written_scenes())).scenes
    assert formats.check_against_scenes(records, scenes) == []
