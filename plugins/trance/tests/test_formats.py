"""TRANCE data.jsonl <-> catalog records (pure Python, no Django)."""

import copy

import orjson
import pytest

from benchmarks.records import FormatError
from plugins.trance import formats
from tests.benchmarks.builders import trance_sample as make_sample


def hand_written_samples():
    """Three samples in the official format, with extras and Chinese text in string fields."""
    first = make_sample(0)
    first["note"] = "变换：物体 2 变成青色并向后移动"  # unknown top-level field
    first["states"][0]["status"] = {"Camera_Center": ["visible"] * 10}  # raw generator per-state key
    first["states"][1]["status"] = {"Camera_Left": ["occluded"] + ["visible"] * 9}
    first["states"][0]["objects"][4]["3d_coords"] = [1.5, -2.0, 0.35]  # extra per-object key
    first["states"][1]["objects"][4]["3d_coords"] = [1.5, -2.0, 0.35]
    first["transformations"][0]["说明"] = "颜色"  # extra key on a step

    second = make_sample(1)
    second["transformations"] = [
        {
            "obj_idx": 9,
            "attr": "position",
            "val": ["front-left", 1],
            "options": [["front-left", 1], ["left", 2]],
            "type": "out",
        },
        {"obj_idx": 0, "attr": "material", "val": "glass", "options": ["glass"]},
        {"obj_idx": 5, "attr": "size", "val": "large", "options": ["large"]},
        {"obj_idx": 7, "attr": "shape", "val": "sphere", "options": ["sphere"]},
    ]
    third = make_sample(2)
    third["transformations"] = [
        {"obj_idx": 3, "attr": "position", "val": ["right", 1], "options": [["right", 1]], "type": "in"}
    ]
    return [first, second, third]


def to_jsonl(samples):
    return b"".join(orjson.dumps(sample) + b"\n" for sample in samples)


def round_trip(data):
    parsed = formats.parse(data, source="data.jsonl")
    official = [formats.to_official(record.payload, record.ground_truth) for record in parsed.records]
    written = b"".join(formats.serialize(parsed.meta, official))
    return parsed, [orjson.loads(line) for line in written.splitlines()]


def errors_of(data):
    with pytest.raises(FormatError) as caught:
        formats.parse(data, source="data.jsonl")
    return caught.value


def test_hand_written_file_round_trips():
    samples = hand_written_samples()
    parsed, written = round_trip(to_jsonl(samples))
    assert written == samples
    assert parsed.meta == {}
    assert [record.external_id for record in parsed.records] == ["0", "1", "2"]


def test_round_trip_skips_blank_lines_and_keeps_order():
    samples = hand_written_samples()
    data = b"\n" + orjson.dumps(samples[2]) + b"\n\n" + orjson.dumps(samples[0]) + b"\n"
    _, written = round_trip(data)
    assert written == [samples[2], samples[0]]


def test_payload_and_ground_truth_split():
    samples = hand_written_samples()
    record = formats.parse(to_jsonl(samples)).records[0]
    first = samples[0]

    assert set(record.payload) == {"idx", "initial", "final_images"}
    assert record.payload["idx"] == 0
    assert record.payload["final_images"] == first["states"][1]["images"]
    assert record.payload["initial"]["images"] == first["states"][0]["images"]
    # Initial objects are shown with their five known attributes only; extras stay hidden.
    assert record.payload["initial"]["objects"][4] == {
        key: first["states"][0]["objects"][4][key]
        for key in ("color", "material", "shape", "size", "position")
    }
    shown = orjson.dumps(record.payload)
    for secret in (b"transformations", b"options", b"status", b"3d_coords", "变换".encode()):
        assert secret not in shown

    assert record.ground_truth["final_objects"] == first["states"][1]["objects"]
    assert record.ground_truth["transformations"] == first["transformations"]
    assert record.ground_truth["note"] == first["note"]
    assert record.media == {
        "init.Camera_Center": "img_000000-init.C.png",
        "fin.Camera_Left": "img_000000-fin.L.png",
        "fin.Camera_Center": "img_000000-fin.C.png",
        "fin.Camera_Right": "img_000000-fin.R.png",
    }
    # A plain record has no rebuild data on the ground-truth side.
    assert set(formats.parse(to_jsonl(samples)).records[1].ground_truth) == {
        "final_objects",
        "transformations",
    }


@pytest.mark.shared
def test_real_sample_round_trips(shared_data):
    path = shared_data("trance_example/example.json")
    sample = orjson.loads(path.read_bytes())
    parsed, written = round_trip(orjson.dumps(sample) + b"\n")
    assert written == [sample]

    record = parsed.records[0]
    assert record.external_id == str(sample["idx"])
    assert record.payload["initial"]["objects"] == sample["states"][0]["objects"]
    shown = orjson.dumps(record.payload)
    assert b"transformations" not in shown
    assert b"options" not in shown
    assert "final_objects" not in record.payload
    assert sample["states"][1]["objects"] != sample["states"][0]["objects"]
    assert orjson.dumps(sample["states"][1]["objects"]) not in shown
    assert set(record.media) == {
        "init.Camera_Center",
        "fin.Camera_Left",
        "fin.Camera_Center",
        "fin.Camera_Right",
    }


def bad_file(mutate, idx=0):
    sample = make_sample(idx)
    mutate(sample)
    return to_jsonl([sample])


def only_error(error):
    assert len(error.errors) == 1, error.errors
    return error.errors[0]


