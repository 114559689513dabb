"""The TRANCE generator, checked from the outside.

The checker below re-implements the rules on its own (step application, overlap, visibility,
out-move options) rather than importing the simulator, so a mistake shared by the simulator and
the generator cannot hide. Occlusion is checked with a fake pixel counter whose rule the checker
knows; the real renderer's occlusion checks run in the balance and determinism tests.
"""

import itertools
import math
import time
from collections import Counter
from pathlib import Path

import orjson
import pytest
from django.core.management import CommandError, call_command

from plugins.trance import formats
from plugins.trance.generator import generate

VECTORS = {
    "behind": (1, 0),
    "front": (-1, 0),
    "right": (0, 1),
    "left": (0, -1),
    "behind-right": (1, 1),
    "behind-left": (1, -1),
    "front-right": (-1, 1),
    "front-left": (-1, -1),
}
RADIUS = {"small": 2, "medium": 4, "large": 6}
VALUES = {
    "color": {"gray", "red", "blue", "green", "brown", "purple", "cyan", "yellow"},
    "material": {"rubber", "metal", "glass"},
    "shape": {"cube", "sphere", "cylinder"},
    "size": {"small", "medium", "large"},
}
FINAL_VIEWS = ("Camera_Left", "Camera_Center", "Camera_Right")


# --- An independent checker ----------------------------------------------------------------------


def on_plane(position):
    return all(-40 <= coordinate <= 40 for coordinate in position)


def seen(position):
    return all(-20 <= coordinate <= 20 for coordinate in position)


def hidden(position):
    return on_plane(position) and not seen(position)


def clash(first, second):
    gap = math.dist(first["position"], second["position"])
    return gap + 1e-4 < RADIUS[first["size"]] + RADIUS[second["size"]] + 1


def landing(position, value):
    direction, steps = value
    dx, dy = VECTORS[direction]
    return [position[0] + 10 * steps * dx, position[1] + 10 * steps * dy]


def check_state(objects):
    assert len(objects) == 10
    for obj in objects:
        assert list(obj) == ["color", "material", "shape", "size", "position"]
        for attr, values in VALUES.items():
            assert obj[attr] in values
        assert all(type(coordinate) is int for coordinate in obj["position"])
        assert on_plane(obj["position"])
    for first, second in itertools.combinations(objects, 2):
        assert not clash(first, second), (first, second)


def kind_of(before, after):
    if seen(before) and seen(after):
        return "inner"
    if seen(before):
        return "out"
    if seen(after):
        return "in"
    return None


def check_sample(record, number, pixels=None):
    """Every rule a sample must keep; `pixels` (the fake counter) adds the occlusion rules."""
    assert list(record) == ["idx", "states", "transformations"]
    assert record["idx"] == number
    initial, final = record["states"]
    assert list(initial) == ["objects", "images"] and list(final) == ["objects", "images"]
    assert initial["images"] == {"Camera_Center": f"img_{number:06d}-init.C.png"}
    assert list(final["images"].items()) == [
        ("Camera_Left", f"img_{number:06d}-fin.L.png"),
        ("Camera_Center", f"img_{number:06d}-fin.C.png"),
        ("Camera_Right", f"img_{number:06d}-fin.R.png"),
    ]
    check_state(initial["objects"])
    check_state(final["objects"])
    steps = record["transformations"]
    assert 1 <= len(steps) <= 4

    state = [dict(obj) for obj in initial["objects"]]
    occluded = set()
    if pixels is not None:
        occluded = {index for index, count in pixels(state, "Camera_Center").items() if count < 150}
    transformed = set()
    for step in steps:
        index, attr, value = step["obj_idx"], step["attr"], step["val"]
        subject = dict(state[index])
        before = subject["position"]
        if attr == "position":
            assert list(step) == ["obj_idx", "attr", "val", "options", "type"]
            after = landing(before, value)
            assert step["type"] == kind_of(before, after) is not None
            if step["type"] == "out":
                every = [[d, n] for d in VECTORS for n in (1, 2) if hidden(landing(before, [d, n]))]
                assert sorted(step["options"]) == sorted(every)
                assert value in step["options"]
                assert index not in transformed  # a changed object is never moved out
            else:
                assert step["options"] == [value]
            if step["type"] == "in":
                assert index not in transformed  # only untouched invisible objects come in
            subject["position"] = after
        else:
            assert list(step) == ["obj_idx", "attr", "val", "options"]
            assert step["options"] == [value]
            assert subject[attr] != value  # a step changes something
            subject[attr] = value
        if step.get("type") != "in":
            assert seen(before) and index not in occluded  # visible, not occluded subjects only
        state[index] = subject
        check_state(state)
        transformed.add(index)
        if pixels is not None:
            for view in FINAL_VIEWS:
                counts = pixels(state, view)
                assert all(counts[i] >= 150 for i in transformed if seen(state[i]["position"]))
    assert state == final["objects"]
    for step in steps:  # no change undone by a later step
        index, attr = step["obj_idx"], step["attr"]
        assert state[index][attr] != initial["objects"][index][attr]


