"""CLEVR-Ref+ refexp and scene files <-> catalog records (pure Python, no Django)."""

import orjson
import pytest

from benchmarks.records import FormatError
from plugins.clevrref import formats

COLORS = ["gray", "red", "blue", "green", "brown", "purple", "cyan", "yellow"]


def make_program(referred=(1, 2)):
    return [
        {"type": "scene", "inputs": [], "value_inputs": [], "_output": [0, 1, 2, 3]},
        {"type": "filter_color", "inputs": [0], "value_inputs": ["red"], "_output": [1, 2]},
        {"type": "filter_ordinal", "inputs": [1], "value_inputs": ["2", "left"], "_output": list(referred)},
    ]


def make_refexp(refexp_index=0, image_index=3, **changes):
    refexp = {
        "split": "val",
        "image_filename": f"CLEVR_val_{image_index:06d}.png",
        "image_index": image_index,
        "image": f"CLEVR_val_{image_index:06d}",
        "refexp": "The second red thing from the left.",
        "program": make_program(),
        "template_filename": "one_hop.json",
        "refexp_family_index": 4,
        "refexp_index": refexp_index,
    }
    refexp.update(changes)
    return refexp


def hand_written_file():
    first = make_refexp(0)
    first["annotator_note"] = "第二个红色物体"  # unknown field, Chinese text
    second = make_refexp(1, refexp="左边第二个红色的东西")
    second["program"][0]["extra"] = {"kept": True}  # unknown field on a program step
    third = make_refexp(2, image_index=4, program=make_program(referred=[0]))
    return {
        "info": {"split": "val", "version": "1.0", "说明": "手写测试"},
        "license": "CC BY 4.0",  # unknown top-level key
        "refexps": [first, second, third],
    }


def make_object(index):
    return {
        "shape": ["cube", "sphere", "cylinder"][index % 3],
        "size": ["small", "large"][index % 2],
        "material": ["rubber", "metal"][index % 2],
        "color": COLORS[index % 8],
        "3d_coords": [0.5 * index, -1.0, 0.35],
        "rotation": 30.0 * index,
        "pixel_coords": [100 + 10 * index, 120, 11.5],
    }


def make_scene(image_index=3, count=4):
    return {
        "split": "val",
        "image_index": image_index,
        "image_filename": f"CLEVR_val_{image_index:06d}.png",
        "objects": [make_object(index) for index in range(count)],
        "relationships": {
            "left": [[other for other in range(count) if other < index] for index in range(count)],
            "right": [[other for other in range(count) if other > index] for index in range(count)],
            "front": [[] for _ in range(count)],
            "behind": [[] for _ in range(count)],
        },
        "obj_bbox": {str(index + 1): [10 * index, 20, 30, 40] for index in range(count)},
        "obj_mask": {str(index + 1): "1000 20 300 18" for index in range(count)},
    }


def hand_written_scenes():
    first = make_scene(3, 4)
    first["objects"][0]["名字"] = "方块"  # unknown per-object field
    first["directions"] = {"left": [-0.65, 0.75, 0.0]}  # unknown scene field
    return {"info": {"date": "2019", "version": "1.0"}, "scenes": [first, make_scene(4, 10)]}


def dumps(value):
    return orjson.dumps(value, option=orjson.OPT_INDENT_2)


def round_trip(data):
    parsed = formats.parse(data, source="refexps.json")
    official = [formats.to_official(record.payload, record.ground_truth) for record in parsed.records]
    return parsed, orjson.loads(b"".join(formats.serialize(parsed.meta, official)))


def errors_of(data, parse=formats.parse):
    with pytest.raises(FormatError) as caught:
        parse(data, source="refexps.json")
    return caught.value


def only_error(error):
    assert len(error.errors) == 1, error.errors
    return error.errors[0]


def test_hand_written_file_round_trips():
    document = hand_written_file()
    parsed, written = round_trip(dumps(document))
    assert written == document
    assert parsed.meta == {"info": document["info"], "license": "CC BY 4.0"}
    assert [record.external_id for record in parsed.records] == ["0", "1", "2"]
    assert [record.scene for record in parsed.records] == ["3", "3", "4"]
    assert parsed.records[0].media == {"image": "CLEVR_val_000003.png"}


def test_file_without_other_top_level_keys_round_trips():
    document = {"refexps": [make_refexp(5)]}
    parsed, written = round_trip(dumps(document))
    assert parsed.meta == {}
    assert written == document


def test_payload_hides_the_program():
    record = formats.parse(dumps(hand_written_file())).records[0]
    assert set(record.payload) == {
        "split",
        "image_filename",
        "image_index",
        "image",
        "refexp",
        "refexp_index",
    }
    assert set(record.ground_truth) == {
        "program",
        "template_filename",
        "refexp_family_index",
        "annotator_note",
    }
    assert formats.referred_objects(record.ground_truth["program"]) == [1, 2]


def test_scenes_round_trip():
    document = hand_written_scenes()
    parsed = formats.parse_scenes(dumps(document))
    assert parsed.meta == {"info": document["info"]}
    assert [(scene.external_id, scene.image) for scene in parsed.scenes] == [
        ("3", "CLEVR_val_000003.png"),
        ("4", "CLEVR_val_000004.png"),
    ]
    assert parsed.scenes[0].data == document["scenes"][0]
    written = b"".join(formats.serialize_scenes(parsed.meta, [scene.data for scene in parsed.scenes]))
    assert orjson.loads(written) == document


def refexps_file(*refexps):
    return dumps({"info": {}, "refexps": list(refexps)})


