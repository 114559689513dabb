"""Annotation workflows per benchmark: `workflow_for(benchmark)` finds the one its spec names."""

from __future__ import annotations

from functools import cache

from benchmarks import registry
from benchmarks.spec import BenchmarkSpec, plugged


class NoWorkflow(LookupError):
    """The benchmark declares no annotation workflow."""


def workflow_for(benchmark: str):
    """The authoring workflow of a benchmark named by its name; NoWorkflow when it has none."""
    spec = registry.get(benchmark)
    if not spec.authoring:
        raise NoWorkflow(f"{spec.title} has no annotation workflow: its items cannot be annotated here")
    return load_workflow(spec)


@cache
def load_workflow(spec: BenchmarkSpec):
    return plugged(spec.authoring)(spec)


def annotatable_benchmarks() -> list[BenchmarkSpec]:
    return [spec for spec in registry.specs() if spec.authoring]
