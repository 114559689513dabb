"""Sampled validation: draw a stratified sample, then estimate the error rate with an interval.

Pure Python (no Django). The typical use is the check a generated dataset needs: people inspect about 2% of a
generated benchmark, drawn at random within strata (question type, scene kind...), and report
the error rate with a confidence interval::

    sample = draw_stratified_sample(question_ids_by_type, rate=0.02, seed=7)
    # ... people check sample["strata"][name]["ids"] and count the errors ...
    estimate = stratified_error_rate(
        {name: (info["population_size"], info["sample_size"], errors[name])
         for name, info in sample["strata"].items()}
    )
    print(estimate)   # "error rate 0.040 [0.018, 0.062] (260 checked, 14 errors; pooled 0.054)"
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import norm
from statsmodels.stats.proportion import proportion_confint

__all__ = [
    "Estimate",
    "SamplingInputError",
    "StratumEstimate",
    "draw_stratified_sample",
    "stratified_error_rate",
    "wilson_interval",
]


class SamplingInputError(ValueError):
    """Counts or sampling parameters that cannot be right (the message says which)."""


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise SamplingInputError(f"confidence must be between 0 and 1, got {confidence}")


def wilson_interval(errors: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``errors / n`` (statsmodels ``proportion_confint``).

    With ``p = errors / n`` and ``z`` the normal quantile for ``confidence``::

        centre = (p + z^2 / (2n)) / (1 + z^2 / n)
        half   = z * sqrt(p (1 - p) / n + z^2 / (4 n^2)) / (1 + z^2 / n)
        [centre - half, centre + half]

    Unlike the normal ("Wald") interval it stays inside [0, 1] and is not degenerate at 0 or
    n errors (0 errors in 100 checks gives [0, 0.037]), which matters for small error rates.
    """
    _check_confidence(confidence)
    if n <= 0:
        raise SamplingInputError(f"need at least one checked item; n = {n}")
    if not 0 <= errors <= n:
        raise SamplingInputError(f"errors must be between 0 and n = {n}; got {errors}")
    low, high = proportion_confint(errors, n, alpha=1 - confidence, method="wilson")
    # The bounds are exactly 0 (no errors) and 1 (all errors); remove floating-point dust.
    low = 0.0 if errors == 0 else max(0.0, float(low))
    high = 1.0 if errors == n else min(1.0, float(high))
    return low, high


@dataclass(frozen=True)
class StratumEstimate:
    """One stratum: its share of the population and its own error rate (Wilson interval)."""

    name: str
    population_size: int
    sampled: int
    errors: int
    weight: float
    error_rate: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class Estimate:
    """A population error rate estimated from a stratified sample.

    ``value``/``low``/``high`` are the stratified (population-weighted) estimate and its
    normal interval; ``pooled_*`` is the unweighted ``errors / sampled`` with a Wilson interval,
    which is only unbiased when every stratum was sampled at the same rate.
    """

    value: float
    low: float
    high: float
    standard_error: float
    confidence: float
    method: str
    population_size: int
    sampled: int
    errors: int
    pooled_value: float
    pooled_low: float
    pooled_high: float
    strata: tuple[StratumEstimate, ...]

    def describe(self, digits: int = 3) -> str:
        """``"error rate 0.040 [0.018, 0.062] (260 checked, 14 errors; pooled 0.054)"``."""
        return (
            f"error rate {self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}] "
            f"({self.sampled} checked, {self.errors} errors; pooled {self.pooled_value:.{digits}f})"
        )

    def __str__(self) -> str:
        return self.describe()


