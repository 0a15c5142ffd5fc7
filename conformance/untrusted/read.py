"""Reading the files the suite is given (fixtures, the manifest, expectations) as untrusted input.

- :func:`read_bounded` reads only a regular file of at most ``limit`` bytes: a directory, a device
  (a symlink to ``/dev/zero``), a FIFO (opened without blocking, never waited on) or an oversized
  file is refused with :class:`InputError`. :func:`bounded_lines` reads such a file a line at a time, each line
  bounded too (a report of JSON lines, streamed).
- :func:`load_yaml` reads what the fixture writer emits with :mod:`.emitted` (exact, and without PyYAML),
  and anything else with :mod:`.events`, which builds the document straight from libyaml's event stream,
  resolving scalars as the safe loader does and refusing, before anything is expanded: aliases and
  anchors (the generator never writes them, and they are how a "billion laughs" file expands to
  gigabytes), non-scalar tags, and nesting beyond :data:`MAX_DEPTH`. :func:`load_json` bounds nesting
  the same way.

Every error is one bounded line.
"""

from __future__ import annotations

import itertools
import json
import os
import stat
from pathlib import Path
from typing import Any, Iterator

from embconf.untrusted.emitted import read_emitted
from embconf.untrusted.text import one_line

MAX_DEPTH = 32  # nesting of mappings and lists; the committed files nest at most 6 deep


class InputError(Exception):
    """An input file that cannot be read or parsed safely (one line, naming the file)."""


class LineOverLimit(InputError):
    """A line of a file read by lines (:func:`bounded_lines`) longer than its limit."""


def read_bounded(path: Path, limit: int, what: str = "file") -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes (symlinks followed)."""
    fd = _open_regular(path, limit, what)
    try:
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise InputError(f"{path}: the {what} grew beyond the limit of {limit} bytes while being read")
        return b"".join(chunks)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def read_head(path: Path, size: int, what: str = "file") -> bytes:
    """The first ``size`` bytes (at most) of ``path``, a regular file of any size (the checks of :func:`read_bounded`)."""
    fd = _open_regular(path, 2**63, what)
    try:
        return os.read(fd, size)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def bounded_lines(path: Path, limit: int, line_limit: int, what: str = "file") -> Iterator[tuple[int, bytes]]:
    """(number from 1, line) of each line of ``path``, read as it is iterated (one line held at a time): the checks
    of :func:`read_bounded`, and InputError (naming the line) for a line of more than ``line_limit`` bytes."""
    fd = _open_regular(path, limit, what)
    try:
        with os.fdopen(fd, "rb", buffering=1 << 16, closefd=False) as handle:
            size = 0
            for number in itertools.count(1):
                line = handle.readline(line_limit + 1)
                if not line:
                    return
                size += len(line)
                if size > limit:
                    raise InputError(f"{path}: the {what} grew beyond the limit of {limit} bytes while being read")
                if len(line) > line_limit and not line.endswith(b"\n"):
                    raise LineOverLimit(f"{path}, line {number}: longer than the limit of {line_limit} bytes a line")
                yield number, line
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def _open_regular(path: Path, limit: int, what: str) -> int:
    """A descriptor of ``path``, opened without blocking, if it is a regular file of at most ``limit`` bytes;
    FileNotFoundError when it does not exist, InputError (one line) for anything else."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputError(f"{path}: the {what} is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{path}: the {what} is not a regular file (a device, pipe or socket); refused")
        if info.st_size > limit:
            raise InputError(
                f"{path}: the {what} is {info.st_size} bytes, more than the limit of {limit} ({_mib(limit)})"
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def _mib(size: int) -> str:
    return f"{size / 2**20:g} MiB"


def load_yaml(raw: "bytes | str", name: str) -> Any:
    """The single document in ``raw``: read by :mod:`.emitted` when it is in the subset the fixture writer emits,
    else built in one pass over the parser's events (:func:`read_yaml_events`); the same value either way.

    InputError for invalid YAML, an alias or anchor, a tag outside the safe scalar ones, or nesting
    beyond MAX_DEPTH. Scalars resolve as the safe loader resolves them (ints, floats, bools, null, str).
    """
    fast = _read_emitted(raw)
    return fast if fast is not None else read_yaml_events(raw, name)


def read_yaml_events(raw: "bytes | str", name: str) -> Any:
    """:func:`load_yaml` without the fast path for the fixture writer's subset: any YAML, by the parser's events
    (:mod:`.events`, which imports PyYAML: a run on the shipped fixtures never needs it)."""
    from embconf.untrusted.events import read_events

    return read_events(raw, name)


def _read_emitted(raw: "bytes | str") -> Any:
    """The document if it is in the subset the fixture writer emits (:mod:`.emitted`), else None."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        return None
    return read_emitted(text, MAX_DEPTH)


def load_json(raw: bytes, name: str) -> Any:
    """The JSON value in ``raw``; InputError for invalid JSON or nesting beyond MAX_DEPTH."""
    try:
        value = json.loads(raw)
    except RecursionError:
        raise InputError(f"{name}: nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:
        raise InputError(f"{name}: not valid JSON ({one_line(str(exc))})") from None
    if _depth(value) > MAX_DEPTH:
        raise InputError(f"{name}: nested more than {MAX_DEPTH} levels deep")
    return value


def _depth(value: Any, level: int = 0) -> int:
    if level > MAX_DEPTH:
        return level
    if isinstance(value, dict):
        return max((_depth(v, level + 1) for v in value.values()), default=level + 1)
    if isinstance(value, list):
        return max((_depth(v, level + 1) for v in value), default=level + 1)
    return level
