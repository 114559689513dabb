"""The validation report's plot: the error rate of each stratum with its interval (pure, no Django)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any


def error_rates_plot(
    strata: Sequence[Mapping[str, Any]], overall: Mapping[str, Any] | None, confidence: float = 0.95
) -> bytes:
    """Horizontal bars: each judged stratum's error rate with its Wilson interval; the stratified
    estimate and its interval as a vertical line and band. PNG bytes."""
    from evaluation.plots import matplotlib_for_pages

    matplotlib_for_pages()
    from matplotlib import pyplot

    judged = [stratum for stratum in strata if stratum.get("judged")]
    height = max(2.4, 0.32 * len(judged) + 1.2)
    figure, axes = pyplot.subplots(figsize=(7.2, height), dpi=100)
    labels = [f"{stratum['stratum']} ({stratum['errors']}/{stratum['judged']})" for stratum in judged]
    values = [stratum["error_rate"] for stratum in judged]
    lows = [stratum["error_rate"] - stratum["low"] for stratum in judged]
    highs = [stratum["high"] - stratum["error_rate"] for stratum in judged]
    positions = list(range(len(judged)))
    axes.barh(positions, values, color="#8fb3ff", xerr=[lows, highs], capsize=3, ecolor="#333333")
    axes.set_yticks(positions, labels, fontsize=8)
    axes.invert_yaxis()
    if overall:
        axes.axvspan(overall["low"], overall["high"], color="#d9534f", alpha=0.12)
        axes.axvline(overall["value"], color="#d9534f", linewidth=1.5, label="stratified estimate")
        # Above the plot's top right corner: inside, it covered the bars of rates near 1.
        axes.legend(fontsize=8, frameon=False, loc="lower right", bbox_to_anchor=(1, 1), borderaxespad=0.1)
    top = max([stratum["high"] for stratum in judged] + [overall["high"] if overall else 0] + [0.05])
    axes.set_xlim(0, min(1.0, top * 1.1))
    axes.set_xlabel(
        f"error rate ({confidence:.0%} intervals: Wilson per stratum)" if judged else "nothing judged yet"
    )
    axes.spines[["top", "right"]].set_visible(False)
    figure.tight_layout()
    output = io.BytesIO()
    figure.savefig(output, format="png")
    pyplot.close(figure)
    return output.getvalue()
