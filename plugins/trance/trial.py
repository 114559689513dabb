"""A TRANCE trial: the initial and final scenes; the answer is the ordered list of steps between them."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from django.db.models import QuerySet
from django.db.models.fields.json import KeyTransform
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from humantest.trials.base import (
    AnswerRefused,
    BalanceField,
    BenchmarkTrial,
    JSONArrayLength,
    TrialUnit,
    media,
)
from plugins.trance.formats import (
    ATTRIBUTE_VALUES,
    BASIC,
    CENTER_CAMERA,
    DIRECTIONS,
    FINAL_CAMERAS,
    MAX_STEPS,
    MOVE_STEPS,
    VIEW,
)

#: The View balance that shows each item under all three final cameras, one per tester in turn.
CAMERA_ROTATION = "camera_rotation"

CAMERA_NAMES = {"Camera_Left": "left", "Camera_Center": "centre", "Camera_Right": "right"}
#: The attributes as the result panel names them (the keys are the benchmark's field names).
ATTRIBUTE_NAMES = {
    "color": gettext_lazy("color"),
    "material": gettext_lazy("material"),
    "shape": gettext_lazy("shape"),
    "size": gettext_lazy("size"),
}


#: Where each of TRANCE's directions takes an object, in words a tester can check against the
#: renders and the top view ("behind" is toward the centre camera: the released data's convention).
DIRECTION_MEANINGS = {
    "behind": gettext_lazy("toward the centre camera, toward you (down in the top view)"),
    "front": gettext_lazy("away from the centre camera (up in the top view)"),
    "left": gettext_lazy("to the left as the centre camera sees it"),
    "right": gettext_lazy("to the right as the centre camera sees it"),
    "behind-left": gettext_lazy("toward the centre camera and to its left (down and left in the top view)"),
    "behind-right": gettext_lazy(
        "toward the centre camera and to its right (down and right in the top view)"
    ),
    "front-left": gettext_lazy("away from the centre camera and to its left (up and left in the top view)"),
    "front-right": gettext_lazy(
        "away from the centre camera and to its right (up and right in the top view)"
    ),
}


def direction_lesson(index: int, steps: Sequence[dict[str, Any]]) -> list[str]:
    """What the true position steps of object `index` did, in words and in TRANCE's: the practice
    guidance that teaches the direction convention where a tester got a position wrong."""
    lessons = []
    for step in steps:
        value = step.get("val")
        if step.get("obj_idx") != index or step.get("attr") != "position" or not isinstance(value, list):
            continue
        direction = value[0] if value else ""
        if direction in DIRECTION_MEANINGS:
            lessons.append(
                _("Object %(index)s moved %(meaning)s: TRANCE calls that “%(direction)s” (×%(count)s).")
                % {
                    "index": index,
                    "meaning": DIRECTION_MEANINGS[direction],
                    "direction": direction,
                    "count": value[1] if len(value) > 1 else 1,
                }
            )
    return lessons


def most_steps(unit: TrialUnit) -> int:
    # Basic is the one-step setting: its answer is a single transformation.
    return 1 if unit.context.get("setting") == BASIC else MAX_STEPS


class TranceTrial(BenchmarkTrial):
    balance_fields = {
        "length": BalanceField(gettext_lazy("Number of transformations")),
        "camera": BalanceField(gettext_lazy("Final camera (View)"), of_items=False, setting=VIEW),
        CAMERA_ROTATION: BalanceField(
            gettext_lazy("Each item under all three final cameras, in turn across testers (View)"),
            of_items=False,
            setting=VIEW,
        ),
    }
    headline = ("AD", "dist")  # accuracy is shown anyway; the mean distance adds to it

    def draw_fields(self, balance_by: str) -> dict[str, Any]:
        # Only the number of steps is needed: counted by the database, not decoded here.
        return {"length": JSONArrayLength(KeyTransform("transformations", "ground_truth"))}

    def eligible(self, row: dict[str, Any], setting: str) -> bool:
        return setting != BASIC or row["length"] == 1

    def balance_value(self, row: dict[str, Any], field: str, part: int) -> Any:
        if field == "length":
            return row["length"]
        raise KeyError(field)

    def contexts(
        self,
        setting: str,
        count: int,
        balance_by: str,
        rng: random.Random,
        *,
        items: Sequence[int] = (),
        turn: int = 0,
    ) -> list[dict[str, Any]]:
        if setting != VIEW:
            return [{"camera": CENTER_CAMERA} for _ in range(count)]
        if balance_by == CAMERA_ROTATION and len(items) == count:
            # Item i goes to the tester of turn t under camera (i + t) mod 3: any three testers in a
            # row who get the same item see it from the left, the centre and the right, which the
            # released View protocol scores (every sample under every final camera).
            return [{"camera": FINAL_CAMERAS[(item + turn) % len(FINAL_CAMERAS)]} for item in items]
        if balance_by == "camera":
            cameras = [FINAL_CAMERAS[index % len(FINAL_CAMERAS)] for index in range(count)]
            rng.shuffle(cameras)
        else:
            cameras = [rng.choice(FINAL_CAMERAS) for _ in range(count)]
        return [{"camera": camera} for camera in cameras]

    def view(self, unit: TrialUnit) -> dict[str, Any]:
        from plugins.trance.diagram import WORDS, scene_diagram_svg

        payload = unit.item.payload
        objects = payload["initial"]["objects"]
        camera = unit.context.get("camera", CENTER_CAMERA)
        return {
            "idx": payload["idx"],
            "objects": objects,
            "initial_image": media(unit.item, f"init.{CENTER_CAMERA}"),
            "final_image": media(unit.item, f"fin.{camera}"),
            "camera": camera,
            "camera_name": CAMERA_NAMES.get(camera, camera),
            "diagram": scene_diagram_svg(
                objects, pixels=300, words={key: _(word) for key, word in WORDS.items()}
            ),
            "attributes": {**ATTRIBUTE_VALUES},
            "directions": list(DIRECTIONS),
            "move_steps": list(MOVE_STEPS),
            "max_steps": most_steps(unit),
        }

    def read_answer(self, unit: TrialUnit, raw: Any) -> Any:
        from plugins.trance import metric

        steps = raw.get("steps") if isinstance(raw, dict) else None
        if not isinstance(steps, list):
            raise AnswerRefused("steps", _("expected a list of steps"))
        limit = most_steps(unit)
        if not 1 <= len(steps) <= limit:
            raise AnswerRefused(
                "steps", _("give 1 to %(limit)s steps, got %(count)s") % {"limit": limit, "count": len(steps)}
            )
        count = len(unit.item.payload["initial"]["objects"])
        answer = []
        for index, step in enumerate(steps):
            if not isinstance(step, dict):
                raise AnswerRefused(f"steps[{index}]", _("expected an object with obj_idx, attr and val"))
            clean = {key: step.get(key) for key in ("obj_idx", "attr", "val")}
            # The metric's own check of an answer's steps, so that a tester is held to the same rules.
            problems = metric.answer_problems("answer", [clean])
            if problems:
                raise AnswerRefused(f"steps[{index}].{problems[0].field.split('.')[-1]}", problems[0].message)
            if not 0 <= clean["obj_idx"] < count:
                raise AnswerRefused(
                    f"steps[{index}].obj_idx",
                    _("no object %(index)s in this scene") % {"index": clean["obj_idx"]},
                )
            answer.append(clean)
        return answer

    def prediction(self, unit: TrialUnit, answer: Any) -> Any:
        """View: the answer per camera, under the one camera the trial showed (the released
        protocol scores each (sample, camera) pair; a trial answers one of them)."""
        if unit.context.get("setting") == VIEW:
            return {unit.context.get("camera", CENTER_CAMERA): answer}
        return answer

    def options(self, units: Sequence[TrialUnit]) -> dict[str, Any]:
        """The camera each trial's final state was shown from: View scores the (sample, camera)
        pairs shown, not the two cameras a trial did not show. And each trial's seconds, where
        its unit carries them (``context["seconds"]``), for the time per camera."""
        options: dict[str, Any] = {
            "cameras": {unit.key: unit.context.get("camera", CENTER_CAMERA) for unit in units}
        }
        seconds = {
            unit.key: unit.context["seconds"] for unit in units if unit.context.get("seconds") is not None
        }
        if seconds:
            options["seconds"] = seconds
        return options

    def truth(self, unit: TrialUnit) -> dict[str, Any]:
        steps = [
            {key: step[key] for key in ("obj_idx", "attr", "val")}
            for step in unit.item.ground_truth.get("transformations", ())
        ]
        return {"steps": steps, "final_objects": unit.item.ground_truth.get("final_objects", [])}

    def correct(self, row: dict[str, Any]) -> bool | None:
        return bool(row.get("correct"))

    def suggested_practice(self, items: QuerySet, count: int) -> list[str]:
        """An item with a step "behind" or "front" comes first (the fewest steps among the first
        200, one if there is such an item): its guidance teaches that "behind" is toward the
        camera, the convention testers misread. Then the first items."""

        def teaches(truth: dict[str, Any]) -> bool:
            return any(
                step.get("attr") == "position" and (step.get("val") or [None])[0] in ("behind", "front")
                for step in truth.get("transformations") or []
            )

        first = list(items.order_by("position").values_list("external_id", "ground_truth")[:200])
        lessons = [
            (len(truth.get("transformations") or []), external_id)
            for external_id, truth in first
            if teaches(truth)
        ]
        teaching = [min(lessons)[1]] if lessons and count else []
        return (
            teaching
            + [external_id for external_id, _truth in first if external_id not in teaching][
                : count - len(teaching)
            ]
        )

    def explain(self, unit: TrialUnit, answer: Any) -> list[str]:
        """Where the state the answer leads to differs from the true final state, object by object."""
        from plugins.trance.simulator import InvalidStep, apply_steps, positions_match

        initial = unit.item.payload["initial"]["objects"]
        final = unit.item.ground_truth.get("final_objects") or []
        try:
            outcome = apply_steps(initial, answer or [])
        except InvalidStep as problem:
            return [_("Your steps cannot be applied: %(problem)s.") % {"problem": problem}]
        lines = []
        if outcome.overlap_error:
            lines.append(_("One of your steps makes an object overlap another one."))
        if outcome.invalid_position_error:
            lines.append(_("One of your steps moves an object off the plane."))
        for index, (predicted, true) in enumerate(zip(outcome.objects, final, strict=False)):
            for attr in ("color", "material", "shape", "size"):
                if predicted[attr] != true[attr]:
                    lines.append(
                        _(
                            "Object %(index)s: your %(attribute)s is %(yours)s, the final scene shows %(truth)s."
                        )
                        % {
                            "index": index,
                            "attribute": ATTRIBUTE_NAMES.get(attr, attr),
                            "yours": predicted[attr],
                            "truth": true[attr],
                        }
                    )
            if not positions_match(predicted["position"], true["position"]):
                lines.append(
                    _(
                        "Object %(index)s: your steps put it at %(yours)s, the final scene has it at %(truth)s."
                    )
                    % {
                        "index": index,
                        "yours": tuple(predicted["position"]),
                        "truth": tuple(true["position"]),
                    }
                )
                lines.extend(direction_lesson(index, unit.item.ground_truth.get("transformations") or []))
        if not lines:
            lines.append(_("Your steps lead exactly to the final scene."))
        return lines
