"""TRANCE as Yardstick serves it (pure): one declaration the apps look up."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.spec import (
    BenchmarkSpec,
    BreakdownPlot,
    Choice,
    Column,
    DemoData,
    DemoPlan,
    ItemSection,
    ItemTable,
    ScoringFiles,
    ScoringInput,
)
from plugins.trance.formats import BASIC, EVENT, FINAL_CAMERAS, VIEW

#: Demo samples: at least 200, so that every setting and step length has a few dozen items.
DEMO_SAMPLES = 200
LENGTHS = ("1", "2", "3", "4")


def _(text: str) -> str:
    """Marks the words people see (item pages, settings, report groups, plots) for the translation
    catalogue (`make messages`); the pages translate them where they show them."""
    return text


#: Transformation lengths as the plots' axes name them.
LENGTH_LABELS = {"1": _("1 step"), "2": _("2 steps"), "3": _("3 steps"), "4": _("4 steps")}
#: Final cameras as the plots' axes name them.
CAMERA_LABELS = {
    "Camera_Left": _("left camera"),
    "Camera_Center": _("centre camera"),
    "Camera_Right": _("right camera"),
}


def length_groups() -> tuple[Choice, ...]:
    return tuple(Choice(length, LENGTH_LABELS[length]) for length in LENGTHS)


def step_line(step: dict[str, Any]) -> str:
    """One transformation step in words: "object 3: position → behind 2"."""
    value = step["val"]
    if step["attr"] == "position":
        value = f"{value[0]} {value[1]}" + (f" ({step['type']})" if step.get("type") else "")
    return f"object {step['obj_idx']}: {step['attr']} → {value}"


def position(obj: dict[str, Any]) -> str:
    x, y = obj["position"]
    return f"({x}, {y})"


def describe_object(obj: dict[str, Any]) -> str:
    return f"{obj['size']} {obj['color']} {obj['material']} {obj['shape']} at {position(obj)}"


class TranceSpec(BenchmarkSpec):
    name = "trance"
    title = "TRANCE"
    extensions = ("jsonl",)
    formats_module = "plugins.trance.formats"
    unit_id_field = "idx"
    unit_id_type = int
    scores_streamed_files = True
    settings = (Choice(BASIC, _("Basic")), Choice(EVENT, _("Event")), Choice(VIEW, _("View")))
    trial = "plugins.trance.trial:TranceTrial"
    comparison_strata = (
        Choice("target_step", _("transformation length")),
        Choice("camera", _("final camera")),
    )
    baselines = (
        "plugins.trance.baselines:RandomBaseline",
        "plugins.trance.baselines:SymbolicBaseline",
        "plugins.trance.baselines:TranceNetBaseline",
    )
    plots = (
        BreakdownPlot(
            _("Event: accuracy by transformation length"),
            ("by_length",),
            "Acc",
            length_groups(),
            EVENT,
            "Acc",
        ),
        BreakdownPlot(
            _("View: accuracy by transformation length"), ("by_length",), "Acc", length_groups(), VIEW, "Acc"
        ),
        BreakdownPlot(
            _("View: accuracy by final camera"),
            ("by_camera",),
            "Acc",
            tuple(Choice(camera, CAMERA_LABELS[camera]) for camera in FINAL_CAMERAS),
            VIEW,
            "Acc",
        ),
    )

    # --- the catalog ---------------------------------------------------------------------------

    def summary(self, payload: dict[str, Any], ground_truth: dict[str, Any]) -> str:
        count = len(ground_truth.get("transformations", ()))
        return f"{count} transformation step{'s' if count != 1 else ''}"

    item_figure_caption = _(
        'The initial objects from above, oriented like the Center camera: "behind" is down, "right" is right.'
    )

    def item_figure(self, payload: dict[str, Any], translate: Callable[[str], str] = str) -> str:
        from plugins.trance.diagram import WORDS, scene_diagram_svg

        words = {key: translate(word) for key, word in WORDS.items()}
        return scene_diagram_svg(payload["initial"]["objects"], words=words)

    def truth_lines(self, ground_truth: dict[str, Any]) -> list[str]:
        return [step_line(step) for step in ground_truth.get("transformations", ())]

    def media_roles(self, media: dict[str, str]) -> list[str]:
        """The initial scene first, then the final ones (left, centre, right camera)."""
        return sorted(media, key=lambda role: (not role.startswith("init."), role))

    def answer_lines(self, answer: Any) -> list[str]:
        """The steps in order, one line each; an empty answer says so."""
        return [step_line(step) for step in answer] or ["no steps"]

    def shown_sections(self, payload: dict[str, Any], scene: dict[str, Any] | None) -> list[ItemSection]:
        """The initial objects as the trial's table lists them."""
        objects = payload["initial"]["objects"]
        return [
            ItemSection(
                _("Initial objects"),
                table=ItemTable(
                    ("#", _("Colour"), _("Material"), _("Shape"), _("Size"), _("Position (x, y)")),
                    tuple(
                        (str(index), obj["color"], obj["material"], obj["shape"], obj["size"], position(obj))
                        for index, obj in enumerate(objects)
                    ),
                ),
                note=_(
                    "Testers see the initial scene from the Center camera, the final scene from the camera "
                    "the setting gives (Center, or one of the three in View), the top view and this table."
                ),
            )
        ]

    def truth_sections(
        self, payload: dict[str, Any], ground_truth: dict[str, Any], scene: dict[str, Any] | None
    ) -> list[ItemSection]:
        """The steps in order, and each object they change, before and after."""
        initial = payload["initial"]["objects"]
        final = ground_truth.get("final_objects") or []
        changed = tuple(
            (str(index), describe_object(before), describe_object(after))
            for index, (before, after) in enumerate(zip(initial, final, strict=False))
            if before != after
        )
        sections = [ItemSection(_("Steps"), lines=tuple(self.truth_lines(ground_truth)))]
        if changed:
            sections.append(
                ItemSection(
                    _("Objects that change"), table=ItemTable(("#", _("Initial"), _("Final")), changed)
                )
            )
        return sections

    # --- scoring -------------------------------------------------------------------------------

    def read_predictions(self, data: bytes, *, source: str = "") -> dict[str, Any]:
        from plugins.trance import metric

        return {str(idx): steps for idx, steps in metric.parse_predictions(data, source=source).items()}

    def write_predictions(self, answers) -> bytes:
        """The released layout: one JSON object from sample idx to its list of steps."""
        return json.dumps({unit_id: steps for unit_id, steps in answers}).encode()

    def score(self, given: ScoringInput):
        from plugins.trance import metric

        predictions = {self.unit_id_type(key): steps for key, steps in given.answers.items()}
        if given.setting == BASIC:
            return metric.score_basic(given.records, predictions)
        if given.setting == EVENT:
            return metric.score_event(given.records, predictions)
        cameras = given.options.get("cameras")
        if cameras:
            return metric.score_view(
                given.records, predictions, {int(key): value for key, value in cameras.items()}
            )
        scored = metric.score_view(given.records, predictions, metric.view_cameras(given.records))
        scored.params["cameras"] = "view_cameras(seed=0)"
        return scored

    def score_files(self, files: ScoringFiles):
        from plugins.trance import metric

        return metric.score_file(
            files.ground_truth,
            files.predictions,
            setting=files.setting,
            gt_source=files.ground_truth_source,
            predictions_source=files.predictions_source,
        )

    # --- reports -------------------------------------------------------------------------------

    def report_columns(self) -> list[Column]:
        columns = [
            Column(_("Basic"), label, BASIC, (label,), key)
            for label, key in (
                ("ObjAcc", "obj_correct"),
                ("AttrAcc", "attr_correct"),
                ("ValAcc", "pair_correct"),
                ("Acc", "correct"),
            )
        ]
        for setting, group in ((EVENT, _("Event")), (VIEW, _("View"))):
            distance = {"proportion": False, "lower_is_better": True, "upper_bound": None}
            columns += [
                Column(group, "AD", setting, ("AD",), "dist", **distance),
                Column(group, "AND", setting, ("AND",), "norm_dist", **distance),
                Column(group, "LAcc", setting, ("LAcc",), "loose_correct"),
                Column(group, "Acc", setting, ("Acc",), "correct"),
                Column(group, "EO", setting, ("EO",), None, lower_is_better=True),
            ]
        return columns

    # --- agreement -----------------------------------------------------------------------------

    answer_compared = "the step list, in order"

    def answer_label(self, answer: Any) -> str:
        """The step list, in order."""
        return json.dumps([[step.get("obj_idx"), step.get("attr"), step.get("val")] for step in answer or []])

    # --- demo ----------------------------------------------------------------------------------

    demo_plan = DemoPlan(setting=EVENT, balance_by="length")

    def demo(self, folder: Path, seed: int) -> DemoData:
        from plugins.trance.generator import generate

        generate(folder, count=DEMO_SAMPLES, seed=seed, workers=os.cpu_count() or 1)
        return DemoData(
            data=folder / "data.jsonl",
            split="val",
            source="generated by load_demo (generate_trance)",
            images=folder,
        )


SPEC = TranceSpec()
