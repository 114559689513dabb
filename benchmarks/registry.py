"""The benchmarks Yardstick serves, by name (pure, no Django).

Every folder of the plug-in root (`plugins/`) with a `spec` module declaring `SPEC` is found on first use;
more can come from elsewhere by naming their modules in the environment variable
``YARDSTICK_BENCHMARKS`` (comma-separated), or in-process with `register` (tests do). Nothing
else in the project lists benchmarks: adding one is adding its package.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import threading
from pathlib import Path

from benchmarks.spec import BenchmarkSpec

PLUGINS_VARIABLE = "YARDSTICK_BENCHMARKS"

_specs: dict[str, BenchmarkSpec] = {}
_aliases: dict[str, str] = {}
_loaded = False
#: Loading is done once, by the first thread to ask; the others wait for it to finish (a web
#: server's threads asking at once saw an empty registry before: "unknown benchmark").
_lock = threading.RLock()


class UnknownBenchmark(ValueError):
    pass


def spec_from_module(module_name: str) -> BenchmarkSpec:
    spec = getattr(importlib.import_module(module_name), "SPEC", None)
    if not isinstance(spec, BenchmarkSpec):
        raise TypeError(f"{module_name} declares no SPEC (a BenchmarkSpec instance)")
    return spec


#: The plug-in root: one folder per benchmark (and the scene engine some of them share).
PLUGIN_ROOT = "plugins"


def plugin_folders() -> list[Path]:
    """Every package under the plug-in root, benchmark or not (the project installs each as an app,
    for its templates, static files and commands)."""
    root = Path(importlib.util.find_spec(PLUGIN_ROOT).origin).parent
    return sorted(root / entry.name for entry in pkgutil.iter_modules([str(root)]) if entry.ispkg)


def built_in_modules() -> list[str]:
    """The spec modules of the plug-in root's benchmarks (a folder with a spec.py is one)."""
    return [
        f"{PLUGIN_ROOT}.{folder.name}.spec" for folder in plugin_folders() if (folder / "spec.py").is_file()
    ]


def load() -> None:
    """Find the benchmarks, once: the registry is complete before anyone reads it."""
    global _loaded
    if _loaded:
        return
    with _lock:
        if _loaded:
            return
        extra = [name.strip() for name in os.environ.get(PLUGINS_VARIABLE, "").split(",") if name.strip()]
        for module_name in [*built_in_modules(), *extra]:
            add(check_name(spec_from_module(module_name)))
        _loaded = True


def check_name(spec: BenchmarkSpec) -> BenchmarkSpec:
    if not spec.name or spec.name != spec.name.lower() or not spec.name.isidentifier():
        raise ValueError(f"a benchmark's name must be a lower-case identifier, got {spec.name!r}")
    return spec


def add(spec: BenchmarkSpec) -> None:
    with _lock:
        unregister(spec.name)
        _specs[spec.name] = spec
        for alias in spec.aliases:
            _aliases[alias.lower()] = spec.name


def register(spec: BenchmarkSpec) -> BenchmarkSpec:
    """Add a benchmark (replacing one of the same name); returns it."""
    check_name(spec)
    load()
    add(spec)
    return spec


def unregister(name: str) -> None:
    spec = _specs.pop(name, None)
    if spec is not None:
        for alias in spec.aliases:
            _aliases.pop(alias.lower(), None)


def specs() -> list[BenchmarkSpec]:
    """Every benchmark, ordered by title."""
    load()
    return sorted(_specs.values(), key=lambda spec: spec.title.lower())


def names() -> list[str]:
    return [spec.name for spec in specs()]


def choices() -> list[tuple[str, str]]:
    """(name, title) pairs for forms."""
    return [(spec.name, spec.title) for spec in specs()]


def get(name: str) -> BenchmarkSpec:
    """The spec of a benchmark named by its name or an alias; UnknownBenchmark otherwise."""
    load()
    key = name.strip().lower()
    key = _aliases.get(key, key)
    if key not in _specs:
        raise UnknownBenchmark(f"unknown benchmark {name!r} (expected one of {', '.join(names())})")
    return _specs[key]


def canonical_name(name: str) -> str:
    return get(name).name


def scenes_titles() -> str:
    """The benchmarks that have a separate scenes file, named for help texts."""
    return " or ".join(spec.title for spec in specs() if spec.has_scenes)
