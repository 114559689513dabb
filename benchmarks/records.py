"""The shapes every benchmark's format module reads into and writes from.

Pure Python, no Django: the import command, the Celery import job, the web upload and the
tests all go through the same functions. A format module turns one official record into a
`CatalogRecord` (what people may be shown, apart from the ground truth) and back again, and
reports every bad record it finds as a `RecordError` naming where it is and which field is at
fault, so that an import either loads a whole file or nothing.
"""

from __future__ import annotations

import gc
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any, TypeVar

import ijson
import orjson

#: How many record errors a FormatError message spells out before summarising the rest.
ERRORS_SHOWN = 50
#: How many errors a file's error list keeps in full; the rest are only counted, by field.
ERRORS_KEPT = 1000
#: How many lines of errors an import job, an API answer or a page keeps (summary included).
ERRORS_STORED = 100


@dataclass(frozen=True, slots=True)
class RecordError:
    """One problem in one record: `record` says where ("line 3", "record 12"), `field` what."""

    record: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.record}: {self.field}: {self.message}"


#: What a record's text may not hold: NUL, which no PostgreSQL text or jsonb value takes.
NUL_MESSAGE = "holds a NUL character (\\u0000), which the database cannot store: remove it"


def nul_fields(value: Any, path: str = "") -> Iterator[str]:
    """The paths (`annotation[1].answer`) of the text in a parsed record that holds NUL, keys too."""
    if isinstance(value, str):
        if "\x00" in value:
            yield path or "(the record)"
    elif isinstance(value, dict):
        for key, child in value.items():
            step = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and "\x00" in key:
                yield f"{path or '(the record)'} (a key)"
            yield from nul_fields(child, step)
    elif isinstance(value, list | tuple):
        for index, child in enumerate(value):
            yield from nul_fields(child, f"{path}[{index}]")


class RecordErrors:
    """The errors found in one file: the first `keep` in full, every one counted, by field.

    A file of a million empty records has millions of faults; keeping them all would take
    gigabytes and make pages nobody can read. `len()` is the number of faults found; iterating
    gives the kept ones, in the order found.
    """

    __slots__ = ("by_field", "kept", "keep", "last_record", "records", "total")

    def __init__(self, errors: Iterable[RecordError] = (), *, keep: int = ERRORS_KEPT) -> None:
        self.kept: list[RecordError] = []
        self.keep = keep
        self.total = 0
        self.records = 0
        self.last_record: str | None = None
        self.by_field: Counter[str] = Counter()
        self.extend(errors)

    def append(self, error: RecordError) -> None:
        self.total += 1
        if error.record != self.last_record:
            self.records += 1
            self.last_record = error.record
        self.by_field[INDEX.sub("[]", error.field)] += 1
        if len(self.kept) < self.keep:
            self.kept.append(error)

    def extend(self, errors: Iterable[RecordError]) -> None:
        for error in errors:
            self.append(error)

    def __len__(self) -> int:
        return self.total

    def __bool__(self) -> bool:
        return self.total > 0

    def __iter__(self) -> Iterator[RecordError]:
        return iter(self.kept)

    def __getitem__(self, index):
        return self.kept[index]

    def __eq__(self, other: object) -> bool:
        """Equal to a list holding the same faults (all of them kept)."""
        if isinstance(other, RecordErrors):
            other = other.kept if other.total == len(other.kept) else None
        return isinstance(other, list) and self.total == len(self.kept) and self.kept == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RecordErrors({self.kept!r}, total={self.total})"


#: Element indices in a field's path, folded when faults are counted by field ("objects[3].color").
INDEX = re.compile(r"\[\d+\]")


class FormatError(ValueError):
    """A file that cannot be loaded, with every bad record listed (the first thousand in full)."""

    def __init__(self, errors: Iterable[RecordError], *, source: str = "") -> None:
        self.errors = errors if isinstance(errors, RecordErrors) else RecordErrors(errors)
        self.source = source
        super().__init__(self.describe())

    def summary(self, limit: int = ERRORS_STORED) -> list[str]:
        """Lines to keep or send: the first faults with their places, then counts by field."""
        errors = self.errors
        if len(errors) <= limit:
            return [str(error) for error in errors]
        shown = [str(error) for error in errors[: limit - 2]]
        by_field = ", ".join(f"{field} ({count})" for field, count in errors.by_field.most_common(20))
        return [
            *shown,
            f"... and {len(errors) - len(shown)} more problems in {errors.records} records in all",
            f"problems by field: {by_field}",
        ]

    def describe(self, limit: int = ERRORS_SHOWN) -> str:
        where = f"{self.source}: " if self.source else ""
        count = len(self.errors)
        records = self.errors.records
        lines = [
            f"{where}{count} problem{'s' if count != 1 else ''} in {records} record{'s' if records != 1 else ''}, "
            "nothing was loaded"
        ]
        lines += [f"  {error}" for error in self.errors[:limit]]
        if count > limit:
            lines.append(f"  ... and {count - limit} more")
        return "\n".join(lines)


