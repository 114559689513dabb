"""A report's table: rows grouped by producer and name, in the papers' order, a model's
settings sharing a row, and the spec's report columns (`build_table`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.spec import BenchmarkSpec, Column, DiagnosticTable
from evaluation.reports.cells import Cell, ScoredSubmission, cell_for, kept_cell, summary_value


@dataclass
class Row:
    label: str
    producer: str
    cells: list[Cell] = field(default_factory=list)


@dataclass
class Table:
    benchmark: str
    columns: list[Column]
    rows: list[Row]
    parameters: dict[str, dict[str, Any]]
    #: The diagnostic table it shows (None: the main table).
    diagnostic: DiagnosticTable | None = None

    def groups(self) -> list[tuple[str, int]]:
        spans: list[tuple[str, int]] = []
        for column in self.columns:
            if spans and spans[-1][0] == column.group:
                spans[-1] = (column.group, spans[-1][1] + 1)
            else:
                spans.append((column.group, 1))
        return spans


#: Row groups in the papers' order: models, then annotators, Human last.
PRODUCER_ORDER = {"model": 0, "annotator": 1, "human": 2}


def build_table(
    spec: BenchmarkSpec,
    submissions: Sequence[ScoredSubmission],
    *,
    keep_units: set[str] | None = None,
    diagnostic: DiagnosticTable | None = None,
) -> Table:
    """Rows grouped by producer and name (a model's settings share a row), columns from the spec.

    `keep_units`: recompute every cell on these scoring units only (the items that passed a
    validation, say) -- see `kept_cell`. `diagnostic`: that diagnostic table's columns instead
    of the main table's; each is left out where no row has a value for it.
    """
    grouped = row_groups(spec, submissions)
    declared = spec.report_columns() if diagnostic is None else list(diagnostic.columns)
    columns = [
        column
        for column in declared
        if (not column.optional and diagnostic is None)
        or any(
            summary_value(by_setting[column.setting].summary, column.summary_path) is not None
            for by_setting in grouped.values()
            if column.setting in by_setting
        )
    ]
    rows = []
    parameters: dict[str, dict[str, Any]] = {}
    for (producer, label), by_setting in sorted(
        grouped.items(), key=lambda entry: (PRODUCER_ORDER.get(entry[0][0], 1), entry[0][1])
    ):
        row = Row(label=label, producer=producer)
        for column in columns:
            submission = by_setting.get(column.setting)
            if submission is None:
                row.cells.append(Cell(None))
            elif keep_units is None:
                row.cells.append(cell_for(column, submission))
            else:
                row.cells.append(kept_cell(spec, column, submission, keep_units))
        for setting, submission in by_setting.items():
            parameters[f"{label} {setting}".strip()] = row_parameters(submission)
        rows.append(row)
    return Table(
        benchmark=spec.name, columns=columns, rows=rows, parameters=parameters, diagnostic=diagnostic
    )


def row_groups(
    spec: BenchmarkSpec, submissions: Sequence[ScoredSubmission]
) -> dict[tuple[str, str], dict[str, ScoredSubmission]]:
    """(producer, row label) -> setting -> submission: a model's settings share a row where the
    columns name settings; elsewhere a setting is part of the row's label."""
    uses_setting = any(column.setting for column in spec.report_columns())
    grouped: dict[tuple[str, str], dict[str, ScoredSubmission]] = {}
    for submission in submissions:
        label = row_label(submission, uses_setting)
        grouped.setdefault((submission.producer, label), {})[submission.setting if uses_setting else ""] = (
            submission
        )
    return grouped


def row_label(submission: Any, uses_setting: bool) -> str:
    """A submission's row label: its name, with its setting where the columns do not name settings."""
    return (
        submission.name
        if uses_setting or not submission.setting
        else f"{submission.name} ({submission.setting})"
    )


def row_parameters(submission: Any) -> dict[str, Any]:
    """The metric's parameters of a row, and how its answers were made where that was recorded
    beside them (a model run's baseline, checkpoint hash, device and code version)."""
    metric = dict(submission.summary.get("parameters", {}))
    made = {
        key: value for key, value in submission.parameters.items() if key not in metric and key != "cameras"
    }
    return {**metric, "produced_by": made} if made else metric
