"""Hand-written records in the benchmarks' official formats (../shared/FORMATS.md), for tests.

Each builder returns fresh data, so a test may change it freely. Chinese text and unknown extra
fields are included on purpose: both must survive a round trip.
"""

import copy

COLORS = ["gray", "red", "blue", "green", "brown", "purple", "cyan", "yellow", "red", "blue"]
MATERIALS = ["rubber", "metal", "glass"]
SHAPES = ["cube", "sphere", "cylinder"]
SIZES = ["small", "medium", "large"]


def stevqa_questions() -> list[dict]:
    """Test ground truth: evidence as strings, as released."""
    return [
        {
            "question_id": 0,
            "question": "What is the name of this shop?",
            "answer": "golden bakery",
            "evidence": ["10", "10", "120", "12", "118", "40", "9", "38"],
        },
        {
            "question_id": 1,
            "question": "这家店的名字是什么?",
            "answer": "華為專賣店",
            "evidence": ["53", "680", "50", "727", "415", "711", "414", "661"],
        },
        {
            "question_id": 2,
            "question": "价格是多少?",
            "answer": "12元",
            "evidence": ["1", "2", "30", "2", "30", "20", "1", "20"],
            "source": "街景",
        },
    ]


def trance_objects() -> list[dict]:
    return [
        {
            "color": COLORS[index],
            "material": MATERIALS[index % 3],
            "shape": SHAPES[(index + 1) % 3],
            "size": SIZES[(index + 2) % 3],
            "position": [-36 + 8 * index, 40 - 7 * index],
        }
        for index in range(10)
    ]


def trance_sample(idx: int = 0) -> dict:
    """A two-step sample: object 2 turns cyan, then moves behind by two steps."""
    initial = trance_objects()
    final = copy.deepcopy(initial)
    final[2]["color"] = "cyan"
    final[2]["position"] = [final[2]["position"][0] + 20, final[2]["position"][1]]
    return {
        "idx": idx,
        "states": [
            {"objects": initial, "images": {"Camera_Center": f"img_{idx:06d}-init.C.png"}},
            {
                "objects": final,
                "images": {
                    "Camera_Left": f"img_{idx:06d}-fin.L.png",
                    "Camera_Center": f"img_{idx:06d}-fin.C.png",
                    "Camera_Right": f"img_{idx:06d}-fin.R.png",
                },
            },
        ],
        "transformations": [
            {"obj_idx": 2, "attr": "color", "val": "cyan", "options": ["cyan"]},
            {
                "obj_idx": 2,
                "attr": "position",
                "val": ["behind", 2],
                "options": [["behind", 2]],
                "type": "inner",
            },
        ],
    }


def cric_question(question_id: str = "q1", image_id: int = 3, **changes) -> dict:
    question = {
        "image_id": image_id,
        "question_id": question_id,
        "question": "What is the object on the table used for?",
        "answer": "cutting",
        "question_type": "QueryObjKG",
        "target": [17],
        "program": [
            {"function": "Initial", "text_input": [], "output": [11, 17, 20]},
            {"function": "Find", "text_input": ["table"], "output": [11]},
            {"function": "Relate Reverse", "text_input": ["on"], "output": [17]},
            {"function": "Find KG", "text_input": ["UsedFor", "cutting"], "output": [17]},
        ],
        "sub_graph": {
            "relations": [[17, "on", 11]],
            "attributes": [],
            "knowledge_items": [{"triplet": ["knife", "UsedFor", "cutting"]}],
        },
        "wrong_part": "",
    }
    question.update(changes)
    return question


def cric_questions() -> list[dict]:
    first = cric_question()
    first["difficulty"] = "难"
    second = cric_question(
        "q2",
        answer="no",
        question="Is the 刀 on the table made of wood?",
        question_type="VerifyAtt",
        target=[],
        program=[
            {"function": "Initial", "text_input": [], "output": [11, 17, 20]},
            {"function": "Find", "text_input": ["knife"], "output": [17]},
            {"function": "Verify", "text_input": ["wooden"], "output": []},
        ],
        wrong_part="attribute: wooden",
    )
    third = cric_question("q3", image_id=4, question_type="QueryObjSG", target=[40])
    third["program"] = [{"function": "Find Hypernym", "text_input": ["animal"], "output": [40, 41]}]
    return [first, second, third]


