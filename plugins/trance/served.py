"""TRANCE asked of a served chat model (pure): the initial and final Center renders and the initial
objects' descriptions in, the transformations read out of a JSON list in the reply.

Basic and Event only. View scores every sample under each of the three final cameras, one answer
per camera (the released protocol): a chat model would be asked three times per sample, which this
format does not do; run View through the yardstick protocol, where the server sees every render.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inference.plugins import ModelInput
from inference.served import ServedFormat, Unparsed, json_block
from plugins.trance.formats import (
    ATTRIBUTE_VALUES,
    BASIC,
    CENTER_CAMERA,
    DIRECTIONS,
    EVENT,
    MAX_STEPS,
    MOVE_STEPS,
    OBJECTS_PER_STATE,
)
from plugins.trance.simulator import STEP_UNITS

INITIAL_ROLE = f"init.{CENTER_CAMERA}"
FINAL_ROLE = f"fin.{CENTER_CAMERA}"
HOW_MANY = {
    BASIC: "Exactly one transformation changed the scene.",
    EVENT: f"Between 1 and {MAX_STEPS} transformations changed the scene, one after another.",
}


def direction_words() -> str:
    """Each direction with the coordinates a move towards it changes: "behind (+x), ..."."""

    def change(axis: str, delta: int) -> str:
        return f"{'+' if delta > 0 else '-'}{axis}" if delta else ""

    return ", ".join(
        f"{name} ({' '.join(filter(None, (change('x', dx), change('y', dy))))})"
        for name, (dx, dy) in DIRECTIONS.items()
    )


TEMPLATE = (
    "The first image shows a scene of {count} objects; the second shows the same scene after some "
    "transformations. Each transformation changes one attribute of one object.\n"
    "The objects in the first image, numbered from 0 (position as (x, y) on the floor):\n"
    "{objects}\n"
    "{how_many}\n"
    "A transformation sets one of: "
    + "; ".join(f"{attr} to {', '.join(values)}" for attr, values in ATTRIBUTE_VALUES.items())
    + f"; or position: a move of {' or '.join(map(str, MOVE_STEPS))} steps of {STEP_UNITS} towards "
    + direction_words()
    + ".\nAnswer with the transformations in the order they happened, as a JSON list of "
    "[object number, attribute, value], a move's value as [direction, steps]; for example "
    '[[2, "color", "cyan"], [2, "position", ["behind", 2]]]. No explanation.'
)


class TranceServed(ServedFormat):
    template = TEMPLATE
    settings = (BASIC, EVENT)

    def prompt(self, item: ModelInput) -> tuple[str, list[str]]:
        objects = item.payload.get("initial", {}).get("objects", [])
        text = self.template.format(
            count=len(objects),
            objects="\n".join(object_line(index, obj) for index, obj in enumerate(objects)),
            how_many=HOW_MANY.get(item.setting, HOW_MANY[EVENT]),
        )
        return text, [INITIAL_ROLE, FINAL_ROLE]

    def parse(self, text: str, item: ModelInput) -> list[dict[str, Any]]:
        found = json_block(text)
        if isinstance(found, Mapping) and isinstance(found.get("steps", found.get("transformations")), list):
            found = found.get("steps", found.get("transformations"))
        if not isinstance(found, list):
            raise Unparsed("the JSON in the reply is not a list of transformations")
        if found and not isinstance(found[0], list | Mapping):
            found = [found]  # one transformation, not in a list
        return [step_of(raw, index) for index, raw in enumerate(found)]

    def unparsed(self, item: ModelInput) -> list[dict[str, Any]]:
        return []


def object_line(index: int, obj: Mapping[str, Any]) -> str:
    position = obj.get("position") or ("?", "?")
    words = " ".join(str(obj.get(attr, "")) for attr in ("size", "color", "material", "shape"))
    return f"{index}: {words} at ({position[0]}, {position[1]})"


def step_of(raw: Any, index: int) -> dict[str, Any]:
    """One transformation as the prediction file holds it, read leniently (a triple or an object,
    any case, numbers written as text); Unparsed names what is wrong."""
    if isinstance(raw, Mapping):
        parts = [
            raw.get(key, raw.get(other))
            for key, other in (("obj_idx", "object"), ("attr", "attribute"), ("val", "value"))
        ]
    elif isinstance(raw, Sequence) and not isinstance(raw, str) and len(raw) == 3:
        parts = list(raw)
    else:
        raise Unparsed(f"transformation {index}: expected [object number, attribute, value]")
    obj, attr, value = parts
    obj = whole(obj)
    if obj is None or not 0 <= obj < OBJECTS_PER_STATE:
        raise Unparsed(f"transformation {index}: no object number 0 to {OBJECTS_PER_STATE - 1}")
    attr = str(attr or "").strip().lower()
    if attr == "position":
        if isinstance(value, str):
            value = value.replace(",", " ").split()
        if not isinstance(value, Sequence) or len(value) != 2:
            raise Unparsed(f"transformation {index}: a move's value is [direction, steps]")
        direction, steps = str(value[0]).strip().lower().replace("_", "-").replace(" ", "-"), whole(value[1])
        if direction not in DIRECTIONS or steps not in MOVE_STEPS:
            raise Unparsed(f"transformation {index}: no move {list(value)!r}")
        return {"obj_idx": obj, "attr": attr, "val": [direction, steps]}
    if attr not in ATTRIBUTE_VALUES:
        raise Unparsed(f"transformation {index}: no attribute {attr!r}")
    value = str(value or "").strip().lower()
    if value not in ATTRIBUTE_VALUES[attr]:
        raise Unparsed(f"transformation {index}: no {attr} {value!r}")
    return {"obj_idx": obj, "attr": attr, "val": value}


def whole(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None
