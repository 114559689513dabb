"""CRIC official files <-> catalog records (pure, no Django).

Question files (``train_questions.json``, ``val_questions.json``, ``test_v1_questions.json``) are a
JSON list of::

    {"image_id": int, "question_id": str, "question": str, "answer": str, "question_type": str,
     "target": [object ids], "program": [{"function", "text_input": [str], "output": [object ids]}],
     "sub_graph": {"relations", "attributes", "knowledge_items": [{"triplet": [h, r, t]}]},
     "wrong_part": str}

One catalog item per question, pointing at its image's scene (``scene = str(image_id)``). People
are shown the image, the question and its type; the answer, the grounding (``target``), the
program, the sub-graph, ``wrong_part`` and any unknown field are ground truth. ``sub_graph`` and
``wrong_part`` are optional (type-checked when present).

Scene graphs follow Visual Genome: a JSON list of ``{"image_id", "width", "height", "objects":
[{"object_id", "names", "x", "y", "w", "h", "attributes"}], "relationships": [{"relationship_id",
"subject_id", "predicate", "object_id"}]}``, kept unchanged as ``SceneRecord.data``.

Imports must run at well over 10,000 records a second, so a question is first checked by a
fast path (plain type tests, no error bookkeeping) and only read field by field through
RecordChecker when the fast path finds something wrong, to report exactly what.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import IO, Any

from benchmarks.records import (
    CatalogRecord,
    FormatError,
    ParsedFile,
    ParsedScenes,
    PreparedFile,
    RecordChecker,
    RecordError,
    RecordErrors,
    SceneRecord,
    convert_records,
    indexed,
    load_json,
    parse_prepared,
    paused_gc,
    serialize_json_list,
    stream_json_list,
)

FILE_DESCRIPTION = (
    "JSON list of questions (image_id, question_id, question, answer, question_type, target, program, ...)"
)

#: The five question types, in the paper's order.
QUESTION_TYPES = ("QueryObjKG", "QueryObjSG", "QueryAtt", "VerifyKG", "VerifyAtt")
#: Types whose answer is yes or no.
VERIFY_TYPES = frozenset({"VerifyKG", "VerifyAtt"})
#: The ten program functions: seven on the image, then three on the knowledge graph.
FUNCTION_NAMES = (
    "Initial",
    "Find",
    "Relate",
    "Relate Reverse",
    "Recognition",
    "And",
    "Verify",
    "Find KG",
    "Find KG Reverse",
    "Find Hypernym",
)
FUNCTIONS = frozenset(FUNCTION_NAMES)
#: Fields a tester may see before answering; everything else is ground truth.
SHOWN = ("image_id", "question_id", "question", "question_type")
SUB_GRAPH_LISTS = ("relations", "attributes", "knowledge_items")


# --- questions ---------------------------------------------------------------------------------


def quick_check(raw: Any) -> bool:
    """True when the question is certainly valid (the common case), with no error bookkeeping.

    False means "look closer": `check_question` then names every fault (and accepts the record
    when there is none, so this only needs to be conservative, never complete).
    """
    try:
        if (
            type(raw["image_id"]) is not int
            or type(raw["question_id"]) is not str
            or type(raw["question"]) is not str
            or type(raw["answer"]) is not str
            or type(raw["question_type"]) is not str
            or raw["question_type"] not in QUESTION_TYPES
        ):
            return False
        target = raw["target"]
        if type(target) is not list:
            return False
        for value in target:
            if type(value) is not int:
                return False
        program = raw["program"]
        if type(program) is not list:
            return False
        for step in program:
            function = step["function"]
            text_input = step["text_input"]
            output = step["output"]
            if type(function) is not str or function not in FUNCTIONS:
                return False
            if type(text_input) is not list or type(output) is not list:
                return False
            for value in text_input:
                if type(value) is not str:
                    return False
            for value in output:
                if type(value) is not int:
                    return False
        if "wrong_part" in raw:
            wrong_part = raw["wrong_part"]
            if wrong_part is not None and type(wrong_part) is not str:
                return False
        if "sub_graph" in raw:
            sub_graph = raw["sub_graph"]
            if type(sub_graph) is not dict:
                return False
            for key in SUB_GRAPH_LISTS:
                if key in sub_graph and type(sub_graph[key]) is not list:
                    return False
            for item in sub_graph.get("knowledge_items", ()):
                if type(item) is not dict:
                    return False
                if "triplet" in item:
                    triplet = item["triplet"]
                    if type(triplet) is not list or len(triplet) != 3:
                        return False
    except (KeyError, TypeError):
        return False
    return True


def check_id_list(checker: RecordChecker, record: Any, key: str, path: str = "") -> None:
    checker.get_list(record, key, int, path)


def check_question(checker: RecordChecker, raw: Any) -> None:
    """Every fault of one question, by field."""
    if not checker.is_object(raw):
        return
    checker.get(raw, "image_id", int)
    checker.get(raw, "question_id", str)
    checker.get(raw, "question", str)
    checker.get(raw, "answer", str)
    checker.get_choice(raw, "question_type", QUESTION_TYPES)
    check_id_list(checker, raw, "target")
    program = checker.get(raw, "program", list)
    for path, step in checker.objects(program, "program"):
        checker.get_choice(step, "function", FUNCTIONS, path)
        checker.get_list(step, "text_input", str, path)
        check_id_list(checker, step, "output", path)
    if "wrong_part" in raw and raw["wrong_part"] is not None:
        checker.get(raw, "wrong_part", str)
    if "sub_graph" in raw:
        sub_graph = checker.get(raw, "sub_graph", dict)
        if sub_graph is not None:
            for key in SUB_GRAPH_LISTS:
                if key in sub_graph:
                    checker.get(sub_graph, key, list, "sub_graph")
            items = sub_graph.get("knowledge_items")
            for path, item in checker.objects(
                items if isinstance(items, list) else (), "sub_graph.knowledge_items"
            ):
                if "triplet" in item:
                    triplet = checker.get(item, "triplet", list, path)
                    if triplet is not None and len(triplet) != 3:
                        checker.fail(
                            f"{path}.triplet", f"expected [head, relation, tail], got {len(triplet)} elements"
                        )


def record_to_catalog(raw: Any, checker: RecordChecker) -> CatalogRecord | None:
    if not quick_check(raw):
        before = len(checker.errors)
        check_question(checker, raw)
        if len(checker.errors) > before:
            return None
    payload = {}
    ground_truth = {}
    for key, value in raw.items():
        if key in SHOWN:
            payload[key] = value
        else:
            ground_truth[key] = value
    image_id = raw["image_id"]
    return CatalogRecord(
        external_id=raw["question_id"], payload=payload, ground_truth=ground_truth, scene=str(image_id)
    )


def prepare(data: bytes, *, source: str = "") -> PreparedFile:
    with paused_gc():
        document = load_json(data, source=source)
    if not isinstance(document, list):
        raise FormatError(
            [RecordError("file", "top level", "expected a JSON list of CRIC questions")], source=source
        )
    return PreparedFile(
        meta={}, labelled=indexed(document), convert=record_to_catalog, id_field="question_id"
    )


def prepare_stream(stream: IO[bytes], *, source: str = "") -> PreparedFile:
    """As `prepare`, reading the questions one at a time from an open file (bounded memory)."""
    return PreparedFile(
        meta={},
        labelled=stream_json_list(stream, source=source, what="CRIC questions"),
        convert=record_to_catalog,
        id_field="question_id",
        streamed=True,
    )


def parse(data: bytes, *, source: str = "") -> ParsedFile:
    return parse_prepared(prepare(data, source=source), source=source)


def to_official(payload: dict[str, Any], ground_truth: dict[str, Any]) -> dict[str, Any]:
    record = dict(payload)
    record.update(ground_truth)
    return record


def serialize(meta: dict[str, Any], records: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    """The official file: a JSON list of questions."""
    return serialize_json_list(records)


# --- scene graphs ------------------------------------------------------------------------------


def check_scene_object(checker: RecordChecker, obj: dict[str, Any], path: str) -> int | None:
    object_id = checker.get(obj, "object_id", int, path)
    for key in ("x", "y", "w", "h"):
        checker.get(obj, key, (int, float), path)
    if "names" in obj:
        checker.get_list(obj, "names", str, path)
    if "attributes" in obj and obj["attributes"] is not None:
        checker.get_list(obj, "attributes", str, path)
    return object_id


def scene_to_record(raw: Any, checker: RecordChecker) -> SceneRecord | None:
    if not checker.is_object(raw):
        return None
    before = len(checker.errors)
    image_id = checker.get(raw, "image_id", int)
    for key in ("width", "height"):
        if key in raw:
            checker.get(raw, key, (int, float))
    objects = checker.get(raw, "objects", list)
    seen: dict[int, str] = {}
    for path, obj in checker.objects(objects, "objects"):
        object_id = check_scene_object(checker, obj, path)
        if object_id is None:
            continue
        if object_id in seen:
            checker.fail(f"{path}.object_id", f"duplicate object id {object_id} (first at {seen[object_id]})")
        else:
            seen[object_id] = path
    if "relationships" in raw:
        relationships = checker.get(raw, "relationships", list)
        for path, relation in checker.objects(relationships, "relationships"):
            for key in ("relationship_id", "subject_id", "object_id"):
                if key in relation:
                    checker.get(relation, key, int, path)
            if "predicate" in relation:
                checker.get(relation, "predicate", str, path)
    if "text_regions" in raw:
        # Yardstick's own key (its demo writes it): [x, y, w, h] of each text painted on the image.
        regions = checker.get(raw, "text_regions", list)
        for index, region in enumerate(regions or []):
            if not (
                isinstance(region, list)
                and len(region) == 4
                and all(isinstance(v, int | float) and not isinstance(v, bool) for v in region)
            ):
                checker.fail(f"text_regions[{index}]", "expected [x, y, w, h], four numbers")
    image = None
    for key in ("image", "file_name"):
        if key in raw:
            image = checker.get(raw, key, str)
            break
    if len(checker.errors) > before:
        return None
    return SceneRecord(external_id=str(image_id), data=raw, image=image or f"{image_id}.jpg")


def parse_scenes(data: bytes, *, source: str = "") -> ParsedScenes:
    with paused_gc():
        document = load_json(data, source=source)
        if not isinstance(document, list):
            raise FormatError(
                [RecordError("file", "top level", "expected a JSON list of scene graphs")], source=source
            )
        # convert_records only needs an external_id on what the converter returns.
        scenes = convert_records(indexed(document), scene_to_record, source=source, id_field="image_id")
    return ParsedScenes(meta={}, scenes=scenes)  # type: ignore[arg-type]


def serialize_scenes(meta: dict[str, Any], scenes: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    return serialize_json_list(scenes)


def object_box(obj: dict[str, Any]) -> list[float]:
    """A scene-graph object's box, [x, y, w, h] in pixels."""
    return [obj["x"], obj["y"], obj["w"], obj["h"]]


def check_against_scenes(records: list[CatalogRecord], scenes: list[SceneRecord]) -> RecordErrors:
    """Every question's image has a scene graph, and every object id it names is in it."""
    object_ids: dict[str, set[int]] = {
        scene.external_id: {obj["object_id"] for obj in scene.data.get("objects", ())} for scene in scenes
    }
    errors = RecordErrors()
    for record in records:
        label = f"question {record.external_id}"
        image_id = record.payload.get("image_id")
        known = object_ids.get(record.scene) if record.scene is not None else None
        if known is None:
            errors.append(RecordError(label, "image_id", f"image {image_id} has no scene graph"))
            continue
        truth = record.ground_truth
        named = [(f"target[{index}]", value) for index, value in enumerate(truth.get("target", ()))]
        for number, step in enumerate(truth.get("program", ())):
            named += [
                (f"program[{number}].output[{index}]", value)
                for index, value in enumerate(step.get("output", ()))
            ]
        for field_name, object_id in named:
            if object_id not in known:
                errors.append(
                    RecordError(
                        label, field_name, f"object id {object_id} is not in image {image_id}'s scene graph"
                    )
                )
    return errors
