"""Paired comparisons of report rows on the units both answered: two rows column by column
(`compare_rows`) or every pair on the headline columns (`pairwise_comparisons`), each a
paired difference with its interval and, for accuracies, McNemar's test adjusted by Holm.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmarks.spec import BenchmarkSpec, Column
from evaluation.reports.cells import ScoredSubmission, unit_of

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
