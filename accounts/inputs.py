"""The one gate a request's input passes before anything is stored: JSON bodies, text, names, numbers.

Every JSON body of the app (the annotation, validation and trial pages' endpoints, and the API
through accounts/parsers.py) is read by `read_json`, and every free-text field is checked by `text`
or `name`. Bad input raises `InputRefused` naming the field (a JSON path such as
`pairs[2].answer`) and a reason; the endpoints answer 400 with both and change nothing.

What is refused, everywhere:

- a body that is not JSON, is larger than its endpoint allows, or is nested deeper than
  MAX_DEPTH (a deep one made the standard library's parser raise RecursionError: a 500);
- NaN and ±Infinity (not JSON; PostgreSQL's jsonb refuses them, and a chart cannot place them);
- integers outside the 64-bit range of the database's integer columns;
- text with a lone surrogate (such as "\\ud800": not Unicode, so no page, CSV or JSON can be
  written with it once stored) or with NUL (PostgreSQL cannot store it), or longer than its field;
- in names, which go into file names, download headers and one-line labels: any control
  character (line breaks and tabs included), the Unicode line and paragraph separators, and the
  text-direction controls that would turn the text around a name.

Text is kept as written otherwise (no normalisation): the annotators' and testers' own words are
data. How text is *shown* is the pages' business: templates escape it, plots draw it literally
(no mathtext), and downloads name their files with `attachment`.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

import orjson
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

#: How deep a JSON body may nest (the deepest the app reads is 4: a draft's pairs' evidence).
MAX_DEPTH = 16
#: The database's integer columns (BigAutoField ids, seeds) hold 64-bit signed integers.
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
#: A JSON body no endpoint of the pages takes more of (each endpoint may ask for less).
MAX_BODY_BYTES = 256 * 1024
#: Control characters a multi-line text may hold: tab and line feed (a CR LF is kept as typed).
TEXT_CONTROLS = {"\t", "\n", "\r"}
#: Characters that end a line without being control characters.
LINE_SEPARATORS = {"\u2028", "\u2029", "\x85"}
#: Embeddings, overrides and isolates: in a name they turn the text around it on the page
#: ("\u202eexe.txt" shows as "txt.exe"). Right-to-left names need none of them.
DIRECTION_CONTROLS = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


class InputRefused(ValueError):
    """Input that cannot be stored: `field` names where it is (a JSON path), `message` why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message

    def as_dict(self) -> dict[str, str]:
        return {"field": self.field, "message": self.message}


# --- JSON -------------------------------------------------------------------------------------


def read_json(raw: bytes, *, max_bytes: int = MAX_BODY_BYTES, field: str = "body", expect=dict) -> Any:
    """A request body parsed as JSON and checked by `check_json`; InputRefused names the fault.

    `expect`: the type the top-level value must have (None: any).
    """
    if len(raw) > max_bytes:
        raise InputRefused(
            field, _("the request is larger than %(limit)s bytes") % {"limit": f"{max_bytes:,}"}
        )
    try:
        value = orjson.loads(raw or b"{}")
    except orjson.JSONDecodeError as error:
        value = numbers_past_doubles(raw, error)
        if value is None:
            raise InputRefused(field, _("not JSON: %(reason)s") % {"reason": json_reason(error)}) from None
    else:
        if LONG_DIGITS.search(raw):
            # orjson reads an integer past 64 bits as a float: read it whole, to refuse it by name.
            value = numbers_past_doubles(raw, None)
    check_json(value)
    if expect is not None and not isinstance(value, expect):
        raise InputRefused(field, _("expected a JSON object"))
    return value


#: A code point reserved for UTF-16 surrogates: in Python text, always a lone surrogate.
SURROGATE = re.compile("[\ud800-\udfff]")
#: A run of digits as long as the largest 64-bit integer: the body may hold an integer past 64 bits.
LONG_DIGITS = re.compile(rb"\d{19}")


def numbers_past_doubles(raw: bytes, error: orjson.JSONDecodeError | None) -> Any:
    """A body with numbers orjson does not keep (an integer past 64 bits, which it reads as a float,
    or refuses past a double's range, as it does 1e400), read again by the standard library, which
    keeps such integers whole and such floats infinite: `check_json` then names the field that
    holds one. None when the body is not JSON (or orjson's `error` is not about a number)."""
    if error is not None and "number" not in str(error):
        return None
    try:
        return json.loads(raw)
    except RecursionError:
        raise InputRefused(
            "body", _("nested more than %(depth)s levels deep") % {"depth": MAX_DEPTH}
        ) from None
    except ValueError:
        return None


