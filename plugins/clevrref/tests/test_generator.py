"""The CLEVR-Ref+ generator, checked from the outside.

The evaluator below re-implements every program step on its own, reading only the scene JSON:
filters on attributes, relations from 3d_coords and the recorded directions (CLEVR's rule with
eps 0.2), same-attribute, AND/OR, ordinals from pixel_coords, and visibility from the decoded
obj_mask run lengths. A mistake shared by the generator's executor and its scene code cannot
hide behind it.
"""

import math
import random
from collections import Counter
from pathlib import Path

import numpy as np
import orjson
import pytest
from django.core.management import CommandError, call_command
from PIL import Image

from plugins.clevrref import expressions, formats, scenes
from tests.benchmarks import builders

WIDTH, HEIGHT = 480, 320
ATTRIBUTES = ("size", "color", "material", "shape")
FAMILY_FILES = {
    0: "zero_hop.json",
    1: "one_hop.json",
    2: "two_hop.json",
    3: "three_hop.json",
    4: "single_and.json",
    5: "single_or.json",
    6: "same_relate.json",
}
#: Words a value may be written with in an expression.
WORDS = {
    "large": ("large", "big"),
    "small": ("small", "tiny"),
    "metal": ("metal", "metallic", "shiny"),
    "rubber": ("rubber", "matte"),
    "cube": ("cube", "block"),
    "sphere": ("sphere", "ball"),
    "cylinder": ("cylinder",),
    "left": ("left of",),
    "right": ("right of",),
    "front": ("in front of",),
    "behind": ("behind",),
}
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


# --- An independent evaluator ----------------------------------------------------------------------


def runs_to_mask(text):
    values, current = [], 0
    for part in text.split(","):
        values.extend([current] * int(part))
        current = 1 - current
    assert len(values) == WIDTH * HEIGHT, "runs must cover the whole 480x320 image"
    return np.array(values, dtype=bool).reshape(HEIGHT, WIDTH)


def related(scene, index, relation):
    """CLEVR: j is `relation` of i when (c_j - c_i) . direction > 0.2."""
    direction = scene["directions"][relation]
    here = scene["objects"][index]["3d_coords"]
    found = []
    for other, obj in enumerate(scene["objects"]):
        if other != index:
            dot = sum((obj["3d_coords"][axis] - here[axis]) * direction[axis] for axis in range(3))
            if dot > 0.2:
                found.append(other)
    return found


def covered_share(scene, index):
    """Share of the object's box showing objects nearer to the camera, from their masks."""
    x, y, width, height = scene["obj_bbox"][str(index + 1)]
    depth = scene["objects"][index]["pixel_coords"][2]
    covered = np.zeros((height, width), dtype=bool)
    for other, obj in enumerate(scene["objects"]):
        if other != index and obj["pixel_coords"][2] < depth:
            covered |= runs_to_mask(scene["obj_mask"][str(other + 1)])[y : y + height, x : x + width]
    return covered.sum() / (width * height)


def visibility_of(scene, index):
    share = covered_share(scene, index)
    if share == 0:
        return "fully visible"
    return "partially visible" if share > 0.2 else "neither"


def evaluate(program, scene):
    objects = scene["objects"]
    outputs = []
    for step in program:
        kind, values = step["type"], step["value_inputs"]
        args = [outputs[index] for index in step["inputs"]]
        if kind == "scene":
            result = list(range(len(objects)))
        elif kind.startswith("filter_") and kind[7:] in ATTRIBUTES:
            result = [index for index in args[0] if objects[index][kind[7:]] == values[0]]
        elif kind == "unique":
            assert len(args[0]) == 1, "unique must get exactly one object"
            result = args[0][0]
        elif kind == "relate":
            result = related(scene, args[0], values[0])
        elif kind.startswith("same_"):
            attribute = kind[5:]
            result = [
                index
                for index, obj in enumerate(objects)
                if index != args[0] and obj[attribute] == objects[args[0]][attribute]
            ]
        elif kind == "intersect":
            result = [index for index in args[0] if index in args[1]]
        elif kind == "union":
            result = sorted(set(args[0]) | set(args[1]))
        elif kind == "filter_ordinal":
            position, direction = int(values[0]), values[1]
            if direction == "front":
                ordered = sorted(args[0], key=lambda index: objects[index]["pixel_coords"][2])
            else:
                ordered = sorted(args[0], key=lambda index: objects[index]["pixel_coords"][0])
                if direction == "right":
                    ordered.reverse()
            assert len(ordered) >= 2, "an ordinal picks out of two or more objects"
            result = [ordered[position - 1]]
        elif kind == "filter_visibleout":
            result = [index for index in args[0] if visibility_of(scene, index) == values[0]]
        else:
            raise AssertionError(f"unknown step {kind}")
        outputs.append(result)
    return outputs


