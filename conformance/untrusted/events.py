"""The full safe YAML reader: any YAML document built in one pass over libyaml's events (the fallback of
:func:`embconf.untrusted.read.load_yaml` for what is not in the fixture writer's subset).

Faster than the safe loader, whose composer is superlinear on large files and crashes on a document nested
100 000 deep. Scalars resolve as the safe loader resolves them; refused before anything is expanded, in one
line: aliases and anchors, non-scalar tags, nesting beyond MAX_DEPTH.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

import yaml

from embconf.untrusted.read import MAX_DEPTH, InputError
from embconf.untrusted.text import one_line

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_events(raw: "bytes | str", name: str) -> Any:
    """The single document in ``raw``, by the parser's events; InputError (one line) when it cannot be read."""
    try:
        return _build(yaml.parse(raw, Loader=_Loader), name)
    except yaml.YAMLError as exc:
        if _flow_depth(raw) > MAX_DEPTH:  # the parser may stop deep nesting first, in its own words: say it in ours
            raise InputError(f"{name}: nested more than {MAX_DEPTH} levels deep") from None
        raise InputError(f"{name}: not valid YAML: {one_line(str(exc))}") from None


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
                f"{name}: YAML anchors and aliases are not allowed ({_where(event)}): write each value out"
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


def _where(event: yaml.Event) -> str:
    mark = event.start_mark
    return f"line {mark.line + 1}" if mark is not None else "somewhere"
