"""Is the difference between two report rows real? Paired comparisons on the items both answered (pure).

Two rows of a report (two models, a model and the Human row, two testers) answered many of the same
scoring units. Comparing their headline numbers with two separate intervals ignores that pairing:
an item hard for one is usually hard for the other, and the difference is far more precise than
the two intervals suggest. Everything here works on the **paired** per-unit values:

* `paired_difference`: mean(A) - mean(B) over the units both answered, with a BCa bootstrap
  interval that resamples units together (`scipy.stats.bootstrap(..., paired=True)`).
* `mcnemar_exact`: for right/wrong scores, McNemar's exact test on the discordant units (A right
  and B wrong, A wrong and B right; `statsmodels.stats.contingency_tables.mcnemar`).
* `holm`: Holm's step-down adjustment when a whole table of pairs is tested at once.
* `unit_means`: several testers' scores on one unit averaged first, so that the unit, not the
  trial, is what is resampled and counted.
* `error_overlap`: units both miss, only A misses, only B misses, both get right.
* `paired_sample_size`: how many units a paired comparison of two accuracies needs to detect a gap
  (Connor's formula for McNemar's test, with the discordance two independent raters would have).
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

CONFIDENCE = 0.95
RESAMPLES = 2000
#: Above this many units the interval is the percentile one: scipy's BCa estimates its acceleration
#: by a jackknife that costs n statistics of n values (10 s at 12,000 units, minutes at 60,000),
#: and for a mean over thousands of units the acceleration is negligible (skewness / (6 sqrt(n)))
#: and the bias correction tiny, so BCa and percentile agree to the third decimal.
BCA_MAX_UNITS = 5000
#: Fewer shared units than this get no interval ("too few units to compare"): a bootstrap interval
#: is a large-sample approximation, and over a handful of units it takes only a few values and
#: undercovers (at 5 right/wrong units the resampled mean difference can take at most 11 values).
MIN_UNITS = 10


class ComparisonInputError(ValueError):
    """The two rows cannot be compared (no unit in common, values of different lengths...)."""


@dataclass
class Difference:
    """mean(A) - mean(B) on `n` paired units, with its bootstrap interval (None when undefined)."""

    n: int
    mean_a: float
    mean_b: float
    difference: float
    low: float | None
    high: float | None
    method: str
    params: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "difference": self.difference,
            "low": self.low,
            "high": self.high,
            "method": self.method,
            **self.params,
        }


def paired_values(
    a: Mapping[Hashable, float | None], b: Mapping[Hashable, float | None]
) -> tuple[list[Hashable], np.ndarray, np.ndarray]:
    """The units both rows scored (a value that is not None and not NaN), in a stable order."""
    shared = [unit for unit in a if unit in b and not _missing(a[unit]) and not _missing(b[unit])]
    shared.sort(key=str)
    return (
        shared,
        np.array([a[unit] for unit in shared], float),
        np.array([b[unit] for unit in shared], float),
    )


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> Difference:
    """mean(a) - mean(b) over paired values, with a BCa bootstrap interval over resampled pairs.

    Below MIN_UNITS pairs no interval is given (method "too few units"). When every pair has the
    same difference, resampling cannot move the mean difference and the bootstrap interval would
    collapse to a point: for right/wrong values (a difference of -1, 0 or 1 on every unit) the
    interval is Wilson's on the share of units that differ, signed as the difference (method
    "Wilson"); for other values none is given (method "degenerate"). When BCa's acceleration
    cannot be estimated, or above BCA_MAX_UNITS units, the percentile interval is given instead
    (method says so).
    """
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    if a.shape != b.shape or a.ndim != 1:
        raise ComparisonInputError(
            f"paired values need two lists of the same length, got {a.shape} and {b.shape}"
        )
    if not len(a):
        raise ComparisonInputError("the two rows have no scored unit in common")
    differences = a - b
    mean_a, mean_b, difference = float(a.mean()), float(b.mean()), float(differences.mean())
    params = {"resamples": resamples, "confidence": confidence, "seed": seed, "unit": "scoring unit"}
    if resamples <= 0:
        return Difference(len(a), mean_a, mean_b, difference, None, None, "none", params)
    if len(a) < MIN_UNITS:
        params["minimum_units"] = MIN_UNITS
        return Difference(len(a), mean_a, mean_b, difference, None, None, "too few units", params)
    if np.ptp(differences) == 0:
        if difference in (-1.0, 0.0, 1.0) and np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all():
            low, high = same_difference_interval(len(a), difference, confidence)
            return Difference(len(a), mean_a, mean_b, difference, low, high, "Wilson", params)
        return Difference(len(a), mean_a, mean_b, difference, None, None, "degenerate", params)

    def statistic(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(x, axis=axis) - np.mean(y, axis=axis)

    methods = ("BCa", "percentile") if len(a) <= BCA_MAX_UNITS else ("percentile",)
    method = methods[0]
    for method in methods:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = stats.bootstrap(
                (a, b),
                statistic,
                paired=True,
                vectorized=True,
                n_resamples=resamples,
                confidence_level=confidence,
                method=method,
                random_state=np.random.default_rng(seed),
            )
        low, high = result.confidence_interval
        if np.isfinite(low) and np.isfinite(high):
            break
    return Difference(len(a), mean_a, mean_b, difference, float(low), float(high), method, params)


def same_difference_interval(n: int, difference: float, confidence: float) -> tuple[float, float]:
    """An interval for a paired difference of right/wrong rows that differ alike on all n units:
    the share of units on which they differ (all n, or none) with Wilson's interval, signed as the
    difference. A +1 on 30 of 30 units gives [+0.886, +1]; agreement on all 30 gives ±0.114."""
    from statsmodels.stats.proportion import proportion_confint

    differing = n if difference else 0
    low, high = proportion_confint(differing, n, alpha=1 - confidence, method="wilson")
    if difference > 0:
        return float(low), 1.0
    if difference < 0:
        return -1.0, -float(low)
    return -float(high), float(high)


@dataclass
class McNemar:
    """McNemar's exact test on paired right/wrong scores."""

    n: int
    both_right: int
    only_a_right: int
    only_b_right: int
    both_wrong: int
    statistic: float
    p_value: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "test": "McNemar exact (binomial on the discordant units)",
            "n": self.n,
            "both_right": self.both_right,
            "only_a_right": self.only_a_right,
            "only_b_right": self.only_b_right,
            "both_wrong": self.both_wrong,
            "discordant": self.only_a_right + self.only_b_right,
            "statistic": self.statistic,
            "p_value": self.p_value,
        }


