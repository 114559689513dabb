"""Breakdown plots for reports, drawn from stored summaries as SVG text (pure, no Django).

Which plots a report shows is the benchmark's declaration (`spec.plots`: accuracy by
transformation length, by question type, by language...); this module draws them, one series
per submission. matplotlib is imported only when a plot is drawn (`matplotlib_for_pages`), with
the non-interactive Agg backend and every text drawn as written.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from benchmarks.spec import BenchmarkSpec, BreakdownPlot


class Summarised(Protocol):
    """What a plot needs of a submission."""

    name: str
    setting: str
    summary: Mapping[str, Any]


def matplotlib_for_pages():
    """matplotlib, ready to draw for a page: the Agg backend, and text drawn literally. People's
    words reach plots (submission names, row labels, annotators' questions): a `$` in them is a
    dollar sign, not the start of mathtext, which drew "$x$" as math and failed on "$x" (a 500)."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["text.parse_math"] = False
    # Latin text in DejaVu Sans; Chinese (labels in 简体中文, annotators' questions) falls back to
    # WenQuanYi Micro Hei, which `make run` installs (fonts-wqy-microhei).
    matplotlib.rcParams["font.family"] = ["DejaVu Sans", "WenQuanYi Micro Hei"]
    # A character no installed font has (𝔘, say) is drawn as a box; the log need not say so each time.
    warnings.filterwarnings("ignore", message="Glyph .* missing from", category=UserWarning)
    return matplotlib


#: Names per line of a plot's legend, and the height each line of it adds to the figure.
LEGEND_COLUMNS = 3
LEGEND_ROW_INCHES = 0.22


def breakdown_figure(
    title: str,
    groups: Sequence[str],
    series: dict[str, list[float | None]],
    ylabel: str,
    xlabel: str,
    draw_series: Callable[[Any, dict[str, list[float | None]]], None],
) -> str:
    """A breakdown plot as SVG: `draw_series(axes, series)` draws the data; the axes (groups in
    order, a 0 to 1 scale), the title and the legend are laid out the same for every kind."""
    matplotlib_for_pages()
    from matplotlib import pyplot

    # The legend goes under the axes, never over the data: a row of up to LEGEND_COLUMNS names per
    # line, the figure taller by a line for each row.
    columns = max(min(len(series), LEGEND_COLUMNS), 1)
    legend_rows = -(-len(series) // columns)
    figure, axes = pyplot.subplots(
        figsize=(6.4, 3.2 + LEGEND_ROW_INCHES * legend_rows), dpi=100, layout="constrained"
    )
    draw_series(axes, series)
    # A tick per group where they fit, else every few, so that labels never overlap.
    step = max(1, -(-len(groups) // 11))
    axes.set_xticks(list(range(len(groups)))[::step], list(groups)[::step])
    axes.set_ylabel(ylabel)
    if xlabel:
        axes.set_xlabel(xlabel)
    axes.set_ylim(0, 1)
    axes.set_title(title)
    if series:
        figure.legend(loc="outside lower center", ncols=columns, fontsize=8, frameon=False)
    axes.spines[["top", "right"]].set_visible(False)
    output = io.StringIO()
    figure.savefig(output, format="svg")
    pyplot.close(figure)
    svg = output.getvalue()
    return svg[svg.index("<svg") :]


def grouped_bars(
    title: str, groups: Sequence[str], series: dict[str, list[float | None]], ylabel: str, xlabel: str = ""
) -> str:
    """A bar per group and submission; a missing value is drawn as no bar."""

    def bars(axes, series: dict[str, list[float | None]]) -> None:
        width = 0.8 / max(len(series), 1)
        for offset, (label, values) in enumerate(series.items()):
            positions = [index + offset * width - 0.4 + width / 2 for index in range(len(groups))]
            axes.bar(positions, [value if value is not None else 0 for value in values], width, label=label)

    return breakdown_figure(title, groups, series, ylabel, xlabel, bars)


def curves(
    title: str, groups: Sequence[str], series: dict[str, list[float | None]], ylabel: str, xlabel: str = ""
) -> str:
    """One line per submission over the groups in their order (a threshold swept, say); a group
    without a value breaks the line there rather than being drawn as zero."""

    def lines(axes, series: dict[str, list[float | None]]) -> None:
        for label, values in series.items():
            axes.plot(
                range(len(groups)),
                [value if value is not None else float("nan") for value in values],
                marker=".",
                label=label,
            )
        axes.grid(axis="y", alpha=0.3)

    return breakdown_figure(title, groups, series, ylabel, xlabel, lines)


def group_summaries(submission: Summarised, path: Sequence[str]) -> Mapping[str, Any]:
    values: Any = submission.summary
    for key in path:
        values = values.get(key, {}) if isinstance(values, Mapping) else {}
    return values if isinstance(values, Mapping) else {}


def draw(
    plot: BreakdownPlot, submissions: Sequence[Summarised], translate: Callable[[str], str] = str
) -> str | None:
    """One declared plot over the submissions it concerns; None when there is nothing to show (no
    submission, or none with a value of the plotted metric). `translate`: puts the spec's words
    (title, group labels, axis) in the reader's language; the pages pass Django's gettext."""
    chosen = [s for s in submissions if plot.setting is None or s.setting == plot.setting]
    if not chosen:
        return None
    if plot.groups:
        keys, labels = (
            [group.value for group in plot.groups],
            [translate(group.label) for group in plot.groups],
        )
    else:
        keys = sorted(
            {key for submission in chosen for key in group_summaries(submission, plot.summary_path)}
        )
        labels = keys
    if not keys:
        return None
    series = {
        submission.name: [
            (group_summaries(submission, plot.summary_path).get(key) or {}).get(plot.metric) for key in keys
        ]
        for submission in chosen
    }
    # A submission without the metric in any group (scored under another variant, say) is left
    # out rather than drawn as zeros.
    series = {name: values for name, values in series.items() if any(value is not None for value in values)}
    if not series:
        return None
    ylabel = translate(plot.ylabel) if plot.ylabel else plot.metric
    xlabel = translate(plot.xlabel) if plot.xlabel else ""
    draw_kind = curves if plot.kind == "line" else grouped_bars
    return draw_kind(translate(plot.title), labels, series, ylabel, xlabel)


def report_plots(
    spec: BenchmarkSpec, submissions: Sequence[Summarised], translate: Callable[[str], str] = str
) -> list[str]:
    """SVG plots for a dataset's report; empty when there is nothing to break down."""
    return [svg for plot in spec.plots if (svg := draw(plot, submissions, translate)) is not None]


#: The overlap plot's words, in English; the page passes them in the reader's language.
OVERLAP_WORDS = {
    "both_wrong": "both miss",
    "only_b_wrong": "only {b} misses",
    "only_a_wrong": "only {a} misses",
    "both_right": "both right",
    "axis": "units both answered",
}


def overlap_plot(
    counts: Mapping[str, int], label_a: str, label_b: str, words: Mapping[str, str] | None = None
) -> str:
    """Horizontal bars: units both rows miss, only B misses, only A misses, both get right.
    `words`: OVERLAP_WORDS's keys in the reader's language ({a} and {b} name the rows)."""
    words = {**OVERLAP_WORDS, **(words or {})}
    matplotlib_for_pages()
    from matplotlib import pyplot

    colours = {
        "both_wrong": "#b54a4a",
        "only_b_wrong": "#d9a441",
        "only_a_wrong": "#4a78b5",
        "both_right": "#6aa56a",
    }
    names = [
        (key, words[key].replace("{a}", label_a).replace("{b}", label_b), colour)
        for key, colour in colours.items()
    ]
    figure, axes = pyplot.subplots(figsize=(6.4, 2.2), dpi=100)
    values = [counts.get(key, 0) for key, _, _ in names]
    bars = axes.barh(range(len(names)), values, color=[color for _, _, color in names])
    axes.set_yticks(range(len(names)), [label for _, label, _ in names])
    axes.invert_yaxis()
    axes.bar_label(bars, padding=3, fontsize=8)
    axes.set_xlabel(words["axis"])
    axes.spines[["top", "right"]].set_visible(False)
    figure.tight_layout()
    output = io.StringIO()
    figure.savefig(output, format="svg")
    pyplot.close(figure)
    svg = output.getvalue()
    return svg[svg.index("<svg") :]


def accuracy_against_time(
    points: Sequence[tuple[float, float, str]],
    *,
    fastest: float | None = None,
    title: str = "",
    labels: Mapping[str, str] | None = None,
) -> str:
    """Each tester as a point, median seconds per trial against accuracy, coloured by what the
    exclusion rules made of them ("kept", "excluded", ...); `fastest` (a rule's threshold) drawn as
    a dashed line, so that a reader sees who the speed rule cut and how close the others came.
    `labels`: the words drawn, in the reader's language (keys "x", "y" and each status)."""
    words = {"x": "median seconds per trial", "y": "accuracy", **(labels or {})}
    matplotlib_for_pages()
    from matplotlib import pyplot

    colours = {"kept": "#4a78b5", "excluded": "#b54a4a"}
    figure, axes = pyplot.subplots(figsize=(6.4, 3.6), dpi=100, layout="constrained")
    for status in dict.fromkeys(status for _, _, status in points):
        chosen = [(x, y) for x, y, kind in points if kind == status]
        axes.scatter(
            [x for x, _ in chosen],
            [y for _, y in chosen],
            label=f"{words.get(status, status)} ({len(chosen)})",
            color=colours.get(status, "#888888"),
            marker="o" if status == "kept" else "x",
        )
    if fastest is not None:
        axes.axvline(fastest, color="#b54a4a", linestyle="--", linewidth=1)
        axes.annotate(
            f"{fastest:g} s", (fastest, 1.0), textcoords="offset points", xytext=(4, -10), fontsize=8
        )
    axes.set_xlabel(words["x"])
    axes.set_ylabel(words["y"])
    axes.set_ylim(-0.02, 1.02)
    furthest = max([x for x, _, _ in points] + [fastest or 0, 1.0])
    axes.set_xlim(0, furthest * 1.1)
    if title:
        axes.set_title(title)
    if points:
        figure.legend(loc="outside lower center", ncols=LEGEND_COLUMNS, fontsize=8, frameon=False)
    axes.spines[["top", "right"]].set_visible(False)
    output = io.StringIO()
    figure.savefig(output, format="svg")
    pyplot.close(figure)
    svg = output.getvalue()
    return svg[svg.index("<svg") :]
