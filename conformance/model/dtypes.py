"""The float dtypes of the spec and how half precision is held in NumPy (spec section 13, EMB-HLF-2).

float16 is NumPy's own. bfloat16 is not: the harness holds it as ``ml_dtypes.bfloat16``,
an optional extra (``pip install 'ml_dtypes<0.7'``, the ``bfloat16`` extra), imported only when a bfloat16
array is made or a run's planned cases hold bfloat16 arrays (:func:`prepare`; importing it costs more than
the rest of a run's start-up). Without it bfloat16 cases
are not_applicable. The encoding of fixtures and of the wire protocol needs no library: a bfloat16
payload is the raw 16-bit patterns.

The suite never relies on a library to round to bfloat16: :func:`round_once` rounds float64 to the nearest
bfloat16 (ties to even, subnormals, overflow to infinity) on the values themselves, because ml_dtypes before
0.7 rounds a float64 through float32 (twice: 1 + 2**-8 + 2**-30 becomes 1.0, not 1.0078125), so any
ml_dtypes >= 0.5 holds the goldens exactly.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from typing import Iterable, Optional

import numpy as np

BFLOAT16_HINT = "bfloat16 arrays need ml_dtypes: pip install 'ml_dtypes<0.7' (the bfloat16 extra)"
HALF_DTYPES = ("float16", "bfloat16")
# dtype name -> the little-endian layout of its payload (bfloat16: its raw bit patterns)
WIRE_LAYOUT: dict[str, str] = {
    "float32": "<f4",
    "float64": "<f8",
    "float16": "<f2",
    "bfloat16": "<u2",
    "int32": "<i4",
    "int64": "<i8",
}


def unavailable_dtype(case_features: Iterable[str]) -> Optional[str]:
    """Why this harness cannot hold a case's arrays (bfloat16 without ml_dtypes, EMB-HLF-2), or None."""
    return BFLOAT16_HINT if "bfloat16" in case_features and not have_bfloat16() else None


@lru_cache(maxsize=None)
def have_bfloat16() -> bool:
    """Whether ml_dtypes can be imported (looked up, not imported)."""
    try:
        return importlib.util.find_spec("ml_dtypes") is not None
    except (ImportError, ValueError):
        return False


@lru_cache(maxsize=None)
def _bfloat16() -> np.dtype:
    import ml_dtypes  # registers the dtype with NumPy

    return np.dtype(ml_dtypes.bfloat16)


def prepare(names: Iterable[str]) -> None:
    """Import now what holding these dtypes needs (ml_dtypes for bfloat16, where it is installed), so that it
    can happen early and side by side: in the runner and in its worker at once, before the cases need it."""
    if "bfloat16" in names and have_bfloat16():
        try:
            _bfloat16()
        except ImportError:
            pass  # numpy_dtype says so when a case needs it


def numpy_dtype(name: str) -> np.dtype:
    """The NumPy dtype of a spec dtype name (ValueError for bfloat16 without ml_dtypes)."""
    if name != "bfloat16":
        return np.dtype(name)
    if not have_bfloat16():
        raise ValueError(BFLOAT16_HINT)
    try:
        return _bfloat16()
    except ImportError:
        raise ValueError(BFLOAT16_HINT) from None


BFLOAT16_MAX = (2.0 - 2.0**-7) * 2.0**127  # the largest finite bfloat16
_BFLOAT16_MIN_EXPONENT = -125  # frexp's exponent of the smallest normal bfloat16, 2**-126 = 0.5 * 2**-125


def bfloat16_bits(values: "np.ndarray | float") -> np.ndarray:
    """The bit patterns (uint16) of ``values`` rounded once to the nearest bfloat16, ties to even: exact for any
    float64 (no detour through float32); NaN becomes the quiet NaN of its sign, overflow infinity."""
    x = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        _, exponent = np.frexp(x)  # |x| in [2**(e-1), 2**e); 8 significant bits, fewer below the normal range
        ulp = np.maximum(exponent, _BFLOAT16_MIN_EXPONENT) - 8
        rounded = np.ldexp(np.rint(np.ldexp(x, -ulp)), ulp)  # scaling by powers of two is exact
        rounded = np.where(np.abs(rounded) > BFLOAT16_MAX, np.copysign(np.inf, x), rounded)
    bits = (rounded.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.where(np.signbit(x), 0xFFC0, 0x7FC0), bits).astype(np.uint16)


def round_once(values: "np.ndarray | float", name: "str | np.dtype") -> np.ndarray:
    """``values`` rounded once to the dtype ``name`` (a spec name or a NumPy dtype); bfloat16 by
    :func:`bfloat16_bits`, the rest by NumPy's own correctly rounded casts."""
    if (name if isinstance(name, str) else np.dtype(name).name) == "bfloat16":
        return bfloat16_bits(values).view(numpy_dtype("bfloat16"))
    return np.asarray(values).astype(name)


def rounded_to(values: "np.ndarray | float", name: str) -> np.ndarray:
    """``values`` rounded once to the float dtype ``name`` and given back as float64: what computing in that
    precision leaves, without holding its arrays (bfloat16 needs no ml_dtypes here)."""
    if name == "bfloat16":
        return (bfloat16_bits(values).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    with np.errstate(over="ignore"):
        return np.asarray(values, dtype=np.float64).astype(name).astype(np.float64)


def to_wire(payload: np.ndarray, name: str) -> bytes:
    """The little-endian bytes of ``payload`` (bfloat16: its bit patterns)."""
    if name == "bfloat16":
        return np.ascontiguousarray(payload).view(np.uint16).astype("<u2").tobytes()
    return np.ascontiguousarray(payload, dtype=WIRE_LAYOUT[name]).tobytes()


def from_wire(raw: bytes, name: str) -> np.ndarray:
    """A flat, writable array of dtype ``name`` from its little-endian bytes."""
    flat = np.frombuffer(raw, dtype=WIRE_LAYOUT[name])
    if name == "bfloat16":
        return flat.astype(np.uint16).view(numpy_dtype("bfloat16"))
    return flat.astype(name)


def shortest_decimal(value: float, name: str) -> str:
    """The shortest decimal (repr-style) that reads back, through float64 and one rounding, as ``value`` in ``name``."""
    stored = round_once(value, name)
    for digits in range(1, 18):
        text = f"{float(stored):.{digits}g}"
        with np.errstate(over="ignore"):
            back = round_once(float(text), name)
        if back == stored:
            return text
    raise AssertionError(f"no decimal reads back as {value!r} in {name}")