def cric_scene(image_id: int = 3, object_ids: tuple[int, ...] = (11, 17, 20)) -> dict:
    return {
        "image_id": image_id,
        "width": 800,
        "height": 600,
        "objects": [
            {
                "object_id": object_id,
                "names": ["thing"],
                "x": 10 * n,
                "y": 20,
                "w": 30,
                "h": 40,
                "attributes": [],
            }
            for n, object_id in enumerate(object_ids)
        ],
        "relationships": [
            {
                "relationship_id": 900,
                "subject_id": object_ids[0],
                "predicate": "on",
                "object_id": object_ids[1],
            }
        ],
    }


def cric_scenes() -> list[dict]:
    first = cric_scene()
    first["objects"][1]["names"] = ["knife", "刀"]
    return [first, cric_scene(4, (40, 41))]


def clevrref_scene(image_index: int = 0) -> dict:
    objects = [
        {
            "shape": "cube",
            "size": "large",
            "material": "rubber",
            "color": "red",
            "3d_coords": [1.0, 2.0, 0.7],
            "rotation": 30.0,
            "pixel_coords": [120, 150, 10.5],
        },
        {
            "shape": "sphere",
            "size": "small",
            "material": "metal",
            "color": "cyan",
            "3d_coords": [-1.5, 0.5, 0.35],
            "rotation": 0.0,
            "pixel_coords": [240, 130, 11.2],
        },
        {
            "shape": "cylinder",
            "size": "large",
            "material": "rubber",
            "color": "yellow",
            "3d_coords": [2.0, -2.0, 0.7],
            "rotation": 90.0,
            "pixel_coords": [300, 200, 9.0],
        },
    ]
    return {
        "split": "val",
        "image_index": image_index,
        "image_filename": f"CLEVR_val_{image_index:06d}.png",
        "objects": objects,
        "relationships": {
            "left": [[], [0], [0, 1]],
            "right": [[1, 2], [2], []],
            "front": [[2], [0, 2], []],
            "behind": [[], [], [0, 1]],
        },
        "obj_bbox": {"1": [100, 120, 40, 45], "2": [230, 120, 20, 20], "3": [280, 170, 45, 50]},
        "obj_mask": {"1": "38000 40 440 40", "2": "57000 20", "3": "81000 45"},
    }


def clevrref_document() -> dict:
    return {
        "info": {"split": "val", "version": "1.0", "注": "hand-written"},
        "refexps": [
            {
                "split": "val",
                "image_filename": "CLEVR_val_000000.png",
                "image_index": 0,
                "image": "CLEVR_val_000000",
                "refexp": "the large rubber thing that is left of the cyan sphere",
                "program": [
                    {"type": "scene", "inputs": [], "value_inputs": [], "_output": [0, 1, 2]},
                    {"type": "filter_color", "inputs": [0], "value_inputs": ["cyan"], "_output": [1]},
                    {"type": "unique", "inputs": [1], "value_inputs": [], "_output": 1},
                    {"type": "relate", "inputs": [2], "value_inputs": ["left"], "_output": [0]},
                    {"type": "filter_size", "inputs": [3], "value_inputs": ["large"], "_output": [0]},
                    {"type": "filter_material", "inputs": [4], "value_inputs": ["rubber"], "_output": [0]},
                ],
                "template_filename": "one_hop.json",
                "refexp_family_index": 3,
                "refexp_index": 0,
            },
            {
                "split": "val",
                "image_filename": "CLEVR_val_000000.png",
                "image_index": 0,
                "image": "CLEVR_val_000000",
                "refexp": "the large things",
                "program": [
                    {"type": "scene", "inputs": [], "value_inputs": [], "_output": [0, 1, 2]},
                    {"type": "filter_size", "inputs": [0], "value_inputs": ["large"], "_output": [0, 2]},
                ],
                "template_filename": "zero_hop.json",
                "refexp_family_index": 0,
                "refexp_index": 1,
            },
        ],
    }


def clevrref_scenes() -> dict:
    return {"info": {"split": "val"}, "scenes": [clevrref_scene(0)]}
