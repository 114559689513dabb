"""The ground-truth regions of an item, to draw over its image for researchers (pure, no Django).

STE-VQA: each answer's evidence quadrilateral. CRIC: the boxes of the target objects, from the
scene graph. CLEVR-Ref+: the boxes of the referred objects, from the scene's obj_bbox. A region
is {"label": str, "points": [[x, y], ...]} in the image's pixel coordinates.
"""

from __future__ import annotations

from typing import Any


def item_regions(benchmark: str, ground_truth: dict[str, Any], scene: dict[str, Any] | None) -> list[dict]:
    if benchmark == "stevqa":
        pairs = ground_truth.get("annotation") or [ground_truth]
        return [quadrilateral(pair) for pair in pairs if len(pair.get("evidence") or []) == 8]
    if benchmark == "cric" and scene:
        objects = {obj.get("object_id"): obj for obj in scene.get("objects", [])}
        return [
            box(objects[i], label=(objects[i].get("names") or ["object"])[0])
            for i in ground_truth.get("target", [])
            if i in objects
        ]
    if benchmark == "clevrref" and scene:
        program = ground_truth.get("program") or [{}]
        referred = program[-1].get("_output") or []
        boxes = scene.get("obj_bbox") or {}
        return [
            rectangle(*boxes[str(index + 1)], label=f"object {index}")
            for index in referred
            if isinstance(index, int) and str(index + 1) in boxes
        ]
    return []


def quadrilateral(pair: dict[str, Any]) -> dict:
    coordinates = [float(value) for value in pair["evidence"]]
    points = [[coordinates[i], coordinates[i + 1]] for i in range(0, 8, 2)]
    return {"label": str(pair.get("answer", "")), "points": points}


def box(obj: dict[str, Any], *, label: str) -> dict:
    return rectangle(obj["x"], obj["y"], obj["w"], obj["h"], label=label)


def rectangle(x: float, y: float, width: float, height: float, *, label: str) -> dict:
    return {"label": label, "points": [[x, y], [x + width, y], [x + width, y + height], [x, y + height]]}
