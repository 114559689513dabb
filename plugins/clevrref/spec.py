"""CLEVR-Ref+ as Yardstick serves it (pure): one declaration the apps look up."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.spec import (
    OFFICIAL,
    BenchmarkSpec,
    BreakdownPlot,
    Choice,
    Column,
    DemoData,
    DiagnosticTable,
    ItemSection,
    Region,
    ScoringFiles,
    ScoringInput,
    rectangle,
)
from plugins.clevrref.formats import STEP_TYPES, referred_objects

DEMO_IMAGES = 40
#: The metric's second variant (plugins.clevrref.metric.FULL_RESOLUTION).
FULL_RESOLUTION = "full-resolution"


def _(text: str) -> str:
    """Marks the item page's words for the translation catalogue (`make messages`); the page
    (benchmarks/views.py) translates them."""
    return text


#: The paper's expression categories, in its column order (plugins.clevrref.metric.category_order).
CATEGORIES = ("0-Relate", "1-Relate", "2-Relate", "3-Relate", "AND", "OR", "Same")
#: How many objects a CLEVR scene holds.
OBJECT_COUNTS = tuple(range(3, 11))
#: 0-Relate expressions by the attribute that singles out their objects
#: (plugins.clevrref.metric.zero_relate_attribute).
ZERO_RELATE_GROUPS = (
    Choice("included", _("attribute named")),
    Choice("excluded", _("attribute left out")),
    Choice("none", _("no single attribute")),
)


def row_matches(conditions: tuple[tuple[str, Any], ...], row: Mapping[str, Any]) -> bool:
    """Whether a per-expression row has every (field, value) of `conditions` and counts in the
    paper's figures: a false-premise expression (it refers to nothing) counts only in its own."""
    return not row.get("false_premise") and all(row.get(name) == value for name, value in conditions)


def rows_where(**conditions: Any) -> partial:
    """An item filter keeping the rows `row_matches` keeps: a partial of a module-level function,
    which pickles and shows its conditions in a repr, where a lambda does neither."""
    return partial(row_matches, tuple(conditions.items()))


def scored_under(variant: str, **conditions: Any) -> partial:
    """Rows scored under `variant` (each row says which): a column of one variant never takes the
    per-expression values of the other, nor of rows scored before rows said it."""
    return rows_where(variant=variant, **conditions)


CATEGORY_NOTE = _(
    "The paper's categories: k-Relate has k relate steps; AND, OR and Same a step of that kind. "
    "Detection counts single-object expressions only, so a category whose expressions all refer to "
    "several objects has no detection figure."
)
COUNT_NOTE = _(
    "Expressions grouped by how many objects their scene holds (3 to 10 in CLEVR): the more objects, "
    "the more distractors."
)


def detection_columns(group: str, path: tuple[str, ...], **conditions: Any) -> list[Column]:
    """A group of expressions' detection accuracy (single-object expressions, Wilson interval),
    read at `path` in the summary; `conditions` pick the group's rows."""
    return [
        Column(
            group,
            _("Acc (single)"),
            "",
            (*path, "detection_accuracy"),
            "detected",
            rows_where(single=True, **conditions),
            optional=True,
        )
    ]


def segmentation_columns(group: str, path: tuple[str, ...], **conditions: Any) -> list[Column]:
    """A group's official cumulative IoU (no interval: a ratio of sums) and full-resolution mean
    IoU (normal interval); a variant no row was scored under is left out of the table."""
    return [
        Column(
            group,
            _("cumulative IoU, official"),
            "",
            (*path, "official_cumulative_iou"),
            None,
            scored_under(OFFICIAL, **conditions),
            proportion=False,
            optional=True,
        ),
        Column(
            group,
            _("mean IoU, full resolution"),
            "",
            (*path, "full_resolution_mean_iou"),
            "mask_iou",
            scored_under(FULL_RESOLUTION, **conditions),
            proportion=False,
            optional=True,
        ),
    ]


def figure_columns(group: str, path: tuple[str, ...], **conditions: Any) -> list[Column]:
    """Detection then segmentation, for a table with few groups."""
    return detection_columns(group, path, **conditions) + segmentation_columns(group, path, **conditions)