@dataclass(slots=True)
class CatalogRecord:
    """One item as the catalog stores it.

    `payload` is what annotators and testers may see; `ground_truth` never leaves the server
    before an answer is final. `media` maps a role ("image", "init.Camera_Center") to a file
    name as the official record references it. `scene` names the shared scene (an image with its
    scene graph) that several items can point at, as the questions about one image do.
    """

    external_id: str
    payload: dict[str, Any]
    ground_truth: dict[str, Any]
    media: dict[str, str] = field(default_factory=dict)
    scene: str | None = None


@dataclass(slots=True)
class SceneRecord:
    """A scene shared by several items: its external id, its data and its image file name."""

    external_id: str
    data: dict[str, Any]
    image: str | None = None


#: Items and scenes both go through convert_records: all it needs is their external id.
Converted = TypeVar("Converted", CatalogRecord, SceneRecord)


@dataclass(slots=True)
class ParsedFile:
    """A whole official file: dataset-level facts needed to write it back, and its records."""

    meta: dict[str, Any]
    records: list[CatalogRecord]


@dataclass(slots=True)
class ParsedScenes:
    meta: dict[str, Any]
    scenes: list[SceneRecord]


class RecordChecker:
    """Collects the errors of one record while its fields are read.

    Each `get_*` returns the value when it is valid and `None` after noting an error, so a
    format module reads a record top to bottom and reports all its faults at once.
    """

    __slots__ = ("errors", "label")

    def __init__(self, errors: list[RecordError] | RecordErrors, label: str) -> None:
        self.errors = errors
        self.label = label

    def fail(self, field_name: str, message: str) -> None:
        self.errors.append(RecordError(self.label, field_name, message))

    def is_object(self, value: Any, path: str = "record") -> bool:
        """True when `value` is a JSON object; otherwise notes the error and returns False."""
        if isinstance(value, dict):
            return True
        self.fail(path, f"expected an object, got {type_name(value)}")
        return False

    def objects(self, values: Iterable[Any] | None, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """(path of the element, element) for each JSON object in `values`; any other element
        is noted as an error and skipped."""
        for index, value in enumerate(values or ()):
            element = f"{path}[{index}]"
            if self.is_object(value, element):
                yield element, value

    def get(self, record: Any, key: str, kind: type | tuple[type, ...], path: str = "") -> Any:
        """The value of `record[key]` when present and of type `kind`."""
        name = f"{path}.{key}" if path else key
        if not isinstance(record, dict):
            self.fail(path or "record", f"expected an object, got {type_name(record)}")
            return None
        if key not in record:
            self.fail(name, "missing field")
            return None
        value = record[key]
        if not is_instance(value, kind):
            self.fail(name, f"expected {kind_name(kind)}, got {type_name(value)}")
            return None
        return value

    def get_choice(self, record: Any, key: str, choices: Iterable[str], path: str = "") -> Any:
        value = self.get(record, key, str, path)
        if value is not None and value not in choices:
            name = f"{path}.{key}" if path else key
            allowed = ", ".join(sorted(choices))
            self.fail(name, f"unknown value {value!r} (expected one of {allowed})")
            return None
        return value

    def get_list(
        self,
        record: Any,
        key: str,
        item_kind: type | tuple[type, ...],
        path: str = "",
        *,
        length: int | None = None,
    ) -> list[Any] | None:
        """A list whose elements are all of `item_kind`, of exactly `length` when given."""
        values = self.get(record, key, list, path)
        if values is None:
            return None
        name = f"{path}.{key}" if path else key
        if length is not None and len(values) != length:
            self.fail(name, f"expected {length} elements, got {len(values)}")
            return None
        for index, value in enumerate(values):
            if not is_instance(value, item_kind):
                self.fail(f"{name}[{index}]", f"expected {kind_name(item_kind)}, got {type_name(value)}")
                return None
        return values

    def get_lists(
        self, record: Any, key: str, item_kind: type | tuple[type, ...], path: str = ""
    ) -> list[list[Any]] | None:
        """A list of lists whose elements are all of `item_kind` (program outputs,
        relationships); every bad inner list is noted, and None returned if there was one."""
        values = self.get(record, key, list, path)
        if values is None:
            return None
        name = f"{path}.{key}" if path else key
        good = True
        for index, inner in enumerate(values):
            if not isinstance(inner, list):
                self.fail(f"{name}[{index}]", f"expected a list, got {type_name(inner)}")
                good = False
                continue
            for number, value in enumerate(inner):
                if not is_instance(value, item_kind):
                    self.fail(
                        f"{name}[{index}][{number}]",
                        f"expected {kind_name(item_kind)}, got {type_name(value)}",
                    )
                    good = False
                    break
        return values if good else None


def is_instance(value: Any, kind: type | tuple[type, ...]) -> bool:
    """isinstance that does not take JSON's true/false for numbers."""
    if isinstance(value, bool):
        return kind is bool or (isinstance(kind, tuple) and bool in kind)
    return isinstance(value, kind)


def kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(JSON_NAMES.get(k, k.__name__) for k in kinds)


def type_name(value: Any) -> str:
    return JSON_NAMES.get(type(value), type(value).__name__)


JSON_NAMES: dict[type, str] = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true/false",
    list: "a list",
    dict: "an object",
    type(None): "null",
}


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