def read_samples(folder):
    data = (Path(folder) / "data.jsonl").read_bytes()
    parsed = formats.parse(data, source="data.jsonl")
    samples = [orjson.loads(line) for line in data.splitlines()]
    assert len(parsed.records) == len(samples)
    return samples


# --- Fakes ---------------------------------------------------------------------------------------


def fake_pixel_counter(objects, camera):
    """Occluded (100 pixels) when two other drawn objects stand within 12 units, or, seen from the
    Left or Right camera, near that camera's far edge; 1000 pixels otherwise."""
    counts = []
    for number, obj in enumerate(objects):
        crowd = sum(
            1
            for other_number, other in enumerate(objects)
            if other_number != number and math.hypot(other.x - obj.x, other.y - obj.y) < 12
        )
        edge = (camera == "Camera_Left" and obj.y > 14) or (camera == "Camera_Right" and obj.y < -14)
        counts.append(100 if crowd >= 2 or edge else 1000)
    return counts


def fake_pixels_of_state(state, camera):
    """The fake counter as the checker sees it: by object index, drawn objects only."""
    from plugins.clevr.world import SceneObject

    drawn = [index for index, obj in enumerate(state) if seen(obj["position"])]
    objects = [
        SceneObject(
            state[i]["shape"],
            RADIUS[state[i]["size"]],
            state[i]["color"],
            state[i]["material"],
            *state[i]["position"],
        )
        for i in drawn
    ]
    return dict(zip(drawn, fake_pixel_counter(objects, camera), strict=True))


def fake_image_writer(objects, camera, path):
    path.write_bytes(f"{camera} {sorted((o.x, o.y, o.color) for o in objects)}".encode())


# --- Tests ---------------------------------------------------------------------------------------


def test_every_sample_keeps_every_rule(tmp_path):
    report = generate(
        tmp_path, count=300, seed=7, pixel_counter=fake_pixel_counter, image_writer=fake_image_writer
    )
    samples = read_samples(tmp_path)
    assert len(samples) == 300 and report.count == 300
    for number, record in enumerate(samples):
        check_sample(record, number, pixels=fake_pixels_of_state)
        for name in [*record["states"][0]["images"].values(), *record["states"][1]["images"].values()]:
            assert (tmp_path / name).is_file()
    assert len(list(tmp_path.glob("*.png"))) == 4 * 300
    kinds = Counter(step.get("type") for record in samples for step in record["transformations"])
    assert kinds["inner"] and kinds["out"] and kinds["in"]


def test_the_fake_occlusion_rules_bite(tmp_path):
    """The fake counter does occlude objects, so the test above exercises the occlusion rules."""
    generate(tmp_path, count=100, seed=3, render_images=False, pixel_counter=fake_pixel_counter)
    occluded = sum(
        count < 150
        for record in read_samples(tmp_path)
        for count in fake_pixels_of_state(record["states"][0]["objects"], "Camera_Center").values()
    )
    assert occluded > 20


def share_spread(counter, options):
    """Largest relative gap between an option's share and the uniform share."""
    total = sum(counter[option] for option in options)
    return max(abs(counter[option] / total * len(options) - 1) for option in options)


