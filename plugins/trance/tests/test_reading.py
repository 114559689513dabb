"""The quick paths of scoring from files, each against the slow path it stands for: a data.jsonl
read as arrays a chunk at a time (`reading.read_sample_batches`) against the format module's
`iter_samples` and `encode_samples`, every fault named the same; predictions packed many at a
time against `pack_answer`; order-sensitivity found from the geometric steps against every
ordering of all the true steps replayed (`try_all_orderings`)."""

from __future__ import annotations

import copy
import io
import math
import random

import numpy as np
import orjson
import pytest

from benchmarks.records import FormatError
from plugins.trance import formats
from plugins.trance import metric as trance
from plugins.trance.generator import generate
from plugins.trance.metric import reading
from plugins.trance.metric.encoding import PAIRS, encode_answers
from plugins.trance.metric.predictions import pack_answer, pack_answers
from plugins.trance.metric.reading import EncodedSamples, checked_positions, read_sample_batches
from plugins.trance.metric.replay import order_sensitivity, try_all_orderings
from plugins.trance.metric.scores import encode_samples
from plugins.trance.tests.helpers import change, fake_pixel_counter, move, sample, scene, thing
from plugins.trance.tests.test_metric import crowded_sample, edge_sample, recoloured_twice


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reading")
    generate(folder, count=40, seed=3, render_images=False, pixel_counter=fake_pixel_counter)
    return [orjson.loads(line) for line in (folder / "data.jsonl").read_bytes().splitlines()]


@pytest.fixture
def small_pieces(monkeypatch):
    """Chunks of 3 records: every kind of chunk boundary is met on a few dozen samples."""
    monkeypatch.setattr(reading, "CHUNK", 3)


def as_arrays(batches):
    """The batches of `read_sample_batches` as one EncodedSamples' worth of lists, whichever way
    each batch came (arrays, or checked dicts encoded here)."""
    parts = [batch if isinstance(batch, EncodedSamples) else encode_samples(batch) for batch in batches]
    return arrays_of(parts)


def arrays_of(parts):
    return {
        "idxs": [idx for part in parts for idx in part.idxs],
        "labels": [label for part in parts for label in part.labels[:]],
        **{
            f"{which}.{name}": np.concatenate(
                [getattr(getattr(part, which), name) for part in parts]
            ).tolist()
            for which in ("initial", "final")
            for name in ("categories", "x", "y")
        },
        **{
            f"truth.{name}": np.concatenate([getattr(part.truth, name) for part in parts]).tolist()
            for name in ("lengths", "objects", "codes")
        },
    }


def read_both_ways(lines, size):
    """(what iter_samples gives, what read_sample_batches gives), each as arrays or as the
    FormatError's lines, from bytes and from an open file."""
    data = b"".join(lines)
    results = []
    for source in (data, io.BytesIO(data)):
        try:
            expected = (
                "samples",
                arrays_of([encode_samples(list(formats.iter_samples(source, source="f")))]),
            )
        except FormatError as error:
            expected = ("error", [str(fault) for fault in error.errors], error.source)
        source = data if isinstance(source, bytes) else io.BytesIO(data)
        try:
            found = ("samples", as_arrays(read_sample_batches(source, size=size, source="f")))
        except FormatError as error:
            found = ("error", [str(fault) for fault in error.errors], error.source)
        results.append((expected, found))
    return results


def lines_of(samples):
    return [orjson.dumps(one) + b"\n" for one in samples]


def broken(samples, number, change_sample):
    samples = copy.deepcopy(samples)
    change_sample(samples[number])
    return samples


def set_path(path, value):
    def change_sample(one):
        target = one
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change_sample


