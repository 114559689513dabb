"""What a trial is on each benchmark: what the tester sees, what they answer, how it is scored.

One `TrialKind` per benchmark. `view` is the only function whose result reaches the browser
before the trial's answer is final, so it is built from the item's payload and scene alone and
never reads `Item.ground_truth` (tests/humantest/test_leaks.py checks every tester-facing
response). Everything else runs on the server: `read_answer` turns the browser's answer into the
benchmark's prediction format (refusing bad input with the field named), `record` rebuilds the
official ground-truth record and `score` runs the evaluation engine's metric module on it, so a
tester's answer is scored by exactly the code that scores a model's.

Trials are scored under a synthetic id (the trial's primary key) so that the same item answered
by several testers can be scored together for the pooled human row.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db.models import Func, IntegerField, QuerySet
from django.db.models.fields.json import KeyTransform

from benchmarks.registry import format_module
from benchmarks.trance.formats import ATTRIBUTE_VALUES, DIRECTIONS, MOVE_STEPS
from evaluation.metrics import clevrref as clevrref_metric
from evaluation.metrics import cric as cric_metric
from evaluation.metrics import stevqa as stevqa_metric
from evaluation.metrics import trance as trance_metric
from evaluation.metrics.scored import Scored

CAMERAS = ("Camera_Left", "Camera_Center", "Camera_Right")
CAMERA_NAMES = {"Camera_Left": "left", "Camera_Center": "centre", "Camera_Right": "right"}
CENTER = "Camera_Center"


class JSONArrayLength(Func):
    """The length of a JSON array, computed by the database (SQLite and PostgreSQL)."""

    function = "JSON_ARRAY_LENGTH"
    output_field = IntegerField()

    def as_postgresql(self, compiler, connection, **extra):
        return super().as_sql(compiler, connection, function="JSONB_ARRAY_LENGTH", **extra)


class AnswerRefused(ValueError):
    """The answer cannot be stored; `field` names what is wrong. Nothing is stored."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass
class Unit:
    """One trial's inputs: the item, which question of it, what the plan chose, its score id."""

    item: Any
    part: int
    context: dict[str, Any]
    key: int


class TrialKind:
    benchmark = ""
    settings: tuple[str, ...] = ("",)
    #: Fields a plan can balance its draw over: name -> label.
    balance_fields: dict[str, str] = {}
    #: The per-trial score shown beside accuracy: (label, key of the metric's per-item row).
    headline: tuple[str, str] = ("", "")

    # Drawing works on light rows, not items: {"pk", "external_id", and the `draw_fields`}, so that
    # opening a plan on a dataset of 100,000 items reads a few fields of each, not its whole record.

    def drawable(self, items: QuerySet) -> QuerySet:
        """The items a tester can be shown at all (their images are there), filtered in the database."""
        return items

    def draw_fields(self, balance_by: str) -> dict[str, Any]:
        """What `eligible`, `parts` and `balance_value` read: row key -> ORM path or expression."""
        return {}

    def eligible(self, row: dict[str, Any], setting: str) -> bool:
        return True

    def parts(self, row: dict[str, Any]) -> int:
        """How many trials one item holds (questions of an image); 1 for most benchmarks."""
        return 1

    def balance_value(self, row: dict[str, Any], field: str, part: int) -> Any:
        raise KeyError(field)

    def contexts(self, setting: str, count: int, balance_by: str, rng: random.Random) -> list[dict[str, Any]]:
        """What the plan chooses per trial besides the item (the View camera); one dict per trial."""
        return [{} for _ in range(count)]

    def view(self, unit: Unit) -> dict[str, Any]:
        raise NotImplementedError

    def read_answer(self, unit: Unit, raw: Any) -> Any:
        raise NotImplementedError

    def record(self, unit: Unit) -> dict[str, Any]:
        raise NotImplementedError

    def stored_answer(self, unit: Unit, answer: Any) -> Any:
        """The answer as the tester's Prediction keeps it: the benchmark's prediction format
        (without the id, which is the Prediction's item), plus what identifies the question."""
        return answer

    def score(self, setting: str, units: Sequence[Unit], answers: dict[int, Any]) -> Scored:
        raise NotImplementedError

    def row_key(self, row: dict[str, Any]) -> int:
        raise NotImplementedError

    def truth(self, unit: Unit) -> dict[str, Any]:
        """The right answer as the result page shows it (only after the answer is final)."""
        raise NotImplementedError

    def correct(self, row: dict[str, Any]) -> bool | None:
        raise NotImplementedError

    def explain(self, unit: Unit, answer: Any) -> list[str]:
        """Why the answer scored as it did, in sentences for the result panel (after the answer)."""
        return []


