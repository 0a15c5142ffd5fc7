"""The protocol's lines (spec/PROTOCOL.md section 1): one JSON value per line, out (:func:`dump_line`) and in
(:func:`read_lines`, bounded; :func:`parse_line`), and :class:`ProtocolError`, raised for whatever breaks the
encoding or the protocol. JSON only: the runner starts a protocol peer before it imports NumPy."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, Iterator

from embconf.processes.failures import Garbled

READ_SIZE = 2**20  # bytes per read of a peer's stdout, and the pipe size asked for
BLOB_MIN = 4096  # base64 strings longer than this are spliced into a line after encoding
_BLOB = "~embconf-base64~"
LARGE_LINE = 2**20  # lines longer than this have their JSON values counted before they are parsed
# JSON values a line may hold (counted as its ',', ':' and '[' bytes; spec/PROTOCOL.md section 2): the largest
# output of the corpus (a 32768 x 64 sinusoid table: 2**21 values) fits twice over as an inline data list
MAX_VALUES = 2**22


class ProtocolError(Garbled):
    """A peer broke the protocol: a line that is not JSON, too long, or not the message expected."""


class TooManyValues(ProtocolError):
    """A whole line holding more JSON values than MAX_VALUES, refused unparsed. Unlike other protocol errors it
    leaves the peer in step (the line was read to its end): it answers the request at hand, and the peer goes on."""


class LineTooLong(Exception):
    """A line longer than the limit; ``head`` holds its first 200 bytes."""

    def __init__(self, head: bytes) -> None:
        super().__init__(head)
        self.head = head


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
    """A protocol line as JSON; ProtocolError (quoting the line) when it is not, TooManyValues when it holds
    more JSON values than MAX_VALUES: read as Python objects, a list of numbers takes about fifteen times its
    size in the line, so the inline ``data`` lists a reply may hold are bounded (base64 is not)."""
    if len(line) > LARGE_LINE:
        values = len(line) - len(line.translate(None, b",:["))  # one pass over the line, not three
        if values > MAX_VALUES:
            raise TooManyValues(
                f"a line of {len(line)} bytes holding about {values} JSON values (at most {MAX_VALUES}; "
                f"send large arrays base64-encoded): {quote(line, 80)}"
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
