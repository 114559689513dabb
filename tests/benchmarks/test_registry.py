"""The registry finds every benchmark's spec; each spec declares what the apps need."""

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import registry
from benchmarks.spec import OFFICIAL, BenchmarkSpec

ROOT = Path(__file__).resolve().parents[2]


def test_the_four_benchmarks_are_found_by_their_packages_in_title_order():
    assert registry.names() == ["clevrref", "cric", "stevqa", "trance"]
    assert [title for _, title in registry.choices()] == ["CLEVR-Ref+", "CRIC", "STE-VQA", "TRANCE"]


@pytest.mark.parametrize(
    ("alias", "name"),
    [("STE-VQA", "stevqa"), (" est-vqa ", "stevqa"), ("CLEVR-Ref+", "clevrref"), ("Trance", "trance")],
)
def test_names_and_aliases_lead_to_one_spec(alias, name):
    assert registry.canonical_name(alias) == name
    assert registry.get(alias) is registry.get(name)


def test_an_unknown_name_is_refused_with_the_known_ones():
    with pytest.raises(registry.UnknownBenchmark, match="expected one of clevrref, cric, stevqa, trance"):
        registry.get("vqa2")


@pytest.mark.parametrize("name", ["clevrref", "cric", "stevqa", "trance"])
def test_every_spec_declares_what_the_apps_ask(name):
    spec = registry.get(name)
    assert spec.title and spec.formats.FILE_DESCRIPTION and spec.extensions
    for function in ("prepare", "parse", "to_official", "serialize"):
        assert callable(getattr(spec.formats, function))
    assert spec.report_columns() and spec.plots
    assert OFFICIAL in [choice.value for choice in spec.variants]
    assert spec.setting_problem(spec.settings[0].value) is None
    assert spec.setting_problem("no-such-setting").startswith(spec.title)
    assert spec.trial and spec.region_kind in ("", "box", "quadrilateral", "mask")
    # Every method a spec overrides keeps the base class's signature.
    for attribute, value in vars(type(spec)).items():
        if inspect.isfunction(value) and hasattr(BenchmarkSpec, attribute):
            base = getattr(BenchmarkSpec, attribute)
            assert (
                value.__code__.co_varnames[: value.__code__.co_argcount]
                == base.__code__.co_varnames[: base.__code__.co_argcount]
            ), attribute


def test_setting_messages_say_what_to_choose():
    """A refusal names each choice as the form shows it, with the value to type beside it."""
    trance, cric, stevqa = (registry.get(name) for name in ("trance", "cric", "stevqa"))
    assert trance.setting_problem("") == (
        "TRANCE needs a setting: choose “Basic” ('basic'), “Event” ('event') or “View” ('view')"
    )
    assert trance.setting_problem("mono") == (
        "TRANCE takes the setting “Basic” ('basic'), “Event” ('event') or “View” ('view'): "
        "choose one of them, not 'mono'"
    )
    assert cric.setting_problem("event") == "CRIC has no settings: choose “–” (no setting), not 'event'"
    assert stevqa.setting_problem("view") == (
        "STE-VQA takes the setting “–” (no setting), “monolingual” ('mono') or “bilingual” ('bi'): "
        "choose one of them, not 'view'"
    )
    assert cric.variant_problem("paper") == (
        "CRIC has the one metric variant “official (released evaluator)” ('official'): choose it, not 'paper'"
    )
    assert stevqa.variant_problem("best") == (
        "STE-VQA has the metric variants “official (released evaluator)” ('official'), “paper” ('paper'), "
        "“official, evidence from OCR for answer-only predictions” ('ocr') or "
        "“paper, evidence from OCR for answer-only predictions” ('paper-ocr'): choose one of them, not 'best'"
    )


def test_a_spec_can_be_registered_and_removed_in_process():
    from tests.dotcount.spec import SPEC

    registry.register(SPEC)
    try:
        assert registry.get("dot-count") is SPEC and "dotcount" in registry.names()
    finally:
        registry.unregister("dotcount")
    assert "dotcount" not in registry.names()
    with pytest.raises(registry.UnknownBenchmark):
        registry.get("dot-count")


def test_a_benchmark_outside_the_package_is_loaded_from_the_environment():
    code = "from benchmarks import registry; print(' '.join(registry.names()))"
    environment = {**os.environ, registry.PLUGINS_VARIABLE: "tests.dotcount.spec"}
    shown = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True
    )
    assert shown.stdout.split() == ["clevrref", "cric", "dotcount", "stevqa", "trance"], shown.stderr


def test_a_module_without_a_spec_is_refused():
    with pytest.raises(TypeError, match="declares no SPEC"):
        registry.spec_from_module("benchmarks.records")


def test_threads_that_ask_at_once_all_find_every_benchmark(monkeypatch):
    """A web server's threads asked at once, and those behind the first saw an empty registry
    ("unknown benchmark 'trance'", found by perf/study_load.py): loading is now done by one
    thread while the others wait."""
    import threading
    import time

    from benchmarks import registry

    monkeypatch.setattr(registry, "_specs", {})
    monkeypatch.setattr(registry, "_aliases", {})
    monkeypatch.setattr(registry, "_loaded", False)
    slow = registry.spec_from_module
    monkeypatch.setattr(registry, "spec_from_module", lambda name: (time.sleep(0.02), slow(name))[1])
    barrier = threading.Barrier(8)
    found: list = []

    def ask():
        barrier.wait()
        try:
            found.append(registry.get("trance").name)
        except Exception as error:  # noqa: BLE001 - the assertion shows it
            found.append(error)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == ["trance"] * 8
