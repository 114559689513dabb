"""Inter-rater agreement statistics for annotations and human-test answers.

Pure Python (no Django): every function takes plain data and returns an :class:`Agreement`.

Input convention
----------------
Ratings are a mapping ``item_id -> {rater_id: label}``. A label of ``None`` or NaN means "this
rater did not rate this item" and is treated exactly like an absent key. Item and rater ids may
be any hashable values; labels must be hashable (strings, numbers, booleans...). The
``to_*`` converters below turn this mapping into the matrices each library wants:

* :func:`paired_labels` -> two aligned label lists (scikit-learn's Cohen's kappa),
* :func:`to_fleiss_table` -> an items x categories count table (statsmodels' Fleiss' kappa),
* :func:`to_reliability_matrix` -> a raters x items matrix with NaN for missing ratings
  (the ``krippendorff`` package).

Confidence intervals
--------------------
Every statistic accepts ``resamples`` (0 = no interval), ``confidence`` and ``seed``. The interval
is a percentile bootstrap that resamples *items* with replacement (ratings of one item stay
together, because they are not independent of each other); see :func:`bootstrap_interval`.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import shapely
from rapidfuzz.distance import Levenshtein
from shapely.geometry import MultiPolygon, Polygon
from shapely.geometry.base import BaseGeometry

Ratings = Mapping[Hashable, Mapping[Hashable, Any]]
MeasurementLevel = Literal["nominal", "ordinal", "interval"]
PolygonRepair = Literal["make_valid", "buffer", "convex_hull"]

__all__ = [
    "Agreement",
    "AgreementInputError",
    "ReliabilityMatrix",
    "bootstrap_interval",
    "cohens_kappa",
    "fleiss_kappa",
    "is_missing",
    "krippendorff_alpha",
    "observed_ratings",
    "paired_labels",
    "pairwise_polygon_iou",
    "pairwise_text_similarity",
    "percent_agreement",
    "polygon_iou",
    "text_similarity",
    "to_fleiss_table",
    "to_reliability_matrix",
]


class AgreementInputError(ValueError):
    """The ratings cannot support the requested statistic (the message says what is wrong)."""


@dataclass(frozen=True)
class Agreement:
    """One agreement statistic with its interval and the data behind it.

    ``value`` is ``None`` when the statistic is undefined for these data (for example kappa when
    every rating falls in one category: chance agreement is then 1 and kappa is 0/0); the
    reason is in ``params["undefined_reason"]``. ``low``/``high`` are ``None`` when no bootstrap
    was requested. ``items`` counts the items that entered the statistic (for pairable
    statistics, the items with at least two ratings) and ``raters`` the distinct raters who
    rated at least one of them. ``per_item`` holds item-level scores for statistics that are a
    mean of item scores (percent agreement, polygon IoU, text similarity).
    """

    statistic: str
    value: float | None
    low: float | None
    high: float | None
    items: int
    raters: int
    params: dict[str, Any] = field(default_factory=dict)
    per_item: dict[Hashable, float] = field(default_factory=dict)

    def describe(self, digits: int = 3) -> str:
        """``"fleiss_kappa 0.210 [0.120, 0.310] (10 items, 14 raters)"``."""
        value_text = "undefined" if self.value is None else f"{self.value:.{digits}f}"
        if self.low is not None and self.high is not None:
            value_text += f" [{self.low:.{digits}f}, {self.high:.{digits}f}]"
        return f"{self.statistic} {value_text} ({self.items} items, {self.raters} raters)"

    def __str__(self) -> str:
        return self.describe()

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary for JSON reports (item ids in ``per_item`` become strings)."""
        return {
            "statistic": self.statistic,
            "value": self.value,
            "low": self.low,
            "high": self.high,
            "items": self.items,
            "raters": self.raters,
            "params": dict(self.params),
            "per_item": {str(item_id): score for item_id, score in self.per_item.items()},
        }


# --------------------------------------------------------------------------- input handling


def is_missing(label: Any) -> bool:
    """True for ``None`` and floating-point NaN (the two spellings of "not rated")."""
    if label is None:
        return True
    return isinstance(label, float | np.floating) and math.isnan(label)


