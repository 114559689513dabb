"""CLEVR-Ref+ baselines: a program executor on the scene and a random object (pure, no Django).

A prediction is ``{"refexp_index", "box": [x, y, w, h], "mask": "run lengths"}``
(plugins.clevrref.metric): the box is scored by detection accuracy on single-object
expressions, the mask by segmentation IoU on every expression. Both baselines give both, taken
from the scene's own ``obj_bbox`` and ``obj_mask`` (object i under the key str(i + 1)); a scene
without masks gets boxes only.

- `executor`: runs the expression's program (plugins.clevrref.expressions.execute, the
  executor the generator fills ``_output`` with) on the scene and answers with the referred
  objects: the union box of their boxes and the union of their masks. An upper bound: perfect
  perception and a perfect parse.
- `random`: one object of the scene drawn at random (the run's seed), its box and mask.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inference.baselines import Baseline, RunChoices, Unit, gettext_noop

#: The box and mask of an answer that refers to nothing (IoU 0 against any object).
EMPTY_BOX = [0, 0, 0, 0]
EMPTY_MASK = "0"


def object_key(index: int) -> str:
    """Where object `index` (0-based) is in a scene's obj_bbox and obj_mask."""
    return str(index + 1)


def union_box(boxes: Sequence[Sequence[float]]) -> list[float]:
    """The smallest [x, y, w, h] box holding every box; EMPTY_BOX for none."""
    if not boxes:
        return list(EMPTY_BOX)
    left = min(box[0] for box in boxes)
    top = min(box[1] for box in boxes)
    right = max(box[0] + box[2] for box in boxes)
    bottom = max(box[1] + box[3] for box in boxes)
    return [left, top, right - left, bottom - top]


def union_mask(texts: Sequence[str]) -> str:
    """The run-length mask of the union of run-length masks (the scenes' encoding)."""
    if len(texts) == 1:
        return texts[0]
    from plugins.clevrref.scenes import decode_mask, encode_mask

    if not texts:
        return EMPTY_MASK
    masks = [decode_mask(text) for text in texts]
    union = masks[0].copy()
    for mask in masks[1:]:
        union |= mask
    return encode_mask(union)


def objects_answer(unit: Unit, objects: Sequence[int]) -> dict[str, Any]:
    """The prediction naming `objects` of the unit's scene: their union box and, when the scene has
    every one's mask, their union mask."""
    scene = unit.scene or {}
    boxes = scene.get("obj_bbox") or {}
    masks = scene.get("obj_mask") or {}
    keys = [object_key(index) for index in objects]
    prediction: dict[str, Any] = {
        "refexp_index": int(unit.id),
        "box": union_box([boxes[key] for key in keys if key in boxes]),
    }
    if masks:
        prediction["mask"] = (
            union_mask([masks[key] for key in keys]) if all(key in masks for key in keys) else EMPTY_MASK
        )
    return prediction


class ExecutorBaseline(Baseline):
    """Runs each expression's program on its scene; see the module docstring.

    A program that cannot run (no scene, a unique step on several objects, an unknown step) is
    answered with an empty box and mask, and counted in the run's parameters.
    """

    name = "executor"
    title = "Program executor on the scene"
    description = gettext_noop(
        "Executes the expression's functional program on the CLEVR scene and answers with the referred "
        "objects' union box and mask: an upper bound with perfect perception and a perfect parse."
    )
    uses = gettext_noop(
        "The expression's program (its steps and values, not the recorded output) and the scene's objects, "
        "relationships, boxes and masks: an upper bound that reads the truth."
    )

    def load(self, units: Sequence[Unit], choices: RunChoices) -> None:
        super().load(units, choices)
        self.facts: dict[Any, Any] = {}
        self.failures: list[str] = []

    def facts_for(self, scene: Mapping[str, Any]):
        """The scene's facts, kept per scene: visibility is decoded from the masks once."""
        from plugins.clevrref.expressions import SceneFacts

        key = scene.get("image_index", id(scene))
        if key not in self.facts:
            self.facts[key] = SceneFacts(dict(scene))
        return self.facts[key]

    def predict(self, units: Sequence[Unit], inputs: Any) -> list[dict[str, Any]]:
        return [self.answer(unit) for unit in units]

    def answer(self, unit: Unit) -> dict[str, Any]:
        from plugins.clevrref.expressions import execute

        program = list(unit.record.get("program") or ())
        try:
            if unit.scene is None or not program:
                raise ValueError("no scene or no program")
            referred = execute(program, self.facts_for(unit.scene))[-1]
        except (ValueError, KeyError, IndexError, TypeError):
            self.failures.append(unit.id)
            return {"refexp_index": int(unit.id), "box": list(EMPTY_BOX), "mask": EMPTY_MASK}
        objects = [referred] if isinstance(referred, int) else list(referred)
        return objects_answer(unit, objects)

    def parameters(self) -> dict[str, Any]:
        return {"programs_failed": len(getattr(self, "failures", ()))}


class RandomObjectBaseline(Baseline):
    name = "random"
    title = "Random object"
    description = gettext_noop("Answers with one object of the scene drawn at random: its box and mask.")
    uses = gettext_noop("The scene's object boxes and masks (not the expression), and the run's seed.")

    def predict(self, units: Sequence[Unit], inputs: Any) -> list[dict[str, Any]]:
        predictions = []
        for unit in units:
            count = len((unit.scene or {}).get("objects") or ())
            if not count:
                predictions.append({"refexp_index": int(unit.id), "box": list(EMPTY_BOX), "mask": EMPTY_MASK})
                continue
            predictions.append(objects_answer(unit, [self.rng.randrange(count)]))
        return predictions
