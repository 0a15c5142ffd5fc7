"""Text a submission must not carry out of the autograder: every line of the autograder's own files (the base
package, the rubric, ``--withhold`` folders) that is not in the submission's own files. ``embconf gradescope``
withholds it from results.json, which students read: a submission that reads such a file and raises its text
gets the text back replaced by :data:`WITHHELD`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

MIN_CHARS = 12  # a shorter line (``return x``, ``import os``) says nothing of a file and is everywhere
MAX_FILE_BYTES = 2 * 2**20
WITHHELD = "[withheld: text of an autograder file]"


@dataclass(frozen=True)
class Withheld:
    lines: tuple[str, ...]  # longest first, so a line is withheld whole before a line it contains

    def redact(self, data: Any) -> Any:
        """``data`` (strings, lists and dicts of them) with every withheld line replaced."""
        if isinstance(data, str):
            for line in self.lines:
                if line in data:
                    data = data.replace(line, WITHHELD)
            return data
        if isinstance(data, list):
            return [self.redact(item) for item in data]
        if isinstance(data, dict):
            return {key: self.redact(value) for key, value in data.items()}
        return data


def withheld(private: Iterable[Path], own: Iterable[Path]) -> Withheld:
    """The lines of the files under ``private`` (folders or files) that no file under ``own`` holds."""
    allowed = {line for path in _files(own) for line in _lines(path)}
    found = {line for path in _files(private) for line in _lines(path)} - allowed
    return Withheld(tuple(sorted(found, key=lambda line: (-len(line), line))))


def _files(roots: Iterable[Path]) -> list[Path]:
    found: list[Path] = []
    for root in roots:
        if root.is_file():
            found.append(root)
        elif root.is_dir():
            found += [p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return found


def _lines(path: Path) -> set[str]:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return set()
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):  # unreadable or binary (a wheel): no text to withhold
        return set()
    return {stripped for line in text.splitlines() if len(stripped := line.strip()) >= MIN_CHARS}