def test_missing_field():
    refexp = make_refexp()
    del refexp["refexp"]
    error = only_error(errors_of(refexps_file(refexp)))
    assert (error.record, error.field, error.message) == ("refexps[0]", "refexp", "missing field")


def test_missing_referred_objects():
    refexp = make_refexp()
    del refexp["program"][2]["_output"]
    error = only_error(errors_of(refexps_file(refexp)))
    assert (error.field, error.message) == ("program[2]._output", "missing field")


def test_wrong_types():
    refexp = make_refexp(refexp_family_index="4")
    refexp["image_index"] = "3"
    refexp["program"][1]["value_inputs"] = ["red", 2]
    refexp["program"][2]["_output"] = [1, -2]
    error = errors_of(refexps_file(make_refexp(7), refexp))
    assert {(record.record, record.field) for record in error.errors} == {
        ("refexps[1]", "image_index"),
        ("refexps[1]", "refexp_family_index"),
        ("refexps[1]", "program[1].value_inputs[1]"),
        ("refexps[1]", "program[2]._output[1]"),
    }


def test_inputs_must_refer_to_earlier_steps():
    refexp = make_refexp()
    refexp["program"][1]["inputs"] = [5]
    refexp["program"][2]["inputs"] = [2]
    error = errors_of(refexps_file(refexp))
    messages = {record.field: record.message for record in error.errors}
    assert set(messages) == {"program[1].inputs[0]", "program[2].inputs[0]"}
    assert "input 5 refers to a later step" in messages["program[1].inputs[0]"]
    assert "input 2 refers to a later step" in messages["program[2].inputs[0]"]


def test_empty_program():
    error = only_error(errors_of(refexps_file(make_refexp(program=[]))))
    assert (error.field, error.message) == ("program", "empty program")


def test_invalid_json_names_its_line():
    data = b'{"info": {},\n "refexps": [\n  {"refexp": "the cube"\n  "image_index": 3}\n]}'
    error = only_error(errors_of(data))
    assert error.record == "line 4"
    assert "not valid JSON" in error.message


def test_top_level_shape():
    assert only_error(errors_of(dumps([make_refexp()]))).field == "top level"
    error = only_error(errors_of(dumps({"info": {}})))
    assert (error.record, error.field, error.message) == ("file", "refexps", "missing field")


def test_duplicate_refexp_index():
    error = only_error(errors_of(refexps_file(make_refexp(0), make_refexp(1), make_refexp(1, image_index=4))))
    assert (error.record, error.field) == ("refexps[2]", "refexp_index")
    assert "duplicate id '1' (first at refexps[1])" in error.message


def test_every_bad_record_is_listed():
    refexps = [make_refexp(index) for index in range(5)]
    del refexps[0]["image_filename"]
    refexps[2]["program"] = "scene"
    refexps[3] = None
    refexps[4]["program"][1]["type"] = 3
    error = errors_of(refexps_file(*refexps))
    assert {(record.record, record.field) for record in error.errors} == {
        ("refexps[0]", "image_filename"),
        ("refexps[2]", "program"),
        ("refexps[3]", "record"),
        ("refexps[4]", "program[1].type"),
    }
    assert "4 problems in 4 records" in str(error)


def test_scene_errors():
    document = hand_written_scenes()
    scenes = document["scenes"]
    scenes[0]["objects"][2]["color"] = "pink"
    scenes[0]["objects"][3]["size"] = "medium"
    del scenes[0]["objects"][1]["shape"]
    scenes[1]["objects"] = scenes[1]["objects"][:9]  # relationships still name object 9
    scenes.append(make_scene(3))
    error = errors_of(dumps(document), formats.parse_scenes)
    fields = {(record.record, record.field) for record in error.errors}
    assert ("scenes[0]", "objects[2].color") in fields
    assert ("scenes[0]", "objects[3].size") in fields
    assert ("scenes[0]", "objects[1].shape") in fields
    assert ("scenes[1]", "relationships.left[9]") not in fields
    assert any(record == "scenes[1]" and field.startswith("relationships.") for record, field in fields)
    colour = next(record for record in error.errors if record.field == "objects[2].color")
    assert "'pink'" in colour.message and "yellow" in colour.message
    # scenes[2] repeats image 3, but scenes[0] was bad so it is not a duplicate of a loaded scene.
    assert ("scenes[2]", "image_index") not in fields


def test_duplicate_scenes():
    document = {"info": {}, "scenes": [make_scene(3), make_scene(3)]}
    error = only_error(errors_of(dumps(document), formats.parse_scenes))
    assert (error.record, error.field) == ("scenes[1]", "image_index")


def test_check_against_scenes():
    document = hand_written_file()
    document["refexps"][1]["program"][2]["_output"] = [1, 12]
    document["refexps"][2]["image_filename"] = "CLEVR_val_000099.png"
    document["refexps"].append(make_refexp(3, image_index=8))
    records = formats.parse(dumps(document)).records
    scenes = formats.parse_scenes(dumps(hand_written_scenes())).scenes
    errors = formats.check_against_scenes(records, scenes)
    assert [(error.record, error.field) for error in errors] == [
        ("refexp 1", "program[2]._output[1]"),
        ("refexp 2", "image_filename"),
        ("refexp 3", "image_index"),
    ]
    assert errors[0].message == "object index 12 out of range: scene 3 has 4 objects"
    assert errors[2].message == "image 8 has no scene"


def test_check_against_scenes_accepts_consistent_files():
    records = formats.parse(dumps(hand_written_file())).records
    scenes = formats.parse_scenes(dumps(hand_written_scenes())).scenes
    assert formats.check_against_scenes(records, scenes) == []