# --- A generated dataset, shared by the checks -----------------------------------------------------


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("clevrref")
    files = expressions.generate(out, images=30, seed=7)
    scenes_data = files.scenes_file.read_bytes()
    refexps_data = files.refexps_file.read_bytes()
    return {
        "files": files,
        "out": out,
        "scenes": orjson.loads(scenes_data)["scenes"],
        "refexps": orjson.loads(refexps_data)["refexps"],
        "scenes_data": scenes_data,
        "refexps_data": refexps_data,
    }


def test_files_parse_and_match_their_scenes(dataset):
    parsed = formats.parse(dataset["refexps_data"], source="clevrref_refexps.json")
    parsed_scenes = formats.parse_scenes(dataset["scenes_data"], source="clevrref_scenes.json")
    assert len(parsed_scenes.scenes) == 30
    assert len(parsed.records) == len(dataset["refexps"]) >= 30 * 4
    assert formats.check_against_scenes(parsed.records, parsed_scenes.scenes) == []
    indexes = [refexp["refexp_index"] for refexp in dataset["refexps"]]
    assert indexes == list(range(len(indexes)))


def test_images_are_written_at_clevr_size(dataset):
    images_dir = dataset["files"].images_dir
    for scene in dataset["scenes"]:
        path = images_dir / scene["image_filename"]
        assert path.name == f"CLEVR_val_{scene['image_index']:06d}.png"
        with Image.open(path) as image:
            assert image.size == (WIDTH, HEIGHT)
            assert image.mode == "RGB"


def test_scene_objects_follow_clevr(dataset):
    counts = Counter()
    for scene in dataset["scenes"]:
        objects = scene["objects"]
        assert 3 <= len(objects) <= 10
        counts[len(objects)] += 1
        for obj in objects:
            assert obj["size"] in ("small", "large") and obj["material"] in ("rubber", "metal")
            radius = {"small": 0.35, "large": 0.7}[obj["size"]]
            height = radius / math.sqrt(2) if obj["shape"] == "cube" else radius
            assert obj["3d_coords"][2] == pytest.approx(height, abs=1e-3)
            assert 0 <= obj["pixel_coords"][0] < WIDTH and 0 <= obj["pixel_coords"][1] < HEIGHT
            assert obj["pixel_coords"][2] > 0
        for first in range(len(objects)):
            for second in range(first + 1, len(objects)):
                a, b = objects[first], objects[second]
                gap = math.dist(a["3d_coords"][:2], b["3d_coords"][:2])
                radii = {"small": 0.35, "large": 0.7}
                assert gap >= radii[a["size"]] + radii[b["size"]] + 0.25 - 1e-9
    assert len(counts) >= 5, f"object counts too uniform: {counts}"


def test_every_program_step_reproduces_independently(dataset):
    scenes_by_index = {scene["image_index"]: scene for scene in dataset["scenes"]}
    for refexp in dataset["refexps"]:
        scene = scenes_by_index[refexp["image_index"]]
        program = refexp["program"]
        expected = [step["_output"] for step in program]
        assert evaluate(program, scene) == expected, refexp["refexp"]
        assert expressions.execute(program, scene) == expected
        assert expected[-1], "the referred set must not be empty"


