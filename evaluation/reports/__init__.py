"""Side-by-side tables in the papers' layout, from scored submissions (pure, no Django).

Rows are producers (models first, alphabetically; annotators; Human last, as in the papers);
a model's submissions in the benchmark's different settings share one row.
Columns follow each paper's main table. Every cell carries its value, a 95% interval and the
number of items behind it: Wilson intervals for accuracies (shares of items), normal
approximation intervals for means (distances, scores), computed from the per-item rows.

The package, by concern: `cells` (a value with its interval and item count, and the
`ScoredSubmission` it comes from), `tables` (rows and columns of a report), `paired` (rows
compared on the units both answered) and `exports` (CSV, JSON and LaTeX). Every name is
imported here, so that `evaluation.reports` offers what the single module did.
"""

from __future__ import annotations

from evaluation.reports.cells import (
    Z_95,
    Cell,
    ScoredSubmission,
    cell_for,
    column_key,
    count_for,
    kept_cell,
    per_item_values,
    submission_cells,
    summary_value,
    unit_of,
)
from evaluation.reports.exports import (
    COMPARISON_FIELDS,
    LATEX_SPECIAL,
    PAIRWISE_FIELDS,
    comparison_csv,
    comparison_latex,
    comparison_records,
    format_value,
    latex_difference,
    latex_escape,
    pairwise_csv,
    pairwise_latex,
    pairwise_records,
    table_csv,
    table_json,
    table_latex,
)
from evaluation.reports.paired import (
    SKIP_REASONS,
    compare_rows,
    compared,
    headline_columns,
    holm_family,
    paired_unit_values,
    pairwise_comparisons,
    skip,
    unit_strata,
)
from evaluation.reports.tables import (
    PRODUCER_ORDER,
    Row,
    Table,
    build_table,
    row_groups,
    row_label,
    row_parameters,
)

__all__ = [
    "COMPARISON_FIELDS",
    "Cell",
    "LATEX_SPECIAL",
    "PAIRWISE_FIELDS",
    "PRODUCER_ORDER",
    "Row",
    "SKIP_REASONS",
    "ScoredSubmission",
    "Table",
    "Z_95",
    "build_table",
    "cell_for",
    "column_key",
    "compare_rows",
    "compared",
    "comparison_csv",
    "comparison_latex",
    "comparison_records",
    "count_for",
    "format_value",
    "headline_columns",
    "holm_family",
    "kept_cell",
    "latex_difference",
    "latex_escape",
    "paired_unit_values",
    "pairwise_comparisons",
    "pairwise_csv",
    "pairwise_latex",
    "pairwise_records",
    "per_item_values",
    "row_groups",
    "row_label",
    "row_parameters",
    "skip",
    "submission_cells",
    "summary_value",
    "table_csv",
    "table_json",
    "table_latex",
    "unit_of",
    "unit_strata",
]
