"""Text a submission must not carry out of the autograder: every line of the autograder's own files (the base
package, the rubric, ``--withhold`` folders) that is not in the submission's own files. ``embconf gradescope``
withholds it from results.json, which students read: a submission that reads such a file and raises its text
gets the text back replaced by :data:`WITHHELD`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable

from embconf.grading.contained import walk

MIN_CHARS = 12  # a shorter line (``return x``, ``import os``) says nothing of a file and is everywhere
PART_CHARS = 24  # a withheld line found inside a longer line of output (``RuntimeError: <the line>``)
MAX_FILE_BYTES = 2 * 2**20
WITHHELD = "[withheld: text of an autograder file]"


@dataclass(frozen=True)
class Withheld:
    lines: frozenset[str]

    def redact(self, data: Any) -> Any:
        """``data`` (strings, lists and dicts of them) with every line of output that is a withheld line, and
        every withheld line of at least PART_CHARS inside a line of output, replaced."""
        if isinstance(data, str):
            return "\n".join(self._line(line) for line in data.split("\n"))
        if isinstance(data, list):
            return [self.redact(item) for item in data]
        if isinstance(data, dict):
            return {key: self.redact(value) for key, value in data.items()}
        return data

    def _line(self, line: str) -> str:
        stripped = line.strip()
        if stripped in self.lines:
            return line[: len(line) - len(line.lstrip())] + WITHHELD
        for secret in self._parts:
            if secret in line:
                line = line.replace(secret, WITHHELD)
        return line

    @cached_property
    def _parts(self) -> list[str]:
        return sorted((line for line in self.lines if len(line) >= PART_CHARS), key=lambda line: -len(line))


def withheld(private: Iterable[Path], own: Iterable[Path]) -> Withheld:
    """The lines of the files under ``private`` (folders or files) that no file under ``own`` holds."""
    allowed = {line for path in _own_files(own) for line in _lines(path)}
    found = {line for path in _files(private) for line in _lines(path)} - allowed
    return Withheld(frozenset(found))


def _files(roots: Iterable[Path]) -> list[Path]:
    found: list[Path] = []
    for root in roots:
        if root.is_file():
            found.append(root)
        elif root.is_dir():
            found += [p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return found


def _own_files(roots: Iterable[Path]) -> list[Path]:
    """A submission's own files: a link out of it (to the solution, say) holds no line of its own."""
    found: list[Path] = []
    for root in roots:
        if root.is_dir() and not root.is_symlink():
            found += [real for _, real in walk(root, root).files]
        elif root.is_file() and not root.is_symlink():
            found.append(root)
    return found


def _lines(path: Path) -> set[str]:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return set()
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):  # unreadable or binary (a wheel): no text to withhold
        return set()
    return {stripped for line in text.splitlines() if len(stripped := line.strip()) >= MIN_CHARS}