def observed_ratings(ratings: Ratings) -> dict[Hashable, dict[Hashable, Any]]:
    """Copy of ``ratings`` without missing labels (items left with no rating are kept, empty)."""
    if not isinstance(ratings, Mapping):
        raise AgreementInputError(
            f"ratings must be a mapping item_id -> {{rater_id: label}}; got {type(ratings).__name__}"
        )
    observed: dict[Hashable, dict[Hashable, Any]] = {}
    for item_id, labels_by_rater in ratings.items():
        if not isinstance(labels_by_rater, Mapping):
            raise AgreementInputError(
                f"item {item_id!r}: expected a mapping rater_id -> label, got {type(labels_by_rater).__name__}"
            )
        observed[item_id] = {
            rater_id: label for rater_id, label in labels_by_rater.items() if not is_missing(label)
        }
    return observed


def _pairable_items(ratings: Ratings, statistic: str) -> dict[Hashable, dict[Hashable, Any]]:
    """Items with at least two ratings, after checking there are two raters and such an item.

    Raises :class:`AgreementInputError` naming the problem: no items, fewer than two raters, or
    no item rated by two or more raters.
    """
    observed = observed_ratings(ratings)
    if not observed:
        raise AgreementInputError(f"{statistic}: no items were given")
    raters = {rater_id for labels_by_rater in observed.values() for rater_id in labels_by_rater}
    if len(raters) < 2:
        found = ", ".join(repr(rater_id) for rater_id in sorted(raters, key=repr)) or "none"
        raise AgreementInputError(
            f"{statistic} needs ratings from at least 2 raters; found {len(raters)} ({found})"
        )
    pairable = {item_id: labels for item_id, labels in observed.items() if len(labels) >= 2}
    if not pairable:
        raise AgreementInputError(
            f"{statistic}: no item was rated by two or more raters "
            f"({len(observed)} items, each with at most one rating), so nothing can be compared"
        )
    return pairable


def _rater_count(items: Mapping[Hashable, Mapping[Hashable, Any]]) -> int:
    return len({rater_id for labels_by_rater in items.values() for rater_id in labels_by_rater})


def _ordered_categories(labels: Iterable[Any], value_order: Sequence[Any] | None = None) -> list[Any]:
    """Distinct labels in a stable order: ``value_order`` if given, else sorted when comparable.

    Labels that cannot be compared with each other (say strings and numbers) are ordered by
    type name and ``repr``, which is deterministic but only meaningful for nominal data.
    """
    distinct = set(labels)
    if value_order is not None:
        unknown = distinct.difference(value_order)
        if unknown:
            raise AgreementInputError(
                f"labels {sorted(map(repr, unknown))} are not in value_order {list(value_order)!r}"
            )
        if len(set(value_order)) != len(value_order):
            raise AgreementInputError(f"value_order {list(value_order)!r} repeats a value")
        return list(value_order)
    try:
        return sorted(distinct)
    except TypeError:
        return sorted(distinct, key=lambda label: (type(label).__name__, repr(label)))


def paired_labels(
    ratings: Ratings, first_rater: Hashable, second_rater: Hashable
) -> tuple[list[Any], list[Any], list[Hashable]]:
    """Labels of two raters on the items both rated: ``(first_labels, second_labels, item_ids)``."""
    first_labels: list[Any] = []
    second_labels: list[Any] = []
    item_ids: list[Hashable] = []
    for item_id, labels_by_rater in observed_ratings(ratings).items():
        if first_rater in labels_by_rater and second_rater in labels_by_rater:
            first_labels.append(labels_by_rater[first_rater])
            second_labels.append(labels_by_rater[second_rater])
            item_ids.append(item_id)
    return first_labels, second_labels, item_ids


