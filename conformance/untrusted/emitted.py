"""A fast, exact reader for the restricted YAML that ``reference/emit.py`` writes (the shipped fixtures).

The subset: leading ``#`` comment lines, then block mappings indented two spaces a level, whose keys are plain
words (``[A-Za-z_][A-Za-z0-9_]*``, none that YAML 1.1 reads as a bool or null); block sequences of mappings
(``- key: ...`` at the parent key's indent); and values that are ``{}``, a flow list of scalars
(``[1, -2.5, "nan"]``, a comma and one space between) or one scalar: ``null``, ``true``, ``false``, an integer
without leading zeros, a float with a ``.`` (and a signed exponent, as YAML 1.1 requires), or a double-quoted
string of printable ASCII.

Within it, JSON and YAML's safe loader read every value alike, so the values of a whole file are read by one
``json.loads`` once a few whole-text checks have ruled out whatever the two would read apart.
:func:`read_emitted` answers ``None`` for anything outside the subset (an anchor, a tag, a comment after the
header, another number form, a block scalar, deeper nesting than ``max_depth``, a tab, CRLF line ends ...):
the caller then reads the text with the full safe reader (:func:`embconf.untrusted.read.load_yaml`), which
gives the one-line error where there is one.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional

_LINES = re.compile(r"^( *)(- )?([A-Za-z_][A-Za-z0-9_]*):(?: (.+))?$", re.MULTILINE)  # each line, whole
# plain words the safe loader (YAML 1.1) resolves to something other than a string: bools and null, any case
_NOT_STRINGS = {"yes", "no", "on", "off", "true", "false", "null"}
# What JSON and YAML 1.1 would read apart, ruled out before json.loads reads the values: a character outside
# printable ASCII or a backslash (so that a string is the same text in both); outside the strings, separators
# other than ", " or an exponent without a sign or without a '.' before it (YAML 1.1 reads 1e+05 and 1.0e5 as
# strings); NaN and Infinity, bare words only Python's JSON reads as numbers (refused by parse_constant).
_EXPONENT = re.compile(r"[0-9][eE]")  # every one of them must be a good one: a '.', digits, the e, a sign, a digit
_GOOD_EXPONENT = re.compile(r"\.[0-9]+[eE][-+][0-9]")
_PRINTABLE = bytes(range(0x20, 0x7F))
_BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
LONG_STRING = 256  # a quoted value longer than this holding only base64 characters is read on its own
_BAD_SEPARATORS = ("  ", "[ ", " ]", " ,")  # and a comma without the space after it
# a lone string with escapes that mean the same in JSON and YAML (no surrogate halves, no \/): read on its own
_ESCAPED_STRING = re.compile(r'"(?:[ !#-\[\]-~]|\\["\\bfnrt]|\\u(?![dD][89abAB])[0-9a-fA-F]{4})*"\Z')

Line = tuple[int, bool, str, Optional[str]]  # the indent of its key, starts a sequence item, key, value text


class _Outside(Exception):
    """The text leaves the subset: read it with the full safe reader."""


def _refuse(name: str) -> Any:
    raise _Outside  # NaN, Infinity, -Infinity


_DECODER = json.JSONDecoder(parse_constant=_refuse)


def read_emitted(text: str, max_depth: int) -> Optional[Any]:
    """The document in ``text`` if it lies within the emitted subset (a mapping at its top), else None."""
    lines = text.split("\n")
    start = 0
    while start < len(lines) and lines[start].startswith("#"):
        start += 1
    if lines[-1] != "":  # the writer ends every line, the last one included
        return None
    try:
        reader = _Reader(_parse_lines(lines[start:-1]), max_depth)
        document = reader.mapping(0, 1, first_is_item=False)
        if reader.position != len(reader.lines) or not document:
            return None
        reader.fill()
        return document
    except (_Outside, ValueError):  # ValueError: what json.loads refuses (a bare word, a leading zero ...)
        return None


def _parse_lines(lines: list[str]) -> list[Line]:
    """Every line as a key line of the subset (one regular expression over them all), or _Outside."""
    found = _LINES.findall("\n".join(lines))
    if len(found) != len(lines) or any(key.lower() in _NOT_STRINGS for key in {key for _, _, key, _ in found}):
        raise _Outside
    return [(len(spaces) + (2 if dash else 0), bool(dash), key, value or None) for spaces, dash, key, value in found]


class _Reader:
    """The structure from the lines, with every value's text set aside and read at the end, all at once."""

    def __init__(self, lines: list[Line], max_depth: int) -> None:
        self.lines, self.max_depth, self.position = lines, max_depth, 0
        self.texts: list[str] = []  # each value as a flow list (a scalar as a list of one)
        self.slots: list[tuple[dict[str, Any], str, bool]] = []  # (mapping, key, a scalar) for each text

    def mapping(self, indent: int, depth: int, first_is_item: bool) -> dict[str, Any]:
        if depth > self.max_depth:
            raise _Outside
        result: dict[str, Any] = {}
        lines = self.lines
        while self.position < len(lines):
            line_indent, item, key, value = lines[self.position]
            if line_indent != indent or (item and not (first_is_item and not result)) or key in result:
                break
            self.position += 1
            result[key] = self.block(indent, depth) if value is None else self.value(result, key, value, depth + 1)
        if self.position < len(lines) and lines[self.position][0] > indent:
            raise _Outside  # deeper than its mapping: not a form the writer uses
        return result

    def block(self, indent: int, depth: int) -> Any:
        """The collection under ``key:``: a mapping indented one level, or a sequence of mappings at its indent."""
        if self.position == len(self.lines):
            raise _Outside
        line_indent, item, _, _ = self.lines[self.position]
        if line_indent != indent + 2:
            raise _Outside
        if not item:
            return self.mapping(indent + 2, depth + 1, first_is_item=False)
        if depth + 2 > self.max_depth:
            raise _Outside
        elements = []
        while self.position < len(self.lines) and self.lines[self.position][:2] == (indent + 2, True):
            elements.append(self.mapping(indent + 2, depth + 2, first_is_item=True))
        return elements

    def value(self, mapping: dict[str, Any], key: str, text: str, depth: int) -> Any:
        """``{}``, a string with escapes (read now), or None holding the place of a value read by :meth:`fill`."""
        if text == "{}":
            return {}
        if len(text) > LONG_STRING and text[0] == '"' == text[-1] and not text[1:-1].encode().translate(None, _BASE64):
            return text[1:-1]  # a long base64 payload: the string as both readers read it, without json's scan
        if "\\" in text:
            if not _ESCAPED_STRING.match(text):
                raise _Outside
            return json.loads(text)
        scalar = not text.startswith("[")
        if not scalar and (depth > self.max_depth or not text.endswith("]")):
            raise _Outside
        if text.count('"') % 2:  # strings never run from one value into the next
            raise _Outside
        self.texts.append(f"[{text}]" if scalar else text)
        self.slots.append((mapping, key, scalar))
        return None

    def fill(self) -> None:
        """Every set-aside value, read by one json.loads where JSON reads them as YAML does, put in its place."""
        text = "[" + ", ".join(self.texts) + "]"
        outside = "x".join(text.split('"')[0::2])  # strings hold no quote: what lies between them
        if (
            not text.isascii()
            or text.encode("ascii").translate(None, _PRINTABLE)  # printable ASCII only: ' ' to '~'
            or any(separator in outside for separator in _BAD_SEPARATORS)
            or outside.count(",") != outside.count(", ")
            or len(_EXPONENT.findall(outside)) != len(_GOOD_EXPONENT.findall(outside))
            or "{" in outside  # no mapping inside a value
            or outside.count("[") != len(self.texts) + 1  # each value one flat list (or scalar), no more
            or outside.count("]") != len(self.texts) + 1
        ):
            raise _Outside
        values = _DECODER.decode(text)
        if len(values) != len(self.slots):
            raise _Outside
        for (mapping, key, scalar), value in zip(self.slots, values):
            if scalar and len(value) != 1:
                raise _Outside
            mapping[key] = value[0] if scalar else value