def json_reason(error: orjson.JSONDecodeError) -> str:
    """orjson's reason, as people can read it (it names NaN, depth and surrogates its own way)."""
    message = str(error)
    if "depth limit" in message:
        return _("nested more than %(depth)s levels deep") % {"depth": MAX_DEPTH}
    if "surrogate" in message:
        return _("a text holds a lone surrogate (\\ud800–\\udfff), which is not Unicode")
    if "infinity" in message:
        return _("a number is too large (JSON numbers are finite)")
    return message


def check_json(value: Any, field: str = "") -> None:
    """Refuse (InputRefused) what a parsed JSON value may not hold: more than MAX_DEPTH levels,
    non-finite numbers, integers outside 64 bits, text that is not Unicode or holds NUL or control
    characters. The field named is the value's path (`pairs[2].answer`; "body" for the whole).

    Walked without recursion, so that any depth is refused rather than overflowing the stack.
    """
    pending: list[tuple[Any, str, int]] = [(value, field, 0)]
    while pending:
        current, path, depth = pending.pop()
        where = path or "body"
        if isinstance(current, dict | list | tuple) and depth >= MAX_DEPTH:
            raise InputRefused(where, _("nested more than %(depth)s levels deep") % {"depth": MAX_DEPTH})
        if isinstance(current, dict):
            for key, child in current.items():
                if isinstance(key, str):
                    text_problem_or_raise(key, f"{where} (a key)")
                step = key if isinstance(key, str) and key.isidentifier() else f"[{key!r}]"
                child_path = f"{path}{step}" if step.startswith("[") else f"{path}.{step}" if path else step
                pending.append((child, child_path, depth + 1))
        elif isinstance(current, list | tuple):
            pending.extend((child, f"{path}[{index}]", depth + 1) for index, child in enumerate(current))
        elif isinstance(current, str):
            text_problem_or_raise(current, where)
        elif isinstance(current, bool) or current is None:
            continue
        elif isinstance(current, int):
            if not INT64_MIN <= current <= INT64_MAX:
                raise InputRefused(where, _("the number is out of range (at most 19 digits)"))
        elif isinstance(current, float) and not math.isfinite(current):
            raise InputRefused(where, _("expected a finite number"))


# --- text ---------------------------------------------------------------------------------------


def text_problem(value: str, *, single_line: bool = False) -> str | None:
    """Why `value` cannot be stored as text (None when it can)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return _("the text holds a lone surrogate (\\ud800–\\udfff), which is not Unicode")
    if "\x00" in value:
        return _("the text holds a NUL character")
    for character in value:
        if unicodedata.category(character) == "Cc" and (single_line or character not in TEXT_CONTROLS):
            if character in "\r\n":
                return _("a name is one line: remove the line break")
            return _("the text holds a control character (%(code)s)") % {"code": f"U+{ord(character):04X}"}
        if single_line and character in LINE_SEPARATORS:
            return _("a name is one line: remove the line break")
        if single_line and character in DIRECTION_CONTROLS:
            return _("a name may not hold a text-direction control (%(code)s)") % {
                "code": f"U+{ord(character):04X}"
            }
    return None


def text_problem_or_raise(value: str, field: str) -> None:
    if (problem := text_problem(value)) is not None:
        raise InputRefused(field, problem)


def text(
    value: Any, field: str, *, max_length: int, required: bool = False, single_line: bool = False
) -> str:
    """A free-text field, checked: a string, at most `max_length` characters, valid Unicode without
    NUL or (unless it is a tab or line break of a multi-line text) control characters. Surrounding
    white space is removed; `required` refuses an empty one."""
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise InputRefused(field, _("expected text"))
    if len(value) > max_length:
        raise InputRefused(
            field,
            _("at most %(limit)s characters (this has %(length)s)")
            % {"limit": max_length, "length": len(value)},
        )
    if (problem := text_problem(value, single_line=single_line)) is not None:
        raise InputRefused(field, problem)
    value = value.strip()
    if required and not value:
        raise InputRefused(field, _("this cannot be empty"))
    return value


def name(value: Any, field: str = "name", *, max_length: int = 200, required: bool = True) -> str:
    """A name (of a dataset, project, plan, row): one line of text, no control characters."""
    return text(value, field, max_length=max_length, required=required, single_line=True)


def integer(value: Any, field: str, *, minimum: int = INT64_MIN, maximum: int = INT64_MAX) -> int:
    """An integer (not a boolean, not a float) from `minimum` to `maximum`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputRefused(field, _("expected a whole number"))
    if not minimum <= value <= maximum:
        raise InputRefused(
            field, _("expected a number from %(low)s to %(high)s") % {"low": minimum, "high": maximum}
        )
    return value