def test_relationships_are_clevrs_and_consistent(dataset):
    for scene in dataset["scenes"]:
        relationships = scene["relationships"]
        count = len(scene["objects"])
        directions = scene["directions"]
        for name, vector in directions.items():
            assert math.hypot(*vector) == pytest.approx(1.0, abs=1e-5), name
        assert [-value for value in directions["left"]] == pytest.approx(directions["right"])
        assert [-value for value in directions["front"]] == pytest.approx(directions["behind"])
        for relation, opposite in (
            ("left", "right"),
            ("right", "left"),
            ("front", "behind"),
            ("behind", "front"),
        ):
            for index in range(count):
                assert relationships[relation][index] == related(scene, index, relation)
                for other in relationships[relation][index]:
                    assert index in relationships[opposite][other]
        # Left in 3d agrees with left in the picture.
        for index in range(count):
            for other in relationships["left"][index]:
                assert scene["objects"][other]["pixel_coords"][0] < scene["objects"][index]["pixel_coords"][0]


def test_masks_and_boxes(dataset):
    for scene in dataset["scenes"]:
        count = len(scene["objects"])
        assert sorted(scene["obj_bbox"], key=int) == [str(number) for number in range(1, count + 1)]
        assert sorted(scene["obj_mask"], key=int) == [str(number) for number in range(1, count + 1)]
        taken = np.zeros((HEIGHT, WIDTH), dtype=int)
        for key, text in scene["obj_mask"].items():
            mask = runs_to_mask(text)
            assert np.array_equal(scenes.decode_mask(text), mask)
            assert mask.sum() >= 200, "CLEVR drops scenes with objects under 200 pixels"
            x, y, width, height = scene["obj_bbox"][key]
            rows, columns = np.nonzero(mask)
            assert (x, y) == (columns.min(), rows.min()), "the box is tight"
            assert (x + width, y + height) == (columns.max() + 1, rows.max() + 1)
            taken += mask
        assert taken.max() == 1, "masks of different objects never overlap"


def test_mask_encoding_round_trips():
    generator = np.random.default_rng(3)
    empty = np.zeros((HEIGHT, WIDTH), dtype=bool)
    corner = empty.copy()
    corner[0, :5] = True
    last = empty.copy()
    last[-1, -1] = True
    noisy = generator.random((HEIGHT, WIDTH)) < 0.3
    for mask in (empty, corner, last, noisy):
        text = scenes.encode_mask(mask)
        assert "," in text or text == str(WIDTH * HEIGHT)
        assert sum(int(part) for part in text.split(",")) == WIDTH * HEIGHT
        assert np.array_equal(scenes.decode_mask(text), mask)
        assert np.array_equal(runs_to_mask(text), mask)
    assert scenes.encode_mask(corner).startswith("0,5,")
    assert np.array_equal(scenes.decode_mask("0 5"), corner), "spaces and a missing last run are accepted"
    with pytest.raises(ValueError, match="more than"):
        scenes.decode_mask(f"{WIDTH * HEIGHT} 1")


def test_single_and_multi_object_expressions_mix(dataset):
    sizes = [len(refexp["program"][-1]["_output"]) for refexp in dataset["refexps"]]
    single = sum(size == 1 for size in sizes) / len(sizes)
    assert 0.2 <= single <= 0.5, f"single-object share {single:.2f}"
    assert max(sizes) >= 3


def test_every_family_and_module_appears(dataset):
    families = Counter(refexp["refexp_family_index"] for refexp in dataset["refexps"])
    assert set(families) == set(FAMILY_FILES), families
    for refexp in dataset["refexps"]:
        assert refexp["template_filename"] == FAMILY_FILES[refexp["refexp_family_index"]]
    step_types = Counter(step["type"] for refexp in dataset["refexps"] for step in refexp["program"])
    for kind in ("filter_ordinal", "filter_visibleout", "intersect", "union", "relate", "unique"):
        assert step_types[kind], f"no {kind} step in 30 images"
    assert any(kind.startswith("same_") for kind in step_types)
    values = {
        step["value_inputs"][0]
        for refexp in dataset["refexps"]
        for step in refexp["program"]
        if step["type"] in ("relate", "filter_visibleout")
    }
    assert {"left", "right", "front", "behind"} <= values


