"""Breakdown plots for reports, drawn from stored summaries as SVG text.

What people would rather look at than read: TRANCE accuracy by transformation length and by
final camera, CRIC final accuracy by question type, STE-VQA scores by language. matplotlib is
imported only when a plot is drawn, with the non-interactive Agg backend.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from evaluation.models import Submission


def grouped_bars(
    title: str, groups: Sequence[str], series: dict[str, list[float | None]], ylabel: str
) -> str:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(6.4, 3.2), dpi=100)
    width = 0.8 / max(len(series), 1)
    for offset, (label, values) in enumerate(series.items()):
        positions = [index + offset * width - 0.4 + width / 2 for index in range(len(groups))]
        axes.bar(positions, [value if value is not None else 0 for value in values], width, label=label)
    axes.set_xticks(range(len(groups)), groups)
    axes.set_ylabel(ylabel)
    axes.set_ylim(0, 1)
    axes.set_title(title)
    axes.legend(fontsize=8, frameon=False)
    axes.spines[["top", "right"]].set_visible(False)
    figure.tight_layout()
    output = io.StringIO()
    figure.savefig(output, format="svg")
    pyplot.close(figure)
    svg = output.getvalue()
    return svg[svg.index("<svg") :]


def series_from(
    submissions: Sequence[Submission], path: Sequence[str], groups: Sequence[str], metric: str
) -> dict:
    series: dict[str, list[float | None]] = {}
    for submission in submissions:
        values: Any = submission.summary
        for key in path:
            values = values.get(key, {}) if isinstance(values, dict) else {}
        label = submission.name
        series[label] = [(values.get(group) or {}).get(metric) for group in groups]
    return series


def report_plots(benchmark: str, submissions: Sequence[Submission]) -> list[str]:
    """SVG plots for a dataset's report; empty when there is nothing to break down."""
    by_setting: dict[str, list[Submission]] = {}
    for submission in submissions:
        by_setting.setdefault(submission.setting, []).append(submission)
    plots = []
    if benchmark == "trance":
        for setting in ("event", "view"):
            chosen = by_setting.get(setting, [])
            if chosen:
                lengths = ["1", "2", "3", "4"]
                plots.append(
                    grouped_bars(
                        f"{setting.title()}: accuracy by transformation length",
                        [f"{length} step" + ("s" if length != "1" else "") for length in lengths],
                        series_from(chosen, ["by_length"], lengths, "Acc"),
                        "Acc",
                    )
                )
        if by_setting.get("view"):
            cameras = ["Camera_Left", "Camera_Center", "Camera_Right"]
            plots.append(
                grouped_bars(
                    "View: accuracy by final camera",
                    ["Left", "Center", "Right"],
                    series_from(by_setting["view"], ["by_camera"], cameras, "Acc"),
                    "Acc",
                )
            )
    elif benchmark == "cric":
        types = ["QueryObjKG", "QueryObjSG", "QueryAtt", "VerifyKG", "VerifyAtt"]
        plots.append(
            grouped_bars(
                "Final accuracy by question type",
                types,
                series_from(submissions, ["by_question_type"], types, "Final"),
                "Final",
            )
        )
    elif benchmark == "stevqa":
        plots.append(
            grouped_bars(
                "CLC by language",
                ["English", "Chinese"],
                series_from(submissions, ["by_language"], ["en", "ch"], "CLC"),
                "CLC",
            )
        )
    elif benchmark == "clevrref":
        categories = sorted({key for s in submissions for key in (s.summary.get("by_category") or {})})
        if categories:
            plots.append(
                grouped_bars(
                    "Mean IoU by expression category",
                    categories,
                    series_from(submissions, ["by_category"], categories, "mean_iou"),
                    "mean IoU",
                )
            )
    return plots
