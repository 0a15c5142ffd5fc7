"""A minimal logic-less template (a subset of Mustache): ``{{name}}`` (HTML-escaped), ``{{#name}}...{{/name}}``
(repeated for each item of a list, whose keys are then in scope; once for any other true value) and
``{{^name}}...{{/name}}`` (when the value is empty or false). Dotted names are not supported."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any, Sequence

TAG = re.compile(r"{{\s*([#^/]?)\s*([A-Za-z_][\w-]*)\s*}}")


def render(template: str, data: Mapping[str, Any]) -> str:
    return _render(template, [data])


def _lookup(name: str, scopes: Sequence[Mapping[str, Any]]) -> Any:
    for scope in reversed(scopes):
        if isinstance(scope, Mapping) and name in scope:
            return scope[name]
    raise KeyError(f"template variable {name!r} has no value")


def _render(template: str, scopes: list[Mapping[str, Any]]) -> str:
    out, position = [], 0
    while True:
        tag = TAG.search(template, position)
        if tag is None:
            out.append(template[position:])
            return "".join(out)
        out.append(template[position : tag.start()])
        kind, name = tag.groups()
        if not kind:
            value = _lookup(name, scopes)
            out.append(html.escape(f"{value:g}" if isinstance(value, float) else str(value)))
            position = tag.end()
            continue
        if kind == "/":
            raise ValueError(f"template: {{{{/{name}}}}} closes no section")
        close = _closing(template, name, tag.end())
        body, position = template[tag.end() : close.start()], close.end()
        value = _lookup(name, scopes)
        if kind == "^":
            out.append(_render(body, scopes) if not value else "")
        elif isinstance(value, (list, tuple)):
            out.extend(_render(body, [*scopes, item]) for item in value)
        elif value:
            out.append(_render(body, [*scopes, value] if isinstance(value, Mapping) else scopes))


def _closing(template: str, name: str, start: int) -> re.Match:
    """The tag closing the section ``name`` opened before ``start`` (sections of the same name nest)."""
    depth = 1
    for tag in TAG.finditer(template, start):
        kind, found = tag.groups()
        if found != name:
            continue
        depth += 1 if kind in "#^" and kind else -1 if kind == "/" else 0
        if depth == 0:
            return tag
    raise ValueError(f"template: section {name!r} is not closed")