#: Bytes read at a time from a streamed file.
STREAM_CHUNK = 1 << 20


def first_byte(stream: IO[bytes]) -> bytes:
    """The first byte that is not white space (b"" for an empty file); the stream is rewound."""
    start = stream.tell()
    while chunk := stream.read(4096):
        stripped = chunk.lstrip()
        if stripped:
            stream.seek(start)
            return stripped[:1]
    stream.seek(start)
    return b""


#: The end of an object inside a list: "}" then "," or "]" (possibly inside a string or a nested
#: object: a candidate, checked by parsing).
OBJECT_END = re.compile(rb"}[ \t\r\n]*([,\]])")
WHITE = b" \t\r\n"
#: The longest record a streamed list may hold (JSON broken early in a file is found here, not
#: after reading the rest of it into memory).
RECORD_LIMIT = 64 << 20
#: A record that has not parsed after this many bytes is not found by its first key: every
#: candidate end is tried from then on.
KEYED_SPLIT_LIMIT = 1 << 20


def stream_json_list(stream: IO[bytes], *, source: str, what: str) -> Iterator[tuple[str, Any]]:
    """The elements of a file that is one JSON list, parsed one at a time, as ("record N", value)
    pairs: memory holds a chunk of the file and one record, not the document. A file that is not
    a list, or JSON that breaks off, raises FormatError where the reader finds it, so a caller that
    writes as it reads must do so in a transaction it can roll back.

    A list of objects (every official list of records) is cut at each "}," that ends an element
    and each element parsed by orjson: a candidate end is taken only where the next element starts
    with the first element's first key, and checked by parsing (a "}" inside a string or a nested
    object does not parse as a whole element); 2.4x quicker than an incremental parser here. Other
    lists go through ijson's C parser."""
    if first_byte(stream) != b"[":
        raise FormatError(
            [RecordError("file", "top level", f"expected a JSON list of {what}")], source=source
        )
    start = stream.tell()
    head = stream.read(4096).lstrip(WHITE)[1:].lstrip(WHITE)
    stream.seek(start)
    elements = split_objects(stream) if head[:1] == b"{" else ijson_elements(stream)
    index = 0
    try:
        for index, value in enumerate(elements):
            yield f"record {index}", value
    except (ijson.JSONError, ValueError) as error:
        raise FormatError(
            [RecordError(f"after record {index}", f"byte {stream.tell()}", f"not valid JSON: {error}")],
            source=source,
        ) from None


def ijson_elements(stream: IO[bytes]) -> Iterator[Any]:
    return ijson.items(stream, "item", use_float=True, buf_size=STREAM_CHUNK)


