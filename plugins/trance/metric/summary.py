"""What a scoring reports: the metric's parameters, the per-unit arrays of the Event / View
scoring (`EventResults`) with their means over a group of units, and the Event / View summary
over all units, by true length and over the order-sensitive units."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

METRIC = "TRANCE"
#: Bump when a change to this package can change a number.
METRIC_VERSION = "2"
#: The metric variants: the released evaluators' (View: every sample under each final camera) and
#: View scored with one camera per answer (the camera the answer was made from).
VARIANT = "official"
ONE_CAMERA = "one-camera"
VARIANTS = (VARIANT, ONE_CAMERA)

#: True lengths reported in ``by_length`` even when no sample has them.
LENGTHS = (1, 2, 3, 4)

EVALUATORS = {
    VARIANT: "released TRANCE evaluator (hughplay/TVR BasicEvaluator / EventEvaluator / ViewEvaluator)",
    ONE_CAMERA: "released TRANCE EventEvaluator rules, each View answer scored with the one camera given",
}


def parameters(setting: str, variant: str = VARIANT, **extra: Any) -> dict[str, Any]:
    return {
        "metric": METRIC,
        "setting": setting,
        "metric_version": METRIC_VERSION,
        "variant": variant,
        "evaluator": EVALUATORS[variant],
        **extra,
    }


@dataclass(slots=True)
class EventResults:
    """Per-unit arrays of the Event / View scoring, in unit order (a unit is a sample in Event,
    a (sample, final camera) pair in View)."""

    dist: np.ndarray
    norm_dist: np.ndarray
    loose_correct: np.ndarray
    correct: np.ndarray
    err_overlap: np.ndarray
    err_invalid_position: np.ndarray
    pred_step: np.ndarray
    target_step: np.ndarray
    order_sensitive: np.ndarray
    #: The share of the orderings of the unit's true steps that raise an error (replay.OrderSensitivity).
    order_error_share: np.ndarray

    def group_summary(self, selected: np.ndarray | None = None) -> dict[str, Any]:
        """The metrics over the selected units (all when None); means are None when n = 0."""
        if selected is None:
            selected = np.ones(len(self.dist), dtype=bool)
        count = int(selected.sum())

        def mean(values: np.ndarray) -> float | None:
            return float(values[selected].astype(np.float64).mean()) if count else None

        sensitive = selected & self.order_sensitive
        return {
            "n": count,
            "AD": mean(self.dist),
            "AND": mean(self.norm_dist),
            "LAcc": mean(self.loose_correct),
            "Acc": mean(self.correct),
            "EO": self.error_of_order(sensitive),
            "OverlapErrorRate": mean(self.err_overlap),
            "InvalidPositionErrorRate": mean(self.err_invalid_position),
            "StepDiff": mean(self.pred_step - self.target_step),
            "order_sensitive_n": int(sensitive.sum()),
        }

    def error_of_order(self, sensitive: np.ndarray) -> float | None:
        """EO = (LAcc - Acc) / LAcc over these units; None when none of them is loose-correct."""
        loose = int((sensitive & self.loose_correct).sum())
        return (loose - int((sensitive & self.correct).sum())) / loose if loose else None

    def order_summary(self) -> dict[str, Any]:
        """The paper's order table: over the order-sensitive units, their number, LAcc, Acc and EO,
        and ``random_order_EO``: the EO of answering each of them with its true steps in a random
        order, as an exact expectation (the mean share of erring orderings: every ordering of an
        order-sensitive sample reaches its final state, so LAcc is 1 and EO is the share that errs)."""
        sensitive = self.order_sensitive
        count = int(sensitive.sum())

        def mean(values: np.ndarray) -> float | None:
            return float(values[sensitive].astype(np.float64).mean()) if count else None

        return {
            "n": count,
            "LAcc": mean(self.loose_correct),
            "Acc": mean(self.correct),
            "EO": self.error_of_order(sensitive),
            "random_order_EO": mean(self.order_error_share),
        }


def event_summary(results: EventResults, params: dict[str, Any]) -> dict[str, Any]:
    """The summary over all units, ``by_length`` (keys "1" to "4", as stored JSON has them) and
    ``order_sensitive``."""
    lengths = sorted(set(LENGTHS) | set(results.target_step.tolist()))
    return {
        "parameters": params,
        **results.group_summary(),
        "by_length": {
            str(length): results.group_summary(results.target_step == length) for length in lengths
        },
        "order_sensitive": results.order_summary(),
    }
