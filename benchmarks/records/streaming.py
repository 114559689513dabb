"""Files too big to hold, read a record at a time: a JSON list (`stream_json_list`), a JSON
object (`stream_json_object`) or JSON Lines (`stream_json_lines`), by the sizes below (a test
makes them small on this module to put every boundary somewhere awkward).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import IO, Any

import ijson
import orjson

from benchmarks.records.errors import FormatError, RecordError, RecordErrors
from benchmarks.records.reading import load_json

#: Bytes read at a time from a streamed file.
STREAM_CHUNK = 1 << 20
#: The longest record a streamed list may hold (JSON broken early in a file is found here, not
#: after reading the rest of it into memory).
RECORD_LIMIT = 64 << 20
#: A record that has not parsed after this many bytes is not found by its first key: every
#: candidate end is tried from then on.
KEYED_SPLIT_LIMIT = 1 << 20


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