def official(item: Any) -> dict[str, Any]:
    return format_module(item.dataset.benchmark).to_official(item.payload, item.ground_truth)


def media(item: Any, role: str) -> str:
    name = item.media.get(role)
    return item.dataset.media_url(name) if name else ""


# --- TRANCE ---------------------------------------------------------------------------------------


class TranceKind(TrialKind):
    benchmark = "trance"
    settings = ("basic", "event", "view")
    balance_fields = {"length": "Number of transformations", "camera": "Final camera (View)"}
    headline = ("AD", "dist")  # accuracy is shown anyway; the mean distance adds to it

    def draw_fields(self, balance_by: str) -> dict[str, Any]:
        # Only the number of steps is needed: counted by the database, not decoded here.
        return {"length": JSONArrayLength(KeyTransform("transformations", "ground_truth"))}

    def eligible(self, row: dict[str, Any], setting: str) -> bool:
        # Basic is the one-step setting: its answer is a single transformation.
        return setting != "basic" or row["length"] == 1

    def balance_value(self, row: dict[str, Any], field: str, part: int) -> Any:
        if field == "length":
            return row["length"]
        raise KeyError(field)

    def contexts(self, setting: str, count: int, balance_by: str, rng: random.Random) -> list[dict[str, Any]]:
        if setting != "view":
            return [{"camera": CENTER} for _ in range(count)]
        if balance_by == "camera":
            cameras = [CAMERAS[index % 3] for index in range(count)]
            rng.shuffle(cameras)
        else:
            cameras = [rng.choice(CAMERAS) for _ in range(count)]
        return [{"camera": camera} for camera in cameras]

    def view(self, unit: Unit) -> dict[str, Any]:
        from benchmarks.trance.diagram import scene_diagram_svg

        payload = unit.item.payload
        objects = payload["initial"]["objects"]
        camera = unit.context.get("camera", CENTER)
        return {
            "idx": payload["idx"],
            "objects": objects,
            "initial_image": media(unit.item, f"init.{CENTER}"),
            "final_image": media(unit.item, f"fin.{camera}"),
            "camera": camera,
            "camera_name": CAMERA_NAMES.get(camera, camera),
            "diagram": scene_diagram_svg(objects, pixels=300),
            "attributes": {**ATTRIBUTE_VALUES},
            "directions": list(DIRECTIONS),
            "move_steps": list(MOVE_STEPS),
            "max_steps": 1 if unit.context.get("setting") == "basic" else 4,
        }

    def read_answer(self, unit: Unit, raw: Any) -> Any:
        steps = raw.get("steps") if isinstance(raw, dict) else None
        if not isinstance(steps, list):
            raise AnswerRefused("steps", "expected a list of steps")
        limit = 1 if unit.context.get("setting") == "basic" else 4
        if not 1 <= len(steps) <= limit:
            raise AnswerRefused("steps", f"give 1 to {limit} steps, got {len(steps)}")
        count = len(unit.item.payload["initial"]["objects"])
        answer = []
        for index, step in enumerate(steps):
            if not isinstance(step, dict):
                raise AnswerRefused(f"steps[{index}]", "expected an object with obj_idx, attr and val")
            clean = {key: step.get(key) for key in ("obj_idx", "attr", "val")}
            problems = trance_metric.answer_problems("answer", [clean])
            if problems:
                raise AnswerRefused(f"steps[{index}].{problems[0].field.split('.')[-1]}", problems[0].message)
            if not 0 <= clean["obj_idx"] < count:
                raise AnswerRefused(f"steps[{index}].obj_idx", f"no object {clean['obj_idx']} in this scene")
            answer.append(clean)
        return answer

    def record(self, unit: Unit) -> dict[str, Any]:
        return {**official(unit.item), "idx": unit.key}

    def score(self, setting: str, units: Sequence[Unit], answers: dict[int, Any]) -> Scored:
        records = [self.record(unit) for unit in units]
        if setting == "basic":
            return trance_metric.score_basic(records, answers)
        if setting == "event":
            return trance_metric.score_event(records, answers)
        cameras = {unit.key: unit.context.get("camera", CENTER) for unit in units}
        return trance_metric.score_view(records, answers, cameras)

    def row_key(self, row: dict[str, Any]) -> int:
        return int(row["idx"])

    def truth(self, unit: Unit) -> dict[str, Any]:
        steps = [
            {key: step[key] for key in ("obj_idx", "attr", "val")}
            for step in unit.item.ground_truth.get("transformations", ())
        ]
        return {"steps": steps, "final_objects": unit.item.ground_truth.get("final_objects", [])}

    def correct(self, row: dict[str, Any]) -> bool | None:
        return bool(row.get("correct"))

    def explain(self, unit: Unit, answer: Any) -> list[str]:
        """Where the state the answer leads to differs from the true final state, object by object."""
        from benchmarks.trance.simulator import InvalidStep, apply_steps, positions_match

        initial = unit.item.payload["initial"]["objects"]
        final = unit.item.ground_truth.get("final_objects") or []
        try:
            outcome = apply_steps(initial, answer or [])
        except InvalidStep as problem:
            return [f"Your steps cannot be applied: {problem}."]
        lines = []
        if outcome.overlap_error:
            lines.append("One of your steps makes an object overlap another one.")
        if outcome.invalid_position_error:
            lines.append("One of your steps moves an object off the plane.")
        for index, (predicted, true) in enumerate(zip(outcome.objects, final, strict=False)):
            for attr in ("color", "material", "shape", "size"):
                if predicted[attr] != true[attr]:
                    lines.append(
                        f"Object {index}: your {attr} is {predicted[attr]}, the final scene shows {true[attr]}."
                    )
            if not positions_match(predicted["position"], true["position"]):
                lines.append(
                    f"Object {index}: your steps put it at {tuple(predicted['position'])}, "
                    f"the final scene has it at {tuple(true['position'])}."
                )
        if not lines:
            lines.append("Your steps lead exactly to the final scene.")
        return lines


