"""Typed fields of a JSON object read from outside (a report's line): each checked against the type the record
holds, and a wrong one named by its field in one line.

:class:`Fields` wraps one object; each method checks one key (absent keys are allowed unless ``required``) and
raises :class:`Malformed` naming the field's path (``diagnosis[0].summary``) and what it must be. A duration must be
finite (JSON's ``1e999`` reads as infinity), counts are integers (not booleans) within ``MAX_COUNT``, and free
JSON (a symptom's measurements) holds at most ``MAX_VALUES`` values.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any, Iterator, Optional

from embconf.untrusted.read import InputError

MAX_COUNT = 2**53  # an integer field of a record (a case count, a call number)
MAX_VALUES = 65536  # values of free JSON in one field (a symptom's measurements hold a few dozen)


class Malformed(InputError):
    """A field of the wrong type or value: ``field`` is its path, the message says what it must be."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"field '{field}' {problem}")
        self.field = field


def _shown(value: Any) -> str:
    return repr(value)[:80]


class Fields:
    """The fields of one JSON object at ``path`` ('' for a line's own object)."""

    def __init__(self, entry: Any, path: str = "") -> None:
        if not isinstance(entry, dict):
            raise Malformed(path or "(the line)", f"must be an object, got {_shown(entry)}")
        self.entry, self.path = entry, path

    def _name(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def _get(self, key: str, required: bool) -> Any:
        if key not in self.entry and required:
            raise Malformed(self._name(key), "is missing")
        return self.entry.get(key)

    def present(self, key: str) -> bool:
        return key in self.entry

    def text(self, key: str, required: bool = False, choices: Optional[Collection[str]] = None) -> None:
        """A string (one of ``choices`` when given)."""
        value = self._get(key, required)
        if key in self.entry and not isinstance(value, str):
            raise Malformed(self._name(key), f"must be a string, got {_shown(value)}")
        if key in self.entry and choices is not None and value not in choices:
            raise Malformed(self._name(key), f"must be one of {', '.join(sorted(choices))}, got {_shown(value)}")

    def texts(self, key: str, required: bool = False, known: Optional[Collection[str]] = None, what: str = "") -> None:
        """A list of strings (each one of ``known``, a ``what``, when given)."""
        value = self._get(key, required)
        if key not in self.entry:
            return
        if not isinstance(value, list):
            raise Malformed(self._name(key), f"must be a list of strings, got {_shown(value)}")
        for index, item in enumerate(value):
            if not isinstance(item, str):
                raise Malformed(f"{self._name(key)}[{index}]", f"must be a string, got {_shown(item)}")
            if known is not None and item not in known:
                raise Malformed(f"{self._name(key)}[{index}]", f"is no {what}: {_shown(item)}")

    def text_mapping(self, key: str) -> None:
        """An object of strings."""
        if key in self.entry:
            for name, value in self.mapping(key).items():
                if not isinstance(value, str):
                    raise Malformed(f"{self._name(key)}.{name}", f"must be a string, got {_shown(value)}")

    def count(self, key: str, required: bool = False, minimum: int = 0) -> None:
        """An integer from ``minimum`` to MAX_COUNT."""
        value = self._get(key, required)
        if key in self.entry and (
            not isinstance(value, int) or isinstance(value, bool) or not minimum <= value <= MAX_COUNT
        ):
            raise Malformed(self._name(key), f"must be an integer from {minimum} to {MAX_COUNT}, got {_shown(value)}")

    def duration(self, key: str) -> None:
        """A finite number of seconds, not negative."""
        value = self.entry.get(key)
        if key in self.entry and (
            not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value < math.inf
        ):
            raise Malformed(self._name(key), f"must be a finite number of seconds, got {_shown(value)}")

    def flag(self, key: str, required: bool = False) -> None:
        value = self._get(key, required)
        if key in self.entry and not isinstance(value, bool):
            raise Malformed(self._name(key), f"must be true or false, got {_shown(value)}")

    def mapping(self, key: str, required: bool = False) -> dict[str, Any]:
        """An object of free JSON of at most MAX_VALUES values ({} when absent)."""
        value = self._get(key, required)
        if key not in self.entry:
            return {}
        if not isinstance(value, dict):
            raise Malformed(self._name(key), f"must be an object, got {_shown(value)}")
        if _values(value) > MAX_VALUES:
            raise Malformed(self._name(key), f"holds more than {MAX_VALUES} values")
        return value

    def object(self, key: str, required: bool = False) -> Optional[Fields]:
        """The object at ``key`` as Fields (None when absent)."""
        value = self._get(key, required)
        return Fields(value, self._name(key)) if key in self.entry else None

    def objects(self, key: str) -> Iterator[Fields]:
        """Each object of the list at ``key`` as Fields (none when absent)."""
        value = self.entry.get(key, [])
        if not isinstance(value, list):
            raise Malformed(self._name(key), f"must be a list, got {_shown(value)}")
        return (Fields(item, f"{self._name(key)}[{index}]") for index, item in enumerate(value))


def _values(value: Any, limit: int = MAX_VALUES) -> int:
    """How many values ``value`` holds, counted up to just past ``limit``."""
    stack, seen = [value], 0
    while stack and seen <= limit:
        item = stack.pop()
        seen += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return seen
