"""What an authoring workflow's rules report (pure, no Django): one broken rule per `Problem`.

A workflow (a benchmark's `authoring.py`) checks a submission and returns Problems; it also holds
the English message template of each code (`messages`), which the annotation app translates and
fills in for the annotator.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Problem:
    """One broken rule: which pair (None for the whole submission), which field, which rule.

    `params` holds the values the message template of `code` names; `confirmable` problems are
    warnings the annotator may confirm and submit anyway.
    """

    pair: int | None
    field: str  # "question" | "answer" | "evidence" | "pairs"
    code: str
    params: dict = field(default_factory=dict)
    confirmable: bool = False
