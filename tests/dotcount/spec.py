"""Dot count declared as a benchmark (pure): everything Yardstick needs to know of it."""

from __future__ import annotations

from functools import partial
from typing import Any

from benchmarks.spec import BenchmarkSpec, BreakdownPlot, Column, DiagnosticTable, ScoringFiles, ScoringInput


def has_count(count: int, row: dict[str, Any]) -> bool:
    return row.get("count") == count


class DotCountSpec(BenchmarkSpec):
    name = "dotcount"
    title = "Dot count"
    aliases = ("dot-count",)
    formats_module = "tests.dotcount.formats"
    unit_id_field = "id"
    trial = "tests.dotcount.trial:DotCountTrial"
    baselines = ("tests.dotcount.baselines:Blobs", "tests.dotcount.baselines:Guess")
    served = "tests.dotcount.served:DotCountServed"
    plots = (BreakdownPlot("Accuracy by number of dots", ("by_count",), "Acc", ylabel="Acc"),)
    diagnostics = (
        DiagnosticTable(
            "by-count",
            "Accuracy by number of dots",
            tuple(
                Column(
                    f"{count} dots",
                    "Acc",
                    "",
                    ("by_count", str(count), "Acc"),
                    "correct",
                    item_filter=partial(has_count, count),
                )
                for count in range(1, 6)
            ),
            note="Acc within each true count.",
            caption="Dot count: accuracy by number of dots (95% intervals in the CSV).",
        ),
    )
    answer_compared = "the count given"

    def summary(self, payload: dict[str, Any], ground_truth: dict[str, Any]) -> str:
        return payload["question"]

    def read_predictions(self, data: bytes, *, source: str = "") -> dict[str, Any]:
        from tests.dotcount import metric

        return {
            record["id"]: {"answer": record["answer"]}
            for record in metric.parse_predictions(data, source=source)
        }

    def score(self, given: ScoringInput):
        from tests.dotcount import metric

        return metric.score(given.records, [{**answer, "id": key} for key, answer in given.answers.items()])

    def score_files(self, files: ScoringFiles):
        from tests.dotcount import formats, metric

        truth = [
            formats.to_official(record.payload, record.ground_truth)
            for record in formats.parse(files.ground_truth).records
        ]
        return metric.score(
            truth, metric.parse_predictions(files.predictions, source=files.predictions_source)
        )

    def report_columns(self) -> list[Column]:
        return [
            Column("Counting", "Acc", "", ("overall", "Acc"), "correct"),
            Column(
                "Counting",
                "MAE",
                "",
                ("overall", "MAE"),
                "abs_error",
                proportion=False,
                lower_is_better=True,
                upper_bound=None,
            ),
        ]

    def answer_label(self, answer: Any) -> str:
        return answer["answer"].strip()


SPEC = DotCountSpec()
