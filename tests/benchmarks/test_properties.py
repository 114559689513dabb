"""Property tests: whatever a file holds, a reader gives a result or a FormatError naming the fault.

Hypothesis feeds every benchmark's format reader and prediction reader arbitrary JSON, arbitrary
bytes, and valid records with one part replaced by anything (a field deleted, a number where a
list belongs, a list nested too deep...). Any other exception is a crash an uploaded file could
cause; at 2,000 examples each (YARDSTICK_PROPERTY_EXAMPLES) they found none.
"""

import copy
import os

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks import registry
from benchmarks.records import FormatError
from tests.benchmarks import builders

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=25,
)
#: Examples per property; YARDSTICK_PROPERTY_EXAMPLES=2000 for a longer search (all passed at 2,000).
PROPERTY = settings(
    max_examples=int(os.environ.get("YARDSTICK_PROPERTY_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def paths(value, prefix=()):
    """Every place in a JSON value, as a tuple of keys and indices."""
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from paths(child, (*prefix, index))


def replaced(value, path, new):
    """`value` with the part at `path` replaced by `new` (or removed when `new` is the marker DELETE)."""
    value = copy.deepcopy(value)
    if not path:
        return [] if new is DELETE else new
    parent = value
    for step in path[:-1]:
        parent = parent[step]
    if new is DELETE and isinstance(parent, dict):
        del parent[path[-1]]
    elif new is DELETE:
        parent.pop(path[-1])
    else:
        parent[path[-1]] = new
    return value


DELETE = object()


def mutants(valid):
    """Valid documents with one part replaced by any JSON value, or removed."""
    return st.tuples(st.sampled_from(list(paths(valid))), st.one_of(JSON, st.just(DELETE))).map(
        lambda change: replaced(valid, *change)
    )


def trance_lines(document) -> bytes:
    records = document if isinstance(document, list) else [document]
    return b"\n".join(encoded(record) for record in records)


def encoded(document) -> bytes:
    try:
        return orjson.dumps(document, option=orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # integers past 64 bits, NaN: Python's encoder writes them
        import json

        return json.dumps(document).encode()


VALID_FILES = {
    "stevqa": [builders.stevqa_questions()],
    "trance": [builders.trance_sample()],
    "cric": [builders.cric_questions()],
    "clevrref": [builders.clevrref_document()],
}


def read_file(name: str, document) -> None:
    spec = registry.get(name)
    data = trance_lines(document) if name == "trance" else encoded(document)
    try:
        spec.formats.parse(data, source="fuzz")
    except FormatError as refused:
        assert refused.errors and str(refused)


@pytest.mark.parametrize("name", ["stevqa", "trance", "cric", "clevrref"])
@PROPERTY
@given(data=st.data())
def test_a_reader_gives_records_or_names_the_fault_for_any_change_to_a_valid_file(name, data):
    document = data.draw(mutants(VALID_FILES[name][0]))
    read_file(name, document)


@pytest.mark.parametrize("name", ["stevqa", "trance", "cric", "clevrref"])
@PROPERTY
@given(document=JSON)
def test_a_reader_gives_records_or_names_the_fault_for_any_json(name, document):
    read_file(name, document)


@pytest.mark.parametrize("name", ["stevqa", "trance", "cric", "clevrref"])
@PROPERTY
@given(data=st.binary(max_size=200))
def test_a_reader_names_the_fault_of_any_bytes(name, data):
    try:
        registry.get(name).formats.parse(data, source="fuzz")
    except FormatError as refused:
        assert str(refused)


def scenes_reader(name: str):
    return registry.get(name).formats.parse_scenes


@pytest.mark.parametrize(
    ("name", "valid"), [("cric", builders.cric_scenes()), ("clevrref", builders.clevrref_scenes())]
)
@PROPERTY
@given(data=st.data())
def test_a_scenes_reader_gives_scenes_or_names_the_fault(name, valid, data):
    document = data.draw(mutants(valid))
    try:
        scenes_reader(name)(encoded(document), source="fuzz")
    except FormatError as refused:
        assert str(refused)


VALID_PREDICTIONS = {
    "stevqa": [{"question_id": 0, "answer": "golden bakery", "evidence": [10, 10, 120, 12, 118, 40, 9, 38]}],
    "trance": {
        "0": [
            {"obj_idx": 2, "attr": "color", "val": "cyan"},
            {"obj_idx": 2, "attr": "position", "val": ["behind", 2]},
        ]
    },
    "cric": [{"question_id": "q1", "answer": "knife", "object": 3, "program_outputs": [[1, 2], [3]]}],
    "clevrref": [
        {"refexp_index": 0, "box": [1, 2, 30, 40], "mask": "0 10 5 100"},
        {"refexp_index": 1, "box": [1, 2, 0, -4], "mask": "0 10 5 100", "mask_size": [320, 320]},
    ],
}


@pytest.mark.parametrize("name", ["stevqa", "trance", "cric", "clevrref"])
@PROPERTY
@given(data=st.data())
def test_a_prediction_file_gives_answers_or_names_the_fault(name, data):
    document = data.draw(st.one_of(mutants(VALID_PREDICTIONS[name]), JSON))
    try:
        answers = registry.get(name).read_predictions(encoded(document), source="fuzz")
    except FormatError as refused:
        assert str(refused)
    else:
        assert isinstance(answers, dict) and all(isinstance(key, str) for key in answers)
