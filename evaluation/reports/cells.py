"""A report's cells: a column's value for one submission, from its summary, with a 95% interval
and the number of items behind it from its per-unit rows (`cell_for`), or recomputed on the
units kept (`kept_cell`); and `ScoredSubmission`, what a cell needs of a stored submission.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.spec import BenchmarkSpec, Column
from evaluation.sampling import wilson_interval

Z_95 = 1.959963984540054


@dataclass
class Cell:
    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0


@dataclass
class ScoredSubmission:
    """What the table needs of a stored submission."""

    producer: str
    name: str
    setting: str
    summary: dict[str, Any]
    item_rows: Sequence[dict[str, Any]]
    #: How the answers were made, kept on the submission (a model run's choices); may be empty.
    parameters: dict[str, Any] = field(default_factory=dict)
    #: The stored submission's id, where there is one.
    pk: int | None = None
    #: Cells computed before (`column_key` -> Cell), kept with the submission's version: a table
    #: takes them instead of reading the per-unit rows again (which are then left empty).
    cells: dict[str, Cell] | None = None


def summary_value(summary: Any, path: Sequence[str]) -> Any:
    """The value at `path` in a submission's summary; None where the path leads nowhere."""
    for key in path:
        summary = summary.get(key) if isinstance(summary, dict) else None
    return summary


def column_key(column: Column) -> str:
    return "\x1f".join((column.group, column.label, column.setting, *column.summary_path))


def submission_cells(spec: BenchmarkSpec, submission: ScoredSubmission) -> dict[str, Cell]:
    """Every column's cell of one submission, the main table's and the diagnostic tables' (from
    its summary and per-unit rows): what a report keeps between requests, so that it reads no
    per-unit row once they are computed."""
    return {column_key(column): cell_for(column, submission) for column in spec.all_columns()}


def cell_for(column: Column, submission: ScoredSubmission, *, from_rows: bool = False) -> Cell:
    """A cell's value from the summary (or, `from_rows`, the mean of the per-unit values) with its
    interval from the per-unit values."""
    if submission.cells is not None and not from_rows:
        known = submission.cells.get(column_key(column))
        if known is not None:
            return known
    values = per_item_values(column, submission.item_rows) if column.item_key is not None else []
    if from_rows:
        value: Any = sum(values) / len(values) if values else None
    else:
        value = summary_value(submission.summary, column.summary_path)
    if value is None:
        return Cell(None)
    if column.count:
        return Cell(float(value))
    if column.item_key is None:
        return Cell(float(value), n=count_for(column, submission))
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


def per_item_values(column: Column, rows: Sequence[dict[str, Any]]) -> list[float]:
    return [
        float(row[column.item_key])
        for row in rows
        if row.get(column.item_key) is not None and (column.item_filter is None or column.item_filter(row))
    ]


def kept_cell(
    spec: BenchmarkSpec, column: Column, submission: ScoredSubmission, keep_units: set[str]
) -> Cell:
    """A cell recomputed on the kept units: the mean of their per-unit values, with its interval.

    Only for a column whose summary value *is* the mean of its per-unit values (checked on the
    full set: accuracies, mean distances); a column aggregated otherwise (a cumulative IoU, a
    ratio of sums) cannot be recomputed from the rows and is left empty rather than guessed.
    """
    if column.item_key is None:
        return Cell(None)
    full = cell_for(column, submission)
    values = per_item_values(column, submission.item_rows)
    if (
        full.value is None
        or not values
        or not math.isclose(sum(values) / len(values), full.value, abs_tol=1e-9)
    ):
        return Cell(None)
    kept = [row for row in submission.item_rows if unit_of(spec, row) in keep_units]
    return cell_for(
        column,
        ScoredSubmission(submission.producer, submission.name, submission.setting, {}, kept),
        from_rows=True,
    )


def unit_of(spec: BenchmarkSpec, row: dict[str, Any]) -> str | None:
    """The unit a per-item row scores (None for a row that names none: it is not kept)."""
    try:
        return spec.row_id(row)
    except (KeyError, TypeError):
        return None


def count_for(column: Column, submission: ScoredSubmission) -> int:
    rows = submission.item_rows
    return sum(1 for row in rows if column.item_filter is None or column.item_filter(row))
