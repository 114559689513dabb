"""Side-by-side tables in the papers' layout, from scored submissions (pure, no Django).

Rows are producers (models first, alphabetically; annotators; Human last, as in the papers);
a model's submissions in different settings (TRANCE Basic, Event, View) share one row.
Columns follow each paper's main table. Every cell carries its value, a 95% interval and the
number of items behind it: Wilson intervals for accuracies (shares of items), normal
approximation intervals for means (distances, scores), computed from the per-item rows.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluation.sampling import wilson_interval

Z_95 = 1.959963984540054


@dataclass(frozen=True)
class Column:
    group: str
    label: str
    setting: str  # which submission of the row feeds this column ("" = the row's only setting)
    summary_path: tuple[str, ...]
    item_key: str | None = None  # per-item value whose spread gives the interval
    item_filter: Callable[[dict], bool] | None = None
    proportion: bool = True  # accuracies get Wilson intervals; means get normal ones
    lower_is_better: bool = False
    upper_bound: float | None = 1.0  # means are clipped to [0, upper_bound]; None: no upper bound


@dataclass
class Cell:
    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0


@dataclass
class Row:
    label: str
    kind: str
    cells: list[Cell] = field(default_factory=list)


@dataclass
class Table:
    benchmark: str
    columns: list[Column]
    rows: list[Row]
    parameters: dict[str, dict[str, Any]]

    def groups(self) -> list[tuple[str, int]]:
        spans: list[tuple[str, int]] = []
        for column in self.columns:
            if spans and spans[-1][0] == column.group:
                spans[-1] = (column.group, spans[-1][1] + 1)
            else:
                spans.append((column.group, 1))
        return spans


def by_language(code: str) -> Callable[[dict], bool]:
    return lambda row: row.get("lang") == code


def by_kind(kind: str) -> Callable[[dict], bool]:
    return lambda row: row.get("kind") == kind


def trance_columns() -> list[Column]:
    basic = [
        Column("Basic", name, "basic", (name,), key)
        for name, key in (
            ("ObjAcc", "obj_correct"),
            ("AttrAcc", "attr_correct"),
            ("ValAcc", "pair_correct"),
            ("Acc", "correct"),
        )
    ]
    columns = list(basic)
    for setting, group in (("event", "Event"), ("view", "View")):
        columns += [
            Column(
                group,
                "AD",
                setting,
                ("AD",),
                "dist",
                proportion=False,
                lower_is_better=True,
                upper_bound=None,
            ),
            Column(
                group,
                "AND",
                setting,
                ("AND",),
                "norm_dist",
                proportion=False,
                lower_is_better=True,
                upper_bound=None,
            ),
            Column(group, "LAcc", setting, ("LAcc",), "loose_correct"),
            Column(group, "Acc", setting, ("Acc",), "correct"),
            Column(group, "EO", setting, ("EO",), None, lower_is_better=True),
        ]
    return columns


def stevqa_columns() -> list[Column]:
    columns = []
    for code, group in (("en", "English"), ("ch", "Chinese")):
        columns += [
            Column(group, name, "", ("by_language", code, name), name, by_language(code), proportion=False)
            for name in ("TC", "LC", "CLC")
        ]
        columns.append(Column(group, "Δr", "", ("by_language", code, "Delta_r"), None, proportion=False))
    columns += [
        Column("All", name, "", ("overall", name), name, None, proportion=False)
        for name in ("TC", "LC", "CLC")
    ]
    return columns


def cric_columns() -> list[Column]:
    columns = []
    for path, group, row_filter in (
        (("by_kind", "verify"), "Verify", by_kind("verify")),
        (("by_kind", "recognize"), "Recognize", by_kind("recognize")),
        (("overall",), "Overall", None),
    ):
        for name, key in (
            ("Ans", "answer_correct"),
            ("Grd", "grounding_correct"),
            ("Final", "final_correct"),
        ):
            columns.append(Column(group, name, "", (*path, name), key, row_filter))
    return columns


def clevrref_columns() -> list[Column]:
    return [
        Column(
            "Detection",
            "Acc (single)",
            "",
            ("overall", "detection_accuracy"),
            "detected",
            lambda r: r.get("single"),
        ),
        Column("Segmentation", "mean IoU", "", ("overall", "mean_iou"), "mask_iou", None, proportion=False),
        Column("Segmentation", "cumulative IoU", "", ("overall", "cumulative_iou"), None, proportion=False),
    ]


COLUMNS: dict[str, Callable[[], list[Column]]] = {
    "trance": trance_columns,
    "stevqa": stevqa_columns,
    "cric": cric_columns,
    "clevrref": clevrref_columns,
}
KIND_ORDER = {"model": 0, "annotator": 1, "human": 2}


@dataclass
class ScoredSubmission:
    """What the table needs of a stored submission."""

    kind: str
    name: str
    setting: str
    summary: dict[str, Any]
    item_rows: Sequence[dict[str, Any]]


def build_table(benchmark: str, submissions: Sequence[ScoredSubmission]) -> Table:
    columns = COLUMNS[benchmark]()
    uses_setting = any(column.setting for column in columns)
    grouped: dict[tuple[str, str], dict[str, ScoredSubmission]] = {}
    for submission in submissions:
        label = (
            submission.name
            if uses_setting or not submission.setting
            else f"{submission.name} ({submission.setting})"
        )
        key = (submission.kind, label)
        grouped.setdefault(key, {})[submission.setting if uses_setting else ""] = submission
    rows = []
    parameters: dict[str, dict[str, Any]] = {}
    for (kind, label), by_setting in sorted(
        grouped.items(), key=lambda entry: (KIND_ORDER.get(entry[0][0], 1), entry[0][1])
    ):
        row = Row(label=label, kind=kind)
        for column in columns:
            submission = by_setting.get(column.setting)
            row.cells.append(cell_for(column, submission) if submission else Cell(None))
        for setting, submission in by_setting.items():
            parameters[f"{label} {setting}".strip()] = submission.summary.get("parameters", {})
        rows.append(row)
    return Table(benchmark=benchmark, columns=columns, rows=rows, parameters=parameters)


def cell_for(column: Column, submission: ScoredSubmission) -> Cell:
    value: Any = submission.summary
    for key in column.summary_path:
        value = value.get(key) if isinstance(value, dict) else None
    if value is None:
        return Cell(None)
    if column.item_key is None:
        return Cell(float(value), n=count_for(column, submission))
    values = [
        float(row[column.item_key])
        for row in submission.item_rows
        if row.get(column.item_key) is not None and (column.item_filter is None or column.item_filter(row))
    ]
    n = len(values)
    if not n:
        return Cell(float(value))
    if column.proportion:
        low, high = wilson_interval(round(sum(values)), n)
    else:
        mean = sum(values) / n
        spread = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
        half = Z_95 * spread / math.sqrt(n)
        # Every mean here is of non-negative values, most of them bounded by 1.
        low = max(mean - half, 0.0)
        high = mean + half if column.upper_bound is None else min(mean + half, column.upper_bound)
    return Cell(float(value), low, high, n)


def count_for(column: Column, submission: ScoredSubmission) -> int:
    rows = submission.item_rows
    return sum(1 for row in rows if column.item_filter is None or column.item_filter(row))


def format_value(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.4f}" if abs(value) < 10 else f"{value:.2f}"


def table_csv(table: Table) -> str:
    """One line per (row, column): machine-friendly, with interval and item count."""
    output = io.StringIO()
    writer = csv.writer(output)
    writer.writerow(["row", "kind", "group", "metric", "value", "ci_low", "ci_high", "n"])
    for row in table.rows:
        for column, cell in zip(table.columns, row.cells, strict=True):
            writer.writerow(
                [row.label, row.kind, column.group, column.label, cell.value, cell.low, cell.high, cell.n]
            )
    return output.getvalue()


def table_json(table: Table) -> dict[str, Any]:
    return {
        "benchmark": table.benchmark,
        "columns": [
            {"group": c.group, "metric": c.label, "lower_is_better": c.lower_is_better} for c in table.columns
        ],
        "rows": [
            {
                "label": row.label,
                "kind": row.kind,
                "cells": [
                    {"value": c.value, "ci_low": c.low, "ci_high": c.high, "n": c.n} for c in row.cells
                ],
            }
            for row in table.rows
        ],
        "parameters": table.parameters,
        "intervals": "95%: Wilson for accuracies, normal approximation for means",
    }


LATEX_SPECIAL = {
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "Δ": r"$\Delta$",
}


def latex_escape(text: str) -> str:
    return "".join(LATEX_SPECIAL.get(character, character) for character in text)


def table_latex(table: Table) -> str:
    """A booktabs table as in the papers: models as rows, Human last, best value in bold."""
    best: dict[int, float] = {}
    for index, column in enumerate(table.columns):
        values = [row.cells[index].value for row in table.rows if row.cells[index].value is not None]
        if values:
            best[index] = min(values) if column.lower_is_better else max(values)
    lines = [
        r"\begin{tabular}{l" + "c" * len(table.columns) + "}",
        r"\toprule",
        " & ".join(
            ["Method"]
            + [rf"\multicolumn{{{span}}}{{c}}{{{latex_escape(group)}}}" for group, span in table.groups()]
        )
        + r" \\",
        " & ".join([""] + [latex_escape(column.label) for column in table.columns]) + r" \\",
        r"\midrule",
    ]
    for row in table.rows:
        if row.kind == "human":
            lines.append(r"\midrule")
        cells = []
        for index, cell in enumerate(row.cells):
            text = format_value(cell.value)
            if cell.value is not None and best.get(index) == cell.value and len(table.rows) > 1:
                text = rf"\textbf{{{text}}}"
            cells.append(text)
        lines.append(" & ".join([latex_escape(row.label)] + cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"
