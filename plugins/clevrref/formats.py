"""CLEVR-Ref+ official files <-> catalog records (pure, no Django).

The refexp file is ``{"info": ..., "refexps": [{"split", "image_filename", "image_index", "image",
"refexp", "program": [{"type", "inputs", "value_inputs", "_output"}], "template_filename",
"refexp_family_index", "refexp_index"}]}``. The referred objects are ``program[-1]["_output"]``
(0-based indices into the scene's ``objects``).

One catalog item per expression (``external_id = str(refexp_index)``), pointing at its scene
(``scene = str(image_index)``). People are shown the image and the expression; the program (and
so the referred objects), the template fields and any unknown field are ground truth. Every
top-level key other than ``refexps`` is kept in ``meta`` and written back.

Scenes follow CLEVR: ``{"info", "scenes": [{"image_index", "image_filename", "objects": [{"shape",
"size", "material", "color", "3d_coords", "rotation", "pixel_coords"}], "relationships": {"left":
[[...]], ...}, "obj_bbox", "obj_mask"}]}``; each scene is kept unchanged as ``SceneRecord.data``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

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
    dump_json,
    load_json,
    parse_prepared,
    serialize_json_list,
    split_fields,
    type_name,
)

FILE_DESCRIPTION = (
    'JSON object {"info", "refexps": [{image_filename, image_index, refexp, program, refexp_index, ...}]}'
)

SHOWN = ("split", "image_filename", "image_index", "image", "refexp", "refexp_index")
#: Optional refexp fields, type-checked when present.
OPTIONAL_FIELDS: dict[str, type] = {
    "split": str,
    "image": str,
    "template_filename": str,
    "refexp_family_index": int,
}

OBJECT_VALUES: dict[str, tuple[str, ...]] = {
    "shape": ("cube", "sphere", "cylinder"),
    "size": ("small", "large"),
    "material": ("rubber", "metal"),
    "color": ("gray", "red", "blue", "green", "brown", "purple", "cyan", "yellow"),
}
NUMBER = (int, float)


def labelled(values: list[Any], key: str) -> Iterable[tuple[str, Any]]:
    """Label the elements of the file's list as "refexps[0]", "refexps[1]", ..."""
    return ((f"{key}[{index}]", value) for index, value in enumerate(values))


def referred_objects(program: list[dict[str, Any]]) -> list[int]:
    """The objects an expression refers to: the last program step's output."""
    return program[-1]["_output"]


def check_program(checker: RecordChecker, raw: dict[str, Any]) -> None:
    program = checker.get(raw, "program", list)
    if program is None:
        return
    if not program:
        checker.fail("program", "empty program")
        return
    for position, (path, step) in enumerate(checker.objects(program, "program")):
        checker.get(step, "type", str, path)
        inputs = checker.get_list(step, "inputs", int, path)
        for index, value in enumerate(inputs or ()):
            if value < 0:
                checker.fail(f"{path}.inputs[{index}]", f"input {value} is negative")
            elif value >= position:
                checker.fail(
                    f"{path}.inputs[{index}]",
                    f"input {value} refers to a later step (step {position} can only use earlier steps)",
                )
        checker.get_list(step, "value_inputs", str, path)
        if position == len(program) - 1:
            output = checker.get_list(step, "_output", int, path)
            for index, value in enumerate(output or ()):
                if value < 0:
                    checker.fail(f"{path}._output[{index}]", f"object index {value} is negative")


def refexp_to_catalog(raw: Any, checker: RecordChecker) -> CatalogRecord | None:
    if not checker.is_object(raw):
        return None
    before = len(checker.errors)
    image_filename = checker.get(raw, "image_filename", str)
    image_index = checker.get(raw, "image_index", int)
    checker.get(raw, "refexp", str)
    refexp_index = checker.get(raw, "refexp_index", int)
    for key, kind in OPTIONAL_FIELDS.items():
        if key in raw:
            checker.get(raw, key, kind)
    check_program(checker, raw)
    if len(checker.errors) > before:
        return None
    payload, hidden = split_fields(raw, SHOWN)
    return CatalogRecord(
        external_id=str(refexp_index),
        payload=payload,
        ground_truth=hidden,
        media={"image": image_filename},
        scene=str(image_index),
    )


def split_document(data: bytes, key: str, what: str, *, source: str) -> tuple[dict[str, Any], list[Any]]:
    """The file's list under `key` and every other top-level key (kept as meta)."""
    document = load_json(data, source=source)
    if not isinstance(document, dict):
        raise FormatError(
            [RecordError("file", "top level", f'expected a JSON object with a "{key}" list of {what}')],
            source=source,
        )
    values = document.get(key)
    if not isinstance(values, list):
        problem = "missing field" if key not in document else f"expected a list, got {type_name(values)}"
        raise FormatError([RecordError("file", key, problem)], source=source)
    meta = {name: value for name, value in document.items() if name != key}
    return meta, values


def prepare(data: bytes, *, source: str = "") -> PreparedFile:
    meta, refexps = split_document(data, "refexps", "referring expressions", source=source)
    return PreparedFile(
        meta=meta,
        labelled=list(labelled(refexps, "refexps")),
        convert=refexp_to_catalog,
        id_field="refexp_index",
    )


