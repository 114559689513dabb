"""What a scoring reports: the metric's parameters, the per-sample arrays of the Event / View
scoring (`EventResults`) with their means over a group of samples, and the Event / View summary
over all samples and by true length."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

METRIC = "TRANCE"
#: Bump when a change to this package can change a number.
METRIC_VERSION = "1"
VARIANT = "official"

#: True lengths reported in ``by_length`` even when no sample has them.
LENGTHS = (1, 2, 3, 4)


def parameters(setting: str, **extra: Any) -> dict[str, Any]:
    return {
        "metric": METRIC,
        "setting": setting,
        "metric_version": METRIC_VERSION,
        "variant": VARIANT,
        "evaluator": "released TRANCE evaluator (hughplay/TVR EventEvaluator / BasicEvaluator)",
        **extra,
    }


@dataclass(slots=True)
class EventResults:
    """Per-sample arrays of the Event / View scoring, in sample order."""

    dist: np.ndarray
    norm_dist: np.ndarray
    loose_correct: np.ndarray
    correct: np.ndarray
    err_overlap: np.ndarray
    err_invalid_position: np.ndarray
    pred_step: np.ndarray
    target_step: np.ndarray
    order_sensitive: np.ndarray

    def group_summary(self, selected: np.ndarray | None = None) -> dict[str, Any]:
        """The metrics over the selected samples (all when None); means are None when n = 0."""
        if selected is None:
            selected = np.ones(len(self.dist), dtype=bool)
        count = int(selected.sum())

        def mean(values: np.ndarray) -> float | None:
            return float(values[selected].astype(np.float64).mean()) if count else None

        sensitive = selected & self.order_sensitive
        loose_sensitive = int((sensitive & self.loose_correct).sum())
        correct_sensitive = int((sensitive & self.correct).sum())
        return {
            "n": count,
            "AD": mean(self.dist),
            "AND": mean(self.norm_dist),
            "LAcc": mean(self.loose_correct),
            "Acc": mean(self.correct),
            "EO": (loose_sensitive - correct_sensitive) / loose_sensitive if loose_sensitive else None,
            "OverlapErrorRate": mean(self.err_overlap),
            "InvalidPositionErrorRate": mean(self.err_invalid_position),
            "StepDiff": mean(self.pred_step - self.target_step),
            "order_sensitive_n": int(sensitive.sum()),
        }


def event_summary(results: EventResults, params: dict[str, Any]) -> dict[str, Any]:
    lengths = sorted(set(LENGTHS) | set(results.target_step.tolist()))
    return {
        "parameters": params,
        **results.group_summary(),
        "by_length": {length: results.group_summary(results.target_step == length) for length in lengths},
    }
