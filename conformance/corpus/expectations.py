"""Expectations: the cases an implementation is known to fail, each with a reason.

A YAML file ``{expectations: [{case: GLOB, reason: TEXT}, ...]}``. A listed case
that fails (fail, error, crash, timeout) becomes ``xfail``; one that passes becomes
``xpass``; an entry that matches no case is reported, so lists do not go stale.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from embconf.model.errors import UserError
from embconf.model.outcomes import PASS, PROBLEMS, XFAIL, XPASS, CaseResult
from embconf.untrusted.read import InputError, load_yaml, read_bounded
from embconf.untrusted.write import OutputTarget, PathLike, as_target

MAX_BYTES = 64 << 20  # an expectations file; one entry per case of a 10 000-case corpus is about 2 MB
_GLOB_CHARS = re.compile(r"[*?[]")


class ExpectationsError(UserError):
    """A malformed expectations file (exit code 2)."""


@dataclass
class Entry:
    pattern: str
    reason: str
    matched: bool = False


class Expectations:
    def __init__(self, entries: list[Entry], source: str = "") -> None:
        self.entries = entries
        self.source = source

    @cached_property
    def _index(self) -> tuple[dict[str, int], list[tuple[int, re.Pattern[str]]]]:
        """Exact ids to their first entry's position, and the globs compiled once, in file order."""
        exact: dict[str, int] = {}
        globs = []
        for position, entry in enumerate(self.entries):
            if _GLOB_CHARS.search(entry.pattern):
                globs.append((position, re.compile(fnmatch.translate(entry.pattern))))
            else:
                exact.setdefault(entry.pattern, position)
        return exact, globs

    @classmethod
    def load(cls, path: Path) -> "Expectations":
        """The expectations in ``path``: a regular UTF-8 YAML file of at most MAX_BYTES (ExpectationsError otherwise)."""
        try:
            raw = read_bounded(Path(path), MAX_BYTES, "expectations file")
            document = load_yaml(raw.decode("utf-8"), str(path))
        except FileNotFoundError:
            raise ExpectationsError(f"expectations file {path} does not exist") from None
        except UnicodeDecodeError as exc:
            raise ExpectationsError(f"{path}: the expectations file is not UTF-8 (byte {exc.start})") from None
        except InputError as exc:
            raise ExpectationsError(str(exc)) from None
        return cls(_parse_entries(document, path), str(path))

    def match(self, case_id: str) -> Optional[Entry]:
        """The first entry (in file order) whose id or glob matches ``case_id``, marked as matched."""
        exact, globs = self._index
        first = exact.get(case_id, len(self.entries))
        for position, pattern in globs:
            if position > first:
                break
            if pattern.match(case_id):
                first = position
                break
        if first == len(self.entries):
            return None
        self.entries[first].matched = True
        return self.entries[first]

    def apply(self, result: CaseResult) -> None:
        entry = self.match(result.id)
        if entry is None:
            return
        result.expectation = entry.reason
        if result.outcome in PROBLEMS:
            result.outcome = XFAIL
            result.message = f"expected to fail ({entry.reason}): " + result.message
        elif result.outcome == PASS:
            result.outcome = XPASS
            result.message = f"listed as expected to fail ({entry.reason}) but passed: remove it from {self.source or 'the expectations'}"

    def unmatched(self) -> list[str]:
        return [f"{entry.pattern} ({entry.reason})" for entry in self.entries if not entry.matched]


def _parse_entries(document: Any, path: Path) -> list[Entry]:
    items = document.get("expectations") if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise ExpectationsError(f"{path}: expected a mapping with an 'expectations' list")
    entries = []
    for number, item in enumerate(items, 1):
        if (
            not isinstance(item, dict)
            or set(item) != {"case", "reason"}
            or not all(isinstance(v, str) and v for v in item.values())
        ):
            raise ExpectationsError(
                f"{path}: entry {number} must have exactly a non-empty 'case' (id or glob) and 'reason'"
            )
        entries.append(Entry(item["case"], item["reason"]))
    return entries


def write_from_run(target: Union[PathLike, OutputTarget], results: Sequence[CaseResult], impl: str) -> int:
    """Write an expectations file listing every case that failed in this run; returns how many.

    A case that was already listed keeps its reason; a new one gets its outcome and the first line
    of its failure (and the likely cause, when diagnosed) as a starting point for a human reason.
    Cases that now pass are dropped, so the file always describes today's failures.
    """
    entries = [
        {"case": result.id, "reason": result.expectation or _reason(result)}
        for result in results
        if result.outcome in PROBLEMS or result.outcome == XFAIL
    ]
    header = (
        f"# Cases {impl} is known to fail, written by `embconf run --write-expectations`.\n"
        "# Review each reason; run with --expectations FILE (and --strict to fail on stale entries).\n"
    )
    import yaml  # only to write the file: reading one needs no PyYAML when it is in the emitted subset

    text = yaml.safe_dump({"expectations": entries}, sort_keys=False, width=4096, allow_unicode=True)
    as_target(target).write_text(header + text)
    return len(entries)


def _reason(result: CaseResult) -> str:
    headline = result.message.split("\n", 1)[0]
    headline = headline.split(": ", 1)[1] if headline.startswith(result.id) and ": " in headline else headline
    cause = f" (likely {result.causes[0].key})" if result.causes and result.causes[0].is_mutant else ""
    return f"{result.outcome}: {headline[:160]}{cause}"
