"""CLEVR-Ref+ as Yardstick serves it (pure): one declaration the apps look up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.spec import (
    OFFICIAL,
    BenchmarkSpec,
    BreakdownPlot,
    Choice,
    Column,
    DemoData,
    ItemSection,
    Region,
    ScoringFiles,
    ScoringInput,
    rectangle,
)
from plugins.clevrref.formats import referred_objects

DEMO_IMAGES = 40
#: The metric's second variant (plugins.clevrref.metric.FULL_RESOLUTION).
FULL_RESOLUTION = "full-resolution"


def _(text: str) -> str:
    """Marks the item page's words for the translation catalogue (`make messages`); the page
    (benchmarks/views.py) translates them."""
    return text


def scored_under(variant: str):
    """Rows scored under `variant` (each row says which): a column of one variant never takes the
    per-expression values of the other, nor of rows scored before rows said it."""
    return lambda row: row.get("variant") == variant


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
    trial = "plugins.clevrref.trial:ClevrRefTrial"
    validation = "plugins.clevrref.check:ClevrRefCheck"
    comparison_strata = (Choice("category", _("expression category")),)
    baselines = (
        "plugins.clevrref.baselines:RandomObjectBaseline",
        "plugins.clevrref.baselines:ExecutorBaseline",
    )
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
    )

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
        from plugins.clevrref import metric

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
                lambda row: row.get("single"),
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