def step_columns(kind: str) -> list[Column]:
    """One step type's mean IoU under each variant, its interval over the expressions having such
    a step (the row field step_iou_<type>: each expression's mean over its steps of the type)."""
    field = f"step_iou_{kind}"
    return [
        Column(
            kind,
            _("mean IoU, official"),
            "",
            ("by_step", "type", kind, "official_mean_iou"),
            field,
            scored_under(OFFICIAL),
            proportion=False,
            optional=True,
        ),
        Column(
            kind,
            _("mean IoU, full resolution"),
            "",
            ("by_step", "type", kind, "full_resolution_mean_iou"),
            field,
            scored_under(FULL_RESOLUTION),
            proportion=False,
            optional=True,
        ),
    ]


DIAGNOSTICS = (
    DiagnosticTable(
        "by-category",
        _("Detection by expression category"),
        tuple(
            column
            for category in CATEGORIES
            for column in detection_columns(category, ("by_category", category), category=category)
        ),
        note=CATEGORY_NOTE,
        caption="CLEVR-Ref+ detection accuracy (single-object expressions) by expression category.",
    ),
    DiagnosticTable(
        "by-category-segmentation",
        _("Segmentation by expression category"),
        tuple(
            column
            for category in CATEGORIES
            for column in segmentation_columns(category, ("by_category", category), category=category)
        ),
        note=CATEGORY_NOTE,
        caption="CLEVR-Ref+ segmentation IoU by expression category.",
    ),
    DiagnosticTable(
        "by-object-count",
        _("Detection by number of objects in the scene"),
        tuple(
            column
            for count in OBJECT_COUNTS
            for column in detection_columns(str(count), ("by_object_count", str(count)), object_count=count)
        ),
        note=COUNT_NOTE,
        caption="CLEVR-Ref+ detection accuracy (single-object expressions) by number of objects in the scene.",
    ),
    DiagnosticTable(
        "by-object-count-segmentation",
        _("Segmentation by number of objects in the scene"),
        tuple(
            column
            for count in OBJECT_COUNTS
            for column in segmentation_columns(
                str(count), ("by_object_count", str(count)), object_count=count
            )
        ),
        note=COUNT_NOTE,
        caption="CLEVR-Ref+ segmentation IoU by number of objects in the scene.",
    ),
    DiagnosticTable(
        "zero-relate-attribute",
        _("0-Relate expressions: the attribute that singles out the objects, named or left out"),
        tuple(
            column
            for group in ZERO_RELATE_GROUPS
            for column in figure_columns(
                group.label, ("zero_relate_attribute", group.value), zero_relate_attribute=group.value
            )
        ),
        note=_(
            "0-Relate expressions only. An attribute singles out the referred objects when they share one "
            "value of it and no other object has that value. Named: a filter step names such an attribute; "
            "left out: one exists but the expression names none; no single attribute: none exists. "
            "Yardstick's definition (the paper defines none)."
        ),
        caption="CLEVR-Ref+ 0-Relate expressions by whether they name an attribute that alone singles "
        "out the referred objects.",
    ),
    DiagnosticTable(
        "by-step",
        _("IoU at each program step, by step type"),
        tuple(column for kind in STEP_TYPES for column in step_columns(kind)),
        note=_(
            "For predictions that give a mask for each program step, scored against that step's own output. "
            "Each expression counts once per step type: its steps of that type are averaged first."
        ),
        caption="CLEVR-Ref+ mean IoU of intermediate program steps by step type.",
    ),
    DiagnosticTable(
        "false-premise",
        _("False-premise expressions"),
        (
            Column(
                _("False premise"),
                _("Acc"),
                "",
                ("false_premise", "accuracy"),
                "false_premise_correct",
                optional=True,
            ),
            Column(
                _("False premise"),
                _("no box"),
                "",
                ("false_premise", "detection_accuracy"),
                "false_premise_no_box",
                optional=True,
            ),
            Column(
                _("False premise"),
                _("empty mask"),
                "",
                ("false_premise", "segmentation_accuracy"),
                "false_premise_no_mask",
                optional=True,
            ),
        ),
        note=_(
            "Expressions that refer to no object. A prediction is right when it names nothing: no box (or one "
            "with no area) and no mask pixel. They count in no other figure."
        ),
        caption="CLEVR-Ref+ false-premise expressions: share of predictions that name no object.",
    ),
)

#: The by-object-count plots' groups: every CLEVR scene size, in order.
OBJECT_COUNT_GROUPS = tuple(Choice(str(count), str(count)) for count in OBJECT_COUNTS)