def contingency(a_right: Sequence[bool], b_right: Sequence[bool]) -> np.ndarray:
    """[[both right, A right B wrong], [A wrong B right, both wrong]]."""
    a = np.asarray(a_right, bool)
    b = np.asarray(b_right, bool)
    if a.shape != b.shape:
        raise ComparisonInputError(
            f"paired scores need two lists of the same length, got {a.shape} and {b.shape}"
        )
    return np.array([[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]], dtype=int)


def mcnemar_exact(a_right: Sequence[bool], b_right: Sequence[bool]) -> McNemar:
    """McNemar's exact test; p = 1 when no unit is discordant (nothing tells the two apart)."""
    table = contingency(a_right, b_right)
    if not table.sum():
        raise ComparisonInputError("the two rows have no scored unit in common")
    result = mcnemar(table, exact=True)
    return McNemar(
        n=int(table.sum()),
        both_right=int(table[0, 0]),
        only_a_right=int(table[0, 1]),
        only_b_right=int(table[1, 0]),
        both_wrong=int(table[1, 1]),
        statistic=float(result.statistic),
        p_value=float(result.pvalue),
    )


def holm(p_values: Sequence[float], alpha: float = 0.05) -> list[dict[str, Any]]:
    """Holm's adjustment of a family of p-values: each one's adjusted p and whether it is rejected."""
    if not len(p_values):
        return []
    rejected, adjusted, _, _ = multipletests(list(p_values), alpha=alpha, method="holm")
    return [
        {"p_value": float(p), "p_holm": float(q), "significant": bool(r)}
        for p, q, r in zip(p_values, adjusted, rejected, strict=True)
    ]


def unit_means(rows: Iterable[tuple[Hashable, float | None]]) -> dict[Hashable, float]:
    """(unit, score) rows, several per unit where several testers answered it -> unit -> mean score."""
    sums: dict[Hashable, list[float]] = defaultdict(list)
    for unit, value in rows:
        if not _missing(value):
            sums[unit].append(float(value))
    return {unit: sum(values) / len(values) for unit, values in sums.items()}


def error_overlap(
    a_right: Mapping[Hashable, bool], b_right: Mapping[Hashable, bool]
) -> dict[str, list[Hashable]]:
    """The shared units, split: both wrong, only A wrong, only B wrong, both right."""
    split: dict[str, list[Hashable]] = {
        "both_wrong": [],
        "only_a_wrong": [],
        "only_b_wrong": [],
        "both_right": [],
    }
    for unit in sorted((unit for unit in a_right if unit in b_right), key=str):
        a, b = bool(a_right[unit]), bool(b_right[unit])
        key = "both_right" if a and b else "only_a_wrong" if b else "only_b_wrong" if a else "both_wrong"
        split[key].append(unit)
    return split


def paired_sample_size(
    accuracy_a: float, accuracy_b: float, *, alpha: float = 0.05, power: float = 0.8
) -> int | None:
    """Units a two-sided McNemar test needs to detect accuracy_a != accuracy_b with this power.

    Connor (1987): n = (z_{1-a/2} sqrt(psi) + z_{power} sqrt(psi - delta^2))^2 / delta^2, with
    delta = accuracy_a - accuracy_b and psi the share of discordant units, taken as two
    independent raters would have it: a(1 - b) + b(1 - a). Real raters agree more than independent
    ones (fewer discordant units), so this errs on the safe side. None when the accuracies are equal.
    """
    for name, value in (("accuracy_a", accuracy_a), ("accuracy_b", accuracy_b)):
        if not 0 <= value <= 1:
            raise ComparisonInputError(f"{name} must be between 0 and 1, got {value}")
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ComparisonInputError("alpha and power must be between 0 and 1")
    delta = accuracy_a - accuracy_b
    if delta == 0:
        return None
    psi = accuracy_a * (1 - accuracy_b) + accuracy_b * (1 - accuracy_a)
    z_alpha = stats.norm.ppf(1 - alpha / 2)
    z_power = stats.norm.ppf(power)
    n = (z_alpha * math.sqrt(psi) + z_power * math.sqrt(max(psi - delta**2, 0.0))) ** 2 / delta**2
    return math.ceil(n)
