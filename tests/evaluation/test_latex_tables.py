"""Every LaTeX table a report exports compiles: the main table and each diagnostic table that
every benchmark declares, laid out as the papers print them, with row names that need escaping.

The values are placed in each column's summary path (what a scored submission would hold), so
every declared column is in the table; the numbers themselves are the metric tests' business.
pdflatex comes from Debian's texlive-latex-base (booktabs from texlive-latex-recommended), which
`make test` installs; without it the compiling test is skipped, saying so.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from benchmarks import registry
from benchmarks.spec import BenchmarkSpec, Column
from evaluation.reports import ScoredSubmission, build_table, table_latex
from tests.dotcount.spec import SPEC as DOTCOUNT

#: Row names a researcher may well type: LaTeX's special characters in all of them.
ROW_NAMES = ("Model_v2 & co. (100%)", "#3 {ours} ~ $x^2$ \\ baseline")


def put(summary: dict, path: tuple[str, ...], value: float) -> None:
    for key in path[:-1]:
        summary = summary.setdefault(key, {})
    summary[path[-1]] = value


def submissions_filling(columns: list[Column]) -> list[ScoredSubmission]:
    """Two model rows and a Human row with a value in every column (a different one per row)."""
    rows = []
    for index, (producer, name) in enumerate(
        (("model", ROW_NAMES[0]), ("model", ROW_NAMES[1]), ("human", "Human"))
    ):
        for setting in sorted({column.setting for column in columns}):
            summary: dict = {}
            for column in columns:
                if column.setting == setting:
                    put(summary, column.summary_path, 0.25 * (index + 1))
            rows.append(
                ScoredSubmission(producer=producer, name=name, setting=setting, summary=summary, item_rows=[])
            )
    return rows


def all_specs() -> list[BenchmarkSpec]:
    """The built-in benchmarks and the toy one the tests define."""
    return [*registry.specs(), DOTCOUNT]


def every_table(spec: BenchmarkSpec) -> list[str]:
    tables = [build_table(spec, submissions_filling(spec.report_columns()))]
    for diagnostic in spec.diagnostics:
        tables.append(build_table(spec, submissions_filling(list(diagnostic.columns)), diagnostic=diagnostic))
    return [table_latex(table) for table in tables]


def test_a_diagnostic_table_is_a_captioned_float_with_every_declared_column():
    for spec in all_specs():
        for diagnostic, latex in zip(spec.diagnostics, every_table(spec)[1:], strict=True):
            assert latex.startswith("\\begin{table}") and "\\caption{" in latex, (spec.name, diagnostic.key)
            header = latex.splitlines()[7]  # the column labels' line, under the groups' line
            assert header.count("&") == len(diagnostic.columns), (spec.name, diagnostic.key)
            # Human is the last row, under a rule of its own.
            assert latex.splitlines()[-5] == "\\midrule" and latex.splitlines()[-4].startswith("Human &")


@pytest.mark.skipif(
    shutil.which("pdflatex") is None, reason="pdflatex is not installed (make test installs it)"
)
def test_every_exported_table_compiles_with_pdflatex(tmp_path):
    body = []
    for spec in all_specs():
        body.append(f"\\section*{{{spec.title.replace('+', '$+$')}}}")
        body.extend(every_table(spec))
    # Each benchmark has its main table and at least one of its paper's diagnostic tables.
    missing = [spec.name for spec in all_specs() if not spec.diagnostics]
    assert not missing, missing
    document = tmp_path / "tables.tex"
    document.write_text(
        "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n"
        "\\usepackage[margin=1cm,landscape]{geometry}\n\\begin{document}\n"
        + "\n\\clearpage\n".join(body)
        + "\n\\end{document}\n"
    )
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", document.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert (tmp_path / "tables.pdf").stat().st_size > 1000
    log = (tmp_path / "tables.log").read_text(errors="replace")
    # No character LaTeX could not set (a row name's & or % taken as markup would have failed above).
    assert "Missing character" not in log
