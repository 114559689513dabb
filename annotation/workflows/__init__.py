"""Annotation workflows per benchmark: `workflow_for(benchmark)` finds the one its spec names."""

from __future__ import annotations

import importlib
from functools import cache

from benchmarks import registry
from benchmarks.spec import BenchmarkSpec


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
    module_name, _, class_name = spec.authoring.partition(":")
    return getattr(importlib.import_module(module_name), class_name)(spec)


def annotatable_benchmarks() -> list[BenchmarkSpec]:
    return [spec for spec in registry.specs() if spec.authoring]
