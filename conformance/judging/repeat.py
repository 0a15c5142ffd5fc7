"""``--repeat N``: what tells two runs of the same case apart, bit for bit, and how a change is recorded; and
what tells a first answer judged on pinned rows apart from the whole output asked for again. The loops are
:class:`embconf.session.Session`'s."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from embconf.judging.kept import RowSample
from embconf.model.contract import Reason
from embconf.model.encoding import PinnedRows
from embconf.model.outcomes import FAIL, PROBLEMS, TIMEOUT, CaseResult


def cut_off(result: CaseResult) -> bool:
    """Whether the run timeout ended this case."""
    return result.outcome == TIMEOUT and result.reason == Reason.RUN_TIMEOUT


def mark_nondeterministic(result: CaseResult, note: str, strict: bool) -> None:
    """Add the note to the case; under ``strict`` a case that otherwise succeeded fails."""
    if strict and result.outcome not in PROBLEMS:
        result.outcome, result.message = FAIL, f"{result.id}: {note} (--strict)"
    else:
        result.message = f"{result.message}\n{note}" if result.message else note


Fingerprint = tuple[str, tuple[tuple[str, Any], ...]]


def fingerprint(result: CaseResult) -> Fingerprint:
    """The outcome and a bitwise digest of every output: equal exactly when the runs agree."""
    outputs = tuple((name, _digest(value)) for name, value in sorted((result.actual or {}).items()))
    return result.outcome, outputs


def _digest(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return str(value.dtype), value.shape, hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
    return repr(value)


def difference(before: Fingerprint, after: Fingerprint) -> str:
    """What changed between two fingerprints, in words ('' when nothing did)."""
    if before[0] != after[0]:
        return f"outcome {before[0]} then {after[0]}"
    changed = [name for (name, a), (_, b) in zip(before[1], after[1]) if a != b]
    if changed or len(before[1]) != len(after[1]):
        return f"output(s) {', '.join(repr(n) for n in changed) or 'set'} differ bitwise"
    return ""


def whole_difference(first: CaseResult, whole: CaseResult) -> str:
    """What differs between the first answer to a case, judged on the rows its golden pins, and the whole output
    asked for again, in words ('' when the whole output is the same answer: the same outcome, and in every
    output the first sent as pinned rows the same shape and, on those rows, the same bits)."""
    if first.outcome != whole.outcome:
        return f"outcome {first.outcome} then {whole.outcome}"
    changed = []
    for name, value in sorted((first.actual or {}).items()):
        other = (whole.actual or {}).get(name)
        same = _same_rows(value, other) if isinstance(value, PinnedRows) else _digest(value) == _digest(other)
        if not same:
            changed.append(repr(name))
    return f"output(s) {', '.join(changed)} differ" if changed else ""


def _same_rows(pinned: PinnedRows, whole: Any) -> bool:
    """Whether ``whole`` is an output of the shape and dtype the pinned rows gave, holding the same rows."""
    if isinstance(whole, PinnedRows):  # sent as rows again
        return repr(whole) == repr(pinned)
    if isinstance(whole, RowSample):  # too large to keep whole: the rows it kept of those pinned
        if whole.shape != pinned.shape or whole.dtype != pinned.dtype:
            return False
        position = {row: i for i, row in enumerate(pinned.rows)}
        common = [(i, position[row]) for i, row in enumerate(whole.rows) if row in position]
        return all(_bits(whole.values[i]) == _bits(pinned.values[j]) for i, j in common)
    if not isinstance(whole, np.ndarray) or whole.shape != pinned.shape or whole.dtype != pinned.dtype:
        return False
    return _bits(whole[np.asarray(pinned.rows, dtype=np.intp)]) == _bits(pinned.values)


def _bits(array: np.ndarray) -> bytes:
    return np.ascontiguousarray(array).tobytes()
