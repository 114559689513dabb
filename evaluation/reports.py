"""Side-by-side tables in the papers' layout, from scored submissions (pure, no Django).

Rows are producers (models first, alphabetically; annotators; Human last, as in the papers);
a model's submissions in the benchmark's different settings share one row.
Columns follow each paper's main table. Every cell carries its value, a 95% interval and the
number of items behind it: Wilson intervals for accuracies (shares of items), normal
approximation intervals for means (distances, scores), computed from the per-item rows.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
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


def build_table(
    spec: BenchmarkSpec, submissions: Sequence[ScoredSubmission], *, keep_units: set[str] | None = None
) -> Table:
    """Rows grouped by producer and name (a model's settings share a row), columns from the spec.

    `keep_units`: recompute every cell on these scoring units only (the items that passed a
    validation, say) -- see `kept_cell`.
    """
    grouped = row_groups(spec, submissions)
    columns = [
        column
        for column in spec.report_columns()
        if not column.optional
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
    return Table(benchmark=spec.name, columns=columns, rows=rows, parameters=parameters)


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


def summary_value(summary: Any, path: Sequence[str]) -> Any:
    """The value at `path` in a submission's summary; None where the path leads nowhere."""
    for key in path:
        summary = summary.get(key) if isinstance(summary, dict) else None
    return summary


def column_key(column: Column) -> str:
    return f"{column.group}\x1f{column.label}\x1f{column.setting}"


def submission_cells(spec: BenchmarkSpec, submission: ScoredSubmission) -> dict[str, Cell]:
    """Every report column's cell of one submission (from its summary and per-unit rows): what a
    table keeps between requests, so that a report reads no per-unit row once they are computed."""
    return {column_key(column): cell_for(column, submission) for column in spec.report_columns()}


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


def format_value(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.4f}" if abs(value) < 10 else f"{value:.2f}"


def table_csv(table: Table) -> str:
    """One line per (row, column): machine-friendly, with interval and item count."""
    output = io.StringIO()
    writer = csv.writer(output)
    writer.writerow(["row", "producer", "group", "metric", "value", "ci_low", "ci_high", "n"])
    for row in table.rows:
        for column, cell in zip(table.columns, row.cells, strict=True):
            writer.writerow(
                [row.label, row.producer, column.group, column.label, cell.value, cell.low, cell.high, cell.n]
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
                "producer": row.producer,
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
        if row.producer == "human":
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


# --- paired comparisons of two rows --------------------------------------------------------------


#: Why a column (or a pair of rows) is not compared, by a code that stays the same in every
#: language: the entry's "skipped" holds the English text, its "skipped_code" the code.
SKIP_REASONS = {
    "not_a_mean": "not a mean over units: no paired comparison",
    "setting_unanswered": "one of the rows has no answers in this setting",
    "no_common_units": "no unit was answered by both rows",
}


def skip(entry: dict[str, Any], code: str) -> None:
    """Mark a compared entry skipped for the reason `code` (a key of SKIP_REASONS)."""
    entry["skipped"] = SKIP_REASONS[code]
    entry["skipped_code"] = code


def compare_rows(
    spec: BenchmarkSpec,
    a: Mapping[str, ScoredSubmission],
    b: Mapping[str, ScoredSubmission],
    *,
    metric: str | None = None,
    by: str | None = None,
    resamples: int = 2000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Row A against row B, column by column, on the units both answered.

    `a`, `b`: setting -> submission, as `row_groups` gives a row. Each column that is a mean of
    per-unit values gets the paired difference with its BCa interval; an accuracy whose per-unit
    values are all right/wrong on both sides also gets McNemar's exact test, and those p-values
    are adjusted together (Holm) since they are read as one table. Several testers' answers to a
    unit count as their mean (the unit is what is resampled). `metric`: only the columns with
    this label (e.g. "Acc"). `by`: one of the spec's `comparison_strata` (a per-unit field such as
    a transformation length): each column is also compared within each of its values,
    under "strata", those tests joining the Holm family. A column that cannot be compared says
    why under "skipped" (in English) and "skipped_code" (a key of SKIP_REASONS, for a page to say
    it in its reader's language).
    """
    results: list[dict[str, Any]] = []
    for column in spec.report_columns():
        if metric is not None and column.label.lower() != metric.lower():
            continue
        entry: dict[str, Any] = {
            "group": column.group,
            "label": column.label,
            "setting": column.setting,
            "lower_is_better": column.lower_is_better,
        }
        results.append(entry)
        if column.item_key is None:
            skip(entry, "not_a_mean")
            continue
        first, second = a.get(column.setting), b.get(column.setting)
        if first is None or second is None:
            skip(entry, "setting_unanswered")
            continue
        units, x, y = paired_unit_values(spec, column, first, second)
        if not units:
            skip(entry, "no_common_units")
            continue
        entry.update(compared(column, x, y, resamples=resamples, seed=seed))
        if by:
            groups = unit_strata(spec, by, first, second)
            entry["by"] = by
            entry["strata"] = []
            for value in sorted({groups.get(unit) for unit in units} - {None}, key=str):
                chosen = [index for index, unit in enumerate(units) if groups.get(unit) == value]
                entry["strata"].append(
                    {
                        "stratum": value,
                        **compared(column, x[chosen], y[chosen], resamples=resamples, seed=seed),
                    }
                )
    holm_family(results)
    return results


def compared(column: Column, x: Any, y: Any, *, resamples: int, seed: int) -> dict[str, Any]:
    """The paired difference of two aligned arrays of per-unit values, and McNemar where they are
    right/wrong (a unit several testers answered is right when at least half of them were)."""
    from evaluation.comparison import mcnemar_exact, paired_difference

    result = paired_difference(x, y, resamples=resamples, seed=seed).as_dict()
    if column.proportion and all(((v >= 0) & (v <= 1)).all() for v in (x, y)):
        result["mcnemar"] = mcnemar_exact(x >= 0.5, y >= 0.5).as_dict()
        result["mcnemar"]["unit_right"] = (
            "right/wrong"
            if all(((v == 0) | (v == 1)).all() for v in (x, y))
            else "at least half of its answers right"
        )
    return result


def holm_family(results: list[dict[str, Any]]) -> None:
    """Holm's adjustment over every McNemar test of a comparison table, strata included."""
    from evaluation.comparison import holm

    tests = [entry["mcnemar"] for entry in results if "mcnemar" in entry]
    tests += [
        stratum["mcnemar"] for entry in results for stratum in entry.get("strata", ()) if "mcnemar" in stratum
    ]
    for test, adjusted in zip(tests, holm([test["p_value"] for test in tests]), strict=True):
        test.update(adjusted, family=len(tests))


def unit_strata(spec: BenchmarkSpec, by: str, *submissions: ScoredSubmission) -> dict[str, Any]:
    """unit -> its value of the per-unit field `by`, from whichever submission's rows carry it."""
    groups: dict[str, Any] = {}
    for submission in submissions:
        for row in submission.item_rows:
            unit = unit_of(spec, row)
            if unit is not None and unit not in groups and row.get(by) is not None:
                groups[unit] = row[by]
    return groups


def paired_unit_values(
    spec: BenchmarkSpec, column: Column, first: ScoredSubmission, second: ScoredSubmission
) -> tuple[list[str], Any, Any]:
    """The units both submissions scored in this column, and each one's per-unit value (a mean
    where several testers answered the unit), as two aligned arrays."""
    from evaluation.comparison import paired_values, unit_means

    values = [
        unit_means(
            (unit_of(spec, row), row[column.item_key])
            for row in submission.item_rows
            if row.get(column.item_key) is not None
            and unit_of(spec, row) is not None
            and (column.item_filter is None or column.item_filter(row))
        )
        for submission in (first, second)
    ]
    return paired_values(*values)


COMPARISON_FIELDS = (
    "group", "metric", "setting", "stratum", "n", "mean_a", "mean_b", "difference", "ci_low", "ci_high", "interval",
    "test", "only_a_right", "only_b_right", "p_value", "p_holm",
)  # fmt: skip


def comparison_records(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One flat record per compared column, then one per stratum of it (skipped ones say why
    under "interval")."""
    records = []
    flat = []
    for column in result["columns"]:
        flat.append((column, column, ""))
        flat += [
            (column, stratum, f"{column['by']}={stratum['stratum']}") for stratum in column.get("strata", ())
        ]
    for owner, column, stratum in flat:
        test = column.get("mcnemar") or {}
        records.append(
            {
                "group": owner["group"],
                "metric": owner["label"],
                "setting": owner["setting"],
                "stratum": stratum,
                "n": column.get("n"),
                "mean_a": column.get("mean_a"),
                "mean_b": column.get("mean_b"),
                "difference": column.get("difference"),
                "ci_low": column.get("low"),
                "ci_high": column.get("high"),
                "interval": column.get("skipped") or column.get("method"),
                "test": "McNemar exact" if test else "",
                "only_a_right": test.get("only_a_right"),
                "only_b_right": test.get("only_b_right"),
                "p_value": test.get("p_value"),
                "p_holm": test.get("p_holm"),
            }
        )
    return records


def comparison_csv(result: Mapping[str, Any]) -> str:
    output = io.StringIO()
    output.write(f"# {result['a']} (A) against {result['b']} (B) on the units both answered\n")
    writer = csv.DictWriter(output, fieldnames=COMPARISON_FIELDS)
    writer.writeheader()
    writer.writerows(comparison_records(result))
    return output.getvalue()


def latex_difference(record: Mapping[str, Any]) -> tuple[str, str]:
    """A compared record's "A - B [low, high]" and "p (p Holm)" as the LaTeX tables print them."""
    interval = (
        f"{record['difference']:+.3f} [{record['ci_low']:+.3f}, {record['ci_high']:+.3f}]"
        if record["ci_low"] is not None
        else f"{record['difference']:+.3f}"
    )
    p = f"{record['p_value']:.3g} ({record['p_holm']:.3g})" if record["p_value"] is not None else "--"
    return interval, p


def comparison_latex(result: Mapping[str, Any]) -> str:
    """A booktabs table of the compared columns: n, A, B, A - B [95% CI], McNemar p (Holm)."""

    lines = [
        "\\begin{tabular}{lrrrlr}",
        "\\toprule",
        f"Metric & $n$ & {latex_escape(result['a'])} & {latex_escape(result['b'])} & $\\Delta$ [95\\% CI] & $p$ (Holm) \\\\",
        "\\midrule",
    ]
    for record in comparison_records(result):
        if record["n"] is None:
            continue
        interval, p = latex_difference(record)
        name = latex_escape(f"{record['group']} {record['metric']} {record['stratum']}".strip())
        lines.append(
            f"{name} & {record['n']} & {record['mean_a']:.3f} & {record['mean_b']:.3f} & {interval} & {p} \\\\"
        )
    lines += ["\\bottomrule", "\\end{tabular}", ""]
    return "\n".join(lines)


PAIRWISE_FIELDS = ("row_a", "row_b", *COMPARISON_FIELDS)


def pairwise_records(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One flat record per pair of rows and headline column (`pairwise_comparisons`' table)."""
    return [
        {"row_a": pair["a"], "row_b": pair["b"], **record}
        for pair in result["pairs"]
        for record in comparison_records({"columns": [pair]})
    ]


def pairwise_csv(result: Mapping[str, Any]) -> str:
    output = io.StringIO()
    output.write(
        f"# every pair of report rows on the units both answered; {result['resamples']} resamples per "
        "interval; McNemar p-values Holm-adjusted over the whole table\n"
    )
    writer = csv.DictWriter(output, fieldnames=PAIRWISE_FIELDS)
    writer.writeheader()
    writer.writerows(pairwise_records(result))
    return output.getvalue()


def pairwise_latex(result: Mapping[str, Any]) -> str:
    """A booktabs table of every pair: metric, A, B, n, A - B [95% CI], McNemar p (Holm)."""

    lines = [
        "\\begin{tabular}{lllrlr}",
        "\\toprule",
        "Metric & A & B & $n$ & $\\Delta$ [95\\% CI] & $p$ (Holm) \\\\",
        "\\midrule",
    ]
    for record in pairwise_records(result):
        if record["n"] is None:
            continue
        interval, p = latex_difference(record)
        lines.append(
            f"{latex_escape(record['group'] + ' ' + record['metric'])} & {latex_escape(record['row_a'])} & "
            f"{latex_escape(record['row_b'])} & {record['n']} & {interval} & {p} \\\\"
        )
    lines += ["\\bottomrule", "\\end{tabular}", ""]
    return "\n".join(lines)


def headline_columns(spec: BenchmarkSpec) -> list[Column]:
    """Each column group's headline: its last accuracy that is a mean over units (the accuracy of
    each setting, an overall final score...)."""
    chosen: dict[str, Column] = {}
    for column in spec.report_columns():
        if column.proportion and column.item_key is not None:
            chosen[column.group] = column
    return list(chosen.values())


def pairwise_comparisons(
    spec: BenchmarkSpec,
    rows: Mapping[str, Mapping[str, ScoredSubmission]],
    *,
    resamples: int = 1000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Every pair of rows compared on each headline column, McNemar adjusted over all pairs (Holm)."""
    import itertools

    results = []
    for column in headline_columns(spec):
        labels = [label for label, row in rows.items() if column.setting in row]
        for first, second in itertools.combinations(labels, 2):
            entry: dict[str, Any] = {
                "group": column.group,
                "label": column.label,
                "setting": column.setting,
                "a": first,
                "b": second,
            }
            units, x, y = paired_unit_values(
                spec, column, rows[first][column.setting], rows[second][column.setting]
            )
            if not units:
                skip(entry, "no_common_units")
            else:
                entry.update(compared(column, x, y, resamples=resamples, seed=seed))
            results.append(entry)
    holm_family(results)
    return results