def stratified_error_rate(
    strata: Mapping[str, tuple[int, int, int]], *, confidence: float = 0.95
) -> Estimate:
    """Population error rate from strata checked at possibly different rates.

    ``strata`` maps a stratum name to ``(population_size N_h, sampled n_h, errors e_h)``. With
    ``N = sum_h N_h``, ``W_h = N_h / N`` and ``p_h = e_h / n_h``:

    * estimate ``p_st = sum_h W_h p_h``;
    * variance ``sum_h W_h^2 (1 - n_h / N_h) p_h (1 - p_h) / n_h`` -- each stratum's binomial
      variance with the finite-population correction ``1 - n_h / N_h`` (a stratum checked
      completely contributes no sampling error). This is the plug-in form; the textbook
      unbiased form divides by ``n_h - 1``, a difference that is negligible for the sample
      sizes validation uses;
    * interval ``p_st ± z · sqrt(variance)``, clipped to [0, 1].

    Edge cases: a stratum with population 0 is ignored (weight 0); a stratum with a population
    but nothing sampled is an error (its rate cannot be estimated -- merge it into a neighbour
    or sample it). When no errors were found anywhere the variance is 0 and the normal interval
    collapses to [0, 0]; the pooled Wilson interval (``pooled_low``/``pooled_high``) is then
    the more honest statement. Also reported: the unweighted pooled rate
    ``sum e_h / sum n_h``, which is biased when strata were sampled at different rates.
    """
    _check_confidence(confidence)
    if not strata:
        raise SamplingInputError("no strata were given")
    for name, counts in strata.items():
        if len(counts) != 3:
            raise SamplingInputError(
                f"stratum {name!r}: expected (population_size, sampled, errors), got {counts!r}"
            )
        population_size, sampled, errors = counts
        if min(population_size, sampled, errors) < 0:
            raise SamplingInputError(f"stratum {name!r}: counts cannot be negative, got {counts!r}")
        if sampled > population_size:
            raise SamplingInputError(
                f"stratum {name!r}: sampled {sampled} items out of a population of {population_size}"
            )
        if errors > sampled:
            raise SamplingInputError(f"stratum {name!r}: {errors} errors among only {sampled} sampled items")
        if population_size > 0 and sampled == 0:
            raise SamplingInputError(
                f"stratum {name!r} has {population_size} items but none was sampled; its error rate "
                "cannot be estimated"
            )
    total_population = sum(counts[0] for counts in strata.values())
    total_sampled = sum(counts[1] for counts in strata.values())
    total_errors = sum(counts[2] for counts in strata.values())
    if total_population == 0:
        raise SamplingInputError("every stratum has population size 0")

    estimate = 0.0
    variance = 0.0
    stratum_estimates: list[StratumEstimate] = []
    for name, (population_size, sampled, errors) in strata.items():
        weight = population_size / total_population
        if sampled == 0:
            stratum_estimates.append(
                StratumEstimate(str(name), population_size, 0, 0, weight, None, None, None)
            )
            continue
        error_rate = errors / sampled
        finite_population_correction = 1 - sampled / population_size
        estimate += weight * error_rate
        variance += weight**2 * finite_population_correction * error_rate * (1 - error_rate) / sampled
        stratum_low, stratum_high = wilson_interval(errors, sampled, confidence=confidence)
        stratum_estimates.append(
            StratumEstimate(
                str(name), population_size, sampled, errors, weight, error_rate, stratum_low, stratum_high
            )
        )

    standard_error = math.sqrt(variance)
    z = float(norm.ppf((1 + confidence) / 2))
    pooled_low, pooled_high = wilson_interval(total_errors, total_sampled, confidence=confidence)
    return Estimate(
        value=estimate,
        low=max(0.0, estimate - z * standard_error),
        high=min(1.0, estimate + z * standard_error),
        standard_error=standard_error,
        confidence=confidence,
        method="stratified, normal interval with finite-population correction",
        population_size=total_population,
        sampled=total_sampled,
        errors=total_errors,
        pooled_value=total_errors / total_sampled,
        pooled_low=pooled_low,
        pooled_high=pooled_high,
        strata=tuple(stratum_estimates),
    )


def _allocate(population_sizes: Mapping[str, int], rate: float, minimum_per_stratum: int) -> dict[str, int]:
    """Proportional allocation by largest remainder, then a per-stratum floor, capped at N_h.

    The target total is ``round(rate * N)``; each stratum first gets ``floor(rate * N_h)`` and
    the leftover units go to the largest fractional parts (ties by name), so the allocation is
    proportional and sums to the target. Then each stratum is raised to
    ``min(minimum_per_stratum, N_h)``, which can push the total slightly above the target.
    """
    total_population = sum(population_sizes.values())
    target_total = math.floor(rate * total_population + 0.5)
    exact = {name: rate * size for name, size in population_sizes.items()}
    allocation = {name: min(math.floor(share), population_sizes[name]) for name, share in exact.items()}
    leftover = target_total - sum(allocation.values())
    by_remainder = sorted(exact, key=lambda name: (-(exact[name] - math.floor(exact[name])), name))
    for name in by_remainder:
        if leftover <= 0:
            break
        if allocation[name] < population_sizes[name]:
            allocation[name] += 1
            leftover -= 1
    return {
        name: max(count, min(minimum_per_stratum, population_sizes[name]))
        for name, count in allocation.items()
    }


