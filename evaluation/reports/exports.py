"""Tables and comparisons written out: CSV and JSON for machines, booktabs LaTeX as in the
papers, and the formatting of values they share.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

from evaluation.reports.tables import Table


def format_value(value: float | None, *, whole: bool = False) -> str:
    """A value as tables print it: four decimals below 10, two above; `whole`: a count."""
    if value is None:
        return "–"
    if whole:
        return str(round(value))
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
    described = (
        {"table": table.diagnostic.key, "title": table.diagnostic.title}
        if table.diagnostic is not None
        else {}
    )
    return {
        "benchmark": table.benchmark,
        **described,
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
    "\\": r"\textbackslash{}",
    "^": r"\textasciicircum{}",
    "~": r"\textasciitilde{}",
    "Δ": r"$\Delta$",
    "τ": r"$\tau$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "×": r"$\times$",
    "–": "--",
    "—": "---",
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
            text = format_value(cell.value, whole=table.columns[index].count)
            if cell.value is not None and best.get(index) == cell.value and len(table.rows) > 1:
                text = rf"\textbf{{{text}}}"
            cells.append(text)
        lines.append(" & ".join([latex_escape(row.label)] + cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    diagnostic = table.diagnostic
    if diagnostic is not None:
        # A diagnostic table as the papers print one: a floating table with its caption above.
        caption = diagnostic.caption or diagnostic.title
        lines = [
            r"\begin{table}[t]",
            r"\centering",
            rf"\caption{{{latex_escape(caption)}}}",
            rf"\label{{tab:{table.benchmark}-{diagnostic.key}}}",
            *lines,
            r"\end{table}",
        ]
    return "\n".join(lines) + "\n"


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
