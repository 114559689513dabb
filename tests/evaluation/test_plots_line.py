"""A declared line plot (a threshold swept) draws one curve per submission over the groups in
their order, leaves a missing value as a gap and names both axes."""

import re
from dataclasses import dataclass, field
from typing import Any

from benchmarks.spec import BreakdownPlot, Choice
from evaluation.plots import draw


@dataclass
class Row:
    name: str
    setting: str = ""
    summary: dict[str, Any] = field(default_factory=dict)


PLOT = BreakdownPlot(
    "CLC as tau varies",
    ("by_tau",),
    "CLC",
    tuple(Choice(tau, tau) for tau in ("0.25", "0.50", "0.75")),
    kind="line",
    xlabel="threshold tau",
    ylabel="CLC",
)


def test_a_line_plot_has_one_curve_per_submission_in_the_groups_order():
    rows = [
        Row("ours", summary={"by_tau": {"0.25": {"CLC": 0.2}, "0.50": {"CLC": 0.4}, "0.75": {"CLC": 0.6}}}),
        Row("Human", summary={"by_tau": {"0.25": {"CLC": 0.5}, "0.75": {"CLC": 0.9}}}),
        Row("no curve", summary={}),
    ]
    svg = draw(PLOT, rows)
    assert svg is not None and svg.startswith("<svg")
    # "ours" is one unbroken curve through its three points, rising (SVG's y grows downward);
    # Human's missing 0.50 breaks its line, so no other path joins three points.
    joined = [
        [float(y) for y in re.findall(r"[ML] [\d.]+ ([\d.]+)", path)]
        for path in re.findall(r'<path d="(M [\d.]+ [\d.]+ \s*L [\d.]+ [\d.]+ \s*L [^"]+)"', svg)
    ]
    curves = [ys for ys in joined if len(ys) == 3 and len(set(ys)) == 3]
    assert len(curves) == 1 and curves[0][0] > curves[0][1] > curves[0][2]
    assert "ours" in svg and "Human" in svg and "no curve" not in svg
    assert "threshold tau" in svg and "CLC as tau varies" in svg


def test_a_bar_plot_is_still_drawn_as_bars():
    bars = BreakdownPlot("By tau", ("by_tau",), "CLC", PLOT.groups)
    svg = draw(bars, [Row("ours", summary={"by_tau": {"0.25": {"CLC": 0.2}}})])
    assert svg is not None and 'id="patch_' in svg and "threshold tau" not in svg
