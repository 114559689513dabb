"""Tests for the synthetic CRIC sample generator (pure Python, no Django)."""

import collections
import json

import numpy as np
import pytest
from PIL import Image

from plugins.cric import demo, formats

IMAGES = 30
QUESTION_FIELDS = {
    "image_id": int,
    "question_id": str,
    "question": str,
    "answer": str,
    "question_type": str,
    "target": list,
    "program": list,
    "sub_graph": dict,
    "wrong_part": str,
}
QUERY_TYPES = {"QueryObjKG", "QueryObjSG", "QueryAtt"}
VERIFY_TYPES = {"VerifyKG", "VerifyAtt"}


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """One default-sized sample set, shared by the tests that only read it."""
    out_dir = tmp_path_factory.mktemp("cric")
    files = demo.generate_demo(out_dir, images=IMAGES, seed=0)
    questions = json.loads(files.questions.read_text(encoding="utf-8"))
    scene_graphs = json.loads(files.scene_graphs.read_text(encoding="utf-8"))
    knowledge = json.loads(files.knowledge.read_text(encoding="utf-8"))
    return out_dir, files, questions, scene_graphs, knowledge


def _scenes_by_image(scene_graphs):
    return {scene["image_id"]: scene for scene in scene_graphs}


# --- files and fields ---------------------------------------------------------------------------


def test_files_exist_where_the_result_says(generated):
    out_dir, files, questions, scene_graphs, knowledge = generated
    assert files.questions == out_dir / "cric_questions.json"
    assert files.scene_graphs == out_dir / "cric_scene_graphs.json"
    assert files.knowledge == out_dir / "cric_knowledge.json"
    assert files.images_dir == out_dir / "images"
    assert [scene["image_id"] for scene in scene_graphs] == list(range(1, IMAGES + 1))
    for scene in scene_graphs:
        with Image.open(files.images_dir / f"{scene['image_id']}.png") as image:
            assert image.format == "PNG"
            assert image.size == (scene["width"], scene["height"]) == (demo.IMAGE_WIDTH, demo.IMAGE_HEIGHT)
    assert isinstance(knowledge, list) and len(knowledge) >= 60
    for item in knowledge:
        head, relation, tail = item["triplet"]
        assert relation in demo.KNOWLEDGE_PHRASES or relation == "IsA"
        assert isinstance(head, str) and isinstance(tail, str)


def test_scene_graphs_follow_visual_genome(generated):
    _, _, _, scene_graphs, _ = generated
    seen_object_ids = set()
    for scene in scene_graphs:
        objects = scene["objects"]
        assert demo.MIN_OBJECTS <= len(objects) <= demo.MAX_OBJECTS
        for obj in objects:
            assert isinstance(obj["object_id"], int) and obj["object_id"] not in seen_object_ids
            seen_object_ids.add(obj["object_id"])
            assert len(obj["names"]) == 1 and obj["names"][0] in demo.CATEGORIES
            assert obj["w"] >= 8 and obj["h"] >= 8
            assert obj["x"] >= 0 and obj["x"] + obj["w"] <= scene["width"]
            assert obj["y"] >= 0 and obj["y"] + obj["h"] <= scene["height"]
            colors = [value for value in obj["attributes"] if demo.ATTRIBUTE_KINDS[value] == demo.COLOR]
            assert len(colors) == 1
        ids = {obj["object_id"] for obj in objects}
        boxes = {obj["object_id"]: demo.Box(obj["x"], obj["y"], obj["w"], obj["h"]) for obj in objects}
        relations = collections.defaultdict(list)
        for relationship in scene["relationships"]:
            assert relationship["subject_id"] in ids and relationship["object_id"] in ids
            assert relationship["predicate"] in demo.PREDICATES
            relations[relationship["subject_id"], relationship["object_id"]].append(relationship["predicate"])
        # Relationships are exactly what the geometry says.
        for subject in ids:
            for reference in ids - {subject}:
                expected = demo.spatial_predicates(boxes[subject], boxes[reference])
                assert relations.get((subject, reference), []) == expected


def test_every_question_has_all_fields_with_the_right_types(generated):
    _, _, questions, _, _ = generated
    assert len({question["question_id"] for question in questions}) == len(questions)
    for question in questions:
        assert set(question) == set(QUESTION_FIELDS)
        for field, kind in QUESTION_FIELDS.items():
            assert type(question[field]) is kind, (question["question_id"], field)
        assert question["question_type"] in formats.QUESTION_TYPES
        assert question["question_id"].startswith(f"{question['image_id']}_")
        assert question["question"].endswith("?") and question["answer"]
        assert all(type(object_id) is int for object_id in question["target"])
        for step in question["program"]:
            assert set(step) == {"function", "text_input", "output"}
            assert step["function"] in {
                "Initial", "Find", "Relate", "Relate Reverse", "Recognition", "And", "Verify",
                "Find KG", "Find KG Reverse", "Find Hypernym",
            }  # fmt: skip
            assert all(type(value) is str for value in step["text_input"])
            assert all(type(value) is int for value in step["output"])
        sub_graph = question["sub_graph"]
        assert set(sub_graph) == {"relations", "attributes", "knowledge_items"}
        for relation in sub_graph["relations"]:
            assert len(relation) == 3
        for attribute in sub_graph["attributes"]:
            assert len(attribute) == 2
        for item in sub_graph["knowledge_items"]:
            assert len(item["triplet"]) == 3


