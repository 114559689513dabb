"""Imports read from an open file one record at a time (CRIC's JSON list, TRANCE's JSON Lines):
the same items as from the whole file, every fault still reported, and nothing left behind."""

import io
import json

import orjson
import pytest

from benchmarks.models import Dataset, Item
from benchmarks.records import FormatError
from benchmarks.services import ImportRefused, import_dataset
from tests.benchmarks import builders

pytestmark = pytest.mark.django_db


def item_rows(dataset):
    return list(dataset.items.order_by("position").values_list("external_id", "payload", "ground_truth"))


def test_a_streamed_import_makes_the_same_items_as_the_whole_file(tmp_path):
    questions = [builders.cric_question(f"q{index}", image_id=index // 3) for index in range(2500)]
    path = tmp_path / "questions.json"
    path.write_bytes(orjson.dumps(questions, option=orjson.OPT_INDENT_2))
    with path.open("rb") as stream:
        streamed = import_dataset(benchmark="cric", data=stream, name="streamed", source=path.name)
    whole = import_dataset(benchmark="cric", data=path.read_bytes(), name="whole", source=path.name)
    assert (streamed.item_count, streamed.unit_count) == (whole.item_count, whole.unit_count) == (2500, 2500)
    assert item_rows(streamed) == item_rows(whole)

    lines = tmp_path / "data.jsonl"
    lines.write_text("".join(json.dumps(builders.trance_sample(idx)) + "\n\n" for idx in range(5)))
    with lines.open("rb") as stream:
        samples = import_dataset(benchmark="trance", data=stream, name="streamed")
    assert samples.item_count == 5 and [row[0] for row in item_rows(samples)] == ["0", "1", "2", "3", "4"]


def test_a_fault_anywhere_in_a_streamed_file_names_the_record_and_loads_nothing():
    questions = [builders.cric_question(f"q{index}") for index in range(3000)]
    questions[1500]["question_type"] = "CountObj"
    questions.append(builders.cric_question("q7"))
    with pytest.raises(FormatError) as raised:
        import_dataset(benchmark="cric", data=io.BytesIO(orjson.dumps(questions)), name="bad")
    assert [str(error) for error in raised.value.errors] == [
        "record 1500: question_type: unknown value 'CountObj' (expected one of QueryAtt, QueryObjKG, "
        "QueryObjSG, VerifyAtt, VerifyKG)",
        "record 3000: question_id: duplicate id 'q7' (first at record 7)",
    ]
    # JSON that breaks off after thousands of records written: rolled back, the place named.
    cut = orjson.dumps(questions[:1400])[:-40]
    with pytest.raises(FormatError) as raised:
        import_dataset(benchmark="cric", data=io.BytesIO(cut), name="cut", source="cut.json")
    (error,) = raised.value.errors
    assert error.record.startswith("after record 13") and "not valid JSON" in str(error)
    with pytest.raises(FormatError, match="expected a JSON list of CRIC questions"):
        import_dataset(benchmark="cric", data=io.BytesIO(b'  {"questions": []}'), name="object")
    with pytest.raises(ImportRefused, match="empty.json holds no records"):
        import_dataset(benchmark="cric", data=io.BytesIO(b"[ ]"), name="empty", source="empty.json")
    bad_lines = b'{"idx": 0}\nnot json\n{"idx": 1}\n{also not}\n'
    with pytest.raises(FormatError) as raised:
        import_dataset(benchmark="trance", data=io.BytesIO(bad_lines), name="lines")
    assert [error.record for error in raised.value.errors] == ["line 2", "line 4"]
    assert not Dataset.objects.exists() and not Item.objects.exists()


TRICKY = [
    {
        "question_id": "a",
        "question": 'braces "},{\\"question_id\\": in a string',
        "program": [{"x": 1}, {"y": [2]}],
    },
    {"question_id": "b", "nested": {"question_id": "not a record"}, "list": [{"z": "}],"}]},
    {"other_first": 1, "question_id": "c", "unicode": "题目 \\u2603 \\n"},
    {"question_id": "d", "empty": {}, "floats": [1.5, -2e-3, 1e300]},
    # "}," then the first key inside a record: where the quick search stops first, and must not cut.
    {"question_id": "e", "steps": [{"k": 1}, {"question_id": "inner"}], "after": [{"question_id": 2}]},
    {"question_id": "f"},
]


@pytest.mark.parametrize("indent", [False, True], ids=["compact", "indented"])
@pytest.mark.parametrize("chunk", [7, 64, 1 << 20])
def test_a_list_of_objects_is_cut_only_where_an_element_ends(monkeypatch, indent, chunk):
    from benchmarks import records

    monkeypatch.setattr(records.streaming, "STREAM_CHUNK", chunk)
    document = orjson.dumps(TRICKY, option=orjson.OPT_INDENT_2 if indent else 0)
    read = [value for _, value in records.stream_json_list(io.BytesIO(document), source="s", what="w")]
    assert read == orjson.loads(document)
    # A first key that changes (record c) is still found once the keyed search gives up.
    monkeypatch.setattr(records.streaming, "KEYED_SPLIT_LIMIT", 8)
    read = [value for _, value in records.stream_json_list(io.BytesIO(document), source="s", what="w")]
    assert read == orjson.loads(document)


def test_lists_of_other_values_and_broken_lists_are_reported():
    from benchmarks.records import stream_json_list

    def read(data: bytes):
        return [value for _, value in stream_json_list(io.BytesIO(data), source="f.json", what="records")]

    assert read(b' [1, "two", [3], null] ') == [1, "two", [3], None]
    assert read(b"[]") == []
    for broken, message in (
        (b'[{"a": 1}, {"a": 2}] trailing', "not valid JSON"),
        (b'[{"a": 1}, {"a": 2', "not valid JSON"),
        (b'[{"a": 1}, {"a": tru}]', "not valid JSON"),
    ):
        with pytest.raises(FormatError, match=message) as raised:
            read(broken)
        assert raised.value.errors[0].record.startswith("after record")