# --- CRIC ----------------------------------------------------------------------------------------


def cric_box(obj: dict[str, Any]) -> dict[str, Any]:
    """A scene-graph object as the widget draws it: its id and [x, y, w, h] in pixels."""
    return {"id": obj["object_id"], "box": [obj["x"], obj["y"], obj["w"], obj["h"]]}


class CricKind(TrialKind):
    benchmark = "cric"
    balance_fields = {"question_type": "Question type"}
    headline = ("Final", "final_correct")

    def drawable(self, items: QuerySet) -> QuerySet:
        return items.filter(scene__isnull=False).exclude(scene__image="")

    def draw_fields(self, balance_by: str) -> dict[str, str]:
        return {"question_type": "payload__question_type"} if balance_by else {}

    def balance_value(self, row: dict[str, Any], field: str, part: int) -> Any:
        if field == "question_type":
            return row["question_type"]
        raise KeyError(field)

    def view(self, unit: Unit) -> dict[str, Any]:
        scene = unit.item.scene
        objects = scene.data.get("objects", [])
        return {
            "question": unit.item.payload.get("question", ""),
            "question_type": unit.item.payload.get("question_type", ""),
            "image": unit.item.dataset.media_url(scene.image),
            "width": scene.data.get("width"),
            "height": scene.data.get("height"),
            # Every object of the image is a candidate, in scene order; names are not shown.
            "candidates": [cric_box(obj) for obj in objects],
        }

    def read_answer(self, unit: Unit, raw: Any) -> Any:
        if not isinstance(raw, dict):
            raise AnswerRefused("answer", "expected an object with answer and object")
        text = raw.get("answer")
        if not isinstance(text, str) or not text.strip():
            raise AnswerRefused("answer", "type an answer")
        chosen = raw.get("object")
        if chosen is not None:
            known = {obj["object_id"] for obj in unit.item.scene.data.get("objects", [])}
            if type(chosen) is not int or chosen not in known:
                raise AnswerRefused("object", f"{chosen!r} is not an object of this image")
        return {"answer": text.strip(), "object": chosen}

    def record(self, unit: Unit) -> dict[str, Any]:
        return {**official(unit.item), "question_id": str(unit.key)}

    def score(self, setting: str, units: Sequence[Unit], answers: dict[int, Any]) -> Scored:
        records = [self.record(unit) for unit in units]
        predictions = [{"question_id": str(key), **answer} for key, answer in answers.items()]
        return cric_metric.score(records, predictions)

    def row_key(self, row: dict[str, Any]) -> int:
        return int(row["question_id"])

    def truth(self, unit: Unit) -> dict[str, Any]:
        truth = unit.item.ground_truth
        targets = set(truth.get("target") or [])
        boxes = [
            cric_box(obj) for obj in unit.item.scene.data.get("objects", []) if obj["object_id"] in targets
        ]
        return {"answer": truth.get("answer"), "target": sorted(targets), "boxes": boxes}

    def correct(self, row: dict[str, Any]) -> bool | None:
        return bool(row.get("final_correct"))


