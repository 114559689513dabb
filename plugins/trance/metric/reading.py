"""A data.jsonl read for Event / View scoring as arrays (`read_sample_batches`): records are
parsed, checked and encoded CHUNK at a time and gathered into batches of arrays, so that the
objects of each state are never walked one by one in Python.

Why: scoring 60,000 samples from a file spent most of its time after the JSON parse touching
the 1.2 million parsed objects twice: once to check them (`formats.quick_check`, a Python loop
per object) and once, a batch of 4,096 samples later, to encode them (`encoding.encode_states`),
when they had long left the processor's cache. Here a few C-level maps over a chunk of records,
right after their parse, both check and encode them, accepting only what `formats.quick_check`
accepts. A chunk with any record they cannot vouch for goes through the format module's own
checks one record at a time, exactly as `formats.iter_samples` reads the file, so every fault is
named as `formats.parse` names it and a faulty file gives no number.
plugins/trance/tests/test_reading.py holds the two paths to each other.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import IO, Any

import numpy as np
import orjson

from benchmarks.records import (
    FormatError,
    RecordChecker,
    RecordError,
    RecordErrors,
    load_json_lines,
)
from plugins.trance.formats import (
    GRID_MAX,
    GRID_MIN,
    MAX_STEPS,
    MIN_STEPS,
    MOVE_TYPES,
    OBJECTS_PER_STATE,
    RESERVED_FIELDS,
    STATES,
    check_record,
    quick_check,
)
from plugins.trance.metric.encoding import (
    CATEGORY_FIELDS,
    OBJECT_KIND_CODES,
    OBJECT_KINDS,
    PAIRS,
    EncodedAnswers,
    EncodedStates,
    Sample,
)


class IdxLabels(Sequence[str]):
    """ "idx 12" for each sample of a batch, made only when asked for (error messages are rare)."""

    def __init__(self, idxs: Sequence[Any]) -> None:
        self.idxs = idxs

    def __len__(self) -> int:
        return len(self.idxs)

    def __getitem__(self, number: Any) -> Any:
        if isinstance(number, slice):
            return [f"idx {idx}" for idx in self.idxs[number]]
        return f"idx {self.idxs[number]}"


@dataclass(slots=True)
class EncodedSamples:
    """A batch of samples as the Event / View scoring needs them: each sample's idx and label,
    its initial and true final states, and its true steps."""

    idxs: list[Any]
    labels: Sequence[str]
    initial: EncodedStates
    final: EncodedStates
    truth: EncodedAnswers


class SampleBatches:
    """The batches of a ground-truth file, each a list of checked sample dicts or EncodedSamples
    (`read_sample_batches`); iterated once. A class of its own so that the Event / View scoring
    knows it gets batches, not samples."""

    def __init__(self, batches: Iterator[list[Sample] | EncodedSamples]) -> None:
        self.batches = batches

    def __iter__(self) -> Iterator[list[Sample] | EncodedSamples]:
        return self.batches


def read_sample_batches(data: bytes | IO[bytes], *, size: int, source: str = "") -> SampleBatches:
    """The samples of a data.jsonl, about `size` at a time, as `formats.iter_samples` reads them
    (the same checks, the same errors in the same order, no batch once a record is bad, one
    FormatError at the end naming every fault). Records are checked and encoded CHUNK at a time
    (`encode_checked_chunk`) and come as EncodedSamples of `size` samples; a chunk it cannot
    vouch for is checked one sample at a time and comes as the list of its sample dicts."""
    return SampleBatches(_sample_batches(data, size, source))


#: Records read, checked and encoded at a time: few enough that their parsed objects are still in
#: the processor's cache when they are read again, right after the parse (read back from memory,
#: as a batch of thousands is, the same work takes three times as long).
CHUNK = 16


def label_of(label: int | str) -> str:
    """A record's label: "line N" (a stream's records are labelled by their line number)."""
    return label if isinstance(label, str) else f"line {label}"


def record_chunks(data: bytes | IO[bytes], source: str) -> Iterator[tuple[Sequence[int | str], list[Any]]]:
    """The records of a JSON Lines file, CHUNK at a time, each chunk with its records' labels,
    read and reported as `load_json_lines` (bytes) or `stream_json_lines` (an open file) does:
    blank lines skipped, every line that is not JSON named, a stream's in a FormatError at its
    end, after which no more records come. A stream is parsed a chunk of lines at a time, and a
    chunk with a blank or broken line again one line at a time, to name it."""
    if isinstance(data, bytes | bytearray):
        records = load_json_lines(data, source=source)
        for start in range(0, len(records), CHUNK):
            part = records[start : start + CHUNK]
            yield [label for label, _ in part], [raw for _, raw in part]
        return
    errors = RecordErrors()
    loads = orjson.loads
    last = 0
    while lines := list(itertools.islice(data, CHUNK)):
        first, last = last + 1, last + len(lines)
        if not errors and not any(map(bytes.isspace, lines)):
            try:
                yield range(first, last + 1), list(map(loads, lines))
                continue
            except orjson.JSONDecodeError:
                pass
        labels, raws = [], []
        for number, line in enumerate(lines, start=first):
            if not line.strip():
                continue
            try:
                value = loads(line)
            except orjson.JSONDecodeError as error:
                errors.append(
                    RecordError(f"line {number}", f"column {error.colno}", f"not valid JSON: {error.msg}")
                )
                continue
            if not errors:
                labels.append(number)
                raws.append(value)
        if raws:
            yield labels, raws
    if errors:
        raise FormatError(errors, source=source)


def _sample_batches(
    data: bytes | IO[bytes], size: int, source: str
) -> Iterator[list[Sample] | EncodedSamples]:
    errors = RecordErrors()
    seen: dict[int, int | str] = {}
    batch = BatchBuilder()
    try:
        for labels, raws in record_chunks(data, source):
            encoded = None if errors else encode_checked_chunk(raws)
            if encoded is not None:
                idxs = encoded.idxs
                if seen.keys().isdisjoint(idxs) and len(set(idxs)) == len(idxs):
                    seen.update(zip(idxs, labels, strict=True))
                    batch.add(encoded)
                    if len(batch.idxs) >= size:
                        yield batch.build()
                        batch = BatchBuilder()
                    continue
                for label, idx in zip(labels, idxs, strict=True):
                    if idx in seen:
                        errors.append(
                            RecordError(
                                label_of(label),
                                "idx",
                                f"duplicate id '{idx}' (first at {label_of(seen[idx])})",
                            )
                        )
                    else:
                        seen[idx] = label
                continue
            checked = []
            for label, raw in zip(labels, raws, strict=True):
                if not quick_check(raw) and not check_record(raw, RecordChecker(errors, label_of(label))):
                    continue
                idx = raw["idx"]
                if idx in seen:
                    errors.append(
                        RecordError(
                            label_of(label), "idx", f"duplicate id '{idx}' (first at {label_of(seen[idx])})"
                        )
                    )
                    continue
                seen[idx] = label
                checked.append(raw)
            if not errors:
                if batch.idxs:
                    yield batch.build()
                    batch = BatchBuilder()
                if checked:
                    yield checked
    except FormatError as error:  # lines that are not JSON, found at the end of a streamed file
        errors.extend(error.errors)
    if errors:
        raise FormatError(errors, source=source)
    if batch.idxs:
        yield batch.build()


@dataclass(slots=True)
class ChunkArrays:
    """What a chunk of checked records leaves for scoring: each record's idx, the kind codes
    (rows of encoding.OBJECT_KIND_CODES) and the coordinates of the objects of its two states
    (initial, final, initial, ... in record order), and its true steps (their number, object
    indexes and pair codes)."""

    idxs: list[int]
    kinds: np.ndarray
    coordinates: np.ndarray
    lengths: list[int]
    objects: list[int]
    codes: list[int]


class BatchBuilder:
    """Chunks gathered into one batch of EncodedSamples."""

    def __init__(self) -> None:
        self.idxs: list[int] = []
        self.chunks: list[ChunkArrays] = []

    def add(self, chunk: ChunkArrays) -> None:
        self.idxs += chunk.idxs
        self.chunks.append(chunk)

    def build(self) -> EncodedSamples:
        chunks = self.chunks
        truth = EncodedAnswers.from_flat(
            *(
                np.array(
                    list(itertools.chain.from_iterable(getattr(chunk, name) for chunk in chunks)),
                    dtype=np.int64,
                )
                for name in ("lengths", "objects", "codes")
            )
        )
        count = len(self.idxs)
        categories = OBJECT_KIND_CODES[np.concatenate([chunk.kinds for chunk in chunks])].reshape(
            count, STATES, OBJECTS_PER_STATE, len(CATEGORY_FIELDS)
        )
        coordinates = np.concatenate([chunk.coordinates for chunk in chunks]).reshape(
            count, STATES, OBJECTS_PER_STATE, 2
        )
        initial, final = (
            EncodedStates(
                np.ascontiguousarray(categories[:, state]),
                np.ascontiguousarray(coordinates[:, state, :, 0]),
                np.ascontiguousarray(coordinates[:, state, :, 1]),
            )
            for state in (0, STATES - 1)
        )
        return EncodedSamples(self.idxs, IdxLabels(self.idxs), initial, final, truth)


def json_keys(*names: str) -> list[str]:
    """The field names as the str objects orjson gives parsed dicts as keys. orjson keeps one
    object per short key, and a dict lookup by the very key object skips comparing the strings:
    a fifth of the cost of reading the fields of 1.2 million objects. (Were orjson to hand out
    another object, lookups would only be slower.)"""
    return list(orjson.loads(orjson.dumps(dict.fromkeys(names, 0))))


def fields(*names: str) -> itemgetter:
    return itemgetter(*json_keys(*names))


_idx = fields("idx")
_states = fields("states")
_objects = fields("objects")
_images = fields("images")
_transformations = fields("transformations")
_object_kind = fields(*CATEGORY_FIELDS)
_object_position = fields("position")
_step_object = fields("obj_idx")
_first, _second = itemgetter(0), itemgetter(1)
#: Bytes that are not part of a number in the JSON of a list of [x, y] integers, as spaces.
_NOT_NUMBER = bytes(range(256)).translate(bytes.maketrans(b"[],", b"   "))
_NUMBER_BYTES = b"0123456789-"


def encode_checked_chunk(raws: Sequence[Any]) -> ChunkArrays | None:
    """A few parsed records checked and encoded at once, or None when any of them might be
    faulty. Accepts only records that `formats.quick_check` accepts (the common case), so that
    None means no more than "look closer, one sample at a time"."""
    try:
        if set(map(type, raws)) != {dict}:
            return None
        idxs = list(map(_idx, raws))
        if set(map(type, idxs)) != {int}:
            return None
        for name in RESERVED_FIELDS:
            if any(map(operator.contains, raws, itertools.repeat(name))):
                return None
        states = list(map(_states, raws))
        if set(map(type, states)) != {list} or set(map(len, states)) != {STATES}:
            return None
        objects = checked_objects(list(itertools.chain.from_iterable(states)))
        truth = checked_steps(list(map(_transformations, raws)))
    except (KeyError, TypeError, ValueError, OverflowError, AttributeError):
        return None
    if objects is None or truth is None:
        return None
    return ChunkArrays(idxs, *objects, *truth)


def checked_objects(states: list[Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """The kind codes and the (N, 2) coordinates of the objects of states (dicts of objects and
    images), or None unless each state is as `formats.quick_check` wants it: 10 objects of known
    values at integer positions on the grid, and a non-empty dict of images naming files."""
    if set(map(type, states)) != {dict}:
        return None
    object_lists = list(map(_objects, states))
    images = list(map(_images, states))
    if set(map(type, object_lists)) != {list} or set(map(len, object_lists)) != {OBJECTS_PER_STATE}:
        return None
    if set(map(type, images)) != {dict} or not all(images):
        return None
    if set(map(type, itertools.chain.from_iterable(map(dict.values, images)))) != {str}:
        return None
    objects = list(itertools.chain.from_iterable(object_lists))
    kinds = np.fromiter(
        map(OBJECT_KINDS.__getitem__, map(_object_kind, objects)), dtype=np.int64, count=len(objects)
    )
    coordinates = checked_positions(list(map(_object_position, objects)))
    if coordinates is None:
        return None
    return kinds, coordinates


def checked_positions(positions: list[Any]) -> np.ndarray | None:
    """The (N, 2) int64 array of N positions, or None unless each is a list of two integers (not
    true or false, not floats) inside the grid.

    Read through their JSON: orjson writes a list of such lists as ``[[x,y],[x,y],...]`` and
    nothing else does, so one comparison of the bytes left once the digits and minus signs are
    taken out checks every position's shape and types, and numpy reads the numbers: a few
    operations on the bytes of the chunk, none per object."""
    text = orjson.dumps(positions)
    if text.translate(None, _NUMBER_BYTES) != b"[" + b"[,]," * (len(positions) - 1) + b"[,]]":
        return None
    # A number beyond int64 (orjson writes up to 2**64 - 1) is read as int64's extreme, as C's
    # strtoll reads it, and fails the bounds.
    coordinates = np.fromstring(text.translate(_NOT_NUMBER), dtype=np.int64, sep=" ")
    if len(coordinates) != 2 * len(positions):
        return None
    if len(coordinates) and (coordinates.min() < GRID_MIN or coordinates.max() > GRID_MAX):
        return None
    return coordinates.reshape(-1, 2)


def checked_steps(step_lists: list[Any]) -> tuple[list[int], list[int], list[int]] | None:
    """Each sample's number of true steps, and the object index and pair code of every step, or
    None unless every step is as `formats.quick_check` wants it: 1 to 4 steps a sample, each an
    object index in 0..9, a known (attribute, value) pair, non-empty options of the same
    attribute, and a move type for a move."""
    if set(map(type, step_lists)) != {list}:
        return None
    lengths = list(map(len, step_lists))
    if min(lengths) < MIN_STEPS or max(lengths) > MAX_STEPS:
        return None
    steps = list(itertools.chain.from_iterable(step_lists))
    objects = list(map(_step_object, steps))
    if set(map(type, objects)) != {int} or min(objects) < 0 or max(objects) >= OBJECTS_PER_STATE:
        return None
    codes = list(
        map(
            _COMMON_STEPS.get,
            map(orjson.dumps, zip(map(_step_fields, steps), map(_step_type, steps), strict=True)),
        )
    )
    if None in codes:
        codes = [
            checked_step_code(step) if code is None else code for step, code in zip(steps, codes, strict=True)
        ]
        if None in codes:
            return None
    return lengths, objects, codes


_step_fields = fields("attr", "val", "options")
_step_type = operator.methodcaller("get", *json_keys("type"))
#: The JSON of a common true step's ((attr, val, options), type) to its pair code: a step whose
#: only option is its own value, a move with each move type and any other step with none. Most
#: steps are found here by one lookup; the others are checked by `checked_step_code`.
_COMMON_STEPS = {
    orjson.dumps(((attr, value, [value]), move_type)): code
    for code, (attr, value) in enumerate(PAIRS)
    for move_type in (MOVE_TYPES if attr == "position" else (None,))
}


def checked_step_code(step: dict[str, Any]) -> int | None:
    """The pair code of a true step whose value and options `formats.quick_check` accepts, else
    None (a move's value and options are [direction, 1 or 2] lists, the others strings).

    Read through their JSON, which orjson writes the same for every valid value (a step of 2.0
    or true, or a number for a string, is written otherwise): the value is looked up by the
    JSON of (attr, val), and the options, often several for a move out of view, by the pieces
    of their list's JSON between the separators. Those pieces are each a valid value's JSON only
    when the list is a list of valid values (its JSON is then exactly theirs, joined)."""
    attr, options = step["attr"], step["options"]
    if type(options) is not list:
        return None
    code = _PAIR_CODES_BY_JSON.get(orjson.dumps((attr, step["val"])))
    if code is None or (attr == "position" and step.get("type") not in MOVE_TYPES):
        return None
    opener, separator, closer = (b"[[", b"],[", b"]]") if attr == "position" else (b"[", b",", b"]")
    text = orjson.dumps(options)
    if not (text.startswith(opener) and text.endswith(closer)):
        return None
    if not _OPTION_PIECES[attr].issuperset(text[len(opener) : -len(closer)].split(separator)):
        return None
    return code


#: The JSON of each valid (attr, val) to its pair code, and of each attribute's valid values as
#: they stand in the JSON of a list of them (a move without its brackets).
_PAIR_CODES_BY_JSON = {orjson.dumps(pair): code for code, pair in enumerate(PAIRS)}
_OPTION_PIECES = {
    attribute: frozenset(
        orjson.dumps(value)[1:-1] if attr == "position" else orjson.dumps(value)
        for attr, value in PAIRS
        if attr == attribute
    )
    for attribute in dict.fromkeys(attr for attr, _ in PAIRS)
}