def test_text_names_what_the_program_does(dataset):
    for refexp in dataset["refexps"]:
        text = refexp["refexp"]
        assert text == text.strip() and "  " not in text and text[0].islower()
        for step in refexp["program"]:
            kind, values = step["type"], step["value_inputs"]
            if kind.startswith("filter_") and kind[7:] in ATTRIBUTES or kind == "relate":
                words = WORDS.get(values[0], (values[0],))
                assert any(word in text for word in words), (text, kind, values)
            elif kind == "filter_ordinal":
                assert ORDINALS[int(values[0]) - 1] in text and f"from {values[1]}" in text, text
            elif kind == "filter_visibleout":
                assert values[0] in text, text
            elif kind.startswith("same_"):
                assert f"same {kind[5:]}" in text, text
    texts = Counter((refexp["image_index"], refexp["refexp"]) for refexp in dataset["refexps"])
    assert max(texts.values()) == 1, "no expression repeats within an image"


def test_generation_is_deterministic_and_per_image(dataset, tmp_path):
    first = expressions.generate(tmp_path / "first", images=2, seed=7)
    second = expressions.generate(tmp_path / "second", images=2, seed=7)
    assert first.scenes_file.read_bytes() == second.scenes_file.read_bytes()
    assert first.refexps_file.read_bytes() == second.refexps_file.read_bytes()
    for name in ("CLEVR_val_000000.png", "CLEVR_val_000001.png"):
        assert (first.images_dir / name).read_bytes() == (second.images_dir / name).read_bytes()
        assert (first.images_dir / name).read_bytes() == (dataset["files"].images_dir / name).read_bytes()
    # Image k does not depend on how many images were asked for.
    short = orjson.loads(first.scenes_file.read_bytes())["scenes"]
    assert short == dataset["scenes"][:2]
    short_texts = [refexp["refexp"] for refexp in orjson.loads(first.refexps_file.read_bytes())["refexps"]]
    assert short_texts == [refexp["refexp"] for refexp in dataset["refexps"] if refexp["image_index"] < 2]
    other = expressions.generate(tmp_path / "other", images=1, seed=8)
    assert other.scenes_file.read_bytes() != first.scenes_file.read_bytes()


# --- The executor on hand-written scenes -----------------------------------------------------------


def test_execute_reproduces_the_hand_written_example():
    scene = builders.clevrref_scene()
    for refexp in builders.clevrref_document()["refexps"]:
        assert expressions.execute(refexp["program"], scene) == [
            step["_output"] for step in refexp["program"]
        ]


def square_scene():
    """Four objects: 2 hides 37.5% of 3's box, 1 (nearer) shows 10 pixels in 0's box.

    0 also shows inside 1's box, which must not count: 0 stands behind 1.
    """
    objects = []
    for px, depth in [(40, 12.0), (150, 11.0), (300, 9.0), (310, 10.0)]:
        objects.append(
            {
                "shape": "cube",
                "size": "large",
                "material": "rubber",
                "color": "red",
                "3d_coords": [0.0, 0.0, 0.5],
                "rotation": 0.0,
                "pixel_coords": [px, 100, depth],
            }
        )
    boxes = {"1": [20, 80, 40, 40], "2": [130, 80, 40, 40], "3": [280, 80, 40, 40], "4": [300, 90, 40, 40]}
    object_ids = np.full((HEIGHT, WIDTH), -1, dtype=np.int16)
    for key in ("1", "2", "4", "3"):  # far to near, as a renderer would
        x, y, width, height = boxes[key]
        object_ids[y : y + height, x : x + width] = int(key) - 1
    object_ids[80:82, 55:60] = 1  # object 1 (nearer than 0) shows in 0's box: 10 of 1600 pixels
    masks = {str(index + 1): scenes.encode_mask(object_ids == index) for index in range(4)}
    for index, key in enumerate(boxes):
        rows, columns = np.nonzero(object_ids == index)
        boxes[key] = [int(columns.min()), int(rows.min()), int(np.ptp(columns)) + 1, int(np.ptp(rows)) + 1]
    return {"objects": objects, "obj_bbox": boxes, "obj_mask": masks, "relationships": {}}