FAULTS = {
    "unknown colour": set_path(("states", 0, "objects", 3, "color"), "pink"),
    "final colour": set_path(("states", 1, "objects", 9, "color"), "grey"),
    "float coordinate": set_path(("states", 0, "objects", 1, "position"), [1.0, 2]),
    "true coordinate": set_path(("states", 1, "objects", 1, "position"), [True, 2]),
    "off the grid": set_path(("states", 0, "objects", 2, "position"), [41, 0]),
    "off the grid below": set_path(("states", 1, "objects", 2, "position"), [0, -41]),
    "huge coordinate": set_path(("states", 0, "objects", 2, "position"), [2**64 - 1, 0]),
    "three coordinates": set_path(("states", 0, "objects", 4, "position"), [1, 2, 3]),
    "position a string": set_path(("states", 0, "objects", 4, "position"), "12"),
    "object a list": set_path(("states", 0, "objects", 5), [1, 2]),
    "nine objects": lambda one: one["states"][0]["objects"].pop(),
    "no images": lambda one: one["states"][1].pop("images"),
    "empty images": set_path(("states", 0, "images"), {}),
    "image not a name": set_path(("states", 1, "images", "Camera_Left"), 3),
    "state a list": set_path(("states", 1), []),
    "one state": lambda one: one["states"].pop(),
    "idx a string": set_path(("idx",), "7"),
    "idx true": set_path(("idx",), True),
    "reserved field": set_path(("final_objects",), []),
    "no steps": set_path(("transformations",), []),
    "five steps": lambda one: one["transformations"].extend(one["transformations"][:1] * 5),
    "unknown value": set_path(("transformations", 0, "val"), "pink"),
    "object index 10": set_path(("transformations", 0, "obj_idx"), 10),
    "object index true": set_path(("transformations", 0, "obj_idx"), True),
    "no options": set_path(("transformations", 0, "options"), []),
    "bad option": lambda one: one["transformations"][0]["options"].append("pink"),
    "move of 2.0": lambda one: one["transformations"].__setitem__(
        0,
        {
            "obj_idx": 1,
            "attr": "position",
            "val": ["behind", 2.0],
            "options": [["behind", 2]],
            "type": "inner",
        },
    ),
    "option of 2.0": lambda one: one["transformations"].__setitem__(
        0,
        {
            "obj_idx": 1,
            "attr": "position",
            "val": ["behind", 2],
            "options": [["behind", 2.0]],
            "type": "inner",
        },
    ),
    "move without type": lambda one: one["transformations"].__setitem__(
        0, {"obj_idx": 1, "attr": "position", "val": ["behind", 2], "options": [["behind", 2]]}
    ),
    "record a list": lambda one: one.clear(),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_faulty_sample_is_named_as_the_format_module_names_it(generated, small_pieces, fault):
    samples = broken(generated, 10, FAULTS[fault])
    lines = lines_of(samples)
    if fault == "record a list":
        lines[10] = b"[1, 2]\n"
    for expected, found in read_both_ways(lines, size=5):
        assert expected[0] == "error", fault
        assert found == expected


def test_duplicates_blank_lines_and_broken_json_are_named_in_the_same_order(generated, small_pieces):
    lines = lines_of(generated)
    lines[4] = b"\n"
    lines[9] = b"   \t\r\n"
    lines[12] = lines[7]  # the same idx twice, in the quick path
    lines[20] = orjson.dumps(broken(generated, 20, FAULTS["unknown colour"])[20]) + b"\n"
    lines[25] = lines[21]  # the same idx twice, after a faulty record
    lines[30] = b'{"idx": 5, "states": \n'
    lines[33] = b"not json\n"
    for expected, found in read_both_ways(lines, size=4):
        assert expected[0] == "error"
        assert found == expected
    lines[30] = lines[33] = b"\n"
    lines[20] = lines[25] = lines[12] = b"\n"
    for expected, found in read_both_ways(lines, size=4):
        assert expected[0] == "samples" and found == expected


def test_valid_records_of_other_shapes_read_the_same(generated, small_pieces):
    samples = copy.deepcopy(generated)
    # Keys in another order, extra keys on objects, states and samples, and out-move options.
    samples[2]["states"][0]["objects"][0] = dict(reversed(samples[2]["states"][0]["objects"][0].items()))
    samples[5]["states"][1]["objects"][3]["pixels"] = 120
    samples[6]["states"][0]["status"] = ["visible"] * 10
    samples[8]["note"] = "kept"
    samples[11]["transformations"] = [
        {
            "obj_idx": 0,
            "attr": "position",
            "val": ["behind", 1],
            "options": [["behind", 1], ["front", 1]],
            "type": "out",
        }
    ]
    samples[11]["states"][0]["objects"][0]["position"] = [0, 0]
    samples[11]["states"][1]["objects"][0]["position"] = [10, 0]
    samples[13]["states"][0]["objects"][2]["position"] = [-40, 40]
    for size in (1, 4, 100):
        for expected, found in read_both_ways(lines_of(samples), size=size):
            assert expected[0] == "samples" and found == expected


def test_positions_are_read_through_their_json():
    assert checked_positions([[1, -2], [-40, 40], [0, 0]]).tolist() == [[1, -2], [-40, 40], [0, 0]]
    for bad in ([41, 0], [0, -41], [1.0, 2], [True, 2], [1, None], [1], [1, 2, 3], "12", [2**64 - 1, 0]):
        assert checked_positions([[1, 2], bad]) is None, bad
    with pytest.raises(TypeError):  # beyond 64 bits orjson refuses; the chunk is looked at closer
        checked_positions([[2**64, 0]])


def test_files_score_the_same_in_chunks_of_any_size(generated, monkeypatch):
    data = b"".join(lines_of(generated))
    answers = {str(one["idx"]): [change(1, "color", "red")] for one in generated[::3]}
    predictions = orjson.dumps(answers)
    whole = trance.score_event(generated, trance.parse_predictions(predictions))
    for chunk in (1, 2, 7, 64):
        monkeypatch.setattr(reading, "CHUNK", chunk)
        for setting in ("event", "view"):
            scored = trance.score_file(io.BytesIO(data), io.BytesIO(predictions), setting=setting)
            if setting == "event":
                assert scored.summary == whole.summary and list(scored.items) == list(whole.items)
            else:
                assert scored.summary["n"] == 3 * len(generated)


def test_predictions_packed_many_at_a_time_equal_each_packed_alone():
    rng = random.Random(5)
    steps = [
        {"obj_idx": obj_idx, "attr": attr, "val": list(value) if attr == "position" else value}
        for attr, value in PAIRS
        for obj_idx in range(10)
    ]
    answers = [rng.sample(steps, rng.randint(0, 6)) for _ in range(500)]
    answers.append([{**steps[0], "options": ["gray"], "type": "inner"}])
    assert pack_answers(answers) == [pack_answer(answer) for answer in answers]
    for bad in (
        {"obj_idx": True, "attr": "color", "val": "red"},
        {"obj_idx": 10, "attr": "color", "val": "red"},
        {"obj_idx": 1.0, "attr": "color", "val": "red"},
        {"obj_idx": 1, "attr": "colour", "val": "red"},
        {"obj_idx": 1, "attr": "position", "val": ["behind", 2.0]},
        {"obj_idx": 1, "attr": "position", "val": ["behind", True]},
        {"obj_idx": 1, "attr": "position", "val": "behind"},
        {"obj_idx": 1, "attr": "color"},
        {"obj_idx": 2**70, "attr": "color", "val": "red"},
        [1, "color", "red"],
        "step",
    ):
        assert pack_answers([steps[:2], [bad]]) is None, bad
        assert pack_answer([bad]) is None, bad


def test_packed_prediction_files_read_the_same_in_runs_of_entries(monkeypatch):
    monkeypatch.setattr(trance.predictions, "ENTRIES_AT_ONCE", 3)
    good = [change(1, "color", "red"), move(2, "behind", 1)]
    document = {str(idx): good[: idx % 3] for idx in range(20)}
    data = orjson.dumps(document)
    assert trance.read_packed_predictions(io.BytesIO(data)) == {
        idx: pack_answer(good[: idx % 3]) for idx in range(20)
    }
    faulty = dict(document)
    faulty["7"] = [{"obj_idx": 1, "attr": "color", "val": "pink"}]
    faulty["07"] = []
    faulty["x"] = []
    faulty["12"] = {"Camera_Left": good}
    with pytest.raises(FormatError) as quick:
        trance.read_packed_predictions(io.BytesIO(orjson.dumps(faulty)))
    with pytest.raises(FormatError) as slow:
        trance.parse_predictions(orjson.dumps(faulty))
    assert [str(error) for error in quick.value.errors] == [str(error) for error in slow.value.errors]
    assert len(slow.value.errors) == 3  # the per-camera answer is Event's fault, not the file's


def order_cases():
    """Samples whose true steps collide in some orders, leave the plane in others, set one
    colour or size twice, or mix all of these with steps that raise nothing."""
    rng = random.Random(11)
    cases = [crowded_sample(rng, number) for number in range(200)]
    cases += [edge_sample(rng, 200 + number) for number in range(40)]
    cases += [recoloured_twice(rng, 240 + number) for number in range(40)]
    swap = scene(thing(0, 0), thing(10, 0))
    cases += [
        sample(300, swap, [move(1, "behind", 1), change(0, "size", "large"), move(0, "behind", 1)]),
        sample(301, swap, [change(0, "size", "large"), change(0, "size", "medium"), move(1, "behind", 1)]),
        sample(302, swap, [move(1, "behind", 1), change(0, "color", "red"), change(0, "color", "red")]),
    ]
    return cases


def test_order_sensitivity_from_the_geometric_steps_equals_every_ordering_replayed():
    cases = order_cases()
    labels = [f"idx {one['idx']}" for one in cases]
    initial = trance.encode_states([one["states"][0]["objects"] for one in cases], labels)
    final = trance.encode_states([one["states"][1]["objects"] for one in cases], labels)
    truth = encode_answers([one["transformations"] for one in cases], labels)
    found = order_sensitivity(initial, final, truth)
    assert 0 < found.sensitive.sum() < len(cases)
    assert 0 < (found.error_share > 0).sum() < len(cases)
    for length in range(1, 5):
        rows = np.flatnonzero(truth.lengths == length)
        flat = truth.starts[rows][:, None] + np.arange(length)[None, :]
        every = try_all_orderings(
            initial.take(rows), final.take(rows), truth.objects[flat], truth.codes[flat]
        )
        assert found.sensitive[rows].tolist() == (every.always_reaches & (every.erring > 0)).tolist()
        # The same float, not only a close one: the same ratio of small integers.
        assert found.error_share[rows].tolist() == (every.erring / math.factorial(length)).tolist()


#: Values a fuzzed field may take: valid ones of every field, and near misses.
FUZZ_VALUES = [
    *formats.ATTRIBUTE_VALUES["color"][:2],
    "large",
    "cube",
    "rubber",
    "position",
    "size",
    "colour",
    "",
    "inner",
    "out",
    "sideways",
    0,
    1,
    2,
    9,
    10,
    -1,
    40,
    41,
    -41,
    2.0,
    1.5,
    True,
    False,
    None,
    2**63,
    [],
    ["behind", 2],
    ["behind", 2.0],
    ["behind", True],
    ["front-left", 1],
    ["up", 1],
    [1, 2],
    [0, 0, 0],
    [-40, 40],
    [True, 0],
    [["behind", 2]],
    [["behind", 2], ["left", 1]],
    ["cyan"],
    ["cyan", "red"],
    [3],
    {},
    {"Camera_Center": "a.png"},
    {"Camera_Center": 3},
]


def fuzz_paths(value, path=()):
    """Every place in a record: each key and element, as a path."""
    yield path
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from fuzz_paths(inner, (*path, key))
    elif isinstance(value, list):
        for number, inner in enumerate(value):
            yield from fuzz_paths(inner, (*path, number))


def test_the_quick_path_accepts_what_the_quick_check_accepts_and_encodes_it_the_same(generated):
    """Thousands of records with one field (or a key) changed to a valid value or a near miss:
    the chunk's quick path vouches for exactly the records `formats.quick_check` accepts, and
    encodes them as `encode_samples` does."""
    rng = random.Random(17)
    accepted = refused = 0
    for number in range(4000):
        one = copy.deepcopy(generated[number % len(generated)])
        for _ in range(rng.choice((1, 1, 2))):
            path = rng.choice(list(fuzz_paths(one))[1:])
            target = one
            for key in path[:-1]:
                target = target[key]
            if isinstance(target, dict) and rng.random() < 0.2:
                target.pop(path[-1])  # a missing field
            elif isinstance(target, dict) and rng.random() < 0.1:
                target["extra"] = rng.choice(FUZZ_VALUES)  # an extra key
            else:
                target[path[-1]] = copy.deepcopy(rng.choice(FUZZ_VALUES))
        one = orjson.loads(orjson.dumps(one))  # as a file gives it
        encoded = reading.encode_checked_chunk([one])
        assert (encoded is not None) == formats.quick_check(one), one
        if encoded is None:
            refused += 1
            continue
        accepted += 1
        builder = reading.BatchBuilder()
        builder.add(encoded)
        assert arrays_of([builder.build()]) == arrays_of([encode_samples([one])])
    assert accepted > 250 and refused > 2500