def _stratum_seed(seed: int, name: str) -> list[int]:
    """Seed material for one stratum: the draw of a stratum does not depend on the others."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return [seed, int.from_bytes(digest[:8], "big")]


def _sorted_ids(item_ids: Sequence[Hashable]) -> list[Hashable]:
    """Ids in natural order when they compare (numbers, strings), else by ``str``/``repr``."""
    try:
        return sorted(item_ids)  # type: ignore[type-var]
    except TypeError:
        return sorted(item_ids, key=lambda item_id: (str(item_id), repr(item_id)))


def draw_stratified_sample(
    items_by_stratum: Mapping[str, Sequence[Hashable]],
    *,
    rate: float = 0.02,
    minimum_per_stratum: int = 1,
    seed: int = 0,
) -> dict[str, Any]:
    """Pick the items people will check: a simple random sample within each stratum.

    Allocation is proportional (``rate`` of each stratum, rounded by largest remainder so the
    total is ``round(rate * N)``) with a floor of ``minimum_per_stratum`` (never more than the
    stratum holds), so small strata are not skipped. The draw is deterministic: items are
    sorted (naturally, or by ``str`` for mixed id types, so the input order does not matter)
    and drawn without replacement with ``numpy.random.default_rng([seed, SHA-256 of the
    stratum name])`` -- the same ids and seed give the same sample, and adding a stratum does
    not change the others.

    Returns a JSON-friendly dictionary (when ids are)::

        {"rate": 0.02, "seed": 0, "minimum_per_stratum": 1,
         "population_size": N, "sample_size": n, "realised_rate": n / N,
         "strata": {name: {"population_size": N_h, "sample_size": n_h,
                           "realised_rate": n_h / N_h, "ids": [...]}}}

    whose per-stratum sizes feed :func:`stratified_error_rate` once errors are counted.
    Realised rates differ from ``rate`` where rounding or the floor bites -- which is why the
    estimate must weight strata by population share rather than pool them.
    """
    if not 0 < rate <= 1:
        raise SamplingInputError(f"rate must be in (0, 1], got {rate}")
    if minimum_per_stratum < 0:
        raise SamplingInputError(f"minimum_per_stratum cannot be negative, got {minimum_per_stratum}")
    if not items_by_stratum:
        raise SamplingInputError("no strata were given")
    stratum_of: dict[Hashable, str] = {}
    sorted_items: dict[str, list[Hashable]] = {}
    for name, item_ids in items_by_stratum.items():
        for item_id in item_ids:
            if item_id in stratum_of:
                where = "twice in" if stratum_of[item_id] == name else f"in both {stratum_of[item_id]!r} and"
                raise SamplingInputError(f"item {item_id!r} appears {where} stratum {name!r}")
            stratum_of[item_id] = name
        sorted_items[name] = _sorted_ids(item_ids)

    allocation = _allocate({name: len(ids) for name, ids in sorted_items.items()}, rate, minimum_per_stratum)
    strata: dict[str, dict[str, Any]] = {}
    for name, item_ids in sorted_items.items():
        sample_size = allocation[name]
        generator = np.random.default_rng(_stratum_seed(seed, str(name)))
        chosen_positions = sorted(generator.choice(len(item_ids), size=sample_size, replace=False).tolist())
        strata[name] = {
            "population_size": len(item_ids),
            "sample_size": sample_size,
            "realised_rate": sample_size / len(item_ids) if item_ids else 0.0,
            "ids": [item_ids[position] for position in chosen_positions],
        }
    population_size = sum(info["population_size"] for info in strata.values())
    sample_size = sum(info["sample_size"] for info in strata.values())
    return {
        "rate": rate,
        "seed": seed,
        "minimum_per_stratum": minimum_per_stratum,
        "population_size": population_size,
        "sample_size": sample_size,
        "realised_rate": sample_size / population_size if population_size else 0.0,
        "strata": strata,
    }
