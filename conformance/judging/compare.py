"""Comparing an implementation's outputs with the goldens, by the tolerance stored in the case.

The rules are spec section 8: ``exact`` means the same value, -0.0 distinct from
0.0 and NaN equal to NaN; ``close`` bounds |actual - expected| per element by
atol + rtol*|expected| (+ ulps * spacing(pos) along an axis). Infinities must
match exactly and NaN is accepted only where NaN is expected, under every rule.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from embconf.model.encoding import PinnedRows

SHOWN_DIGITS = 64  # an integer output of more digits is shown by its size


@dataclass
class Mismatch:
    """Why one output differs: enough to write a minimal reproduction."""

    output: str
    kind: str  # "missing", "type", "dtype", "shape", "value"
    summary: str
    index: Optional[tuple[int, ...]] = None  # first differing element, in the full output
    expected: Any = None
    actual: Any = None
    error: Optional[float] = None
    bound: Optional[float] = None
    failing: int = 0  # how many elements are out of tolerance
    total: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def compare_outputs(
    expected: Mapping[str, Any],
    raw_expected: Mapping[str, Any],
    actual: Mapping[str, Any],
    tolerance: Mapping[str, Any],
) -> list[Mismatch]:
    """Every output that is out of tolerance (empty when the case passes)."""
    found = []
    for name, want in expected.items():
        if name not in actual:
            found.append(Mismatch(name, "missing", f"output '{name}' is missing"))
            continue
        rows = raw_expected[name].get("rows") if isinstance(raw_expected[name], dict) else None
        shape = tuple(raw_expected[name]["shape"]) if isinstance(raw_expected[name], dict) else None
        mismatch = compare_value(name, want, actual[name], tolerance.get(name, {"kind": "exact"}), shape, rows)
        if mismatch:
            found.append(mismatch)
    return found


def compare_value(
    name: str,
    want: Any,
    got: Any,
    tol: Mapping[str, Any],
    shape: Optional[tuple[int, ...]] = None,
    rows: Optional[list[int]] = None,
) -> Optional[Mismatch]:
    if want is None:
        return (
            None
            if got is None
            else Mismatch(name, "type", f"'{name}' should be absent (no gradient), got {_describe(got)}", actual=got)
        )
    if isinstance(want, np.ndarray):
        return _compare_array(name, want, got, tol, shape or want.shape, rows)
    return _compare_scalar(name, want, got, tol)


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    return f"{type(value).__name__} {value!r}"[:120]


def _compare_scalar(name: str, want: Any, got: Any, tol: Mapping[str, Any]) -> Optional[Mismatch]:
    if isinstance(got, (bool, np.bool_)) or not isinstance(got, numbers.Real):
        return Mismatch(name, "type", f"'{name}' should be a number, got {_describe(got)}", expected=want, actual=got)
    if isinstance(want, int):
        return _compare_integer(name, want, got)
    if not math.isfinite(_as_float(got)):
        return Mismatch(
            name,
            "value",
            f"'{name}' should be {want!r}, got {number_text(got)}",
            expected=want,
            actual=got,
            failing=1,
            total=1,
        )
    error, bound = abs(_as_float(got) - float(want)), _scalar_bound(want, tol)
    if error > bound:
        return _value_mismatch(name, want, got, error, bound)
    return None


def _compare_integer(name: str, want: int, got: Any) -> Optional[Mismatch]:
    """A count of unbounded width (spec section 6: byte and parameter counts), compared exactly, never through a
    float: an integer answer by its value, a float answer only where it holds that exact integer."""
    if not isinstance(got, numbers.Integral) and not _as_float(got).is_integer():  # also NaN and infinities
        return Mismatch(
            name,
            "value",
            f"'{name}' should be the exact integer {number_text(want)}, got {number_text(got)}",
            expected=want,
            actual=got,
        )
    error = abs(int(got) - want)  # exact: an integral float converts to its integer exactly
    if error == 0:
        return None
    mismatch = _value_mismatch(name, want, got, error, 0.0)
    if not isinstance(got, numbers.Integral) and abs(want) > 2**53:
        mismatch.summary += " (a float, which holds no integer past 2**53 exactly: answer an integer)"
    return mismatch


def _value_mismatch(name: str, want: Any, got: Any, error: "float | int", bound: float) -> Mismatch:
    return Mismatch(
        name,
        "value",
        f"'{name}' should be {number_text(want)}, got {number_text(got)}",
        expected=want,
        actual=got,
        error=_as_float(error),
        bound=bound,
        failing=1,
        total=1,
    )


def number_text(value: Any) -> str:
    """A number as a message shows it: its repr, or for an integer too long to print (Python refuses past 4300
    digits) its size."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and abs(int(value)) >= 10**SHOWN_DIGITS:
        return f"an integer of {int(value).bit_length()} bits"
    return repr(value)


