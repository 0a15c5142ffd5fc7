"""Bounding the texts that come from outside: an implementation decides the size of its exception messages,
its stderr, its skip reasons, its protocol name and version; the runner keeps none of them unbounded.

:func:`bound_text` caps a text at :data:`MAX_TEXT` characters (names and versions at :data:`MAX_NAME`),
saying what was cut (``... [4.9 MB cut]``), and backslash-escapes lone surrogates and control characters, so
every text is safe for the console, JSON and JUnit alike. :func:`escaped_result` does the same to a case result's
texts, which quote the implementation's reprs and type names too: implementation text enters the record escaped,
and every rendering of it (console, JUnit, Markdown, HTML) shows ``\x1b[2J``, never clears a screen. What a case
result keeps of outputs is :mod:`embconf.judging.kept`.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping
from typing import Any

from embconf.model.contract import Reply
from embconf.model.outcomes import CaseResult

MAX_TEXT = 8192  # characters kept of a message, stderr tail or skip reason
MAX_NAME = 200  # characters kept of a name, version or error kind


# Control characters (C0 but newline and tab, DEL, C1) and the bidirectional overrides that reorder a line as
# shown: a terminal obeys them (ESC [2J clears the screen), so they are written as Python writes them: \x1b, \u202e.
_BIDI = [0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_CONTROLS = {
    code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    for code in [*range(0x20), *range(0x7F, 0xA0), *_BIDI]
    if chr(code) not in "\n\t"
}


def safe_text(text: str) -> str:
    """``text`` with lone surrogates (not encodable anywhere) and control characters backslash-escaped."""
    return text.translate(_CONTROLS).encode("utf-8", "backslashreplace").decode("utf-8")


def bound_text(text: Any, limit: int = MAX_TEXT, keep: str = "head") -> str:
    """At most ``limit`` characters of ``text`` (its start, or its end for ``keep="tail"``), saying what was cut."""
    if not isinstance(text, str):
        text = str(text) if isinstance(text, (numbers.Number, type(None))) else f"<{type(text).__name__}>"
    if len(text) <= limit:
        return safe_text(text)
    if keep == "tail":
        cut, kept = text[:-limit], text[-limit:]
        return f"[{_size(cut)} cut] ...{safe_text(kept)}"
    kept, cut = text[:limit], text[limit:]
    return f"{safe_text(kept)}... [{_size(cut)} cut]"


def bounded_reply(reply: Reply) -> Reply:
    """``reply`` with its texts bounded: message and violations (their start), detail (its end), error kind."""
    return dataclasses.replace(
        reply,
        message=bound_text(reply.message),
        detail=bound_text(reply.detail, keep="tail"),
        error_kind=None if reply.error_kind is None else bound_text(reply.error_kind, MAX_NAME),
        violations=[bound_text(v) for v in reply.violations[:32]],
    )


def escaped_result(result: CaseResult) -> CaseResult:
    """``result`` with its texts escaped (:func:`safe_text`): its message (which quotes the implementation's
    replies, reprs and type names), its stderr, its error kind and the documented choice it cites."""
    result.message, result.stderr = safe_text(result.message), safe_text(result.stderr)
    if result.error_kind is not None:
        result.error_kind = safe_text(result.error_kind)
    if result.documented is not None:
        cited = result.documented
        result.documented = dataclasses.replace(cited, link=safe_text(cited.link), sentence=safe_text(cited.sentence))
    return result


def bounded_description(description: Mapping[str, Any]) -> dict[str, Any]:
    """An implementation's self-description (name, version, language...) with every text bounded."""
    return {
        bound_text(key, MAX_NAME): bound_text(value, MAX_NAME) if isinstance(value, str) else value
        for key, value in list(description.items())[:32]
    }


def one_line(text: str, limit: int = 500) -> str:
    """``text`` as one bounded line (for error messages quoting a parser or a file)."""
    return bound_text(" ".join(str(text).split()), limit)


def _size(text: str) -> str:
    count = len(text.encode("utf-8", "surrogatepass"))
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"