class ClevrRefSpec(BenchmarkSpec):
    name = "clevrref"
    title = "CLEVR-Ref+"
    aliases = ("clevr-ref+", "clevr-ref", "clevrref+")
    # Segmentation as the released IEP-Ref scorer computes it (320x320, sum, resize, truncate), or
    # Yardstick's earlier union IoU at full resolution; detection is the same in both.
    variants = (
        Choice(OFFICIAL, _("official (released evaluator, 320×320)")),
        Choice(FULL_RESOLUTION, _("full resolution (480×320 union IoU)")),
    )
    formats_module = "plugins.clevrref.formats"
    unit_id_field = "refexp_index"
    unit_id_type = int
    region_kind = "mask"
    scenes_needed_to_score = True
    # `manage.py score` hands the files over open: the metric reads them a record at a time.
    scores_streamed_files = True
    trial = "plugins.clevrref.trial:ClevrRefTrial"
    validation = "plugins.clevrref.check:ClevrRefCheck"
    comparison_strata = (Choice("category", _("expression category")),)
    baselines = (
        "plugins.clevrref.baselines:RandomObjectBaseline",
        "plugins.clevrref.baselines:ExecutorBaseline",
    )
    served = "plugins.clevrref.served:ClevrRefServed"
    # Categories (k-Relate, AND, OR, Same) are whatever the scored expressions hold.
    plots = (
        BreakdownPlot(
            _("Cumulative IoU (official) by expression category"),
            ("by_category",),
            "official_cumulative_iou",
            ylabel=_("cumulative IoU"),
        ),
        # The paper's detection by category (single-object expressions: a category of plural
        # referents alone has none, and is left blank).
        BreakdownPlot(
            _("Detection accuracy (single-object expressions) by expression category"),
            ("by_category",),
            "detection_accuracy",
            ylabel=_("accuracy"),
        ),
        # A curve over the scene's object count (3 to 10): how fast a model tires as distractors grow.
        BreakdownPlot(
            _("Detection accuracy (single-object expressions) by number of objects in the scene"),
            ("by_object_count",),
            "detection_accuracy",
            OBJECT_COUNT_GROUPS,
            ylabel=_("accuracy"),
            kind="line",
            xlabel=_("objects in the scene"),
        ),
        BreakdownPlot(
            _("Cumulative IoU (official) by number of objects in the scene"),
            ("by_object_count",),
            "official_cumulative_iou",
            OBJECT_COUNT_GROUPS,
            ylabel=_("cumulative IoU"),
            kind="line",
            xlabel=_("objects in the scene"),
        ),
    )
    diagnostics = DIAGNOSTICS

    # --- the catalog ---------------------------------------------------------------------------

    def summary(self, payload: dict[str, Any], ground_truth: dict[str, Any]) -> str:
        return str(payload.get("refexp", ""))

    def regions(self, ground_truth: dict[str, Any], scene: dict[str, Any] | None) -> list[Region]:
        """The referred objects' boxes, from the scene's obj_bbox."""
        if not scene:
            return []
        boxes = scene.get("obj_bbox") or {}
        return [
            rectangle(*boxes[str(index + 1)], label=f"object {index}")
            for index in referred_objects(ground_truth["program"])
            if str(index + 1) in boxes
        ]

    def shown_sections(self, payload: dict[str, Any], scene: dict[str, Any] | None) -> list[ItemSection]:
        return [
            ItemSection(
                facts=(
                    (_("Expression"), str(payload.get("refexp", ""))),
                    (_("Image"), str(payload.get("image_filename") or payload.get("image", ""))),
                ),
                note=_(
                    "Testers see the image with every object boxed and click the objects the expression refers to."
                ),
            )
        ]

    def truth_sections(
        self, payload: dict[str, Any], ground_truth: dict[str, Any], scene: dict[str, Any] | None
    ) -> list[ItemSection]:
        """The objects referred to, described from the scene, and the program that finds them."""
        from plugins.clevrref.metric import expression_category

        scene_objects = (scene or {}).get("objects", [])

        def described(index: int) -> str:
            if not 0 <= index < len(scene_objects):
                return f"object {index}"
            obj = scene_objects[index]
            words = " ".join(str(obj.get(key, "")) for key in ("size", "color", "material", "shape"))
            return f"object {index} ({' '.join(words.split())})"

        def outputs(value: Any) -> str:
            if isinstance(value, list):
                return ", ".join(map(str, value)) or "nothing"
            return str(value)

        program = ground_truth.get("program") or []
        facts = [
            (_("Refers to"), ", ".join(described(index) for index in referred_objects(program)) or "nothing"),
            (_("Category"), expression_category(ground_truth)),
        ]
        if ground_truth.get("template_filename"):
            facts.append((_("Template"), str(ground_truth["template_filename"])))
        lines = tuple(
            " ".join([str(step.get("type", "?")), *map(str, step.get("value_inputs") or [])])
            + f" → {outputs(step.get('_output'))}"
            for step in program
        )
        return [ItemSection(facts=tuple(facts)), ItemSection(_("Program"), lines=lines)]

    # --- scoring -------------------------------------------------------------------------------

    def read_predictions(self, data: bytes, *, source: str = "") -> dict[str, Any]:
        from plugins.clevrref import metric

        return {
            str(record["refexp_index"]): {
                key: value for key, value in record.items() if key != "refexp_index"
            }
            for record in metric.parse_predictions(data, source=source)
        }

    def score(self, given: ScoringInput):
        from plugins.clevrref import metric

        if not given.scenes:
            raise ValueError("CLEVR-Ref+ answers need the dataset's scenes (import it with its scenes file)")
        predictions = [
            {**answer, "refexp_index": self.unit_id_type(key)} for key, answer in given.answers.items()
        ]
        return metric.score(given.records, given.scenes, predictions, variant=given.variant)

    def score_files(self, files: ScoringFiles):
        """The files' bytes or the files open for reading (`scores_streamed_files`): the metric
        takes either, with the same result."""
        from plugins.clevrref import metric

        if files.scenes is None:
            raise ValueError("CLEVR-Ref+ is scored against the scenes file the expressions refer to")
        return metric.score_file(files.ground_truth, files.scenes, files.predictions, variant=files.variant)

    # --- reports -------------------------------------------------------------------------------

    def report_columns(self) -> list[Column]:
        """Detection (one definition), then segmentation under each variant in its own group: a
        row shows the group of the variant it was scored under and – in the other; a variant no row
        was scored under is left out of the table. The official variant has no mean IoU (the
        released code computes none)."""
        return [
            Column(
                _("Detection"),
                _("Acc (single)"),
                "",
                ("overall", "detection_accuracy"),
                "detected",
                rows_where(single=True),
            ),
            Column(
                _("Segmentation (official 320×320)"),
                _("cumulative IoU"),
                "",
                ("overall", "official_cumulative_iou"),
                None,
                scored_under(OFFICIAL),
                proportion=False,
                optional=True,
            ),
            Column(
                _("Segmentation (full resolution)"),
                _("mean IoU"),
                "",
                ("overall", "full_resolution_mean_iou"),
                "mask_iou",
                scored_under(FULL_RESOLUTION),
                proportion=False,
                optional=True,
            ),
            Column(
                _("Segmentation (full resolution)"),
                _("cumulative IoU"),
                "",
                ("overall", "full_resolution_cumulative_iou"),
                None,
                scored_under(FULL_RESOLUTION),
                proportion=False,
                optional=True,
            ),
        ]

    # --- agreement -----------------------------------------------------------------------------

    answer_compared = "the set of objects chosen"

    def answer_lines(self, answer: Any) -> list[str]:
        """The objects chosen (people click objects), or a model's box and mask."""
        lines = []
        if "objects" in answer:
            objects = sorted(answer["objects"])
            lines.append("objects " + ", ".join(str(index) for index in objects) if objects else "no object")
        if answer.get("box") is not None:
            lines.append("box x, y, w, h = " + ", ".join(f"{value:g}" for value in answer["box"]))
        if answer.get("mask") is not None:
            lines.append("a segmentation mask")
        return lines

    def answer_label(self, answer: Any) -> str:
        """The clicked objects as a set (people click objects); the box when a model gave one."""
        return json.dumps(sorted(answer["objects"]) if "objects" in answer else answer.get("box"))

    # --- demo ----------------------------------------------------------------------------------

    def demo(self, folder: Path, seed: int) -> DemoData:
        from plugins.clevrref.expressions import generate

        files = generate(folder, images=DEMO_IMAGES, seed=seed, split="val")
        return DemoData(
            data=files.refexps_file,
            split="val",
            source="generated by load_demo (generate_clevrref)",
            images=files.images_dir,
            scenes=files.scenes_file,
        )


SPEC = ClevrRefSpec()
