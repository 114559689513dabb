"""STE-VQA as Yardstick serves it (pure): one declaration the apps look up."""

from __future__ import annotations

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
    ItemTable,
    Region,
    ScoringFiles,
    ScoringInput,
    ScoringUnit,
)
from plugins.stevqa.formats import CHINESE, ENGLISH, quad_points, question_records

DEMO_IMAGES = 40


def _(text: str) -> str:
    """Marks the item page's words for the translation catalogue (`make messages`); the page
    (benchmarks/views.py) translates them."""
    return text


def has_value(field: str, value: str, row: dict[str, Any]) -> bool:
    """Whether a per-unit row's `field` is `value` (an item filter, bound with functools.partial)."""
    return row.get(field) == value


def in_language(code: str):
    return partial(has_value, "lang", code)


#: What the metric (plugins.stevqa.metric) names things in its summary, repeated here so that reading
#: the registry does not import it (numpy, shapely); a test checks that both agree.
ONE_WORD, MORE = "one word", "more"
EVIDENCE_CLASSES = ("incorrect", "insufficient", "sufficient")
#: The keys of the summary's "by_tau": 0.00, 0.05, ..., 1.00.
TAU_KEYS = tuple(f"{step * 0.05:.2f}" for step in range(21))
LANGUAGE_GROUPS = ((ENGLISH, _("English")), (CHINESE, _("Chinese")))


def tau_plot(metric: str, title: str) -> BreakdownPlot:
    return BreakdownPlot(
        title,
        ("by_tau",),
        metric,
        tuple(Choice(key, key) for key in TAU_KEYS),
        ylabel=metric,
        kind="line",
        xlabel="τ",
    )


def language_columns() -> tuple[Column, ...]:
    """The paper's per-language layout: TC, LC, CLC and Δr for En and Ch (groups named as the
    paper prints them, which also keeps them apart from the main table's English and Chinese)."""
    columns: list[Column] = []
    for code, group in ((ENGLISH, _("En")), (CHINESE, _("Ch"))):
        columns += [
            Column(group, name, "", ("by_language", code, name), name, in_language(code), proportion=False)
            for name in ("TC", "LC", "CLC")
        ]
        columns.append(Column(group, "Δr", "", ("by_language", code, "Delta_r"), None, proportion=False))
    return tuple(columns)


def evidence_columns() -> tuple[Column, ...]:
    labels = {"incorrect": _("incorrect"), "insufficient": _("insufficient"), "sufficient": _("sufficient")}
    groups = (
        *((code, group, in_language(code)) for code, group in LANGUAGE_GROUPS),
        ("overall", _("All"), None),
    )
    return tuple(
        Column(group, labels[name], "", ("evidence_classes", key, name), f"evidence_{name}", keep)
        for key, group, keep in groups
        for name in EVIDENCE_CLASSES
    )


def answer_length_columns() -> tuple[Column, ...]:
    rules = (
        ("by_answer_length_jieba", "answer_length_jieba", _("Short (jieba)"), _("Long (jieba)")),
        ("by_answer_length", "answer_length", _("Short (word rule)"), _("Long (word rule)")),
    )
    return tuple(
        Column(
            group, name, "", (key, length, name), name, partial(has_value, field, length), proportion=False
        )
        for key, field, short, long in rules
        for length, group in ((ONE_WORD, short), (MORE, long))
        for name in ("TC", "CLC")
    )


def corners(evidence: Any) -> str:
    """An evidence quadrilateral as its four corners, "(x1, y1) (x2, y2) ..."; "–" without one."""
    if not isinstance(evidence, list) or len(evidence) != 8:
        return "–"
    return " ".join(f"({evidence[index]}, {evidence[index + 1]})" for index in range(0, 8, 2))