@pytest.mark.slow
def test_balance_over_two_thousand_samples_with_real_occlusion(tmp_path):
    started = time.perf_counter()
    report = generate(tmp_path, count=2000, seed=2020, render_images=False)
    seconds = time.perf_counter() - started
    print(f"\n2000 samples planned in {seconds:.1f} s ({report.pixel_renders} occlusion renders)")
    samples = read_samples(tmp_path)
    for number, record in enumerate(samples):
        check_sample(record, number)
    steps = [step for record in samples for step in record["transformations"]]
    initial_objects = [obj for record in samples for obj in record["states"][0]["objects"]]
    tables = {
        "length": (Counter(len(record["transformations"]) for record in samples), range(1, 5)),
        "object": (Counter(step["obj_idx"] for step in steps), range(10)),
        "move type": (Counter(step["type"] for step in steps if "type" in step), ("inner", "out", "in")),
        "visible objects": (
            Counter(
                sum(seen(obj["position"]) for obj in record["states"][0]["objects"]) for record in samples
            ),
            range(1, 11),
        ),
        **{
            attr: (Counter(obj[attr] for obj in initial_objects), sorted(values))
            for attr, values in VALUES.items()
        },
    }
    for name, (counter, options) in tables.items():
        assert share_spread(counter, options) < 0.05, (name, counter)
    pairs = Counter(
        f"position.{step['val'][0]}.{step['val'][1]}"
        if step["attr"] == "position"
        else f"{step['attr']}.{step['val']}"
        for step in steps
    )
    assert len(pairs) == 33 and share_spread(pairs, list(pairs)) < 0.1


def all_files(folder):
    return {path.name: path.read_bytes() for path in sorted(Path(folder).iterdir())}


def test_same_seed_same_bytes_whatever_the_workers(tmp_path):
    one, two, other = tmp_path / "one", tmp_path / "two", tmp_path / "other"
    generate(one, count=3, seed=11, workers=1)
    generate(two, count=3, seed=11, workers=2)
    generate(other, count=3, seed=12, workers=1, render_images=False)
    first, second = all_files(one), all_files(two)
    assert len(first) == 1 + 4 * 3
    assert first == second
    assert all_files(other)["data.jsonl"] != first["data.jsonl"]
    for number, record in enumerate(read_samples(one)):
        check_sample(record, number)


def test_a_longer_run_starts_with_the_shorter_one(tmp_path):
    generate(tmp_path / "short", count=5, seed=4, render_images=False, pixel_counter=fake_pixel_counter)
    generate(tmp_path / "long", count=8, seed=4, render_images=False, pixel_counter=fake_pixel_counter)
    short = (tmp_path / "short" / "data.jsonl").read_bytes().splitlines()
    long = (tmp_path / "long" / "data.jsonl").read_bytes().splitlines()
    assert long[:5] == short


def test_bad_counts_are_refused(tmp_path):
    for arguments in ({"count": 0, "seed": 1}, {"count": 2, "seed": 1, "workers": 0}):
        with pytest.raises(ValueError, match="at least 1"):
            generate(tmp_path / "out", render_images=False, **arguments)
    assert not (tmp_path / "out").exists()


# --- The command ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--count", "0"], "--count must be at least 1"),
        (["--count", "-3"], "--count must be at least 1"),
        (["--count", "2", "--workers", "0"], "--workers must be at least 1"),
    ],
)
def test_command_refuses_bad_numbers(tmp_path, arguments, message):
    out = tmp_path / "out"
    with pytest.raises(CommandError, match=message):
        call_command("generate_trance", *arguments, "--out", str(out), "--seed", "1", "--no-images")
    assert list(tmp_path.iterdir()) == []


def test_command_refuses_a_file_as_output(tmp_path):
    target = tmp_path / "data.txt"
    target.write_text("keep me")
    with pytest.raises(CommandError, match="is not a folder") as caught:
        call_command("generate_trance", "--count", "2", "--out", str(target), "--seed", "1", "--no-images")
    assert "\n" not in str(caught.value)
    with pytest.raises(CommandError, match="cannot create"):
        call_command(
            "generate_trance", "--count", "2", "--out", str(target / "inside"), "--seed", "1", "--no-images"
        )
    assert target.read_text() == "keep me"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["data.txt"]


def test_command_writes_a_dataset(tmp_path, capsys):
    out = tmp_path / "made" / "here"
    call_command("generate_trance", "--count", "4", "--out", str(out), "--seed", "5", "--no-images", "--json")
    summary = orjson.loads(capsys.readouterr().out)
    assert summary["count"] == 4 and summary["images"] == 0
    assert summary["tables"]["length"] and summary["tables"]["move_type"]
    assert [path.name for path in out.iterdir()] == ["data.jsonl"]
    for number, record in enumerate(read_samples(out)):
        check_sample(record, number)
