"""Whole JSON documents and JSON Lines read into Python values, a syntax error becoming a
FormatError with its place, and `paused_gc` for the time a big file becomes objects.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson

from benchmarks.records.checks import type_name
from benchmarks.records.errors import FormatError, RecordError, RecordErrors


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause automatic garbage collection while a big file becomes Python objects and rows.

    An import builds millions of containers that all stay alive, and every collection run
    walks them again: on 100,000 questions that triples the load time. The previous state
    is restored, so a caller that had collection off keeps it off.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_json(data: bytes, *, source: str) -> Any:
    """Parse a whole JSON document, turning a syntax error into a FormatError with its place."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise FormatError(
            [RecordError(f"line {error.lineno}", f"column {error.colno}", f"not valid JSON: {error.msg}")],
            source=source,
        ) from None


def load_json_lines(data: bytes, *, source: str) -> list[tuple[str, Any]]:
    """Parse JSON Lines into (label, value) pairs; blank lines are skipped, bad lines all reported."""
    values: list[tuple[str, Any]] = []
    errors = RecordErrors()
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            values.append((f"line {number}", orjson.loads(line)))
        except orjson.JSONDecodeError as error:
            errors.append(
                RecordError(f"line {number}", f"column {error.colno}", f"not valid JSON: {error.msg}")
            )
    if errors:
        raise FormatError(errors, source=source)
    return values


def indexed(values: list[Any]) -> list[tuple[str, Any]]:
    """Label the elements of a JSON list as "record 0", "record 1", ... (0-based, like the file)."""
    return [(f"record {index}", value) for index, value in enumerate(values)]


def load_json_list(data: bytes | str | list[Any], *, source: str, what: str) -> list[Any]:
    """A document that must be a JSON list of `what`; an already-parsed list passes through."""
    if isinstance(data, str):
        data = data.encode()
    document = load_json(data, source=source) if isinstance(data, bytes) else data
    if not isinstance(document, list):
        raise FormatError(
            [RecordError("file", "top level", f"expected a JSON list of {what}, got {type_name(document)}")],
            source=source,
        )
    return document
