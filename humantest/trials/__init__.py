"""Per-benchmark human trials: `trial_for(benchmark)` finds the one a benchmark's spec names."""

from __future__ import annotations

from functools import cache

from django.utils.translation import gettext as _

from benchmarks import registry
from benchmarks.spec import BenchmarkSpec, plugged
from humantest.trials.base import AnswerRefused, BalanceField, BenchmarkTrial, TrialUnit

__all__ = ["AnswerRefused", "BalanceField", "BenchmarkTrial", "NoTrial", "TrialUnit", "trial_for"]


class NoTrial(LookupError):
    """The benchmark declares no human trial."""


def trial_for(benchmark: str) -> BenchmarkTrial:
    """The trial of a benchmark named by its name; NoTrial when its spec names none."""
    spec = registry.get(benchmark)
    if not spec.trial:
        raise NoTrial(
            _("%(benchmark)s has no human trial: its items cannot be put in a test plan")
            % {"benchmark": spec.title}
        )
    return load_trial(spec)


@cache
def load_trial(spec: BenchmarkSpec) -> BenchmarkTrial:
    return plugged(spec.trial)(spec)
