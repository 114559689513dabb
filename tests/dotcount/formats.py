"""Dot count's official file <-> catalog records (pure): a JSON list of
``{"id": str, "image": str, "question": str, "answer": str}``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from benchmarks.records import (
    CatalogRecord,
    ParsedFile,
    PreparedFile,
    RecordChecker,
    indexed,
    load_json_list,
    parse_prepared,
    serialize_json_list,
    split_fields,
)

FILE_DESCRIPTION = "JSON list of {id, image, question, answer}"
SHOWN = ("id", "image", "question")


def record_to_catalog(raw: Any, checker: RecordChecker) -> CatalogRecord | None:
    if not checker.is_object(raw):
        return None
    before = len(checker.errors)
    for key in ("id", "image", "question", "answer"):
        checker.get(raw, key, str)
    if len(checker.errors) > before:
        return None
    payload, hidden = split_fields(raw, SHOWN)
    return CatalogRecord(
        external_id=raw["id"], payload=payload, ground_truth=hidden, media={"image": raw["image"]}
    )


def prepare(data: bytes, *, source: str = "") -> PreparedFile:
    document = load_json_list(data, source=source, what="dot-count items")
    return PreparedFile(meta={}, labelled=indexed(document), convert=record_to_catalog, id_field="id")


def parse(data: bytes, *, source: str = "") -> ParsedFile:
    return parse_prepared(prepare(data, source=source), source=source)


def to_official(payload: dict[str, Any], ground_truth: dict[str, Any]) -> dict[str, Any]:
    return {**payload, **ground_truth}


def serialize(meta: dict[str, Any], records: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    return serialize_json_list(records)
