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
import numbers
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import norm
from statsmodels.stats.proportion import proportion_confint

__all__ = [
    "ALLOCATION_METHODS",
    "Estimate",
    "SamplingInputError",
    "StratumEstimate",
    "allocate",
    "draw_stratified_sample",
    "sample_size_for_margin",
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


ALLOCATION_METHODS = ("proportional", "equal")


def sample_size_for_margin(
    population_size: int, margin: float, *, confidence: float = 0.95, expected_rate: float = 0.5
) -> int:
    """How many items to check for an interval of half-width ``margin`` around ``expected_rate``.

    With ``z`` the normal quantile for ``confidence``, ``p = expected_rate`` and ``N`` the
    population size::

        n0 = z^2 p (1 - p) / margin^2          (infinite population)
        n  = n0 / (1 + (n0 - 1) / N)            (finite-population correction)

    rounded up, at least 1 and never more than ``N``. This is the normal-approximation (Wald)
    half-width, the same as Krejcie & Morgan's table (N = 10,000 at ±5%, 95% gives 370) and, for
    a large ``N``, statsmodels' ``samplesize_confint_proportion``. The stratified interval of
    :func:`stratified_error_rate` has that half-width; the Wilson interval is about as wide when
    ``n`` is a small part of ``N`` (it has no finite-population correction). ``expected_rate = 0.5`` is the
    conservative choice (the largest ``p (1 - p)``); a realistic error rate such as 0.05 needs
    far fewer checks for the same margin, but then the margin only holds if the rate is near it.
    The result is for simple random sampling; a proportionally allocated stratified sample of that
    size is at least as precise.
    """
    _check_confidence(confidence)
    if isinstance(population_size, bool) or not isinstance(population_size, numbers.Integral):
        raise SamplingInputError(f"population_size must be a whole number, got {population_size!r}")
    if population_size < 1:
        raise SamplingInputError(f"population_size must be at least 1, got {population_size}")
    if not 0 < margin <= 0.5:
        raise SamplingInputError(f"margin must be in (0, 0.5], got {margin}")
    if not 0 < expected_rate < 1:
        raise SamplingInputError(f"expected_rate must be strictly between 0 and 1, got {expected_rate}")
    z = float(norm.ppf((1 + confidence) / 2))
    infinite = z**2 * expected_rate * (1 - expected_rate) / margin**2
    corrected = infinite / (1 + (infinite - 1) / population_size)
    # The tolerance keeps floating-point dust (370.0000000001) from adding an item.
    return int(min(population_size, max(1, math.ceil(corrected - 1e-9))))


def _largest_remainder(
    population_sizes: Mapping[str, int], floors: Mapping[str, int], remainders: Mapping[str, Any], target: int
) -> dict[str, int]:
    """Start from ``floors`` (capped at N_h); give the units still missing from ``target`` one each
    to the largest ``remainders`` (ties by name), skipping strata that are complete."""
    allocation = {name: min(floors[name], size) for name, size in population_sizes.items()}
    leftover = target - sum(allocation.values())
    for name in sorted(population_sizes, key=lambda name: (-remainders[name], name)):
        if leftover <= 0:
            break
        if allocation[name] < population_sizes[name]:
            allocation[name] += 1
            leftover -= 1
    return allocation


def _proportional_from_rate(population_sizes: Mapping[str, int], rate: float) -> tuple[int, dict[str, int]]:
    """``round(rate * N)`` split as ``rate * N_h`` by largest remainder (the original rule, kept so
    that samples drawn with a rate do not change)."""
    target = math.floor(rate * sum(population_sizes.values()) + 0.5)
    exact = {name: rate * size for name, size in population_sizes.items()}
    floors = {name: math.floor(share) for name, share in exact.items()}
    remainders = {name: share - math.floor(share) for name, share in exact.items()}
    return target, _largest_remainder(population_sizes, floors, remainders, target)


def _proportional(population_sizes: Mapping[str, int], sample_size: int) -> dict[str, int]:
    """``sample_size * N_h / N`` by largest remainder, in exact integer arithmetic."""
    total = sum(population_sizes.values())
    floors = {name: sample_size * size // total for name, size in population_sizes.items()}
    remainders = {name: sample_size * size % total for name, size in population_sizes.items()}
    return _largest_remainder(population_sizes, floors, remainders, sample_size)


def _equal(population_sizes: Mapping[str, int], sample_size: int) -> dict[str, int]:
    """``sample_size`` split evenly, strata smaller than their share taken completely ("water filling").

    Going from the smallest stratum up, a stratum that holds no more than an even share of what is
    left is taken completely; the rest share what remains evenly, the odd units going to the first
    names in alphabetical order.
    """
    allocation = dict.fromkeys(population_sizes, 0)
    remaining = min(sample_size, sum(population_sizes.values()))
    by_size = sorted((size, name) for name, size in population_sizes.items() if size > 0)
    complete = 0
    while complete < len(by_size) and by_size[complete][0] <= remaining // (len(by_size) - complete):
        size, name = by_size[complete]
        allocation[name] = size
        remaining -= size
        complete += 1
    rest = sorted(name for _, name in by_size[complete:])
    if rest:
        share, extra = divmod(remaining, len(rest))
        for position, name in enumerate(rest):
            allocation[name] = share + (1 if position < extra else 0)
    return allocation


def _with_floor(
    allocation: Mapping[str, int], population_sizes: Mapping[str, int], minimum_per_stratum: int
) -> dict[str, int]:
    return {
        name: max(count, min(minimum_per_stratum, population_sizes[name]))
        for name, count in allocation.items()
    }


def _check_allocation_settings(method: str, minimum_per_stratum: int) -> None:
    if method not in ALLOCATION_METHODS:
        raise SamplingInputError(
            f"unknown allocation method {method!r}; use one of {', '.join(map(repr, ALLOCATION_METHODS))}"
        )
    if minimum_per_stratum < 0:
        raise SamplingInputError(f"minimum_per_stratum cannot be negative, got {minimum_per_stratum}")


def allocate(
    population_sizes: Mapping[str, int],
    sample_size: int,
    *,
    method: str = "proportional",
    minimum_per_stratum: int = 1,
) -> dict[str, int]:
    """How many items to draw from each stratum for a sample of ``sample_size``.

    * ``"proportional"``: ``n_h`` is ``sample_size * N_h / N`` rounded by largest remainder
      (each stratum gets the whole part, the missing units go to the largest fractional parts,
      ties by name), so the sizes sum to ``sample_size`` and each is within 1 of its exact share.
      Every stratum is sampled at the same rate, so even the pooled error rate is unbiased.
    * ``"equal"``: ``sample_size`` split as evenly as possible (the odd units to the first names
      alphabetically); a stratum smaller than its share is taken completely and the surplus is
      shared among the others, until the sample is complete. Small strata get as much
      precision as large ones, so per-stratum rates are comparable; the population rate then
      needs the weighted estimate of :func:`stratified_error_rate` (pooling is biased).

    Either way each stratum then gets at least ``min(minimum_per_stratum, N_h)``, which can lift
    the total above ``sample_size``.
    """
    _check_allocation_settings(method, minimum_per_stratum)
    if not population_sizes:
        raise SamplingInputError("no strata were given")
    for name, size in population_sizes.items():
        if size < 0:
            raise SamplingInputError(f"stratum {name!r}: population size cannot be negative, got {size}")
    total = sum(population_sizes.values())
    if isinstance(sample_size, bool) or not isinstance(sample_size, numbers.Integral):
        raise SamplingInputError(f"sample_size must be a whole number, got {sample_size!r}")
    if not 1 <= sample_size <= total:
        raise SamplingInputError(
            f"sample_size must be between 1 and the population size {total}, got {sample_size}"
        )
    if method == "proportional":
        allocation = _proportional(population_sizes, int(sample_size))
    else:
        allocation = _equal(population_sizes, int(sample_size))
    return _with_floor(allocation, population_sizes, minimum_per_stratum)


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


def _duplicate_error(items_by_stratum: Mapping[str, Sequence[Hashable]], name: str) -> SamplingInputError:
    """The first item of stratum ``name`` already seen in it or in an earlier stratum."""
    earlier: dict[Hashable, str] = {}
    for other, item_ids in items_by_stratum.items():
        if other == name:
            break
        earlier.update(dict.fromkeys(item_ids, other))
    here: set[Hashable] = set()
    for item_id in items_by_stratum[name]:
        if item_id in here:
            return SamplingInputError(f"item {item_id!r} appears twice in stratum {name!r}")
        if item_id in earlier:
            return SamplingInputError(
                f"item {item_id!r} appears in both {earlier[item_id]!r} and stratum {name!r}"
            )
        here.add(item_id)
    raise AssertionError(f"no duplicate in stratum {name!r}")  # pragma: no cover


def draw_stratified_sample(
    items_by_stratum: Mapping[str, Sequence[Hashable]],
    *,
    rate: float = 0.02,
    sample_size: int | None = None,
    allocation: str = "proportional",
    minimum_per_stratum: int = 1,
    seed: int = 0,
) -> dict[str, Any]:
    """Pick the items people will check: a simple random sample within each stratum.

    The sample size asked for is ``sample_size`` when given (``rate`` is then ignored), else
    ``round(rate * N)``. It is split over the strata by ``allocation`` (see :func:`allocate`):
    ``"proportional"`` (the same share of each stratum) or ``"equal"`` (the same number from
    each, small strata taken completely). With a rate, the proportional shares are ``rate * N_h``
    rounded by largest remainder so the total is ``round(rate * N)``. Each stratum then gets at
    least ``minimum_per_stratum`` (never more than it holds), so small strata are not skipped and
    the total can exceed the size asked for. The draw is deterministic: items are
    sorted (naturally, or by ``str`` for mixed id types, so the input order does not matter)
    and drawn without replacement with ``numpy.random.default_rng([seed, SHA-256 of the
    stratum name])`` -- the same ids and seed give the same sample, and adding a stratum does
    not change the others.

    Returns a JSON-friendly dictionary (when ids are)::

        {"rate": 0.02, "seed": 0, "minimum_per_stratum": 1, "allocation": "proportional",
         "requested_size": round(rate * N) or sample_size,
         "population_size": N, "sample_size": n, "realised_rate": n / N,
         "strata": {name: {"population_size": N_h, "sample_size": n_h,
                           "realised_rate": n_h / N_h, "ids": [...]}}}

    (``"rate"`` is ``None`` when ``sample_size`` was given), whose per-stratum sizes feed
    :func:`stratified_error_rate` once errors are counted. Realised rates differ between strata
    where rounding or the floor bites, and by design with equal allocation -- which is why the
    estimate must weight strata by population share rather than pool them.
    """
    _check_allocation_settings(allocation, minimum_per_stratum)
    if sample_size is None and not 0 < rate <= 1:
        raise SamplingInputError(f"rate must be in (0, 1], got {rate}")
    if not items_by_stratum:
        raise SamplingInputError("no strata were given")
    seen: set[Hashable] = set()
    sorted_items: dict[str, list[Hashable]] = {}
    for name, item_ids in items_by_stratum.items():
        distinct = set(item_ids)
        if len(distinct) != len(item_ids) or not seen.isdisjoint(distinct):
            raise _duplicate_error(items_by_stratum, name)
        seen |= distinct
        sorted_items[name] = _sorted_ids(item_ids)

    population_sizes = {name: len(ids) for name, ids in sorted_items.items()}
    if sample_size is not None:
        requested_size = sample_size
        sizes = allocate(
            population_sizes, sample_size, method=allocation, minimum_per_stratum=minimum_per_stratum
        )
    elif allocation == "proportional":
        requested_size, sizes = _proportional_from_rate(population_sizes, rate)
        sizes = _with_floor(sizes, population_sizes, minimum_per_stratum)
    else:
        requested_size = math.floor(rate * sum(population_sizes.values()) + 0.5)
        sizes = _with_floor(_equal(population_sizes, requested_size), population_sizes, minimum_per_stratum)

    strata: dict[str, dict[str, Any]] = {}
    for name, item_ids in sorted_items.items():
        stratum_size = sizes[name]
        generator = np.random.default_rng(_stratum_seed(seed, str(name)))
        chosen_positions = sorted(generator.choice(len(item_ids), size=stratum_size, replace=False).tolist())
        strata[name] = {
            "population_size": len(item_ids),
            "sample_size": stratum_size,
            "realised_rate": stratum_size / len(item_ids) if item_ids else 0.0,
            "ids": [item_ids[position] for position in chosen_positions],
        }
    population_size = sum(info["population_size"] for info in strata.values())
    total_sampled = sum(info["sample_size"] for info in strata.values())
    return {
        "rate": rate if sample_size is None else None,
        "seed": seed,
        "minimum_per_stratum": minimum_per_stratum,
        "allocation": allocation,
        "requested_size": int(requested_size),
        "population_size": population_size,
        "sample_size": total_sampled,
        "realised_rate": total_sampled / population_size if population_size else 0.0,
        "strata": strata,
    }
