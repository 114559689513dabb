"""The result every metric module returns: per-item rows, a summary, its parameters, problems.

Pure Python, no Django. A metric's `score(...)` returns one `Scored`:

* `items`: one row (a plain dict) per ground-truth item, in ground-truth order, with the item's
  id and every per-item number that went into the summary, so any summary number can be
  recomputed or broken down further by the caller. A list, or a sequence that makes each row
  when it is read (rows a metric made from arrays).
* `summary`: the aggregated numbers. It always holds a ``"parameters"`` entry equal to
  `params`, so a summary that is stored or shown alone still says how it was computed.
* `params`: the metric name, its version, the variant ("official" or "paper") and every
  threshold that changes a number.
* `problems`: human-readable notes about the input that did not stop scoring (missing
  predictions scored as wrong, extra predictions ignored, ...). Empty when the input was clean.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Scored:
    """Per-item rows, summary (with its parameters), the parameters, and input problems."""

    items: Sequence[dict[str, Any]]
    summary: dict[str, Any]
    params: dict[str, Any]
    problems: list[str] = field(default_factory=list)


def mean_or_none(values: Iterable[float]) -> float | None:
    """Arithmetic mean as a Python float; None for no values (never NaN, never a ZeroDivisionError)."""
    total = 0.0
    count = 0
    for value in values:
        total += value
        count += 1
    return total / count if count else None


def ratio_or_none(numerator: float | None, denominator: float | None) -> float | None:
    """numerator / denominator; None when either is None or the denominator is 0."""
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


def describe_ids(ids: list[Any], limit: int | None = None) -> str:
    """Ids for a problem message, comma-separated: all of them, or the first `limit` and a count."""
    shown_ids = ids if limit is None else ids[:limit]
    shown = ", ".join(str(value) for value in shown_ids)
    if len(shown_ids) < len(ids):
        shown += f", ... ({len(ids) - len(shown_ids)} more)"
    return shown