def to_fleiss_table(ratings: Ratings) -> tuple[np.ndarray, list[Any]]:
    """Items x categories count table for Fleiss' kappa, and the category of each column.

    Uses ``statsmodels.stats.inter_rater.aggregate_raters`` on an items x ratings matrix of
    category codes. Fleiss' kappa assumes every item got the same number of ratings ``n``
    (the raters themselves may differ between items), so items with a different number of
    ratings raise :class:`AgreementInputError`; use :func:`krippendorff_alpha` for unbalanced
    or incomplete designs.
    """
    observed = observed_ratings(ratings)
    if not observed:
        raise AgreementInputError("Fleiss' kappa: no items were given")
    counts = Counter(len(labels) for labels in observed.values())
    if len(counts) > 1:
        most_common_count = counts.most_common(1)[0][0]
        odd_items = [item_id for item_id, labels in observed.items() if len(labels) != most_common_count]
        raise AgreementInputError(
            "Fleiss' kappa needs the same number of ratings for every item; most items have "
            f"{most_common_count} but {len(odd_items)} differ (first: {odd_items[:5]!r}). "
            "Use krippendorff_alpha for missing ratings."
        )
    categories = _ordered_categories(label for labels in observed.values() for label in labels.values())
    code_of = {category: code for code, category in enumerate(categories)}
    codes = np.array(
        [[code_of[label] for label in labels.values()] for labels in observed.values()], dtype=int
    )
    from statsmodels.stats import inter_rater  # imported when used: statsmodels takes a second to load

    table, _ = inter_rater.aggregate_raters(codes, n_cat=len(categories))
    return table, categories


@dataclass(frozen=True)
class ReliabilityMatrix:
    """Raters x items matrix (NaN = not rated), as the ``krippendorff`` package expects.

    For nominal and ordinal data the cells hold category codes, ``categories[code]`` being the
    label; for interval data they hold the labels themselves and ``categories`` is ``None``.
    """

    matrix: np.ndarray
    rater_ids: list[Hashable]
    item_ids: list[Hashable]
    categories: list[Any] | None


def to_reliability_matrix(
    ratings: Ratings, *, numeric: bool = False, value_order: Sequence[Any] | None = None
) -> ReliabilityMatrix:
    """Convert ratings to a raters x items matrix with NaN for missing ratings.

    ``numeric=True`` keeps numeric labels as values (interval data); otherwise labels become
    codes ``0..V-1`` in ``value_order`` (or sorted order), which preserves order for ordinal data.
    """
    observed = observed_ratings(ratings)
    item_ids = list(observed)
    rater_ids = _ordered_categories(rater_id for labels in observed.values() for rater_id in labels)
    row_of = {rater_id: row for row, rater_id in enumerate(rater_ids)}
    matrix = np.full((len(rater_ids), len(item_ids)), np.nan)
    categories: list[Any] | None = None
    if numeric:
        for column, item_id in enumerate(item_ids):
            for rater_id, label in observed[item_id].items():
                if isinstance(label, bool) or not isinstance(label, int | float | np.integer | np.floating):
                    raise AgreementInputError(
                        f"interval data needs numeric labels; item {item_id!r}, rater {rater_id!r} "
                        f"has {label!r}"
                    )
                matrix[row_of[rater_id], column] = float(label)
    else:
        categories = _ordered_categories(
            (label for labels in observed.values() for label in labels.values()), value_order
        )
        code_of = {category: code for code, category in enumerate(categories)}
        for column, item_id in enumerate(item_ids):
            for rater_id, label in observed[item_id].items():
                matrix[row_of[rater_id], column] = code_of[label]
    return ReliabilityMatrix(matrix=matrix, rater_ids=rater_ids, item_ids=item_ids, categories=categories)


def _matrix_to_ratings(reliability_data: Any) -> dict[Hashable, dict[Hashable, Any]]:
    """Raters x units array-like (Krippendorff's layout, None/NaN = missing) -> ratings mapping."""
    rows = [list(row) for row in reliability_data]
    if not rows:
        raise AgreementInputError("reliability data has no rows (raters)")
    widths = {len(row) for row in rows}
    if len(widths) != 1:
        raise AgreementInputError(f"reliability data rows (raters) have different lengths {sorted(widths)}")
    (unit_count,) = widths
    return {unit: {rater: rows[rater][unit] for rater in range(len(rows))} for unit in range(unit_count)}


# --------------------------------------------------------------------------- bootstrap


