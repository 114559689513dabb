"""Which format module serves which benchmark name (pure, no Django)."""

from __future__ import annotations

import importlib
from types import ModuleType

BENCHMARKS = ("stevqa", "trance", "cric", "clevrref")
ALIASES = {
    "ste-vqa": "stevqa",
    "ste_vqa": "stevqa",
    "est-vqa": "stevqa",
    "estvqa": "stevqa",
    "clevr-ref+": "clevrref",
    "clevr-ref": "clevrref",
    "clevrref+": "clevrref",
}


class UnknownBenchmark(ValueError):
    pass


def canonical_name(name: str) -> str:
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in BENCHMARKS:
        raise UnknownBenchmark(f"unknown benchmark {name!r} (expected one of {', '.join(BENCHMARKS)})")
    return key


def format_module(name: str) -> ModuleType:
    """The module that reads and writes the benchmark's official files."""
    return importlib.import_module(f"benchmarks.{canonical_name(name)}.formats")


def has_scenes(name: str) -> bool:
    return hasattr(format_module(name), "parse_scenes")
