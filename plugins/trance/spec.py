"""TRANCE as Yardstick serves it (pure): one declaration the apps look up."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from benchmarks.spec import (
    OFFICIAL,
    BenchmarkSpec,
    BreakdownPlot,
    Choice,
    Column,
    DemoData,
    DemoPlan,
    DiagnosticTable,
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


#: The metric variant that scores each View answer with the one camera it was made from (the
#: official one scores every sample under all three final cameras, as the released ViewEvaluator).
ONE_CAMERA = "one-camera"


def length_groups() -> tuple[Choice, ...]:
    return tuple(Choice(length, LENGTH_LABELS[length]) for length in LENGTHS)


# --- the diagnostic tables' per-unit filters (module-level, so that columns stay comparable) --------


def order_sensitive_unit(row: dict[str, Any]) -> bool:
    return bool(row.get("order_sensitive"))


def unit_of_length(length: str, row: dict[str, Any]) -> bool:
    return str(row.get("target_step")) == length


def unit_of_camera(camera: str, row: dict[str, Any]) -> bool:
    return row.get("camera") == camera


DISTANCE = {"proportion": False, "lower_is_better": True, "upper_bound": None}


def order_columns(setting: str, group: str) -> tuple[Column, ...]:
    """The paper's order table for one setting: the order-sensitive units, how many, their LAcc,
    Acc and EO, and the EO of their true steps given in a random order."""
    return (
        Column(group, "n", setting, ("order_sensitive", "n"), count=True),
        Column(group, "LAcc", setting, ("order_sensitive", "LAcc"), "loose_correct", order_sensitive_unit),
        Column(group, "Acc", setting, ("order_sensitive", "Acc"), "correct", order_sensitive_unit),
        Column(
            group, "EO", setting, ("order_sensitive", "EO"), None, order_sensitive_unit, lower_is_better=True
        ),
        Column(
            group,
            _("EO, random order"),
            setting,
            ("order_sensitive", "random_order_EO"),
            "order_error_share",
            order_sensitive_unit,
            proportion=False,
            lower_is_better=True,
        ),
    )


LENGTH_NOTE = _(
    "LAcc and Acc over the samples with 1, 2, 3 and 4 true steps: LAcc(2) is LAcc over the samples of two steps."
)


def length_columns(setting: str, group: str) -> tuple[Column, ...]:
    """LAcc then Acc for each transformation length, over the units of that length."""
    return tuple(
        Column(
            group,
            f"{metric}({length})",
            setting,
            ("by_length", length, metric),
            key,
            functools.partial(unit_of_length, length),
        )
        for metric, key in (("LAcc", "loose_correct"), ("Acc", "correct"))
        for length in LENGTHS
    )


def camera_columns() -> tuple[Column, ...]:
    """View's AD, AND, LAcc, Acc and (human trials) seconds per trial, for each final camera."""
    columns: list[Column] = []
    for camera in FINAL_CAMERAS:
        group, chosen = CAMERA_LABELS[camera], functools.partial(unit_of_camera, camera)
        path = ("by_camera", camera)
        columns += [
            Column(group, "AD", VIEW, (*path, "AD"), "dist", chosen, **DISTANCE),
            Column(group, "AND", VIEW, (*path, "AND"), "norm_dist", chosen, **DISTANCE),
            Column(group, "LAcc", VIEW, (*path, "LAcc"), "loose_correct", chosen),
            Column(group, "Acc", VIEW, (*path, "Acc"), "correct", chosen),
            Column(
                group,
                _("Seconds per trial"),
                VIEW,
                (*path, "seconds"),
                "seconds",
                chosen,
                proportion=False,
                upper_bound=None,
                lower_is_better=True,
            ),
        ]
    return tuple(columns)


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
    variants = (
        Choice(OFFICIAL, _("official (released evaluator; View: every sample under all three cameras)")),
        Choice(ONE_CAMERA, _("one camera per answer (View)")),
    )
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
    served = "plugins.trance.served:TranceServed"
    plots = (
        BreakdownPlot(
            _("Event: LAcc by transformation length"),
            ("by_length",),
            "LAcc",
            length_groups(),
            EVENT,
            "LAcc",
            kind="line",
            xlabel=_("transformation length"),
        ),
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

    diagnostics = (
        DiagnosticTable(
            "order",
            _("Order-sensitive samples"),
            order_columns(EVENT, _("Event")) + order_columns(VIEW, _("View")),
            note=_(
                "Samples whose true steps raise an overlap or leave the plane in some order, while every "
                "order reaches the final state. EO = (LAcc - Acc) / LAcc over them; “EO, random order” is "
                "the EO of answering each with its true steps in a random order (exact: the share of "
                "orderings that err)."
            ),
            caption=(
                "Order-sensitive samples: LAcc, Acc and EO, and the EO of the true steps in a random order."
            ),
        ),
        DiagnosticTable(
            "by-length",
            _("Event by transformation length"),
            length_columns(EVENT, _("Event")),
            note=LENGTH_NOTE,
            caption="Event: LAcc and Acc by transformation length (number of true steps).",
        ),
        DiagnosticTable(
            "by-length-view",
            _("View by transformation length"),
            length_columns(VIEW, _("View")),
            note=LENGTH_NOTE,
            caption="View: LAcc and Acc by transformation length (number of true steps), every camera's units.",
        ),
        DiagnosticTable(
            "by-camera",
            _("View by final camera"),
            camera_columns(),
            note=_(
                "View's figures over each final camera's units (the initial state is always seen from "
                "the centre); seconds per trial for human rows when the trials' times were given."
            ),
            caption="View by final camera: AD, AND, LAcc and Acc.",
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
        """The steps in order, one line each; an empty answer says so. An answer per camera (View)
        gives each camera's steps after its name."""
        if isinstance(answer, Mapping):
            return [
                f"{camera}: " + ("; ".join(step_line(step) for step in answer[camera]) or "no steps")
                for camera in FINAL_CAMERAS
                if camera in answer
            ] or ["no steps"]
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
        """Basic and Event score each sample once. View, officially, scores every sample under each
        final camera; `options["cameras"]` (unit id -> camera, or a list of them) narrows that to
        the cameras shown (a human trial shows one). The one-camera variant scores each sample
        with the camera given for it there (without one: `view_cameras`). `options["seconds"]`
        (unit id -> seconds, human trials) adds the time per camera."""
        from plugins.trance import metric

        predictions = {self.unit_id_type(key): steps for key, steps in given.answers.items()}
        if given.setting == BASIC:
            return metric.score_basic(given.records, predictions)
        if given.setting == EVENT:
            return metric.score_event(given.records, predictions)
        cameras = self.keyed_option(given, "cameras")
        if given.variant != ONE_CAMERA:
            return metric.score_view_cameras(
                given.records, predictions, cameras, seconds=self.keyed_option(given, "seconds")
            )
        if cameras is not None:
            return metric.score_view(given.records, predictions, cameras)
        scored = metric.score_view(given.records, predictions, metric.view_cameras(given.records))
        scored.params["cameras"] = "view_cameras(seed=0)"
        return scored

    def keyed_option(self, given: ScoringInput, name: str) -> dict[Any, Any] | None:
        """An option keyed by unit id, with the ids as the records hold them; None when absent
        (a submission's parameters may also hold a word under the name, such as the "cameras"
        a scoring wrote there: only a mapping counts)."""
        value = given.options.get(name)
        if not isinstance(value, Mapping) or not value:
            return None
        return {self.unit_id_type(key): chosen for key, chosen in value.items()}

    def score_files(self, files: ScoringFiles):
        from plugins.trance import metric

        return metric.score_file(
            files.ground_truth,
            files.predictions,
            setting=files.setting,
            variant=files.variant,
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
            columns += [
                Column(group, "AD", setting, ("AD",), "dist", **DISTANCE),
                Column(group, "AND", setting, ("AND",), "norm_dist", **DISTANCE),
                Column(group, "LAcc", setting, ("LAcc",), "loose_correct"),
                Column(group, "Acc", setting, ("Acc",), "correct"),
                Column(group, "EO", setting, ("EO",), None, lower_is_better=True),
            ]
        return columns

    # --- agreement -----------------------------------------------------------------------------

    answer_compared = "the step list, in order"

    def answer_label(self, answer: Any) -> str:
        """The step list, in order; an answer per camera (View) by its cameras' step lists, or by
        the one list when every camera has the same."""
        if isinstance(answer, Mapping):
            labels = {camera: self.answer_label(steps) for camera, steps in sorted(answer.items())}
            return next(iter(labels.values())) if len(set(labels.values())) == 1 else json.dumps(labels)
        return json.dumps([[step.get("obj_idx"), step.get("attr"), step.get("val")] for step in answer or []])

    # --- demo ----------------------------------------------------------------------------------

    # The demo's models answer Event and View, so that its report has View's per-camera table.
    demo_plan = DemoPlan(setting=EVENT, balance_by="length", model_settings=(EVENT, VIEW))

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