def split_objects(stream: IO[bytes]) -> Iterator[Any]:
    """The objects of a JSON list, read chunk by chunk (see `stream_json_list`); ValueError when
    the document is not a well-formed list of objects."""
    buffer = stream.read(STREAM_CHUNK).lstrip(WHITE)
    start = 1  # after "["
    while start < len(buffer) and buffer[start] in WHITE:
        start += 1
    search, key, keyed = start, None, True
    keyed_end: re.Pattern[bytes] | None = None  # "}", ",", then the first key: an element's end
    while True:
        if keyed and keyed_end is not None:
            # The quick path: one search finds where the element ends (a nested object that
            # starts with the same key does not parse, and sends this element down the slow path).
            fast = keyed_end.search(buffer, search)
            if fast is not None and fast.start() - start < KEYED_SPLIT_LIMIT:
                end = fast.start() + 1
                try:
                    value = orjson.loads(buffer[start:end])
                except orjson.JSONDecodeError:
                    keyed, search = False, start
                    continue
                yield value
                start = search = fast.end() - len(key)
                continue
            if fast is None and len(buffer) - start < KEYED_SPLIT_LIMIT:
                more = stream.read(STREAM_CHUNK)
                if more:
                    buffer, search, start = buffer[start:] + more, 0, 0
                    continue
            # The last element (it ends with "]"), or one too long for the quick path: below.
        match = OBJECT_END.search(buffer, search)
        following = match.end() if match else len(buffer)
        if match is not None:
            while following < len(buffer) and buffer[following] in WHITE:
                following += 1
            if match.group(1) == b"]" and following < len(buffer):
                search = match.end()  # a list inside a record: the document's "]" ends the file
                continue
        if len(buffer) - start > RECORD_LIMIT:
            raise ValueError(unparsed(buffer[start:]) or f"a record longer than {RECORD_LIMIT >> 20} MB")
        if match is None or following + 256 > len(buffer):
            more = stream.read(STREAM_CHUNK)
            if more:
                buffer, search, start = buffer[start:] + more, search - start, 0
                continue
            if match is None:
                raise ValueError(unparsed(buffer[start:]) or "the list is not closed")
        end = match.start() + 1
        if (
            keyed
            and match.group(1) == b","
            and key is not None
            and end - start < KEYED_SPLIT_LIMIT
            and not buffer.startswith(key, following)
        ):
            search = end
            continue
        try:
            value = orjson.loads(buffer[start:end])
        except orjson.JSONDecodeError:
            if keyed and key is not None:
                # Passed over the element's real end (the next one starts with another key):
                # look again from its start at every candidate.
                keyed, search = False, start
            else:
                search = end
            continue
        if key is None:
            first = re.match(rb'\{[ \t\r\n]*"[^"\\]*"', buffer[start:end])
            key = first.group(0) if first else b"{"
            if first:
                keyed_end = re.compile(rb"\}[ \t\r\n]*,[ \t\r\n]*" + re.escape(key))
        yield value
        keyed = True
        if match.group(1) == b"]":
            rest = buffer[match.end() :] + stream.read()
            if rest.strip(WHITE):
                raise ValueError("text after the end of the list")
            return
        start = search = following


def unparsed(segment: bytes) -> str:
    """Why a piece of a list does not parse, in the parser's words."""
    try:
        orjson.loads(b"[" + segment)
    except orjson.JSONDecodeError as error:
        return error.msg
    return ""


#: A key of a streamed object whose entries are found by it (an integer written as a string).
INTEGER_KEY = rb"-?[0-9]+"


def stream_json_object(
    stream: IO[bytes], *, source: str, what: str, key: bytes = INTEGER_KEY
) -> Iterator[tuple[str, Any]]:
    """The (key, value) entries of a file that is one JSON object, read a chunk at a time:
    memory holds a chunk and its entries, not the document. Entries are cut where "," is
    followed by a key matching `key` and a ":", each cut checked by parsing the entries before it
    with orjson (a cut inside a value does not parse, and waits for the next chunk). JSON that is
    broken anywhere raises FormatError with its line and column, found by reading the file again
    from its start (the stream must be seekable)."""
    if first_byte(stream) != b"{":
        raise FormatError(
            [RecordError("file", "top level", f"expected a JSON object of {what}")], source=source
        )
    start = stream.tell()
    cut = re.compile(rb",[ \t\r\n]*\"" + key + rb"\"[ \t\r\n]*:")
    buffer = stream.read(STREAM_CHUNK).lstrip(WHITE)[1:]
    while more := stream.read(STREAM_CHUNK):
        buffer += more
        if len(buffer) > RECORD_LIMIT:
            buffer += stream.read()  # no cut for this long (keys of another shape): the rest at once
            break
        position = len(buffer)
        while (position := buffer.rfind(b",", 0, position)) > 0:
            if cut.match(buffer, position):
                break
        if position <= 0:
            continue
        try:
            entries = orjson.loads(b"{" + buffer[:position] + b"}")
        except orjson.JSONDecodeError:
            continue  # a cut inside a value, or broken JSON (found at the end)
        yield from entries.items()
        buffer = buffer[position + 1 :]
    try:
        document = orjson.loads(b"{" + buffer)
    except orjson.JSONDecodeError:
        stream.seek(start)
        load_json(stream.read(), source=source)  # raises, with the line and column
        raise FormatError(
            [RecordError("file", "top level", "entries that do not parse on their own")], source=source
        ) from None
    yield from document.items()


def stream_json_lines(stream: IO[bytes], *, source: str) -> Iterator[tuple[str, Any]]:
    """JSON Lines parsed one line at a time, as ("line N", value) pairs; blank lines are skipped.
    Every bad line is reported (FormatError at the end of the file), as `load_json_lines` does."""
    errors = RecordErrors()
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError as error:
            errors.append(
                RecordError(f"line {number}", f"column {error.colno}", f"not valid JSON: {error.msg}")
            )
            continue
        if not errors:
            yield f"line {number}", value
    if errors:
        raise FormatError(errors, source=source)


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