def test_visibility_and_ordinals_on_a_hand_made_scene():
    scene = square_scene()
    assert [visibility_of(scene, index) for index in range(4)] == [
        "neither",
        "fully visible",
        "fully visible",
        "partially visible",
    ]
    assert scenes.scene_visibility(scene) == [None, "fully visible", "fully visible", "partially visible"]
    program = [
        {"type": "scene", "inputs": [], "value_inputs": []},
        {"type": "filter_visibleout", "inputs": [0], "value_inputs": ["partially visible"]},
        {"type": "filter_visibleout", "inputs": [0], "value_inputs": ["fully visible"]},
        {"type": "filter_ordinal", "inputs": [0], "value_inputs": ["2", "left"]},
        {"type": "filter_ordinal", "inputs": [0], "value_inputs": ["1", "right"]},
        {"type": "filter_ordinal", "inputs": [0], "value_inputs": ["1", "front"]},
    ]
    assert expressions.execute(program, scene) == [[0, 1, 2, 3], [3], [1, 2], [1], [3], [2]]
    assert evaluate(program, scene)[1:] == [[3], [1, 2], [1], [3], [2]]
    with pytest.raises(expressions.ProgramError):
        expressions.execute(program[:1] + [{"type": "unique", "inputs": [0], "value_inputs": []}], scene)


def test_relationships_follow_clevrs_rule():
    directions = {"left": [0, -1, 0], "right": [0, 1, 0], "front": [1, 0, 0], "behind": [-1, 0, 0]}
    coordinates = [[0, 0, 0.35], [0, 1, 0.35], [0.1, -1, 0.7], [-2, 0.15, 0.35]]
    relationships = scenes.compute_relationships(coordinates, directions)
    assert relationships["right"][0] == [1]  # 3 is only 0.15 to the right: under eps
    assert relationships["left"][0] == [2]
    assert relationships["behind"][0] == [3]
    assert relationships["front"][3] == [0, 1, 2]


def hand_made_scene():
    """Six objects laid out by hand, relationships by the module's CLEVR rule (checked above)."""
    directions = {
        "left": [0.0, -1.0, 0.0],
        "right": [0.0, 1.0, 0.0],
        "front": [1.0, 0.0, 0.0],
        "behind": [-1.0, 0.0, 0.0],
    }
    layout = [
        ("cube", "large", "rubber", "red", 0.0, 0.0),
        ("sphere", "small", "metal", "cyan", 1.2, -1.5),
        ("cylinder", "large", "metal", "red", -1.4, 1.1),
        ("cube", "small", "rubber", "blue", 2.0, 2.2),
        ("sphere", "large", "rubber", "cyan", -2.5, -2.4),
        ("cylinder", "small", "rubber", "red", 0.6, 2.9),
    ]
    objects = [
        {
            "shape": shape,
            "size": size,
            "material": material,
            "color": color,
            "3d_coords": [x, y, 0.35],
            "rotation": 0.0,
            "pixel_coords": [int(240 + 60 * y), int(160 + 30 * x), 10.0 - x],
        }
        for shape, size, material, color, x, y in layout
    ]
    coordinates = [obj["3d_coords"] for obj in objects]
    return {
        "objects": objects,
        "directions": directions,
        "relationships": scenes.compute_relationships(coordinates, directions),
    }


def test_expressions_on_a_hand_made_scene_are_sound():
    """The expression logic alone, without the renderer: visibility is given by the caller."""
    scene = hand_made_scene()
    made = []
    for seed in range(10):
        made += expressions.generate_expressions(
            random.Random(seed), scene, 5, visibility=["fully visible"] * len(scene["objects"])
        )
    assert len(made) >= 30
    assert len({expression.family_index for expression in made}) >= 5
    for expression in made:
        assert evaluate(expression.program, scene) == [step["_output"] for step in expression.program]


# --- The command -------------------------------------------------------------------------------------


