"""TRANCE official files <-> catalog records (pure, no Django).

The released "simple" format is JSON Lines (``data.jsonl``), one sample per line::

    {"idx": 0,
     "states": [{"objects": [10 objects], "images": {"Camera_Center": "...-init.C.png"}},
                {"objects": [the same 10 objects, final state],
                 "images": {"Camera_Left": ..., "Camera_Center": ..., "Camera_Right": ...}}],
     "transformations": [{"obj_idx": 2, "attr": "color", "val": "cyan", "options": ["cyan"]},
                         {"obj_idx": 2, "attr": "position", "val": ["behind", 2],
                          "options": [["behind", 2]], "type": "inner"}]}

One catalog item per sample. People are shown the initial state (its objects and render) and
the final renders; the final objects and the transformations are the answer, so they are ground
truth. Everything else (per-state keys such as the raw generator's ``status`` or 3d coordinates,
extra per-object keys, unknown top-level keys) is hidden too and written back on export:

* ``payload`` = ``{"idx", "initial": {"objects": [the 5 known keys of each object], "images"},
  "final_images"}``
* ``ground_truth`` = ``{"final_objects", "transformations", <unknown top-level keys>,
  "states": [state 0 extras, state 1 extras]}`` where ``"states"`` is present only when some
  state has keys other than objects/images or some initial object has keys beyond the known
  five (those go, one dict per object, under ``states[0]["objects"]``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import IO, Any

from benchmarks.records import (
    CatalogRecord,
    FormatError,
    ParsedFile,
    PreparedFile,
    RecordChecker,
    RecordError,
    RecordErrors,
    load_json_lines,
    parse_prepared,
    paused_gc,
    serialize_json_lines,
    split_fields,
    stream_json_lines,
    type_name,
)

FILE_DESCRIPTION = (
    "JSON Lines (data.jsonl): one sample per line with idx, two states (objects, images) and transformations"
)

#: Values of each non-position attribute.
ATTRIBUTE_VALUES: dict[str, tuple[str, ...]] = {
    "color": ("gray", "red", "blue", "green", "brown", "purple", "cyan", "yellow"),
    "material": ("rubber", "metal", "glass"),
    "shape": ("cube", "sphere", "cylinder"),
    "size": ("small", "medium", "large"),
}
#: Move directions as (dx, dy) on the grid.
DIRECTIONS: dict[str, tuple[int, int]] = {
    "behind": (1, 0),
    "front": (-1, 0),
    "right": (0, 1),
    "left": (0, -1),
    "behind-right": (1, 1),
    "behind-left": (1, -1),
    "front-right": (-1, 1),
    "front-left": (-1, -1),
}
#: Every valid (color, material, shape, size), so that one lookup checks an object's attributes.
OBJECT_KINDS = frozenset(
    itertools.product(*(ATTRIBUTE_VALUES[name] for name in ("color", "material", "shape", "size")))
)
MOVE_STEPS = (1, 2)
MOVE_TYPES = ("inner", "out", "in")
ATTRIBUTES = ("position", *ATTRIBUTE_VALUES)
OBJECT_FIELDS = ("color", "material", "shape", "size", "position")
STATE_FIELDS = ("objects", "images")
OBJECTS_PER_STATE = 10
STATES = 2
MIN_STEPS, MAX_STEPS = 1, 4
GRID_MIN, GRID_MAX = -40, 40
#: The renders' cameras: the initial state is seen from the centre, the final one from all three.
CENTER_CAMERA = "Camera_Center"
FINAL_CAMERAS = ("Camera_Left", CENTER_CAMERA, "Camera_Right")
#: Basic: one-step samples, one transformation answered; Event: all samples; View: Event with
#: the final state seen from the left, centre or right camera.
BASIC, EVENT, VIEW = "basic", "event", "view"
SETTINGS = (BASIC, EVENT, VIEW)

#: Ground-truth keys this module adds; a top-level field of the same name would be lost.
RESERVED_FIELDS = ("final_objects",)


def value_problem(attr: str, value: Any) -> str | None:
    """Why `value` is not a valid value of `attr` (None when it is)."""
    if attr == "position":
        # A list in JSON; Python callers (the simulator, scorers) may pass a tuple.
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            return f"expected [direction, step], got {value!r}"
        direction, step = value
        if not isinstance(direction, str) or direction not in DIRECTIONS:
            allowed = ", ".join(sorted(DIRECTIONS))
            return f"unknown direction {direction!r} (expected one of {allowed})"
        if type(step) is not int or step not in MOVE_STEPS:
            return f"unknown step {step!r} (expected 1 or 2)"
        return None
    choices = ATTRIBUTE_VALUES[attr]
    if not isinstance(value, str):
        return f"expected a string, got {type_name(value)}"
    if value not in choices:
        return f"unknown value {value!r} (expected one of {', '.join(sorted(choices))})"
    return None


def check_object(checker: RecordChecker, obj: dict[str, Any], path: str) -> None:
    for attr, choices in ATTRIBUTE_VALUES.items():
        checker.get_choice(obj, attr, choices, path)
    position = checker.get_list(obj, "position", int, path, length=2)
    for axis, coordinate in enumerate(position or ()):
        if not GRID_MIN <= coordinate <= GRID_MAX:
            checker.fail(
                f"{path}.position[{axis}]",
                f"coordinate {coordinate} outside the grid [{GRID_MIN}, {GRID_MAX}]",
            )


def check_images(checker: RecordChecker, state: dict[str, Any], path: str) -> None:
    images = checker.get(state, "images", dict, path)
    if images is None:
        return
    if not images:
        checker.fail(f"{path}.images", "no images")
    for camera, file_name in images.items():
        if not isinstance(file_name, str):
            checker.fail(f"{path}.images.{camera}", f"expected a file name, got {type_name(file_name)}")


def check_states(checker: RecordChecker, raw: dict[str, Any]) -> None:
    states = checker.get(raw, "states", list)
    if states is None:
        return
    if len(states) != STATES:
        checker.fail("states", f"expected {STATES} states (initial and final), got {len(states)}")
        return
    for path, state in checker.objects(states, "states"):
        objects = checker.get(state, "objects", list, path)
        if objects is not None:
            if len(objects) != OBJECTS_PER_STATE:
                checker.fail(f"{path}.objects", f"expected {OBJECTS_PER_STATE} objects, got {len(objects)}")
            else:
                for object_path, obj in checker.objects(objects, f"{path}.objects"):
                    check_object(checker, obj, object_path)
        check_images(checker, state, path)


def check_step_action(checker: RecordChecker, step: dict[str, Any], path: str) -> str | None:
    """Check what a step does: obj_idx, attr and val. Shared by data files and answers.

    Returns the attribute when it is known, so callers can check what depends on it.
    """
    obj_idx = checker.get(step, "obj_idx", int, path)
    if obj_idx is not None and not 0 <= obj_idx < OBJECTS_PER_STATE:
        checker.fail(
            f"{path}.obj_idx", f"object index {obj_idx} out of range (expected 0..{OBJECTS_PER_STATE - 1})"
        )
    attr = checker.get_choice(step, "attr", ATTRIBUTES, path)
    if "val" not in step:
        checker.fail(f"{path}.val", "missing field")
    elif attr is not None and (problem := value_problem(attr, step["val"])):
        checker.fail(f"{path}.val", problem)
    return attr


def check_step(checker: RecordChecker, step: dict[str, Any], path: str) -> None:
    attr = check_step_action(checker, step, path)
    options = checker.get(step, "options", list, path)
    if options is not None and attr is not None:
        if not options:
            checker.fail(f"{path}.options", "no options")
        for index, option in enumerate(options):
            if problem := value_problem(attr, option):
                checker.fail(f"{path}.options[{index}]", problem)
    if attr == "position":
        checker.get_choice(step, "type", MOVE_TYPES, path)


def check_transformations(checker: RecordChecker, raw: dict[str, Any]) -> None:
    steps = checker.get(raw, "transformations", list)
    if steps is None:
        return
    if not MIN_STEPS <= len(steps) <= MAX_STEPS:
        checker.fail("transformations", f"expected {MIN_STEPS} to {MAX_STEPS} steps, got {len(steps)}")
    for path, step in checker.objects(steps, "transformations"):
        check_step(checker, step, path)


#: Valid (attribute, value) of a step, moves as ("position", direction, steps), for quick_check.
_STEP_PAIRS = frozenset(
    [(attr, value) for attr, values in ATTRIBUTE_VALUES.items() for value in values]
    + [("position", direction, steps) for direction in DIRECTIONS for steps in MOVE_STEPS]
)


def _quick_pair(attr: Any, value: Any) -> bool:
    if attr == "position":
        return (
            type(value) is list
            and len(value) == 2
            and type(value[1]) is int  # True == 1: a bool is not a step
            and ("position", value[0], value[1]) in _STEP_PAIRS
        )
    return type(value) is str and (attr, value) in _STEP_PAIRS


def quick_check(raw: Any) -> bool:
    """True when the sample is certainly valid (the common case), with no error bookkeeping.

    False means "look closer": `check_record` then names every fault (and finds none when this
    was only conservative). Reading 60,000 samples to score them, this path is what keeps the
    check from costing more than the scoring.
    """
    try:
        if type(raw["idx"]) is not int or any(name in raw for name in RESERVED_FIELDS):
            return False
        states = raw["states"]
        if type(states) is not list or len(states) != STATES:
            return False
        for state in states:
            objects = state["objects"]
            images = state["images"]
            if (
                type(objects) is not list
                or len(objects) != OBJECTS_PER_STATE
                or type(images) is not dict
                or not images
            ):
                return False
            for obj in objects:
                if (obj["color"], obj["material"], obj["shape"], obj["size"]) not in OBJECT_KINDS:
                    return False
                x, y = obj["position"]
                if (
                    type(x) is not int
                    or type(y) is not int
                    or not (GRID_MIN <= x <= GRID_MAX and GRID_MIN <= y <= GRID_MAX)
                ):
                    return False
            for file_name in images.values():
                if type(file_name) is not str:
                    return False
        steps = raw["transformations"]
        if type(steps) is not list or not MIN_STEPS <= len(steps) <= MAX_STEPS:
            return False
        for step in steps:
            obj_idx, attr = step["obj_idx"], step["attr"]
            if type(obj_idx) is not int or not 0 <= obj_idx < OBJECTS_PER_STATE:
                return False
            options = step["options"]
            if type(options) is not list or not options or not _quick_pair(attr, step["val"]):
                return False
            for option in options:
                if not _quick_pair(attr, option):
                    return False
            if attr == "position" and step.get("type") not in MOVE_TYPES:
                return False
    except (KeyError, TypeError, ValueError):
        return False
    return True


def check_record(raw: Any, checker: RecordChecker) -> bool:
    """Name every fault of one sample; True when there is none."""
    if not checker.is_object(raw):
        return False
    before = len(checker.errors)
    checker.get(raw, "idx", int)
    check_states(checker, raw)
    check_transformations(checker, raw)
    for name in RESERVED_FIELDS:
        if name in raw:
            checker.fail(name, "unexpected top-level field (the name is reserved for the final objects)")
    return len(checker.errors) == before


def record_to_catalog(raw: Any, checker: RecordChecker) -> CatalogRecord | None:
    if not quick_check(raw) and not check_record(raw, checker):
        return None
    idx = raw["idx"]

    initial, final = raw["states"]
    initial_objects = initial["objects"]
    object_extras = [
        {key: value for key, value in obj.items() if key not in OBJECT_FIELDS} for obj in initial_objects
    ]
    if any(object_extras):
        initial_objects = [{key: obj[key] for key in OBJECT_FIELDS} for obj in initial_objects]
    payload = {
        "idx": idx,
        "initial": {"objects": initial_objects, "images": initial["images"]},
        "final_images": final["images"],
    }
    _, hidden = split_fields(raw, ("idx", "states"))
    ground_truth = {"final_objects": final["objects"], **hidden}
    state_extras = [
        {key: value for key, value in state.items() if key not in STATE_FIELDS} for state in (initial, final)
    ]
    if any(object_extras):
        state_extras[0]["objects"] = object_extras
    if any(state_extras):
        ground_truth["states"] = state_extras
    media = {f"init.{camera}": name for camera, name in initial["images"].items()}
    media.update((f"fin.{camera}", name) for camera, name in final["images"].items())
    return CatalogRecord(external_id=str(idx), payload=payload, ground_truth=ground_truth, media=media)


def prepare(data: bytes, *, source: str = "") -> PreparedFile:
    return PreparedFile(
        meta={}, labelled=load_json_lines(data, source=source), convert=record_to_catalog, id_field="idx"
    )


def prepare_stream(stream: IO[bytes], *, source: str = "") -> PreparedFile:
    """As `prepare`, reading the samples one line at a time from an open file (bounded memory)."""
    return PreparedFile(
        meta={},
        labelled=stream_json_lines(stream, source=source),
        convert=record_to_catalog,
        id_field="idx",
        streamed=True,
    )


def parse(data: bytes, *, source: str = "") -> ParsedFile:
    return parse_prepared(prepare(data, source=source), source=source)


def read_samples(data: bytes | IO[bytes], *, source: str = "") -> list[dict[str, Any]]:
    """The samples of a data.jsonl as official dicts, every one checked, without catalog records.

    For scoring from files: the same checks and errors as `parse` (all or nothing, every bad
    record named), skipping the split into payload and ground truth that only the catalog needs.
    """
    with paused_gc():
        return list(iter_samples(data, source=source))


def iter_samples(data: bytes | IO[bytes], *, source: str = "") -> Iterator[dict[str, Any]]:
    """`read_samples` one sample at a time, from the bytes or an open binary file (read a line at
    a time: memory holds the samples the caller keeps). Once a record is bad no more samples are
    yielded; the rest of the file is still checked, and one FormatError at its end names every
    fault, so a caller that scores as it reads never reports a number for a faulty file."""
    errors = RecordErrors()
    seen: dict[int, str] = {}
    lines = (
        load_json_lines(data, source=source)
        if isinstance(data, bytes | bytearray)
        else stream_json_lines(data, source=source)
    )
    try:
        for label, raw in lines:
            if not quick_check(raw) and not check_record(raw, RecordChecker(errors, label)):
                continue
            if raw["idx"] in seen:
                errors.append(
                    RecordError(label, "idx", f"duplicate id '{raw['idx']}' (first at {seen[raw['idx']]})")
                )
                continue
            seen[raw["idx"]] = label
            if not errors:
                yield raw
    except FormatError as error:  # lines that are not JSON, found at the end of a streamed file
        errors.extend(error.errors)
    if errors:
        raise FormatError(errors, source=source)


def to_official(payload: dict[str, Any], ground_truth: dict[str, Any]) -> dict[str, Any]:
    hidden = dict(ground_truth)
    final_objects = hidden.pop("final_objects")
    initial_extras, final_extras = hidden.pop("states", ({}, {}))
    initial_extras = dict(initial_extras)
    object_extras = initial_extras.pop("objects", None)
    initial_objects = payload["initial"]["objects"]
    if object_extras:
        initial_objects = [
            {**obj, **extra} for obj, extra in zip(initial_objects, object_extras, strict=True)
        ]
    states = [
        {"objects": initial_objects, "images": payload["initial"]["images"], **initial_extras},
        {"objects": final_objects, "images": payload["final_images"], **final_extras},
    ]
    return {"idx": payload["idx"], "states": states, **hidden}


def serialize(meta: dict[str, Any], records: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    """The official file: JSON Lines, one sample per line (there is no file-level data)."""
    return serialize_json_lines(records)