class SteVqaSpec(BenchmarkSpec):
    name = "stevqa"
    title = "STE-VQA"
    aliases = ("ste-vqa", "ste_vqa", "est-vqa", "estvqa")
    formats_module = "plugins.stevqa.formats"
    unit_id_field = "question_id"
    unit_id_type = int
    settings = (Choice("", "–"), Choice("mono", _("monolingual")), Choice("bi", _("bilingual")))
    variants = (
        Choice(OFFICIAL, _("official (released evaluator)")),
        Choice("paper", _("paper")),
        Choice("ocr", _("official, evidence from OCR for answer-only predictions")),
        Choice("paper-ocr", _("paper, evidence from OCR for answer-only predictions")),
    )
    region_kind = "quadrilateral"
    #: `manage.py score` passes open files: the ground truth is scored as it is read, memory holding
    #: the predictions and a row per question, not the parsed files (perf/results/score_stevqa.md).
    scores_streamed_files = True
    trial = "plugins.stevqa.trial:SteVqaTrial"
    authoring = "plugins.stevqa.authoring:SteVqaAuthoring"
    comparison_strata = (
        Choice("lang", _("language")),
        Choice("answer_length", _("answer length")),
        Choice("answer_length_jieba", _("answer length (jieba)")),
    )
    baselines = (
        "plugins.stevqa.baselines:RandomTokenBaseline",
        "plugins.stevqa.baselines:RankerBaseline",
        "plugins.stevqa.baselines:OcrUpperBoundBaseline",
        "plugins.stevqa.baselines:SingleTokenUpperBoundBaseline",
    )
    served = "plugins.stevqa.served:SteVqaServed"
    plots = (
        BreakdownPlot(
            _("CLC by language"),
            ("by_language",),
            "CLC",
            (Choice(ENGLISH, _("English")), Choice(CHINESE, _("Chinese"))),
            ylabel="CLC",
        ),
        tau_plot("CLC", _("CLC as τ varies")),
        tau_plot("TC", _("TC as τ varies")),
    )
    diagnostics = (
        DiagnosticTable(
            "languages",
            _("TC, LC, CLC and Δr by language"),
            language_columns(),
            note=_(
                "Per question language, as the paper prints them for monolingual and bilingual models: "
                "a model's monolingual and bilingual runs are separate rows, their setting in the name."
            ),
            caption="STE-VQA: TC, LC, CLC and Δr on English (En) and Chinese (Ch) questions.",
        ),
        DiagnosticTable(
            "evidence",
            _("Evidence classes"),
            evidence_columns(),
            note=_(
                "Share of questions whose evidence has IoU 0 with the truth (incorrect), between 0 and "
                "0.5 (insufficient) or at least 0.5 (sufficient). A question without a prediction, or "
                "without evidence while other predictions have some, counts as incorrect; answer-only "
                "predictions show none."
            ),
            caption="STE-VQA: evidence classes by question language (share of questions).",
        ),
        DiagnosticTable(
            "answer-length",
            _("Short and long answers"),
            answer_length_columns(),
            note=_(
                "Short answers are one word. jieba: the paper's rule, Chinese answers cut into words by "
                "jieba, others by spaces. Word rule: by spaces, a Chinese word of more than two "
                "characters counting as long."
            ),
            caption="STE-VQA: TC and CLC on short (one-word) and long answers, by two word rules.",
        ),
    )

    # --- the catalog ---------------------------------------------------------------------------

    def units(
        self, external_id: str, payload: dict[str, Any], ground_truth: dict[str, Any]
    ) -> list[ScoringUnit]:
        """One unit per question, named by its question id (given at import in either layout)."""
        return [
            ScoringUnit(str(record["question_id"]), part, record)
            for part, record in enumerate(question_records(payload, ground_truth))
        ]

    def unit_id(self, external_id: str, payload: dict[str, Any], part: int) -> str:
        return str(payload["question_ids"][part]) if "question_ids" in payload else external_id

    def unit_count(self, payload: dict[str, Any]) -> int:
        return len(payload["questions"]) if "questions" in payload else 1

    def summary(self, payload: dict[str, Any], ground_truth: dict[str, Any]) -> str:
        if "questions" in payload:
            return " / ".join(str(question) for question in payload["questions"][:3])
        return str(payload.get("question", ""))

    def regions(self, ground_truth: dict[str, Any], scene: dict[str, Any] | None) -> list[Region]:
        pairs = ground_truth.get("annotation") or [ground_truth]
        return [
            Region(str(pair.get("answer", "")), tuple(quad_points(pair["evidence"])))
            for pair in pairs
            if len(pair.get("evidence") or []) == 8
        ]

    def shown_sections(self, payload: dict[str, Any], scene: dict[str, Any] | None) -> list[ItemSection]:
        """The questions on the image, each with the id predictions answer it by."""
        if "questions" in payload:
            ids = payload.get("question_ids") or range(len(payload["questions"]))
            rows = tuple(
                (str(question_id), str(question))
                for question_id, question in zip(ids, payload["questions"], strict=False)
            )
        else:
            rows = ((str(payload.get("question_id", "")), str(payload.get("question", ""))),)
        return [
            ItemSection(
                _("Questions"),
                table=ItemTable((_("Question id"), _("Question")), rows),
                note=_(
                    "Testers are asked one question at a time on the image, type the answer and click the "
                    "four corners of the text they read it from."
                ),
            )
        ]

    def truth_sections(
        self, payload: dict[str, Any], ground_truth: dict[str, Any], scene: dict[str, Any] | None
    ) -> list[ItemSection]:
        """Each question's answer and the corners of its evidence, as outlined on the image."""
        rows = tuple(
            (
                str(record.get("question_id", "")),
                str(record.get("question", "")),
                str(record.get("answer", "")),
                corners(record.get("evidence")),
            )
            for record in question_records(payload, ground_truth)
        )
        return [
            ItemSection(
                table=ItemTable(
                    (_("Question id"), _("Question"), _("Answer"), _("Evidence (x, y corners)")), rows
                )
            )
        ]

    # --- scoring -------------------------------------------------------------------------------

    def read_predictions(self, data: bytes, *, source: str = "") -> dict[str, Any]:
        from plugins.stevqa import metric

        return {
            str(record["question_id"]): {"answer": record["answer"], "evidence": record["evidence"]}
            for record in metric.parse_predictions(data, source=source)
        }

    def score(self, given: ScoringInput):
        from plugins.stevqa import metric

        predictions = [
            {**answer, "question_id": self.unit_id_type(key)} for key, answer in given.answers.items()
        ]
        return metric.score(list(given.records), predictions, variant=given.variant)

    def score_files(self, files: ScoringFiles):
        """The files as they come (bytes, or files open for reading, scored as they are read)."""
        from plugins.stevqa import metric

        return metric.score_file(
            files.ground_truth,
            files.predictions,
            variant=files.variant,
            gt_source=files.ground_truth_source,
            pred_source=files.predictions_source,
        )

    # --- reports -------------------------------------------------------------------------------

    def report_columns(self) -> list[Column]:
        columns = []
        for code, group in ((ENGLISH, _("English")), (CHINESE, _("Chinese"))):
            columns += [
                Column(
                    group, name, "", ("by_language", code, name), name, in_language(code), proportion=False
                )
                for name in ("TC", "LC", "CLC")
            ]
            columns.append(Column(group, "Δr", "", ("by_language", code, "Delta_r"), None, proportion=False))
        columns += [
            Column(_("All"), name, "", ("overall", name), name, proportion=False)
            for name in ("TC", "LC", "CLC")
        ]
        return columns

    # --- agreement -----------------------------------------------------------------------------

    answer_compared = (
        "the answer text, lower-cased; also answer text similarity and the IoU of the evidence quadrilaterals"
    )

    def answer_label(self, answer: Any) -> str:
        """The answer text, lower-cased and stripped (the evidence is compared apart)."""
        return str(answer.get("answer", "")).strip().lower()

    def answer_lines(self, answer: Any) -> list[str]:
        """The answer text, and its evidence quadrilateral's corners when it has one."""
        lines = [f"“{answer['answer']}”"]
        evidence = answer.get("evidence")
        if evidence:
            corners = ", ".join(
                f"({x:g}, {y:g})" for x, y in zip(evidence[0::2], evidence[1::2], strict=True)
            )
            lines.append(f"evidence {corners}")
        return lines

    def answer_text(self, answer: Any) -> str | None:
        return str(answer.get("answer", ""))

    def answer_region(self, answer: Any) -> list[tuple[float, float]] | None:
        evidence = answer.get("evidence")
        return quad_points(evidence) if evidence and len(evidence) == 8 else None

    # --- demo ----------------------------------------------------------------------------------

    def demo(self, folder: Path, seed: int) -> DemoData:
        from plugins.stevqa.demo import generate_demo

        folder.mkdir(parents=True, exist_ok=True)
        return DemoData(
            data=generate_demo(folder, count=DEMO_IMAGES, seed=seed),
            split="train",
            source="generated by load_demo",
            images=folder / "images",
        )


SPEC = SteVqaSpec()
