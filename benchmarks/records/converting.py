"""Official records converted, all-or-nothing, by a format module's converter: each checked,
duplicate ids refused, every fault of a file reported in one FormatError (`convert_records`,
`check_unique`), or one at a time as a prepared file is read (`iter_converted`,
`iter_official`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from benchmarks.records.checks import RecordChecker
from benchmarks.records.errors import FormatError, RecordError, RecordErrors
from benchmarks.records.reading import paused_gc
from benchmarks.records.shapes import CatalogRecord, Converted, ParsedFile


def iter_converted(
    labelled: Iterable[tuple[str, Any]],
    convert: Callable[[Any, RecordChecker], Converted | None],
    errors: RecordErrors,
    *,
    id_field: str = "id",
) -> Iterator[Converted]:
    """Convert records one by one, yielding the good ones and noting every fault in `errors`.

    Duplicate ids are faults too. A caller that streams the records into the database checks
    `errors` at the end and rolls back if it is not empty.
    """
    seen: dict[str, str] = {}
    for label, raw in labelled:
        checker = RecordChecker(errors, label)
        before = len(errors)
        record = convert(raw, checker)
        if record is None or len(errors) > before:
            continue
        if record.external_id in seen:
            first = seen[record.external_id]
            errors.append(
                RecordError(label, id_field, f"duplicate id {record.external_id!r} (first at {first})")
            )
            continue
        seen[record.external_id] = label
        yield record


def convert_records(
    labelled: Iterable[tuple[str, Any]],
    convert: Callable[[Any, RecordChecker], Converted | None],
    *,
    source: str,
    id_field: str = "id",
) -> list[Converted]:
    """Run a format module's record converter over a whole file, all-or-nothing.

    Returns the records only when every one is good; otherwise raises one FormatError listing
    every fault of every record.
    """
    errors = RecordErrors()
    records = list(iter_converted(labelled, convert, errors, id_field=id_field))
    if errors:
        raise FormatError(errors, source=source)
    return records


@dataclass(slots=True)
class PreparedFile:
    """A file whose document structure is read but whose records are not converted yet.

    `parse_prepared` converts them all at once; an import may instead stream them, converting
    each as it is written, so that checking and writing overlap.
    """

    meta: dict[str, Any]
    #: The records with their labels: a list, or an iterator reading them from a file as they
    #: are asked for (`streamed`; their number is then known only at the end).
    labelled: Iterable[tuple[str, Any]]
    convert: Callable[[Any, RecordChecker], CatalogRecord | None]
    #: The official name of the field holding a record's id, for duplicate-id errors.
    id_field: str = "id"
    streamed: bool = False


def iter_official(
    prepared: PreparedFile,
    to_official: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]],
    *,
    source: str,
) -> Iterator[dict[str, Any]]:
    """The records of a prepared file, each checked and in its official form, one at a time (for
    scoring as a streamed file is read). Once a record is bad none is yielded; the rest is still
    checked, and one FormatError at the end names every fault (JSON that breaks off included), so
    a caller never gets a result from a faulty file."""
    errors = RecordErrors()
    try:
        for record in iter_converted(prepared.labelled, prepared.convert, errors, id_field=prepared.id_field):
            if not errors:
                yield to_official(record.payload, record.ground_truth)
    except FormatError as error:
        errors.extend(error.errors)
    if errors:
        raise FormatError(errors, source=source)


def parse_prepared(prepared: PreparedFile, *, source: str) -> ParsedFile:
    with paused_gc():
        records = convert_records(
            prepared.labelled, prepared.convert, source=source, id_field=prepared.id_field
        )
    return ParsedFile(meta=prepared.meta, records=records)


def check_unique(
    labelled: Iterable[tuple[str, Any]],
    convert: Callable[[Any, RecordChecker], dict[str, Any] | None],
    *,
    id_field: str,
    source: str,
) -> list[dict[str, Any]]:
    """Check plain records (predictions, say) one by one; every fault and repeated id in one FormatError."""
    errors = RecordErrors()
    records: list[dict[str, Any]] = []
    first_seen: dict[Any, str] = {}
    for label, raw in labelled:
        record = convert(raw, RecordChecker(errors, label))
        if record is None:
            continue
        key = record[id_field]
        if key in first_seen:
            errors.append(
                RecordError(label, id_field, f"duplicate {id_field} {key!r} (first at {first_seen[key]})")
            )
            continue
        first_seen[key] = label
        records.append(record)
    if errors:
        raise FormatError(errors, source=source)
    return records


def split_fields(raw: dict[str, Any], shown: Iterable[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a record into the fields people may see and everything else (kept as ground truth).

    Unknown fields land on the ground-truth side: hidden by default, and written back on export.
    """
    shown = set(shown)
    payload = {key: value for key, value in raw.items() if key in shown}
    hidden = {key: value for key, value in raw.items() if key not in shown}
    return payload, hidden
