"""Fast bulk inserts for imports of hundreds of thousands of rows.

Django's bulk_create builds a model instance and runs every field's conversion per row; for a
500,000-record import that cost dominates. Rows here are plain tuples whose JSON columns are
already serialised (by orjson), written with PostgreSQL's COPY or, on SQLite (the other
database Yardstick runs on), with one prepared statement executed many times. Both run inside the caller's transaction.
"""

from __future__ import annotations

import io
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection
from django.db.models import Model


def insert_rows(model: type[Model], columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """Insert `rows` (values in `columns` order, JSON already as text) into `model`'s table."""
    table = model._meta.db_table
    if connection.vendor == "postgresql":
        copy_rows(table, columns, rows)
        return
    quote = connection.ops.quote_name
    names = ", ".join(quote(column) for column in columns)
    marks = ", ".join(["?"] * len(columns))
    with connection.cursor() as cursor:
        # The driver's own executemany, which takes the rows one at a time: Django's SQLite cursor
        # peeks at the first row through itertools.tee, and the tee then keeps every row the
        # driver has read (500,000 rows of JSON text: 480 MB of an import's peak).
        sqlite3.Cursor.executemany(
            cursor.cursor, f"INSERT INTO {quote(table)} ({names}) VALUES ({marks})", rows
        )


class CopySource(io.RawIOBase):
    """A file-like view of rows in COPY text format, produced as the server asks for them.

    psycopg2 reads this in chunks and sends each at once, so the server parses and indexes one
    chunk while Python formats the next: on two cores the two halves of the work overlap.
    """

    def __init__(self, rows: Iterable[Sequence[Any]]) -> None:
        self.lines = ("\t".join(map(copy_field, row)) + "\n" for row in rows)
        self.pending = b""
        #: What the rows raised while psycopg2 read them (it reports only "error in .read()").
        self.failure: BaseException | None = None

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        try:
            return self.next_chunk(size)
        except BaseException as error:
            self.failure = error
            raise

    def next_chunk(self, size: int) -> bytes:
        wanted = size if size and size > 0 else 1 << 20
        parts = [self.pending]
        length = len(self.pending)
        for line in self.lines:
            encoded = line.encode()
            parts.append(encoded)
            length += len(encoded)
            if length >= wanted:
                break
        data = b"".join(parts)
        self.pending = data[wanted:]
        return data[:wanted]


def copy_rows(table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """PostgreSQL COPY in text format: tab-separated, backslash escapes, \\N for NULL."""
    quote = connection.ops.quote_name
    names = ", ".join(quote(column) for column in columns)
    source = CopySource(rows)
    with connection.cursor() as cursor:
        try:
            cursor.cursor.copy_expert(f"COPY {quote(table)} ({names}) FROM STDIN", source, size=1 << 18)
        except Exception:
            # A row that could not be made (a streamed file's broken record) is the error to
            # report, not the server's "COPY failed" that it caused.
            if source.failure is not None:
                raise source.failure from None
            raise


def copy_field(value: Any) -> str:
    if value is None:
        return "\\N"
    if isinstance(value, str):
        if "\\" in value:
            value = value.replace("\\", "\\\\")
        if "\t" in value or "\n" in value or "\r" in value:
            value = value.replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
        return value
    return str(value)