def test_missing_field():
    error = only_error(errors_of(bad_file(lambda sample: sample.pop("transformations"))))
    assert (error.record, error.field, error.message) == ("line 1", "transformations", "missing field")


def test_missing_object_attribute():
    error = only_error(errors_of(bad_file(lambda sample: sample["states"][1]["objects"][6].pop("size"))))
    assert (error.record, error.field, error.message) == (
        "line 1",
        "states[1].objects[6].size",
        "missing field",
    )


def test_wrong_type():
    error = only_error(errors_of(bad_file(lambda sample: sample.update(idx="0"))))
    assert (error.record, error.field) == ("line 1", "idx")
    assert error.message == "expected an integer, got a string"


def test_object_index_out_of_range():
    def mutate(sample):
        sample["transformations"][1]["obj_idx"] = 12

    error = only_error(errors_of(bad_file(mutate)))
    assert (error.record, error.field) == ("line 1", "transformations[1].obj_idx")
    assert "object index 12 out of range" in error.message


def test_unknown_attribute_value():
    def mutate(sample):
        sample["states"][1]["objects"][3]["color"] = "pink"

    error = only_error(errors_of(bad_file(mutate)))
    assert (error.record, error.field) == ("line 1", "states[1].objects[3].color")
    assert "'pink'" in error.message
    for allowed in ("gray", "red", "blue", "green", "brown", "purple", "cyan", "yellow"):
        assert allowed in error.message


def test_unknown_transformation_values():
    def mutate(sample):
        sample["transformations"][0]["val"] = "violet"
        sample["transformations"][1]["val"] = ["upward", 2]
        sample["transformations"][1]["options"] = [["behind", 3]]
        sample["transformations"][1]["type"] = "teleport"

    found = {(error.field, error.record) for error in errors_of(bad_file(mutate)).errors}
    assert found == {
        ("transformations[0].val", "line 1"),
        ("transformations[1].val", "line 1"),
        ("transformations[1].options[0]", "line 1"),
        ("transformations[1].type", "line 1"),
    }


def test_position_step_needs_a_move_type():
    error = only_error(errors_of(bad_file(lambda sample: sample["transformations"][1].pop("type"))))
    assert (error.field, error.message) == ("transformations[1].type", "missing field")


def test_position_outside_grid():
    def mutate(sample):
        sample["states"][0]["objects"][1]["position"] = [41, 0]

    error = only_error(errors_of(bad_file(mutate)))
    assert error.field == "states[0].objects[1].position[0]"
    assert "41" in error.message


def test_wrong_number_of_objects():
    error = only_error(errors_of(bad_file(lambda sample: sample["states"][0]["objects"].pop())))
    assert (error.record, error.field) == ("line 1", "states[0].objects")
    assert error.message == "expected 10 objects, got 9"


def test_wrong_number_of_states_and_steps():
    def mutate(sample):
        sample["states"].append(copy.deepcopy(sample["states"][1]))
        sample["transformations"] = sample["transformations"] * 3

    found = {(error.field, error.message) for error in errors_of(bad_file(mutate)).errors}
    assert found == {
        ("states", "expected 2 states (initial and final), got 3"),
        ("transformations", "expected 1 to 4 steps, got 6"),
    }


def test_reserved_top_level_name_is_refused():
    error = only_error(errors_of(bad_file(lambda sample: sample.update(final_objects=[]))))
    assert error.field == "final_objects"


def test_invalid_json_names_its_line():
    data = (
        to_jsonl([make_sample(0)]) + b'{"idx": 1, "states": [\n' + to_jsonl([make_sample(2)]) + b"not json\n"
    )
    error = errors_of(data)
    assert [record.record for record in error.errors] == ["line 2", "line 4"]
    assert all("not valid JSON" in record.message for record in error.errors)


def test_duplicate_ids():
    error = only_error(errors_of(to_jsonl([make_sample(0), make_sample(1), make_sample(0)])))
    assert (error.record, error.field) == ("line 3", "idx")
    assert "duplicate id '0' (first at line 1)" in error.message


def test_every_bad_record_is_listed():
    samples = [make_sample(index) for index in range(5)]
    samples[0]["states"][1]["objects"][3]["material"] = "wood"
    samples[2]["transformations"][0]["obj_idx"] = -1
    samples[2]["states"][0]["objects"] = samples[2]["states"][0]["objects"][:8]
    samples[3] = ["not", "a", "record"]
    error = errors_of(to_jsonl(samples))
    found = {(record.record, record.field) for record in error.errors}
    assert found == {
        ("line 1", "states[1].objects[3].material"),
        ("line 3", "transformations[0].obj_idx"),
        ("line 3", "states[0].objects"),
        ("line 4", "record"),
    }
    message = str(error)
    assert "4 problems in 3 records" in message
    assert "data.jsonl" in message
    for label in ("line 1", "line 3", "line 4"):
        assert label in message


def test_read_samples_checks_like_parse_without_catalog_records():
    samples = hand_written_samples()
    assert formats.read_samples(to_jsonl(samples)) == samples
    bad = to_jsonl([make_sample(0), make_sample(1), make_sample(0)])
    broken = make_sample(2)
    broken["transformations"][0]["obj_idx"] = 10
    for data in (bad, to_jsonl([broken])):
        with pytest.raises(FormatError) as from_parse:
            formats.parse(data)
        with pytest.raises(FormatError) as from_read:
            formats.read_samples(data)
        assert [str(e) for e in from_read.value.errors] == [str(e) for e in from_parse.value.errors]
