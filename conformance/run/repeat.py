"""``--repeat N``: what tells two runs of the same case apart, bit for bit, and how a change is recorded.
The loop over repetitions is :func:`embconf.session.run`."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from embconf.model.contract import Reason
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