def integers(parts: Iterable[str], field: str) -> list[int]:
    """Ids typed as text (a list of digits), each within the database's range."""
    numbers = []
    for part in parts:
        part = part.strip()
        if not re.fullmatch(r"[+-]?\d{1,19}", part) or not INT64_MIN <= int(part) <= INT64_MAX:
            raise InputRefused(field, _("%(part)r is not an id") % {"part": part[:40]})
        numbers.append(int(part))
    return numbers


def without_lone_surrogates(value: Any) -> Any:
    """Parsed JSON with each lone surrogate in its text replaced by U+FFFD (the replacement
    character), as a browser sends one typed into a form; what holds none is returned as it is."""
    if isinstance(value, str):
        # A surrogate code point in Python text is always a lone one (a pair is read as one character).
        return SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [without_lone_surrogates(child) for child in value]
    if isinstance(value, dict):
        return {without_lone_surrogates(key): without_lone_surrogates(child) for key, child in value.items()}
    return value


def repair_stored_text(model, fields: Iterable[str], connection) -> int:
    """Replace the lone surrogates stored in `model`'s JSON `fields` before the input gate refused
    them (a data migration's step; only SQLite held them: PostgreSQL's jsonb refuses them). Each
    made the pages and exports that show it fail. Returns how many rows were repaired."""
    if connection.vendor != "sqlite":
        return 0
    table = connection.ops.quote_name(model._meta.db_table)
    repaired = 0
    for name in fields:
        column = connection.ops.quote_name(model._meta.get_field(name).column)
        with connection.cursor() as cursor:
            # Django writes JSON with every non-ASCII character escaped: a surrogate is "\udXXX".
            cursor.execute(f"SELECT id, {column} FROM {table} WHERE {column} LIKE '%\\ud%'")  # noqa: S608
            found = cursor.fetchall()
        for pk, text in found:
            value = json.loads(text)
            fixed = without_lone_surrogates(value)
            if fixed != value:
                model.objects.using(connection.alias).filter(pk=pk).update(**{name: fixed})
                repaired += 1
    return repaired


def object_id(value: str | None, field: str) -> int | None:
    """An object's id from a query parameter (`?dataset=12`): None when there is none, InputRefused
    when it is not an id (digits only, within the database's range)."""
    if value is None or value == "":
        return None
    if not (value.isascii() and value.isdigit()) or len(value) > 19 or not 0 < int(value) <= INT64_MAX:
        raise InputRefused(field, _("%(part)r is not an id") % {"part": value[:40]})
    return int(value)


# --- the same rules for Django forms and DRF serializers --------------------------------------


def valid_text(value: str) -> None:
    """A Django validator: the rules of `text` for a multi-line field."""
    if isinstance(value, str) and (problem := text_problem(value)) is not None:
        raise ValidationError(problem, code="text")


def one_line(value: str) -> None:
    """A Django validator: the rules of `name` (one line, no control characters)."""
    if isinstance(value, str) and (problem := text_problem(value, single_line=True)) is not None:
        raise ValidationError(problem, code="name")


#: Bounds for a form's or serializer's integer field that the database stores in 64 bits, and in
#: 32 (an IntegerField, such as every seed: PostgreSQL's integer).
INT64_BOUNDS = {"min_value": INT64_MIN, "max_value": INT64_MAX}
INT32_BOUNDS = {"min_value": -(2**31), "max_value": 2**31 - 1}


# --- downloads ----------------------------------------------------------------------------------


def file_name(stem: str, *, fallback: str = "download") -> str:
    """A file name made from `stem` (which may hold a dataset's or a plan's name): one line, no
    path separators or quotes; `fallback` when nothing is left."""
    cleaned = "".join("_" if c in '/\\"' else " " if unicodedata.category(c)[0] in "CZ" else c for c in stem)
    cleaned = re.sub(r"\s+", " ", cleaned).strip(" .")
    return cleaned[:150] or fallback


def attachment(response, name: str):
    """Mark `response` as a download called `name` (cleaned by `file_name`; non-ASCII names are
    sent as RFC 6266 filename*), so that no name, however odd, breaks the header."""
    from django.utils.http import content_disposition_header

    stem, dot, extension = name.rpartition(".")
    cleaned = file_name(stem) + dot + file_name(extension, fallback="") if dot else file_name(name)
    response["Content-Disposition"] = content_disposition_header(True, cleaned)
    return response