@pytest.mark.parametrize("count", ["0", "-2"])
def test_command_refuses_a_bad_count(tmp_path, count):
    out = tmp_path / "out"
    with pytest.raises(CommandError, match="--count must be at least 1") as caught:
        call_command("generate_clevrref", "--count", count, "--out", str(out), "--seed", "1")
    assert "\n" not in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_command_refuses_an_output_it_cannot_use(tmp_path):
    target = tmp_path / "data.txt"
    target.write_text("keep me")
    with pytest.raises(CommandError, match="is not a folder") as caught:
        call_command("generate_clevrref", "--count", "1", "--out", str(target), "--seed", "1")
    assert "\n" not in str(caught.value)
    with pytest.raises(CommandError, match="cannot create") as caught:
        call_command("generate_clevrref", "--count", "1", "--out", str(target / "inside"), "--seed", "1")
    assert "\n" not in str(caught.value)
    assert target.read_text() == "keep me"
    assert [path.name for path in tmp_path.iterdir()] == ["data.txt"]


def test_command_writes_a_dataset(tmp_path, capsys):
    out = tmp_path / "made" / "here"
    call_command("generate_clevrref", "--count", "1", "--out", str(out), "--seed", "3", "--json")
    summary = orjson.loads(capsys.readouterr().out)
    assert summary["images"] == 1 and summary["expressions"] >= 1
    assert sorted(path.name for path in out.iterdir()) == [
        "clevrref_refexps.json",
        "clevrref_scenes.json",
        "images",
    ]
    assert [path.name for path in (out / "images").iterdir()] == ["CLEVR_val_000000.png"]
    assert Path(summary["refexps_file"]) == out / "clevrref_refexps.json"


# --- False premises ----------------------------------------------------------------------------------


def test_false_premises_are_off_by_default(dataset):
    # The generator's facts are the file's top-level keys beside "refexps".
    assert "false_premise_share" not in orjson.loads(dataset["refexps_data"])
    assert dataset["files"].false_premise_count == 0


@pytest.fixture(scope="module")
def false_premises(tmp_path_factory):
    out = tmp_path_factory.mktemp("clevrref-false-premises")
    files = expressions.generate(out, images=12, seed=7, false_premise_share=0.5)
    return {
        "files": files,
        "scenes": orjson.loads(files.scenes_file.read_bytes())["scenes"],
        "document": orjson.loads(files.refexps_file.read_bytes()),
    }


def test_false_premises_refer_to_nothing_and_every_word_matters(false_premises, dataset):
    refexps = false_premises["document"]["refexps"]
    scenes_by_index = {scene["image_index"]: scene for scene in false_premises["scenes"]}
    empty = [refexp for refexp in refexps if not refexp["program"][-1]["_output"]]
    assert len(empty) == false_premises["files"].false_premise_count
    assert 0.25 <= len(empty) / len(refexps) <= 0.75, f"{len(empty)} of {len(refexps)}"
    assert {refexp["template_filename"] for refexp in empty} == {"zero_hop.json", "one_hop.json"}
    assert false_premises["document"]["false_premise_share"] == 0.5
    for refexp in refexps:
        scene = scenes_by_index[refexp["image_index"]]
        program = refexp["program"]
        assert evaluate(program, scene) == [step["_output"] for step in program], refexp["refexp"]
    for refexp in empty:
        scene = scenes_by_index[refexp["image_index"]]
        program = refexp["program"]
        kinds = [step["type"] for step in program]
        if refexp["template_filename"] == "zero_hop.json":
            # Two or three attribute filters on the scene; dropping any one of them finds an object.
            assert kinds[0] == "scene" and 2 <= len(kinds) - 1 <= 3
            assert all(kind.startswith("filter_") for kind in kinds[1:])
            for dropped in range(1, len(program)):
                kept = [step for position, step in enumerate(program) if position != dropped]
                chain = [
                    dict(step, inputs=[position - 1] if position else [])
                    for position, step in enumerate(kept)
                ]
                assert evaluate(chain, scene)[-1], (refexp["refexp"], dropped)
        else:
            # One relation whose side holds objects, none of them fitting the phrase, which fits
            # something elsewhere in the scene: the relation is what leaves nothing.
            assert kinds.count("relate") == 1
            relate = kinds.index("relate")
            assert evaluate(program, scene)[relate]
            replaced = list(program)
            replaced[relate] = {"type": "scene", "inputs": [], "value_inputs": []}
            assert evaluate(replaced, scene)[-1], refexp["refexp"]
    # Only the expressions change: the same seed renders the same scenes.
    assert false_premises["scenes"][:2] == dataset["scenes"][:2]