def _bootstrap_values(
    items: Sequence[Any] | np.ndarray,
    statistic: Callable[[Any], float | None],
    *,
    resamples: int,
    seed: int,
) -> tuple[np.ndarray, int]:
    """Statistic on ``resamples`` item resamples; returns (defined values, undefined count)."""
    item_count = len(items)
    if item_count == 0:
        raise AgreementInputError("bootstrap needs at least one item")
    if resamples < 1:
        raise AgreementInputError(f"resamples must be at least 1, got {resamples}")
    generator = np.random.default_rng(seed)
    indices = generator.integers(0, item_count, size=(resamples, item_count))
    values: list[float] = []
    undefined = 0
    for row in indices:
        sample = items[row] if isinstance(items, np.ndarray) else [items[index] for index in row]
        value = statistic(sample)
        if value is None or not math.isfinite(value):
            undefined += 1
        else:
            values.append(float(value))
    return np.asarray(values), undefined


def bootstrap_interval(
    items: Sequence[Any] | np.ndarray,
    statistic: Callable[[Any], float | None],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of ``statistic`` over resampled ITEMS.

    Draws ``resamples`` samples of ``len(items)`` items with replacement (numpy
    ``default_rng(seed)``, so the result is deterministic for a seed), evaluates ``statistic``
    on each and returns the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles.
    Items, not single ratings, are resampled because ratings of the same item are correlated.
    ``items`` may be a list (the statistic gets a list) or a numpy array (it gets the array
    indexed by the resampled rows). Resamples where the statistic is undefined (``None`` or NaN,
    e.g. kappa on a resample with one category) are dropped; if all are, returns
    ``(None, None)``.
    """
    if not 0 < confidence < 1:
        raise AgreementInputError(f"confidence must be between 0 and 1, got {confidence}")
    values, _ = _bootstrap_values(items, statistic, resamples=resamples, seed=seed)
    return _percentile_interval(values, confidence)


def _percentile_interval(values: np.ndarray, confidence: float) -> tuple[float | None, float | None]:
    if values.size == 0:
        return None, None
    tail = (1 - confidence) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return float(low), float(high)


def _with_interval(
    statistic: str,
    value: float | None,
    *,
    items: Sequence[Any] | np.ndarray,
    compute: Callable[[Any], float | None],
    item_count: int,
    raters: int,
    params: dict[str, Any],
    resamples: int,
    confidence: float,
    seed: int,
    per_item: dict[Hashable, float] | None = None,
) -> Agreement:
    """Build an :class:`Agreement`, bootstrapping ``compute`` over ``items`` when asked."""
    low = high = None
    if not 0 < confidence < 1:
        raise AgreementInputError(f"confidence must be between 0 and 1, got {confidence}")
    if resamples < 0:
        raise AgreementInputError(f"resamples must be 0 (no interval) or more, got {resamples}")
    if resamples and value is not None:
        values, undefined = _bootstrap_values(items, compute, resamples=resamples, seed=seed)
        low, high = _percentile_interval(values, confidence)
        params = {
            **params,
            "confidence": confidence,
            "resamples": resamples,
            "seed": seed,
            "undefined_resamples": undefined,
        }
    return Agreement(
        statistic=statistic,
        value=value,
        low=low,
        high=high,
        items=item_count,
        raters=raters,
        params=params,
        per_item=per_item or {},
    )


def _mean_or_none(scores: Sequence[float]) -> float | None:
    return float(np.mean(scores)) if len(scores) else None


# --------------------------------------------------------------------------- percent agreement


def _item_pair_agreement(labels: Iterable[Any]) -> float:
    """Share of agreeing rater pairs on one item: sum_c n_c (n_c - 1) / (n (n - 1))."""
    counts = Counter(labels)
    rating_count = sum(counts.values())
    agreeing_pairs = sum(count * (count - 1) for count in counts.values())
    return agreeing_pairs / (rating_count * (rating_count - 1))


def percent_agreement(
    ratings: Ratings, *, resamples: int = 0, confidence: float = 0.95, seed: int = 0
) -> Agreement:
    """Observed agreement: mean over items of the share of rater pairs that gave the same label.

    For item i with n_i ratings, n_ic of them in category c:
    ``P_i = sum_c n_ic (n_ic - 1) / (n_i (n_i - 1))`` and the result is the mean of P_i over
    the items with at least two ratings (items with one rating carry no agreement
    information and are skipped; missing ratings are simply absent). With two raters this is
    the share of items on which they agree. No correction for chance: use a kappa or alpha
    to compare across label sets with different numbers of categories.
    """
    pairable = _pairable_items(ratings, "percent agreement")
    per_item = {item_id: _item_pair_agreement(labels.values()) for item_id, labels in pairable.items()}
    scores = list(per_item.values())
    return _with_interval(
        "percent_agreement",
        _mean_or_none(scores),
        items=scores,
        compute=_mean_or_none,
        item_count=len(pairable),
        raters=_rater_count(pairable),
        params={"skipped_items": len(ratings) - len(pairable)},
        resamples=resamples,
        confidence=confidence,
        seed=seed,
        per_item=per_item,
    )


# --------------------------------------------------------------------------- Cohen's kappa


def cohens_kappa(
    rater_a: Sequence[Any] | Mapping[Hashable, Any],
    rater_b: Sequence[Any] | Mapping[Hashable, Any],
    *,
    weights: Literal["linear", "quadratic"] | None = None,
    value_order: Sequence[Any] | None = None,
    resamples: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
) -> Agreement:
    """Cohen's kappa for two raters (scikit-learn's ``cohen_kappa_score``).

    ``kappa = (p_o - p_e) / (1 - p_e)`` with ``p_o`` the observed share of agreement and
    ``p_e = sum_c p_a(c) p_b(c)`` the agreement expected if each rater labelled at random with
    their own marginal frequencies. Weighted kappa (``weights="linear"`` or ``"quadratic"``)
    counts partial credit for near misses: ``kappa_w = 1 - sum w_ij o_ij / sum w_ij e_ij``
    with ``w_ij = |i - j|`` or ``(i - j)^2`` in category order (``value_order``, else sorted
    labels).

    ``rater_a``/``rater_b`` are either two aligned sequences of labels or two mappings
    ``item_id -> label`` (paired on common item ids; see :func:`paired_labels` to extract two
    raters from the ratings mapping). Pairs where either label is missing are dropped.
    Undefined (``value=None``) when both raters used one and the same single category.
    """
    if isinstance(rater_a, Mapping) != isinstance(rater_b, Mapping):
        raise AgreementInputError("give both raters as sequences or both as mappings item_id -> label")
    if isinstance(rater_a, Mapping) and isinstance(rater_b, Mapping):
        common_items = [item_id for item_id in rater_a if item_id in rater_b]
        pairs = [(rater_a[item_id], rater_b[item_id]) for item_id in common_items]
    else:
        if len(rater_a) != len(rater_b):
            raise AgreementInputError(
                f"Cohen's kappa needs aligned labels; rater_a has {len(rater_a)} and rater_b {len(rater_b)}"
            )
        pairs = list(zip(rater_a, rater_b, strict=True))
    pairs = [(first, second) for first, second in pairs if not is_missing(first) and not is_missing(second)]
    if not pairs:
        raise AgreementInputError("Cohen's kappa: no item was rated by both raters")
    if weights not in (None, "linear", "quadratic"):
        raise AgreementInputError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    categories = _ordered_categories((label for pair in pairs for label in pair), value_order)

    def compute(sample: Sequence[tuple[Any, Any]]) -> float | None:
        first_labels = [first for first, _ in sample]
        second_labels = [second for _, second in sample]
        if len(set(first_labels) | set(second_labels)) < 2:
            return None
        from sklearn.metrics import cohen_kappa_score  # imported when used: two seconds to load

        return float(cohen_kappa_score(first_labels, second_labels, labels=categories, weights=weights))

    value = compute(pairs)
    params: dict[str, Any] = {"weights": weights, "categories": categories}
    if value is None:
        params["undefined_reason"] = "both raters used a single, identical category (chance agreement is 1)"
    return _with_interval(
        "cohens_kappa" if weights is None else f"cohens_kappa_{weights}",
        value,
        items=pairs,
        compute=compute,
        item_count=len(pairs),
        raters=2,
        params=params,
        resamples=resamples,
        confidence=confidence,
        seed=seed,
    )


# --------------------------------------------------------------------------- Fleiss' kappa


def _fleiss_value(table: np.ndarray) -> float | None:
    """statsmodels' Fleiss' kappa, or None when every rating is in one category (P_e = 1)."""
    category_shares = table.sum(axis=0) / table.sum()
    if np.sum(category_shares**2) >= 1 - 1e-12:
        return None
    from statsmodels.stats import inter_rater

    return float(inter_rater.fleiss_kappa(table, method="fleiss"))


def fleiss_kappa(
    table_or_ratings: Ratings | Sequence[Sequence[int]] | np.ndarray,
    *,
    resamples: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
) -> Agreement:
    """Fleiss' kappa for many raters (statsmodels ``aggregate_raters`` + ``fleiss_kappa``).

    Input: a ratings mapping (every item needs the same number ``n >= 2`` of ratings, the
    raters may differ between items) or directly an items x categories table of counts whose
    rows all sum to ``n``. With ``n_ij`` the number of ratings of item i in category j, N items:

    * ``P_i = (sum_j n_ij^2 - n) / (n (n - 1))``, ``P_bar = mean_i P_i`` (observed agreement),
    * ``p_j = sum_i n_ij / (N n)``, ``P_e = sum_j p_j^2`` (chance agreement),
    * ``kappa = (P_bar - P_e) / (1 - P_e)``.

    Undefined (``value=None``) when all ratings fall in one category (``P_e = 1``). For
    missing ratings use :func:`krippendorff_alpha`, which handles them.
    """
    raters: int
    categories: list[Any] | None = None
    if isinstance(table_or_ratings, Mapping):
        pairable = _pairable_items(table_or_ratings, "Fleiss' kappa")
        table, categories = to_fleiss_table(table_or_ratings)
        raters = _rater_count(pairable)
    else:
        try:
            table = np.asarray(table_or_ratings)
        except ValueError as error:  # ragged rows
            raise AgreementInputError(f"Fleiss' kappa table rows must have equal lengths: {error}") from None
        if table.ndim != 2 or table.size == 0:
            raise AgreementInputError(
                f"Fleiss' kappa table must be a non-empty items x categories matrix, got shape {table.shape}"
            )
        if not np.issubdtype(table.dtype, np.number) or np.any(table < 0) or np.any(table != np.round(table)):
            raise AgreementInputError("Fleiss' kappa table must hold non-negative whole counts")
        table = table.astype(int)
        row_sums = set(table.sum(axis=1).tolist())
        if len(row_sums) != 1:
            raise AgreementInputError(
                f"Fleiss' kappa needs the same number of ratings per item; row sums are {sorted(row_sums)}"
            )
        raters = row_sums.pop()
        if raters < 2:
            raise AgreementInputError(
                f"Fleiss' kappa needs at least 2 ratings per item; rows sum to {raters}"
            )
    value = _fleiss_value(table)
    params: dict[str, Any] = {"ratings_per_item": int(table[0].sum()), "categories": categories}
    if value is None:
        params["undefined_reason"] = "every rating is in the same category (chance agreement is 1)"
    return _with_interval(
        "fleiss_kappa",
        value,
        items=table,
        compute=_fleiss_value,
        item_count=int(table.shape[0]),
        raters=raters,
        params=params,
        resamples=resamples,
        confidence=confidence,
        seed=seed,
    )


# --------------------------------------------------------------------------- Krippendorff's alpha


def krippendorff_alpha(
    reliability_data: Ratings | Sequence[Sequence[Any]] | np.ndarray,
    *,
    level: MeasurementLevel = "nominal",
    value_order: Sequence[Any] | None = None,
    resamples: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
) -> Agreement:
    """Krippendorff's alpha (the ``krippendorff`` package); any number of raters, missing allowed.

    ``alpha = 1 - D_o / D_e``. From the coincidence matrix
    ``o_ck = sum_u (number of ordered pairs of ratings (c, k) in unit u) / (m_u - 1)``
    (m_u = ratings in unit u, units with one rating dropped), ``n_c = sum_k o_ck``,
    ``n = sum_c n_c``:
    ``D_o = sum_{c,k} o_ck d(c,k) / n`` and ``D_e = sum_{c,k} n_c n_k d(c,k) / (n (n - 1))``.
    The distance ``d`` depends on ``level``: nominal ``[c != k]``; interval ``(c - k)^2``;
    ordinal ``(sum_{g=c..k} n_g - (n_c + n_k) / 2)^2`` (ranks weighted by how often values
    were used).

    ``reliability_data`` is the ratings mapping or Krippendorff's raters x units layout (a list
    of rows, one per rater, ``None``/NaN for missing). Interval data need numeric labels;
    ordinal labels are ordered by ``value_order`` or sorted. Undefined (``value=None``) when
    all pairable ratings have the same value (no variation, ``D_e = 0``).
    """
    if level not in ("nominal", "ordinal", "interval"):
        raise AgreementInputError(f"level must be 'nominal', 'ordinal' or 'interval', got {level!r}")
    if level == "interval" and value_order is not None:
        raise AgreementInputError(
            "value_order applies to nominal or ordinal data; interval data use the numbers"
        )
    ratings = (
        reliability_data if isinstance(reliability_data, Mapping) else _matrix_to_ratings(reliability_data)
    )
    pairable = _pairable_items(ratings, "Krippendorff's alpha")
    reliability = to_reliability_matrix(pairable, numeric=level == "interval", value_order=value_order)
    value_domain = None if reliability.categories is None else np.arange(len(reliability.categories))

    def compute(columns: np.ndarray) -> float | None:
        observed_values = columns[~np.isnan(columns)]
        if np.unique(observed_values).size < 2:
            return None
        import krippendorff

        return float(
            krippendorff.alpha(
                reliability_data=columns, value_domain=value_domain, level_of_measurement=level
            )
        )

    value = compute(reliability.matrix)
    params: dict[str, Any] = {"level": level, "categories": reliability.categories}
    params["pairable_ratings"] = int(np.count_nonzero(~np.isnan(reliability.matrix)))
    params["skipped_items"] = len(ratings) - len(pairable)
    if value is None:
        params["undefined_reason"] = "every pairable rating has the same value (no variation to explain)"
    # Bootstrap over items = columns; transpose so the bootstrap indexes rows.
    return _with_interval(
        f"krippendorff_alpha_{level}",
        value,
        items=reliability.matrix.T,
        compute=lambda resampled_columns: compute(resampled_columns.T),
        item_count=len(pairable),
        raters=len(reliability.rater_ids),
        params=params,
        resamples=resamples,
        confidence=confidence,
        seed=seed,
    )


# --------------------------------------------------------------------------- regions


def _as_region(shape: Any, repair: PolygonRepair) -> BaseGeometry:
    """A polygonal shapely geometry from points or a geometry, repaired if invalid.

    Repairs: ``"make_valid"`` (default, ``shapely.make_valid``, keeping only polygonal
    parts) keeps every lobe of a self-intersecting "bow-tie"; ``"buffer"`` is the classic
    ``buffer(0)``, which may silently drop a lobe (GEOS keeps one triangle of a bow-tie);
    ``"convex_hull"`` replaces the shape by its hull (over-covers concave shapes).
    """
    geometry = shape if isinstance(shape, BaseGeometry) else Polygon(shape)
    if geometry.is_valid:
        return geometry
    if repair == "buffer":
        return geometry.buffer(0)
    if repair == "convex_hull":
        return geometry.convex_hull
    repaired = shapely.make_valid(geometry)
    polygons = [
        part
        for part in getattr(repaired, "geoms", [repaired])
        if isinstance(part, Polygon | MultiPolygon) and not part.is_empty
    ]
    return shapely.union_all(polygons) if polygons else Polygon()


def polygon_iou(first: Any, second: Any, *, repair: PolygonRepair = "make_valid") -> float | None:
    """Intersection over union of two regions: ``area(A ∩ B) / area(A ∪ B)``.

    Regions are shapely geometries or sequences of ``(x, y)`` points (a polygon outline).
    ``None`` when both regions have zero area (the ratio is 0/0).
    """
    first_region = _as_region(first, repair)
    second_region = _as_region(second, repair)
    union_area = first_region.union(second_region).area
    if union_area == 0:
        return None
    return first_region.intersection(second_region).area / union_area


def _pairwise_mean(
    values_by_rater: Mapping[Hashable, Any], score: Callable[[Any, Any], float | None]
) -> tuple[float | None, int]:
    """Mean score over unordered rater pairs of one item, and the number of undefined pairs."""
    scores: list[float] = []
    undefined = 0
    for first, second in itertools.combinations(values_by_rater.values(), 2):
        value = score(first, second)
        if value is None:
            undefined += 1
        else:
            scores.append(value)
    return _mean_or_none(scores), undefined


def _pairwise_statistic(
    statistic: str,
    values_by_item: Ratings,
    score: Callable[[Any, Any], float | None],
    *,
    params: dict[str, Any],
    resamples: int,
    confidence: float,
    seed: int,
) -> Agreement:
    pairable = _pairable_items(values_by_item, statistic.replace("_", " "))
    per_item: dict[Hashable, float] = {}
    undefined_pairs = 0
    for item_id, values_by_rater in pairable.items():
        item_score, undefined = _pairwise_mean(values_by_rater, score)
        undefined_pairs += undefined
        if item_score is not None:
            per_item[item_id] = item_score
    scores = list(per_item.values())
    scored_items = {item_id: pairable[item_id] for item_id in per_item}
    return _with_interval(
        statistic,
        _mean_or_none(scores),
        items=scores,
        compute=_mean_or_none,
        item_count=len(per_item),
        raters=_rater_count(scored_items),
        params={
            **params,
            "undefined_pairs": undefined_pairs,
            "skipped_items": len(values_by_item) - len(per_item),
        },
        resamples=resamples,
        confidence=confidence,
        seed=seed,
        per_item=per_item,
    )


def pairwise_polygon_iou(
    polygons_by_rater: Ratings,
    *,
    repair: PolygonRepair = "make_valid",
    resamples: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
) -> Agreement:
    """Region agreement: mean over items of the mean IoU over all pairs of raters of that item.

    ``polygons_by_rater`` is ``item_id -> {rater_id: polygon}`` where a polygon is a shapely
    geometry (holes and multipolygons allowed) or a list of ``(x, y)`` points; ``None`` means
    the rater drew nothing. Items drawn by fewer than two raters are skipped. Invalid polygons
    (self-intersections) are repaired first: ``repair="make_valid"`` (default) keeps every
    lobe of a bow-tie, ``"buffer"`` (``buffer(0)``) may drop a lobe, ``"convex_hull"`` fills
    concave outlines in. A pair in which both regions have zero area is undefined and left out
    (counted in ``params["undefined_pairs"]``); an item whose pairs are all undefined is
    skipped. Each item weighs the same whatever its number of raters.
    """
    return _pairwise_statistic(
        "pairwise_polygon_iou",
        polygons_by_rater,
        lambda first, second: polygon_iou(first, second, repair=repair),
        params={"repair": repair},
        resamples=resamples,
        confidence=confidence,
        seed=seed,
    )


# --------------------------------------------------------------------------- text


def _normalise_text(text: str) -> str:
    return " ".join(text.casefold().split())


def text_similarity(first: str, second: str, *, normalise: bool = False) -> float:
    """``1 - Levenshtein(a, b) / max(len(a), len(b))`` (rapidfuzz); 1.0 for two empty strings.

    With ``normalise=True`` both texts are case-folded and their whitespace collapsed first.
    Example: "kitten" vs "sitting" -> 3 edits / 7 characters -> 1 - 3/7 = 0.571.
    """
    if normalise:
        first, second = _normalise_text(first), _normalise_text(second)
    return float(Levenshtein.normalized_similarity(first, second))


def pairwise_text_similarity(
    texts_by_rater: Ratings,
    *,
    normalise: bool = False,
    resamples: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
) -> Agreement:
    """Text agreement: mean over items of the mean :func:`text_similarity` over rater pairs.

    ``texts_by_rater`` is ``item_id -> {rater_id: text}`` (``None`` = no answer); items with
    fewer than two texts are skipped.
    """
    return _pairwise_statistic(
        "pairwise_text_similarity",
        texts_by_rater,
        lambda first, second: text_similarity(first, second, normalise=normalise),
        params={"normalise": normalise},
        resamples=resamples,
        confidence=confidence,
        seed=seed,
    )