def parse(data: bytes, *, source: str = "") -> ParsedFile:
    return parse_prepared(prepare(data, source=source), source=source)


def to_official(payload: dict[str, Any], ground_truth: dict[str, Any]) -> dict[str, Any]:
    record = dict(payload)
    record.update(ground_truth)
    return record


def serialize_document(meta: dict[str, Any], key: str, values: Iterable[Any]) -> Iterator[bytes]:
    """`{**meta, key: [values]}` written in chunks."""
    yield b"{"
    for name, value in meta.items():
        yield dump_json(name) + b":" + dump_json(value) + b","
    yield dump_json(key) + b":"
    yield from serialize_json_list(values)
    yield b"}"


def serialize(meta: dict[str, Any], records: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    """The official file: ``{"info": ..., "refexps": [...]}`` with every other top-level key kept."""
    return serialize_document(meta, "refexps", records)


# --- scenes ------------------------------------------------------------------------------------


def check_number_list(
    checker: RecordChecker, record: dict[str, Any], key: str, path: str, length: int
) -> None:
    if key in record:
        checker.get_list(record, key, NUMBER, path, length=length)


def check_scene_object(checker: RecordChecker, obj: dict[str, Any], path: str) -> None:
    for attr, choices in OBJECT_VALUES.items():
        checker.get_choice(obj, attr, choices, path)
    check_number_list(checker, obj, "3d_coords", path, 3)
    check_number_list(checker, obj, "pixel_coords", path, 3)
    if "rotation" in obj:
        checker.get(obj, "rotation", NUMBER, path)


def check_relationships(checker: RecordChecker, raw: dict[str, Any], count: int | None) -> None:
    relationships = checker.get(raw, "relationships", dict)
    for relation in relationships or {}:
        lists = checker.get_lists(relationships, relation, int, "relationships")
        for index, related in enumerate(lists or ()):
            for number, value in enumerate(related):
                if count is not None and not 0 <= value < count:
                    checker.fail(
                        f"relationships.{relation}[{index}][{number}]",
                        f"object index {value} out of range: scene has {count} objects",
                    )


def scene_to_record(raw: Any, checker: RecordChecker) -> SceneRecord | None:
    if not checker.is_object(raw):
        return None
    before = len(checker.errors)
    image_index = checker.get(raw, "image_index", int)
    image_filename = checker.get(raw, "image_filename", str)
    objects = checker.get(raw, "objects", list)
    for path, obj in checker.objects(objects, "objects"):
        check_scene_object(checker, obj, path)
    if "relationships" in raw:
        check_relationships(checker, raw, len(objects) if objects is not None else None)
    if "obj_bbox" in raw:
        boxes = checker.get(raw, "obj_bbox", dict)
        for key in boxes or {}:
            checker.get_list(boxes, key, NUMBER, "obj_bbox", length=4)
    if "obj_mask" in raw:
        masks = checker.get(raw, "obj_mask", dict)
        for key in masks or {}:
            checker.get(masks, key, str, "obj_mask")
    if len(checker.errors) > before:
        return None
    return SceneRecord(external_id=str(image_index), data=raw, image=image_filename)


def parse_scenes(data: bytes, *, source: str = "") -> ParsedScenes:
    meta, scenes = split_document(data, "scenes", "scenes", source=source)
    # convert_records only needs an external_id on what the converter returns.
    records = convert_records(
        labelled(scenes, "scenes"), scene_to_record, source=source, id_field="image_index"
    )
    return ParsedScenes(meta=meta, scenes=records)  # type: ignore[arg-type]


def serialize_scenes(meta: dict[str, Any], scenes: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    """The official scenes file: ``{"info": ..., "scenes": [...]}``."""
    return serialize_document(meta, "scenes", scenes)


def check_against_scenes(records: list[CatalogRecord], scenes: list[SceneRecord]) -> RecordErrors:
    """Every expression's image has a scene, with the same file name, holding the referred objects."""
    by_id = {scene.external_id: scene for scene in scenes}
    errors = RecordErrors()
    for record in records:
        label = f"refexp {record.external_id}"
        image_index = record.payload.get("image_index")
        scene = by_id.get(record.scene) if record.scene is not None else None
        if scene is None:
            errors.append(RecordError(label, "image_index", f"image {image_index} has no scene"))
            continue
        image_filename = record.payload.get("image_filename")
        if scene.image and image_filename and image_filename != scene.image:
            errors.append(
                RecordError(
                    label,
                    "image_filename",
                    f"{image_filename!r} differs from scene {image_index}'s image_filename {scene.image!r}",
                )
            )
        program = record.ground_truth["program"]
        count = len(scene.data.get("objects", ()))
        last = len(program) - 1
        for index, value in enumerate(referred_objects(program)):
            if value >= count:
                errors.append(
                    RecordError(
                        label,
                        f"program[{last}]._output[{index}]",
                        f"object index {value} out of range: scene {image_index} has {count} objects",
                    )
                )
    return errors


#: Program step types in the order the by-step breakdown lists them (any other type after them).
STEP_TYPES = (
    "scene",
    "filter_size",
    "filter_color",
    "filter_material",
    "filter_shape",
    "filter_visibleout",
    "filter_ordinal",
    "unique",
    "relate",
    "same_size",
    "same_color",
    "same_material",
    "same_shape",
    "intersect",
    "union",
)
