"""The shapes every benchmark's format module reads into and writes from.

Pure Python, no Django: the import command, the Celery import job, the web upload and the
tests all go through the same functions. A format module turns one official record into a
`CatalogRecord` (what people may be shown, apart from the ground truth) and back again, and
reports every bad record it finds as a `RecordError` naming where it is and which field is at
fault, so that an import either loads a whole file or nothing.

The package, by concern: `errors` (RecordError, RecordErrors, FormatError), `shapes` (the
records a file becomes), `checks` (RecordChecker and the JSON type names), `reading` (whole
documents and JSON Lines), `streaming` (files read a record at a time), `converting` (records
converted and checked, all-or-nothing) and `writing` (official files written back). Every name
is imported here, so that `benchmarks.records` offers what the single module did; the sizes a
streamed file is read by are defined here, and read from here as it is read.
"""

from __future__ import annotations

from benchmarks.records.checks import (
    JSON_NAMES,
    RecordChecker,
    is_instance,
    kind_name,
    type_name,
)
from benchmarks.records.converting import (
    PreparedFile,
    check_unique,
    convert_records,
    iter_converted,
    iter_official,
    parse_prepared,
    split_fields,
)
from benchmarks.records.errors import (
    ERRORS_KEPT,
    ERRORS_SHOWN,
    ERRORS_STORED,
    INDEX,
    NUL_MESSAGE,
    FormatError,
    RecordError,
    RecordErrors,
    nul_fields,
)
from benchmarks.records.reading import (
    indexed,
    load_json,
    load_json_lines,
    load_json_list,
    paused_gc,
)
from benchmarks.records.shapes import (
    CatalogRecord,
    Converted,
    ParsedFile,
    ParsedScenes,
    SceneRecord,
)
from benchmarks.records.streaming import (
    INTEGER_KEY,
    KEYED_SPLIT_LIMIT,
    OBJECT_END,
    RECORD_LIMIT,
    STREAM_CHUNK,
    WHITE,
    first_byte,
    ijson_elements,
    split_objects,
    stream_json_lines,
    stream_json_list,
    stream_json_object,
    unparsed,
)
from benchmarks.records.writing import (
    dump_json,
    serialize_json_lines,
    serialize_json_list,
)

__all__ = [
    "CatalogRecord",
    "Converted",
    "ERRORS_KEPT",
    "ERRORS_SHOWN",
    "ERRORS_STORED",
    "FormatError",
    "INDEX",
    "INTEGER_KEY",
    "JSON_NAMES",
    "KEYED_SPLIT_LIMIT",
    "NUL_MESSAGE",
    "OBJECT_END",
    "ParsedFile",
    "ParsedScenes",
    "PreparedFile",
    "RECORD_LIMIT",
    "RecordChecker",
    "RecordError",
    "RecordErrors",
    "STREAM_CHUNK",
    "SceneRecord",
    "WHITE",
    "check_unique",
    "convert_records",
    "dump_json",
    "first_byte",
    "ijson_elements",
    "indexed",
    "is_instance",
    "iter_converted",
    "iter_official",
    "kind_name",
    "load_json",
    "load_json_lines",
    "load_json_list",
    "nul_fields",
    "parse_prepared",
    "paused_gc",
    "serialize_json_lines",
    "serialize_json_list",
    "split_fields",
    "split_objects",
    "stream_json_lines",
    "stream_json_list",
    "stream_json_object",
    "type_name",
    "unparsed",
]