def test_all_question_types_are_well_represented(generated):
    _, _, questions, _, _ = generated
    counts = collections.Counter(question["question_type"] for question in questions)
    assert set(counts) == set(formats.QUESTION_TYPES)
    for question_type in formats.QUESTION_TYPES:
        assert counts[question_type] >= 0.10 * len(questions), counts
    assert len(questions) >= 4 * IMAGES


def test_verify_questions_answer_both_ways_and_say_what_fails(generated):
    _, _, questions, _, _ = generated
    for question_type in VERIFY_TYPES:
        answers = collections.Counter(q["answer"] for q in questions if q["question_type"] == question_type)
        assert set(answers) == {"yes", "no"}, (question_type, answers)
    for question in questions:
        if question["question_type"] in VERIFY_TYPES and question["answer"] == "no":
            assert question["target"] == []
            assert question["wrong_part"].split(": ")[0] in {"attribute", "knowledge", "relation", "hypernym"}
        else:
            assert question["target"]
            assert question["wrong_part"] == ""
    wrong_parts = collections.Counter(q["wrong_part"].split(":")[0] for q in questions if q["wrong_part"])
    assert {"attribute", "knowledge"} <= set(wrong_parts)


# --- programs and grounding ---------------------------------------------------------------------


def test_grounding_object_ids_exist_in_the_scene_graph(generated):
    _, _, questions, scene_graphs, _ = generated
    scenes = _scenes_by_image(scene_graphs)
    for question in questions:
        ids = {obj["object_id"] for obj in scenes[question["image_id"]]["objects"]}
        assert set(question["target"]) <= ids
        for step in question["program"]:
            assert set(step["output"]) <= ids
        for subject, _, reference in question["sub_graph"]["relations"]:
            assert {subject, reference} <= ids
        for object_id, _ in question["sub_graph"]["attributes"]:
            assert object_id in ids


def test_executing_programs_reproduces_outputs_and_answers(generated):
    _, _, questions, scene_graphs, knowledge = generated
    scenes = _scenes_by_image(scene_graphs)
    for question in questions:
        scene = scenes[question["image_id"]]
        program = question["program"]
        outputs = demo.execute_program(program, scene, knowledge)
        assert outputs == [step["output"] for step in program], question["question_id"]
        assert demo.derive_answer(program, outputs, scene) == question["answer"]
        assert program[0]["function"] == "Initial"
        if question["question_type"] in QUERY_TYPES:
            # Query questions are unambiguous: one object is left, and it is the target.
            assert program[-1]["function"] == "Recognition"
            assert len(outputs[-1]) == 1 and set(question["target"]) <= set(outputs[-1])
        else:
            assert program[-1]["function"] == "Verify"
            assert question["target"] == outputs[-1]


def test_sub_graphs_hold_only_true_facts(generated):
    _, _, questions, scene_graphs, knowledge = generated
    scenes = _scenes_by_image(scene_graphs)
    triplets = {tuple(item["triplet"]) for item in knowledge}
    for question in questions:
        scene = scenes[question["image_id"]]
        edges = {(r["subject_id"], r["predicate"], r["object_id"]) for r in scene["relationships"]}
        attributes = {(obj["object_id"], value) for obj in scene["objects"] for value in obj["attributes"]}
        sub_graph = question["sub_graph"]
        assert {tuple(relation) for relation in sub_graph["relations"]} <= edges
        assert {tuple(attribute) for attribute in sub_graph["attributes"]} <= attributes
        assert {tuple(item["triplet"]) for item in sub_graph["knowledge_items"]} <= triplets
        functions = {step["function"] for step in question["program"]}
        if question["target"] and functions & {"Find KG", "Find KG Reverse", "Find Hypernym"}:
            assert sub_graph["knowledge_items"], question["question_id"]


