"""`RecordChecker`, which reads one record's fields and notes every fault as a `RecordError`,
and the names of JSON types its messages use (`type_name`, `kind_name`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from benchmarks.records.errors import RecordError, RecordErrors


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
