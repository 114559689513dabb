"""What is wrong with a file: a `RecordError` per fault, naming the record and the field,
`RecordErrors` keeping the first of them and counting the rest by field, and `FormatError`,
the file refused with all of them. Also NUL, the one character no record's text may hold.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

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