def test_false_premise_files_parse_and_name_their_words(false_premises):
    files = false_premises["files"]
    parsed = formats.parse(files.refexps_file.read_bytes(), source="clevrref_refexps.json")
    parsed_scenes = formats.parse_scenes(files.scenes_file.read_bytes(), source="clevrref_scenes.json")
    assert formats.check_against_scenes(parsed.records, parsed_scenes.scenes) == []
    for refexp in false_premises["document"]["refexps"]:
        for step in refexp["program"]:
            if step["type"].startswith("filter_") and step["type"][7:] in ATTRIBUTES:
                words = WORDS.get(step["value_inputs"][0], (step["value_inputs"][0],))
                assert any(word in refexp["refexp"] for word in words), refexp["refexp"]


def test_zero_hop_false_premises_on_a_hand_made_scene():
    """A large red rubber cube and a small red rubber sphere. Filters that each fit an object but
    together fit none, and fit something with any one left out: by hand, size x shape gives
    (large, sphere) and (small, cube); every pair with color or material fits an object (both are
    red and rubber); a triple holds one of those two pairs, so dropping its third word still fits
    nothing. So: 'the large sphere' or 'the small cube', in any of their words."""
    scene = {
        "objects": [
            {"size": "large", "color": "red", "material": "rubber", "shape": "cube"},
            {"size": "small", "color": "red", "material": "rubber", "shape": "sphere"},
        ],
        "relationships": {name: [[], []] for name in ("left", "right", "front", "behind")},
    }
    facts = expressions.SceneFacts(scene, visibility_given=["fully visible"] * 2)
    seen = set()
    for seed in range(40):
        draft = expressions.Draft(facts)
        text = expressions.zero_hop_nothing(random.Random(seed), draft, expressions.NOTHING)
        filters = tuple((step["type"], step["value_inputs"][0]) for step in draft.steps[1:])
        seen.add(filters)
        assert draft.outputs[-1] == [] and text.startswith("the ")
    assert seen == {
        (("filter_size", "large"), ("filter_shape", "sphere")),
        (("filter_size", "small"), ("filter_shape", "cube")),
    }


def test_only_false_premises_when_asked_for_all():
    scene = hand_made_scene()
    made = expressions.generate_expressions(
        random.Random(3),
        scene,
        5,
        visibility=["fully visible"] * len(scene["objects"]),
        false_premise_share=1.0,
    )
    assert len(made) == 5
    for expression in made:
        assert expression.program[-1]["_output"] == []
        assert evaluate(expression.program, scene) == [step["_output"] for step in expression.program]


@pytest.mark.parametrize("share", ["-0.1", "1.5", "nan"])
def test_command_refuses_a_share_outside_zero_to_one(tmp_path, share):
    with pytest.raises(CommandError, match="--false-premise must be a share between 0 and 1") as caught:
        call_command(
            "generate_clevrref", "--count", "1", "--out", str(tmp_path / "out"), "--false-premise", share
        )
    assert "\n" not in str(caught.value)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="between 0 and 1"):
        expressions.generate(tmp_path / "out", images=1, seed=1, false_premise_share=2)


def test_command_writes_false_premises(tmp_path, capsys):
    out = tmp_path / "made"
    call_command(
        "generate_clevrref",
        "--count",
        "2",
        "--out",
        str(out),
        "--seed",
        "3",
        "--false-premise",
        "1",
        "--json",
    )
    summary = orjson.loads(capsys.readouterr().out)
    assert summary["false_premises"] == summary["expressions"] >= 2
    refexps = orjson.loads((out / "clevrref_refexps.json").read_bytes())["refexps"]
    assert all(refexp["program"][-1]["_output"] == [] for refexp in refexps)
