"""The protocol's encoding (spec/PROTOCOL.md): one JSON value per line, arrays base64-encoded, non-finite
floats as the strings 'nan', 'inf', '-inf'. Values to and from the wire (:func:`to_wire`,
:func:`from_wire`), lines out (:func:`dump_line`) and in (:func:`read_lines`, bounded; :func:`parse_line`),
and :class:`ProtocolError`, raised for whatever breaks the encoding or the protocol."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from typing import Any, Iterator

import numpy as np

from embconf.model.encoding import NON_FINITE, EncodingError, PinnedRows, decode_array, encode_array, non_finite_name
from embconf.processes.failures import Garbled

PROTOCOL_VERSION = 1
PROTOCOL_MINOR = 4  # 1: spec 1.1's optional inputs, embedding_forward_max_norm, float16 and bfloat16;
# 2: the run reply "exception" (an untyped failure, the outcome error, the peer going on);
# 3: spec 1.3's rope operations and their mapping input "scaling";
# 4: a run request's "rows", and replies holding only those rows of an output (PROTOCOL.md)
ROWS_MINOR = 4  # a peer of this minor or later is asked for the rows the runner judges
READ_SIZE = 2**20  # bytes per read of a peer's stdout, and the pipe size asked for
BLOB_MIN = 4096  # base64 strings longer than this are spliced into a line after encoding
_BLOB = "~embconf-base64~"
LARGE_LINE = 2**20  # lines longer than this have their JSON values counted before they are parsed
MAX_VALUES = 100_000  # separators (',', ':', '[') a long line may hold; a message has a few dozen


class ProtocolError(Garbled):
    """A peer broke the protocol: a line that is not JSON, too long, or not the message expected."""


class LineTooLong(Exception):
    """A line longer than the limit; ``head`` holds its first 200 bytes."""

    def __init__(self, head: bytes) -> None:
        super().__init__(head)
        self.head = head


# ----- values


def to_wire(value: Any, rows: list[int] | None = None) -> Any:
    """A value as the protocol writes it: arrays base64-encoded (only ``rows`` of an array when given, as a
    reply may send the rows a request asked for), non-finite floats as strings."""
    if isinstance(value, np.ndarray):
        fits = rows is not None and value.ndim > 0 and all(0 <= row < value.shape[0] for row in rows)
        return encode_array(value, rows=rows if fits else None, inline_limit=-1)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return non_finite_name(value)
    if isinstance(value, Mapping):
        return {key: to_wire(item) for key, item in value.items()}
    return value


def from_wire(value: Any, rows: tuple[int, ...] | None = None) -> Any:
    """A value read from the wire: an array decoded, the non-finite strings read back; an array holding
    only some rows (``rows`` in its encoding) when exactly those were asked for (``rows``: protocol minor 4)
    is a :class:`~embconf.model.encoding.PinnedRows`.

    EncodingError for a malformed array, TypeError for a value that is no output.
    """
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return value
    if isinstance(value, str) and value in NON_FINITE:
        return NON_FINITE[value]
    if isinstance(value, dict):
        if "rows" not in value:
            return decode_array(value)
        if rows is None:
            raise EncodingError("it holds 'rows', but the request asked for the whole output")
        if value["rows"] != list(rows):
            raise EncodingError(f"it holds rows {str(value['rows'])[:60]}, not the rows the request asked for")
        return PinnedRows(tuple(value["shape"]), rows, decode_array(value))
    raise TypeError(f"an output must be an array, a number or null, got {type(value).__name__} {value!r:.60}")


# ----- lines out


def dump_line(message: Mapping[str, Any]) -> bytes:
    """One protocol line: compact JSON (strictly JSON: no NaN tokens) and a newline.

    Long base64 payloads are spliced in after encoding: they need no escaping,
    and json would scan them character by character.
    """
    blobs: list[str] = []
    text = json.dumps(_stash_blobs(message, blobs), separators=(",", ":"), allow_nan=False)
    if blobs:
        parts = text.split(_BLOB)
        if len(parts) != len(blobs) + 1:  # the placeholder occurs in the message itself
            text = json.dumps(message, separators=(",", ":"), allow_nan=False)
        else:
            text = "".join(part + blob for part, blob in zip(parts, blobs)) + parts[-1]
    return text.encode() + b"\n"


def _stash_blobs(value: Any, blobs: list[str]) -> Any:
    """``value`` with each long ``base64`` string replaced by a placeholder (appended to ``blobs``)."""
    if isinstance(value, Mapping):
        encoded = value.get("base64")
        if isinstance(encoded, str) and len(encoded) > BLOB_MIN:
            blobs.append(encoded)
            return {**value, "base64": _BLOB}
        return {key: _stash_blobs(item, blobs) for key, item in value.items()}
    return value


# ----- lines in


def read_lines(fd: int, max_line: int) -> Iterator[bytes]:
    """The lines read from ``fd`` until its end (a last unterminated line included); LineTooLong for a
    line longer than ``max_line`` bytes, after which nothing more is read. A long line is gathered in one
    growing buffer and handed over as it is (no second copy of it is made)."""
    line = bytearray()  # the line read so far
    while chunk := os.read(fd, READ_SIZE):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0 and len(line) + end - start <= max_line:
            line += memoryview(chunk)[start:end]
            yield line  # type: ignore[misc]  # a bytearray: read as bytes by every consumer
            line, start = bytearray(), end + 1
        line += memoryview(chunk)[start:]
        if len(line) > max_line:
            raise LineTooLong(bytes(line[:200]))
    if line:
        yield line  # type: ignore[misc]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON; write non-finite numbers as the strings 'nan', 'inf', '-inf'")


def parse_line(line: bytes) -> Any:
    """A protocol line as JSON; ProtocolError (quoting the line) when it is not, or when it holds more
    JSON values than any message has (MAX_VALUES): read as Python objects, a long list of numbers
    would take fifteen times the line's size, where arrays travel base64-encoded in one string each."""
    if len(line) > LARGE_LINE:
        values = len(line) - len(line.translate(None, b",:["))  # one pass over the line, not three
        if values > MAX_VALUES:
            raise ProtocolError(
                f"a line of {len(line)} bytes holding about {values} JSON values (at most {MAX_VALUES}; "
                f"arrays travel base64-encoded): {quote(line, 80)}"
            )
    try:
        return json.loads(line, parse_constant=_reject_constant)
    except ValueError as exc:
        raise ProtocolError(f"not a JSON line ({exc}): {quote(line)}") from None
    except RecursionError:
        raise ProtocolError(f"a JSON line nested too deeply to read: {quote(line, 80)}") from None


def quote(line: bytes, limit: int = 200) -> str:
    """A line as a message shows it: decoded, without its newline, cut after ``limit`` characters."""
    text = bytes(line[: 4 * limit + 4]).decode("utf-8", "replace").rstrip("\n")
    return repr(text if len(text) <= limit else text[:limit] + "...")
