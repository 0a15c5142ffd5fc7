"""What a case result keeps of an implementation's outputs (``actual``, for diagnosis and ``--repeat``).

:func:`kept_outputs` keeps arrays whole up to :data:`KEEP_WHOLE_BYTES`, or up to the size of the output the
case expects (so what a run keeps is bounded by its goldens, and a wrong table of the expected shape can still
be fitted whole by diagnosis), a larger array as a :class:`RowSample` (at most :data:`SAMPLE_ROWS` rows of axis
0, among them every row a mismatch was found in, in at most :data:`SAMPLE_BYTES`, plus a SHA-256 of the whole
array). Diagnosis compares a mutant with a sample on the sampled rows only (:func:`compare_kept`): for outputs
above the bound a mutant that differs only on other rows can be named as the likely cause.
"""

from __future__ import annotations

import hashlib
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from embconf.judging.compare import Mismatch, compare_value
from embconf.model.encoding import PinnedRows
from embconf.untrusted.text import MAX_NAME, bound_text

KEEP_WHOLE_BYTES = 1 << 20  # outputs up to 1 MiB are kept whole
SAMPLE_ROWS = 64  # rows kept of a larger output
SAMPLE_BYTES = 1 << 20  # bytes kept of a larger output
MAX_ROW_ELEMENTS = 4096  # a mismatch keeps copies of its rows up to this many elements


@dataclass(frozen=True, eq=False)
class RowSample:
    """Some rows (axis 0) of an output too large to keep whole."""

    shape: tuple[int, ...]
    dtype: np.dtype
    rows: tuple[int, ...]
    values: np.ndarray  # the rows, in order
    sha256: str  # of the whole array's bytes

    def __repr__(self) -> str:  # what --repeat compares (guard.fingerprint): bitwise equal whole arrays
        return f"RowSample({self.dtype}, {list(self.shape)}, sha256={self.sha256})"


def kept_outputs(
    outputs: Mapping[str, Any], mismatches: Sequence[Mismatch] = (), expected_bytes: Optional[Mapping[str, int]] = None
) -> dict[str, Any]:
    """What a case result keeps of an implementation's outputs (the one place that decides it);
    ``expected_bytes``: the size of each output the case expects, which may be kept whole too."""
    for mismatch in mismatches:
        _bound_mismatch(mismatch)
    expected_bytes = expected_bytes or {}
    return {
        name: _kept(
            value,
            [m.index[0] for m in mismatches if m.output == name and m.index],
            max(KEEP_WHOLE_BYTES, expected_bytes.get(name, 0)),
        )
        for name, value in outputs.items()
    }


def _kept(value: Any, mismatch_rows: list[int], whole_bytes: int) -> Any:
    if isinstance(value, PinnedRows):  # the rows sent alone (a failing case is asked for again in whole)
        return value
    if isinstance(value, np.ndarray):
        if value.nbytes <= whole_bytes or value.ndim == 0:
            return value
        return _sample(value, mismatch_rows)
    if (
        value is None
        or isinstance(value, (numbers.Number, np.generic))
        or isinstance(value, (list, tuple))
        and len(value) <= 64
    ):
        return value
    return bound_text(value, MAX_NAME) if isinstance(value, str) else f"<{type(value).__name__} not kept>"


def _sample(array: np.ndarray, mismatch_rows: list[int]) -> Optional[RowSample]:
    """First, last, every mismatching and evenly spaced rows, within the byte budget (None when a row alone exceeds it)."""
    count = array.shape[0]
    row_bytes = array.nbytes // count if count else 0
    budget = min(SAMPLE_ROWS, SAMPLE_BYTES // row_bytes) if row_bytes else 0
    digest = hashlib.sha256(np.ascontiguousarray(array).data).hexdigest()
    if budget == 0:
        return RowSample(array.shape, array.dtype, (), array[:0].copy(), digest)
    rows = list(dict.fromkeys([*mismatch_rows, 0, count - 1]))[:budget]
    spread = np.linspace(0, count - 1, num=budget, dtype=np.int64).tolist()
    rows = sorted(set(rows) | set(spread[: budget - len(rows)])) if budget > len(rows) else sorted(rows)
    return RowSample(array.shape, array.dtype, tuple(rows), array[np.asarray(rows, dtype=np.int64)], digest)


def _bound_mismatch(mismatch: Mismatch) -> None:
    """Drop what would keep a large output alive: views of its rows, a large non-scalar value."""
    mismatch.extra = {
        key: np.array(row)
        for key, row in mismatch.extra.items()
        if isinstance(row, np.ndarray) and row.size <= MAX_ROW_ELEMENTS
    }
    for attribute in ("expected", "actual"):
        value = getattr(mismatch, attribute)
        if not (
            value is None
            or isinstance(value, (numbers.Number, np.generic, str))
            or isinstance(value, (list, tuple))
            and len(value) <= 64
        ):
            setattr(mismatch, attribute, None)


def compare_kept(outputs: Mapping[str, Any], kept: Mapping[str, Any], tolerance: Mapping[str, Any]) -> list[Mismatch]:
    """Where full ``outputs`` (a mutant's) differ from what was kept of the implementation's outputs.

    Whole values compare as usual; a :class:`RowSample` compares on its rows only (an empty sample
    never matches). Used by diagnosis.
    """
    found = []
    for name, want in outputs.items():
        tol = tolerance.get(name, {"kind": "exact"})
        if name not in kept:
            found.append(Mismatch(name, "missing", f"output '{name}' is missing"))
            continue
        got = kept[name]
        if isinstance(got, RowSample):
            mismatch = (
                compare_value(name, got.values, want, tol, got.shape, list(got.rows))
                if got.rows
                else Mismatch(name, "value", f"'{name}' was too large to keep")
            )
        else:
            mismatch = compare_value(name, want, got, tol)
        if mismatch:
            found.append(mismatch)
    return found