def test_the_program_executor_follows_its_documented_semantics():
    scene = {
        "image_id": 1,
        "objects": [
            {"object_id": 1, "names": ["table"], "attributes": ["brown", "wooden"]},
            {"object_id": 2, "names": ["cup"], "attributes": ["red"]},
            {"object_id": 3, "names": ["knife"], "attributes": ["gray"]},
            {"object_id": 4, "names": ["dog"], "attributes": ["black", "sitting"]},
        ],
        "relationships": [
            {"relationship_id": 1, "subject_id": 2, "predicate": "on", "object_id": 1},
            {"relationship_id": 2, "subject_id": 3, "predicate": "on", "object_id": 1},
            {"relationship_id": 3, "subject_id": 4, "predicate": "next to", "object_id": 1},
        ],
    }
    knowledge = [{"triplet": list(triplet)} for triplet in demo.knowledge_graph()]

    def run(*steps):
        program = [{"function": function, "text_input": list(arguments)} for function, arguments in steps]
        return demo.execute_program(program, scene, knowledge)

    initial = ("Initial", ())
    assert run(initial, ("Find", ("table",)), ("Relate Reverse", ("on",))) == [[1, 2, 3, 4], [1], [2, 3]]
    assert run(initial, ("Find", ("cup",)), ("Relate", ("on",)))[-1] == [1]
    assert run(initial, ("Find KG", ("UsedFor", "cutting food")))[-1] == [3]
    assert run(initial, ("Find KG Reverse", ("coffee", "AtLocation")))[-1] == [2]
    assert run(initial, ("Find Hypernym", ("animal",)))[-1] == [4]
    assert run(initial, ("Find", ("dog",)), ("Verify", ("sitting",)))[-1] == [4]
    assert run(initial, ("Find", ("dog",)), ("Verify", ("white",)))[-1] == []
    both = run(
        initial, ("Find", ("table",)), ("Relate Reverse", ("on",)),
        initial, ("Find KG", ("UsedFor", "drinking")), ("And", ()),
    )  # fmt: skip
    assert both[-2:] == [[2], [2]]
    with pytest.raises(ValueError):
        run(initial, ("Teleport", ()))

    program = [{"function": "Initial", "text_input": []}, {"function": "Find", "text_input": ["cup"]}]
    program.append({"function": "Recognition", "text_input": ["color"]})
    assert demo.derive_answer(program, demo.execute_program(program, scene, knowledge), scene) == "red"


# --- determinism --------------------------------------------------------------------------------


def _file_bytes(files):
    contents = {
        path.name: path.read_bytes() for path in (files.questions, files.scene_graphs, files.knowledge)
    }
    for image_path in sorted(files.images_dir.glob("*.png")):
        contents[image_path.name] = image_path.read_bytes()
    return contents


def test_the_same_seed_gives_the_same_bytes_and_another_seed_does_not(tmp_path):
    first = _file_bytes(demo.generate_demo(tmp_path / "first", images=4, seed=7))
    again = _file_bytes(demo.generate_demo(tmp_path / "again", images=4, seed=7))
    other = _file_bytes(demo.generate_demo(tmp_path / "other", images=4, seed=8))
    assert first == again
    assert first["cric_questions.json"] != other["cric_questions.json"]
    assert first["cric_scene_graphs.json"] != other["cric_scene_graphs.json"]
    assert first["1.png"] != other["1.png"]


# --- drawing ------------------------------------------------------------------------------------


def test_backdrop_colours_and_object_colours_are_far_apart():
    for color in demo.COLORS.values():
        for backdrop in demo.BACKDROP_COLORS:
            assert sum(abs(a - b) for a, b in zip(color, backdrop, strict=True)) >= 60


def test_every_object_is_drawn_in_its_colour(generated):
    _, files, _, scene_graphs, _ = generated
    backdrops = {kind: np.asarray(demo.render_backdrop(kind), dtype=np.int16) for kind in demo.SCENE_KINDS}
    for scene in scene_graphs:
        with Image.open(files.images_dir / f"{scene['image_id']}.png") as image:
            pixels = np.asarray(image.convert("RGB"), dtype=np.int16)
        # The scene graph does not say indoor or outdoor; the backdrop that fits best does.
        backdrop = min(backdrops.values(), key=lambda candidate: np.abs(pixels - candidate).sum())
        assert (np.abs(pixels - backdrop).sum(axis=2) <= 40).mean() > 0.5
        for obj in scene["objects"]:
            inside = (slice(obj["y"], obj["y"] + obj["h"]), slice(obj["x"], obj["x"] + obj["w"]))
            changed = np.abs(pixels[inside] - backdrop[inside]).sum(axis=2) > 40
            assert changed.mean() >= 0.25, (scene["image_id"], obj)
            (color,) = [value for value in obj["attributes"] if value in demo.COLORS]
            in_color = np.abs(pixels[inside] - np.array(demo.COLORS[color])).max(axis=2) <= 10
            assert in_color.mean() >= 0.08, (scene["image_id"], obj, in_color.mean())