# --- CLEVR-Ref+ ----------------------------------------------------------------------------------


class ClevrRefKind(TrialKind):
    benchmark = "clevrref"
    balance_fields = {"category": "Expression category", "single": "Single or several objects"}
    headline = ("mean IoU", "mask_iou")

    def drawable(self, items: QuerySet) -> QuerySet:
        return items.filter(scene__data__has_key="obj_mask").exclude(scene__image="")

    def draw_fields(self, balance_by: str) -> dict[str, str]:
        return {"program": "ground_truth__program"} if balance_by else {}

    def balance_value(self, row: dict[str, Any], field: str, part: int) -> Any:
        if field == "category":
            return clevrref_metric.expression_category(row)
        if field == "single":
            return len(clevrref_metric.referred_objects(row)) == 1
        raise KeyError(field)

    def view(self, unit: Unit) -> dict[str, Any]:
        scene = unit.item.scene.data
        boxes = scene.get("obj_bbox", {})
        return {
            "refexp": unit.item.payload.get("refexp", ""),
            "image": unit.item.dataset.media_url(unit.item.scene.image),
            "width": clevrref_metric.DEFAULT_WIDTH,
            "height": clevrref_metric.DEFAULT_HEIGHT,
            "candidates": [
                {"id": index, "box": boxes[str(index + 1)]}
                for index in range(len(scene.get("objects", [])))
                if str(index + 1) in boxes
            ],
        }

    def read_answer(self, unit: Unit, raw: Any) -> Any:
        chosen = raw.get("objects") if isinstance(raw, dict) else None
        if not isinstance(chosen, list) or not chosen:
            raise AnswerRefused("objects", "click at least one object")
        count = len(unit.item.scene.data.get("objects", []))
        for index, value in enumerate(chosen):
            if type(value) is not int or not 0 <= value < count:
                raise AnswerRefused(f"objects[{index}]", f"{value!r} is not an object of this image")
        return {"objects": sorted(set(chosen))}

    def prediction(self, unit: Unit, answer: dict[str, Any]) -> dict[str, Any]:
        """Clicked objects as the prediction format: the union of their masks, and their box."""
        from benchmarks.clevrref.scenes import decode_mask, encode_mask

        scene = unit.item.scene.data
        width, height = clevrref_metric.DEFAULT_WIDTH, clevrref_metric.DEFAULT_HEIGHT
        mask = np.zeros((height, width), dtype=bool)
        for index in answer["objects"]:
            mask |= decode_mask(scene["obj_mask"][str(index + 1)], width, height)
        boxes = [scene["obj_bbox"][str(index + 1)] for index in answer["objects"]]
        left = min(box[0] for box in boxes)
        top = min(box[1] for box in boxes)
        right = max(box[0] + box[2] for box in boxes)
        bottom = max(box[1] + box[3] for box in boxes)
        return {
            "refexp_index": unit.key,
            "box": [left, top, right - left, bottom - top],
            "mask": encode_mask(mask),
        }

    def record(self, unit: Unit) -> dict[str, Any]:
        return {**official(unit.item), "refexp_index": unit.key}

    def stored_answer(self, unit: Unit, answer: Any) -> Any:
        # The clicked objects, and the box and mask they make (what a model's prediction holds).
        prediction = self.prediction(unit, answer)
        return {**answer, "box": prediction["box"], "mask": prediction["mask"]}

    def score(self, setting: str, units: Sequence[Unit], answers: dict[int, Any]) -> Scored:
        records = [self.record(unit) for unit in units]
        scenes = {unit.item.scene_id: unit.item.scene.data for unit in units}
        by_key = {unit.key: unit for unit in units}
        predictions = [self.prediction(by_key[key], answer) for key, answer in answers.items()]
        return clevrref_metric.score(records, list(scenes.values()), predictions)

    def row_key(self, row: dict[str, Any]) -> int:
        return int(row["refexp_index"])

    def truth(self, unit: Unit) -> dict[str, Any]:
        objects = clevrref_metric.referred_objects(official(unit.item))
        boxes = unit.item.scene.data.get("obj_bbox", {})
        return {"objects": objects, "boxes": [{"id": i, "box": boxes.get(str(i + 1))} for i in objects]}

    def correct(self, row: dict[str, Any]) -> bool | None:
        iou = row.get("mask_iou")
        return None if iou is None else iou >= 0.999


