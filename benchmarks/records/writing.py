"""Official files written back: JSON as UTF-8 bytes, and lists or JSON Lines a record at a
time, so that exports of large datasets stream.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson


def dump_json(value: Any) -> bytes:
    """Official files are written as UTF-8 JSON with non-ASCII text kept readable."""
    return orjson.dumps(value)


def serialize_json_list(records: Iterable[Any]) -> Iterator[bytes]:
    """A JSON list written in chunks, so exports of large datasets stream instead of piling up."""
    yield b"["
    for index, record in enumerate(records):
        yield (b"," if index else b"") + dump_json(record)
    yield b"]"


def serialize_json_lines(records: Iterable[Any]) -> Iterator[bytes]:
    for record in records:
        yield dump_json(record) + b"\n"
