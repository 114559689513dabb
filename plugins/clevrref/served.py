"""CLEVR-Ref+ asked of a served chat model (pure): the image and the expression in, a bounding box
read out as [x1, y1, x2, y2] in the image's pixels and written as the prediction's [x, y, w, h].
"NONE" (the expression refers to no object) is an answer without a box, which is right on a false
premise. A reply with no box in it is recorded as a box over the whole image: wrong everywhere
(it names something, and no CLEVR object fills the image)."""

from __future__ import annotations

import re
from typing import Any

from inference.plugins import ModelInput
from inference.served import ServedFormat, Unparsed, image_size, numbers

IMAGE_ROLE = "image"
BRACKETS = re.compile(r"[\[(]([^\[\]()]*)[\])]")
NOTHING = re.compile(r"\b(none|no object|nothing)\b", re.I)


class ClevrRefServed(ServedFormat):
    template = (
        "The image is {width} x {height} pixels. Find the object this expression refers to: "
        '"{refexp}"\n'
        "Answer with its bounding box as [x1, y1, x2, y2] in pixels: its left, top, right and bottom "
        "edges, x counted from the left and y from the top. If the expression refers to no object "
        "in the image, answer NONE. No explanation."
    )

    def prompt(self, item: ModelInput) -> tuple[str, list[str]]:
        role = image_role(item)
        width, height = image_size(item.images[role])
        text = self.template.format(width=width, height=height, refexp=item.payload.get("refexp", ""))
        return text, [role]

    def parse(self, text: str, item: ModelInput) -> dict[str, Any]:
        box = four_numbers(text)
        if box is None:
            if NOTHING.search(text):
                return {"refexp_index": int(item.id)}
            raise Unparsed("no box of four numbers in the reply")
        x1, y1, x2, y2 = box
        if all(0 <= value <= 1 for value in box) and any(value != int(value) for value in box):
            width, height = image_size(item.images[image_role(item)])  # fractions of the image
            x1, x2, y1, y2 = x1 * width, x2 * width, y1 * height, y2 * height
        left, top = min(x1, x2), min(y1, y2)
        return {
            "refexp_index": int(item.id),
            "box": [round(left, 2), round(top, 2), round(abs(x2 - x1), 2), round(abs(y2 - y1), 2)],
        }

    def unparsed(self, item: ModelInput) -> dict[str, Any]:
        width, height = image_size(item.images[image_role(item)])
        return {"refexp_index": int(item.id), "box": [0, 0, width, height]}


def image_role(item: ModelInput) -> str:
    return IMAGE_ROLE if IMAGE_ROLE in item.images else next(iter(sorted(item.images)), IMAGE_ROLE)


def four_numbers(text: str) -> list[float] | None:
    """The first bracketed group of four numbers in a reply, else its first four numbers."""
    for group in BRACKETS.findall(text):
        found = numbers(group)
        if len(found) == 4:
            return found
    found = numbers(text)
    return found[:4] if len(found) >= 4 else None