# --- STE-VQA -------------------------------------------------------------------------------------


class SteVqaKind(TrialKind):
    """STE-VQA trials need images, which only training-layout files name: one trial per question."""

    benchmark = "stevqa"
    balance_fields = {"language": "Question language"}
    headline = ("CLC", "CLC")

    def qa(self, unit_or_item: Any, part: int) -> dict[str, Any]:
        return unit_or_item.ground_truth["annotation"][part]

    def drawable(self, items: QuerySet) -> QuerySet:
        return items.filter(media__has_key="image")

    def draw_fields(self, balance_by: str) -> dict[str, str]:
        return {"questions": "payload__questions"}

    def parts(self, row: dict[str, Any]) -> int:
        return len(row["questions"] or ())

    def eligible(self, row: dict[str, Any], setting: str) -> bool:
        return self.parts(row) > 0

    def balance_value(self, row: dict[str, Any], field: str, part: int) -> Any:
        if field == "language":
            return stevqa_metric.language(row["questions"][part])
        raise KeyError(field)

    def view(self, unit: Unit) -> dict[str, Any]:
        return {
            "question": unit.item.payload["questions"][unit.part],
            "image": media(unit.item, "image"),
        }

    def read_answer(self, unit: Unit, raw: Any) -> Any:
        if not isinstance(raw, dict):
            raise AnswerRefused("answer", "expected an object with answer and evidence")
        text = raw.get("answer")
        if not isinstance(text, str) or not text.strip():
            raise AnswerRefused("answer", "type the answer")
        evidence = raw.get("evidence")
        if not isinstance(evidence, list) or len(evidence) != 8:
            raise AnswerRefused("evidence", "draw the evidence quadrilateral (4 corners)")
        for index, value in enumerate(evidence):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
                raise AnswerRefused(f"evidence[{index}]", f"expected a number, got {value!r}")
        return {"answer": text.strip(), "evidence": [round(float(value), 1) for value in evidence]}

    def record(self, unit: Unit) -> dict[str, Any]:
        qa = self.qa(unit.item, unit.part)
        return {
            "question_id": unit.key,
            "question": qa["question"],
            "answer": qa["answer"],
            "evidence": qa["evidence"],
        }

    def stored_answer(self, unit: Unit, answer: Any) -> Any:
        # An image holds several questions: say which one was answered.
        return {**answer, "question_index": unit.part}

    def score(self, setting: str, units: Sequence[Unit], answers: dict[int, Any]) -> Scored:
        records = [self.record(unit) for unit in units]
        predictions = [{"question_id": key, **answer} for key, answer in answers.items()]
        return stevqa_metric.score(records, predictions, variant="official")

    def row_key(self, row: dict[str, Any]) -> int:
        return int(row["question_id"])

    def truth(self, unit: Unit) -> dict[str, Any]:
        qa = self.qa(unit.item, unit.part)
        return {"answer": qa["answer"], "evidence": [float(value) for value in qa["evidence"]]}

    def correct(self, row: dict[str, Any]) -> bool | None:
        return bool(row.get("CLC"))


KINDS: dict[str, TrialKind] = {
    kind.benchmark: kind for kind in (TranceKind(), CricKind(), ClevrRefKind(), SteVqaKind())
}
