"""Reading the files the suite is given (fixtures, the manifest, expectations) as untrusted input.

- :func:`read_bounded` reads only a regular file of at most ``limit`` bytes: a directory, a device
  (a symlink to ``/dev/zero``), a FIFO (opened without blocking, never waited on) or an oversized
  file is refused with :class:`InputError`.
- :func:`load_yaml` reads what the fixture writer emits with :mod:`.emitted` (exact, ten times faster), and
  anything else by building the document straight from libyaml's event stream (faster than the safe
  loader, whose composer is superlinear on large files and crashes on a document nested 100 000 deep),
  resolving scalars as the safe loader does and refusing, before anything is expanded: aliases and
  anchors (the generator never writes them, and they are how a "billion laughs" file expands to
  gigabytes), non-scalar tags, and nesting beyond :data:`MAX_DEPTH`. :func:`load_json` bounds nesting
  the same way.

Every error is one bounded line.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any, Iterable

import yaml

from embconf.untrusted.emitted import read_emitted
from embconf.untrusted.text import one_line

MAX_DEPTH = 32  # nesting of mappings and lists; the committed files nest at most 6 deep
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class InputError(Exception):
    """An input file that cannot be read or parsed safely (one line, naming the file)."""


def read_bounded(path: Path, limit: int, what: str = "file") -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes (symlinks followed)."""
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
            raise InputError(f"{path}: the {what} is {info.st_size} bytes, more than the limit of {limit}")
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


def load_yaml(raw: "bytes | str", name: str) -> Any:
    """The single document in ``raw``: read by :mod:`.emitted` when it is in the subset the fixture writer emits,
    else built in one pass over the parser's events (:func:`read_yaml_events`); the same value either way.

    InputError for invalid YAML, an alias or anchor, a tag outside the safe scalar ones, or nesting
    beyond MAX_DEPTH. Scalars resolve as the safe loader resolves them (ints, floats, bools, null, str).
    """
    fast = _read_emitted(raw)
    return fast if fast is not None else read_yaml_events(raw, name)


def read_yaml_events(raw: "bytes | str", name: str) -> Any:
    """:func:`load_yaml` without the fast path for the fixture writer's subset: any YAML, by the parser's events."""
    try:
        return _build(yaml.parse(raw, Loader=_Loader), name)
    except yaml.YAMLError as exc:
        if _flow_depth(raw) > MAX_DEPTH:  # the parser may stop deep nesting first, in its own words: say it in ours
            raise InputError(f"{name}: nested more than {MAX_DEPTH} levels deep") from None
        raise InputError(f"{name}: not valid YAML: {one_line(str(exc))}") from None


def _read_emitted(raw: "bytes | str") -> Any:
    """The document if it is in the subset the fixture writer emits (:mod:`.emitted`), else None."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        return None
    return read_emitted(text, MAX_DEPTH)


def _flow_depth(raw: "bytes | str") -> int:
    """The deepest nesting of flow collections (``[`` and ``{`` outside quotes and comments), measured on a
    document the parser refused: a lower bound on how deep it is nested."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    depth = deepest = 0
    quote = ""
    previous = "\n"
    comment = False
    for char in text:
        if comment:
            comment = char != "\n"
        elif quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and previous in " \t\n":
            comment = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(depth - 1, 0)
        previous = char
    return deepest


_MAP, _SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"
_STR = "tag:yaml.org,2002:str"
_SCALAR_TAGS = {"tag:yaml.org,2002:" + t for t in ("null", "bool", "int", "float", "str", "timestamp")}
_resolver = yaml.resolver.Resolver()
_constructor = yaml.constructor.SafeConstructor()


def _build(events: Iterable[yaml.Event], name: str) -> Any:
    stack: list[list[Any]] = []  # [container, key awaiting its value (mappings)]
    documents: list[Any] = []
    for event in events:
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise InputError(
                f"{name}: YAML anchors and aliases are not allowed ({_where(event)}); the generator never writes them"
            )
        if isinstance(event, yaml.ScalarEvent):
            _add(stack, documents, _scalar(event, name), name, event)
        elif isinstance(event, yaml.CollectionStartEvent):
            if len(stack) >= MAX_DEPTH:
                raise InputError(f"{name}: nested more than {MAX_DEPTH} levels deep ({_where(event)})")
            if event.tag not in (None, "!", _MAP if isinstance(event, yaml.MappingStartEvent) else _SEQ):
                raise InputError(f"{name}: YAML tag {one_line(event.tag, 80)} is not allowed ({_where(event)})")
            stack.append([{} if isinstance(event, yaml.MappingStartEvent) else [], _NO_KEY])
        elif isinstance(event, yaml.CollectionEndEvent):
            container = stack.pop()[0]
            _add(stack, documents, container, name, event)
    if len(documents) > 1:
        raise InputError(f"{name}: holds {len(documents)} YAML documents, expected one")
    return documents[0] if documents else None


_NO_KEY = object()


def _add(stack: list[list[Any]], documents: list[Any], value: Any, name: str, event: yaml.Event) -> None:
    if not stack:
        documents.append(value)
        return
    top = stack[-1]
    if isinstance(top[0], list):
        top[0].append(value)
    elif top[1] is _NO_KEY:
        if isinstance(value, (dict, list)):
            raise InputError(f"{name}: a mapping key that is a collection ({_where(event)})")
        top[1] = value
    else:
        top[0][top[1]] = value
        top[1] = _NO_KEY


# The plain numbers the generator writes, read exactly as the safe loader's YAML 1.1 rules read them (most of a
# fixture's scalars: this path skips the resolver's regex table and a node per scalar).
_PLAIN_INT = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_PLAIN_FLOAT = re.compile(r"-?[0-9]+\.[0-9]*(?:[eE][-+][0-9]+)?\Z")


def _scalar(event: yaml.ScalarEvent, name: str) -> Any:
    tag = event.tag
    if tag is None and event.style is None:
        value = event.value
        if _PLAIN_FLOAT.match(value):
            return float(value)
        if _PLAIN_INT.match(value):
            return int(value)
    if tag is None or tag == "!":
        tag = _resolver.resolve(yaml.ScalarNode, event.value, event.implicit)
    if tag == _STR:
        return event.value
    if tag not in _SCALAR_TAGS:
        raise InputError(f"{name}: YAML tag {one_line(tag, 80)} is not allowed ({_where(event)})")
    return _constructor.yaml_constructors[tag](_constructor, yaml.ScalarNode(tag, event.value, style=event.style))


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


def _where(event: yaml.Event) -> str:
    mark = event.start_mark
    return f"line {mark.line + 1}" if mark is not None else "somewhere"
