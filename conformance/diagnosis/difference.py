"""What was measured when no known mistake and no fitted symptom explains an output: the difference in plain words.

Where the first difference is and its size, how many elements differ, which rows and columns, and the pattern
when one holds on every differing element (zeros, NaN, one constant factor, one row in every row, a permutation of
the expected rows).
Never a cause: only what the numbers show.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

import numpy as np

from embconf.diagnosis.factors import factor_of, shortest
from embconf.judging.compare import out_of_tolerance
from embconf.model.symptom import UNEXPLAINED, ZERO_VALUES, SymptomKey

SHOWN = 6  # rows or columns listed at most


def _listed(indices: np.ndarray, total: int) -> str:
    values = [int(i) for i in indices]
    shown = ", ".join(map(str, values[:SHOWN])) + (", ..." if len(values) > SHOWN else "")
    return f"{len(values)} of {total} ({shown})"


def pattern(
    want: np.ndarray,
    got: np.ndarray,
    differs: np.ndarray,
    dtype: Optional[np.dtype] = None,
    rule: Optional[Mapping[str, Any]] = None,
) -> str:
    """The one pattern every differing element shares, or "": a factor only where it holds on each of them, within
    one rounding of ``dtype`` (the output's; float64 when not given) or the case's tolerance ``rule``."""
    dtype = np.dtype(np.float64) if dtype is None else dtype
    w, g = want[differs], got[differs]
    if np.all(g == 0):
        return "every differing value is 0"
    if np.all(np.isnan(g)):
        return "every differing value is NaN"
    factor = factor_of(w, g, dtype, rule) if np.all(w != 0) else None
    if factor is not None:
        return f"every differing value is {'exactly ' if factor.exact else ''}{factor.text} times the expected"
    if want.ndim == 2 and got.shape == want.shape and got.shape[0] > 1 and np.all(got == got[0]):
        return "every row of the output is the same row (one vector broadcast into every row)"
    if want.ndim == 2 and got.shape == want.shape:
        rows = np.flatnonzero(np.any(differs, axis=1))
        matched = [np.flatnonzero(np.all(np.isclose(want, got[r], rtol=1e-5, atol=1e-6), axis=1)) for r in rows]
        if rows.size > 1 and all(m.size == 1 for m in matched):
            sources = sorted(int(m[0]) for m in matched)
            if sources == sorted(int(r) for r in rows):
                return "the differing rows are the expected rows in another order (a permutation)"
    return ""


def described(
    name: str, want: np.ndarray, got: np.ndarray, tolerance: float = 1e-6, rule: Optional[Mapping[str, Any]] = None
) -> str:
    """``name``'s difference from the expected, in plain words (same shapes): the elements outside the case's
    tolerance ``rule`` when given (the differences its failure message counts), else outside ``tolerance``."""
    w, g = want.astype(np.float64), got.astype(np.float64)
    differs = differing(want, got, tolerance, rule)
    if not differs.any():
        return ""
    first = tuple(int(i) for i in np.argwhere(differs)[0])
    expected, actual = exactly(float(w[first]), float(g[first]), want.dtype)
    text = (
        f"'{name}' first differs at {list(first)}: expected {expected}, got {actual}; "
        f"{int(differs.sum())} of {differs.size} values differ"
    )
    if w.ndim == 2:
        rows = np.flatnonzero(np.any(differs, axis=1))
        columns = np.flatnonzero(np.any(differs, axis=0))
        text += f", in rows {_listed(rows, w.shape[0])} and columns {_listed(columns, w.shape[1])}"
    found = pattern(w, g, differs, want.dtype, rule)
    return text + (f"; {found}" if found else "")


def differing(
    want: np.ndarray, got: np.ndarray, tolerance: float = 1e-6, rule: Optional[Mapping[str, Any]] = None
) -> np.ndarray:
    """The elements of ``got`` (the golden's shape) outside the case's tolerance ``rule`` when given (the
    differences its failure message counts), else outside ``tolerance``."""
    if rule:
        return np.asarray(out_of_tolerance(want, got, rule), dtype=bool)
    w, g = want.astype(np.float64), got.astype(np.float64)
    with np.errstate(all="ignore"):
        return ~(np.isclose(g, w, rtol=1e-5, atol=tolerance) | (np.isnan(g) & np.isnan(w)))


def exactly(a: float, b: float, dtype: np.dtype) -> tuple[str, str]:
    """Two numbers of ``dtype`` (the output's) each printed as the number it is (``factors.shortest``): never a
    rounding that another number of the dtype would print too."""
    held = dtype if np.dtype(dtype).kind == "f" else np.float32  # bfloat16: its numbers are float32 numbers
    shown = shortest(a, held), shortest(b, held)
    return shown if shown[0] != shown[1] or a == b else apart(a, b)


def apart(a: float, b: float) -> tuple[str, str]:
    """Two different numbers printed with six significant digits, or as many more as it takes to tell them apart."""
    for digits in range(6, 18):
        shown = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if shown[0] != shown[1] or a == b:
            return shown
    return repr(a), repr(b)


def plain_key(operation: str, name: str, text: str) -> str:
    """The key of a plain-words difference: a zeros pattern is the zeros family's (one mistake with an all-zero
    output of the same operation), anything else what was measured, unexplained."""
    family = ZERO_VALUES if text.endswith("every differing value is 0") else UNEXPLAINED
    return str(SymptomKey.of(family, operation, name))