def _as_float(value: Any) -> float:
    """``value`` as a float; an integer past the float range as infinity (a count of unbounded width)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


def _scalar_bound(want: Any, tol: Mapping[str, Any]) -> float:
    if tol.get("kind") != "close":
        return 0.0
    return float(tol["atol"]) + float(tol["rtol"]) * abs(float(want))


def _compare_array(
    name: str, want: np.ndarray, got: Any, tol: Mapping[str, Any], shape: tuple[int, ...], rows: Optional[list[int]]
) -> Optional[Mismatch]:
    if got is None:
        return Mismatch(
            name, "missing", f"'{name}' is None: no value reached it (expected an array of shape {list(shape)})"
        )
    if isinstance(got, PinnedRows):  # the rows asked for (from the worker or a protocol peer)
        if rows is None or list(got.rows) != rows:
            return Mismatch(name, "shape", f"'{name}' holds rows {list(got.rows)[:8]}, not the rows its golden pins")
        got, shape_got, rows_got = got.values, got.shape, None
    elif _integer_list(got) and want.dtype.kind in "iu":  # a list of ints for an integer array (shard_bytes, 2.1.0)
        got, shape_got, rows_got = np.array(got, dtype=np.int64), (len(got),), rows
    elif not isinstance(got, np.ndarray):
        return Mismatch(
            name, "type", f"'{name}' should be an array of shape {list(shape)}, got {_describe(got)}", actual=got
        )
    else:
        shape_got, rows_got = got.shape, rows
    if not same_value_type(got.dtype, want.dtype):
        return Mismatch(
            name,
            "dtype",
            f"'{name}' has dtype {dtype_name(got.dtype)}, expected {want.dtype}",
            expected=str(want.dtype),
            actual=str(got.dtype),
        )
    if shape_got != shape:
        return Mismatch(
            name,
            "shape",
            f"'{name}' has shape {list(shape_got)}, expected {list(shape)}",
            expected=list(shape),
            actual=list(shape_got),
        )
    picked = got[np.asarray(rows_got, dtype=np.int64)] if rows_got is not None else got
    if picked.dtype == want.dtype and picked.tobytes() == want.tobytes():
        return None  # the golden's bits exactly: within any tolerance (NaN where it holds NaN, the same signs)
    bad, error, bound = _violations(want, picked, tol, rows)
    if not bad.any():
        return None
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    full_index = (rows[first[0]],) + first[1:] if rows is not None and first else first
    return Mismatch(
        name,
        "value",
        f"'{name}' differs at index {list(full_index)}",
        index=full_index,
        expected=want[first],
        actual=picked[first],
        error=float(error[first]),
        bound=float(bound[first]),
        failing=int(bad.sum()),
        total=int(bad.size),
        extra={"expected_row": want[first[0]], "actual_row": picked[first[0]]} if want.ndim >= 2 else {},
    )


def _integer_list(value: Any) -> bool:
    """Whether ``value`` is a list (or tuple) of integers within int64 (no bools): an integer array's other form."""
    return isinstance(value, (list, tuple)) and all(
        isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and -(2**63) <= v < 2**63
        for v in value
    )


def same_value_type(got: np.dtype, want: np.dtype) -> bool:
    """Whether ``got`` is the spec dtype ``want`` in any byte order (a dtype is a value type, spec 'Dtypes')."""
    return got == want or (got.kind == want.kind and got.itemsize == want.itemsize and got.name == want.name)


def dtype_name(dtype: np.dtype) -> str:
    """The dtype as the spec names it, and the byte order where it is not the machine's (``float64, big-endian``)."""
    order = {">": "big-endian", "<": "little-endian"}.get(dtype.byteorder, "")
    native = "<" if np.little_endian else ">"
    return f"{dtype.name}, {order}" if order and dtype.byteorder != native else dtype.name


def _violations(want: np.ndarray, got: np.ndarray, tol: Mapping[str, Any], rows: Optional[list[int]]):
    """(bad mask, |error|, bound) elementwise."""
    if want.dtype.kind in "iu":
        bad = got != want
        return bad, np.abs(got.astype(np.float64) - want), np.zeros(want.shape)
    w, g = want.astype(np.float64), got.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.abs(g - w)
    nan_w, nan_g = np.isnan(w), np.isnan(g)
    same_special = (nan_w & nan_g) | (np.isinf(w) & (g == w))
    if tol.get("kind") == "close":
        bound = float(tol["atol"]) + float(tol["rtol"]) * np.abs(np.where(np.isfinite(w), w, 0.0))
        if "position" in tol:
            bound = bound + _position_term(want, tol["position"], rows)
        finite_bad = np.isfinite(w) & ~(error <= bound)
    else:
        bound = np.zeros(want.shape)
        finite_bad = np.isfinite(w) & ((g != w) | (np.signbit(g) != np.signbit(w)))
    bad = finite_bad | (~np.isfinite(w) & ~same_special) | (np.isfinite(w) & nan_g)
    error = np.where(np.isnan(error), np.inf, error)
    return bad, error, bound


def _position_term(want: np.ndarray, position: Mapping[str, Any], rows: Optional[list[int]]) -> np.ndarray:
    """ulps * spacing(pos) in the output dtype, pos = offset + index along ``axis``."""
    axis = int(position["axis"]) % want.ndim
    count = want.shape[axis]
    index = np.asarray(rows, dtype=np.float64) if rows is not None and axis == 0 else np.arange(count, dtype=np.float64)
    pos = np.maximum(index + float(position["offset"]), 1.0).astype(
        position.get("dtype", want.dtype)
    )  # half tables: float32 (EMB-HLF-4)
    term = float(position["ulps"]) * np.spacing(pos).astype(np.float64)
    shape = [1] * want.ndim
    shape[axis] = count
    return term.reshape(shape)


def out_of_tolerance(
    want: np.ndarray, got: np.ndarray, tol: Mapping[str, Any], rows: Optional[list[int]] = None
) -> np.ndarray:
    """The elementwise mask of ``got`` (the shape of ``want``, compared as float64) out of ``tol`` of ``want``;
    ``rows``: the rows of the full output ``want`` holds (for the position-scaled tolerance)."""
    return _violations(want, got, tol, rows)[0]
