"""The arithmetic the reference computes in: float64, or exact (the goldens of spec section 8.2).

The formulas of the reference are written once, over the functions of the *active* arithmetic:

- :class:`Float64` (the default) is NumPy's float64: fast, what an implementation does, and what the
  reference computes whenever it runs as an implementation (``--impl reference``, the mutants, diagnosis,
  the computed cases of a declared sinusoid point). Its transcendental functions depend on the CPU, NumPy's
  SIMD dispatch and the C library, by an ulp or a few.
- :class:`Exact` holds every value as an mpmath number of ``precision`` bits (256 unless told) and rounds
  each output once, to the nearest value of its dtype (ties to even, subnormals, overflow to infinity), from
  the real value of the formula: the goldens, the same bytes on any machine. ``embconf regenerate`` computes
  in it (:func:`exact`); mpmath is the optional extra ``exact``, which the runner never needs.

A value is rounded only where the result is the nearest: the working precision carries 64 bits of margin,
and a real value that lies within that margin of a rounding boundary raises :class:`Ambiguous` (the generator
then computes again at twice the precision). A value that fits in the precision less the margin is taken as
exact (a rounded one does so with probability 2**-64), so a tie between two exact values goes to even.
"""

from __future__ import annotations

import importlib.util
import math
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, Iterator, Optional, Union

import numpy as np

from embconf.model.dtypes import round_once

EXACT_HINT = "exact goldens need mpmath: pip install 'embedding-conformance[exact]'"
PRECISION = 256  # bits of the exact arithmetic's working precision
MARGIN = 64  # bits of it not trusted when rounding (errors of the few operations of a formula)


def mpmath_problem() -> str:
    """Why the exact arithmetic cannot be used, in one line ("" when mpmath imports): not installed (the install
    hint), or installed but failing to import (what its import raised)."""
    try:
        if importlib.util.find_spec("mpmath") is None:
            return EXACT_HINT
    except (ImportError, ValueError):
        return EXACT_HINT
    try:
        import mpmath  # noqa: F401
    except (Exception, SystemExit) as exc:  # a broken install: anything its import raises
        said = " ".join(str(exc).split())[:200]
        return f"mpmath is installed but does not import ({type(exc).__name__}{': ' + said if said else ''})"
    return ""


class Ambiguous(ArithmeticError):
    """A real value within the working precision's error of a rounding boundary: compute it more precisely."""


class Float64:
    """NumPy float64: each operation rounds on its own (the runtime reference)."""

    exact = False
    pi = math.pi

    def array(self, values: Any) -> np.ndarray:
        return np.asarray(values, dtype=np.float64)

    def number(self, value: Union[float, int, str]) -> float:
        """A constant of a formula; a string is a decimal (``"0.1"``) read as its nearest float64."""
        return float(value)

    def zeros(self, shape: tuple[int, ...]) -> np.ndarray:
        return np.zeros(shape, dtype=np.float64)

    def sin(self, x: Any) -> Any:
        return np.sin(x)

    def cos(self, x: Any) -> Any:
        return np.cos(x)

    def power(self, base: Any, exponent: Any) -> Any:
        return np.power(base, exponent)

    def log(self, x: Any) -> Any:
        return np.log(x)

    def sqrt(self, x: Any) -> Any:
        return np.sqrt(x)

    def floor(self, x: Any) -> Any:
        return math.floor(x)

    def ceil(self, x: Any) -> Any:
        return math.ceil(x)

    def round(self, values: Any, dtype: "str | np.dtype") -> np.ndarray:
        """``values`` rounded to ``dtype`` (from float64: a second rounding, for float64 the identity)."""
        return round_once(np.asarray(values, dtype=np.float64), dtype)


class Exact:
    """mpmath numbers of ``precision`` bits in NumPy object arrays; :meth:`round` is the only rounding. A real
    number has no sign of zero: a zero rounds to +0.0 (a value the reference copies keeps its bits)."""

    exact = True

    def __init__(self, precision: int = PRECISION) -> None:
        try:
            import mpmath
        except ImportError:
            raise ImportError(EXACT_HINT) from None
        self.context = ctx = mpmath.MPContext()  # its own precision: nothing global changes
        ctx.prec = precision
        self.precision = precision
        self.pi = ctx.pi
        self._mpf = np.frompyfunc(ctx.mpf, 1, 1)
        self._sin, self._cos = np.frompyfunc(ctx.sin, 1, 1), np.frompyfunc(ctx.cos, 1, 1)
        self._power = np.frompyfunc(ctx.power, 2, 1)
        self._log, self._sqrt = np.frompyfunc(ctx.log, 1, 1), np.frompyfunc(ctx.sqrt, 1, 1)
        self._rounded = np.frompyfunc(self._nearest, 2, 1)

    def array(self, values: Any) -> np.ndarray:
        wide = np.asarray(values)
        if wide.dtype != object:
            wide = wide.astype(np.float64)  # every float dtype converts to float64 exactly
        return np.asarray(self._mpf(wide), dtype=object)

    def number(self, value: Union[float, int, str]) -> Any:
        """A constant of a formula; a string is a decimal (``"0.1"``) taken as the real number it names."""
        return self.context.mpf(value)

    def zeros(self, shape: tuple[int, ...]) -> np.ndarray:
        out = np.empty(shape, dtype=object)
        out.fill(self.context.zero)
        return out

    def sin(self, x: Any) -> Any:
        return self._sin(x)

    def cos(self, x: Any) -> Any:
        return self._cos(x)

    def power(self, base: Any, exponent: Any) -> Any:
        return self._power(base, exponent)

    def log(self, x: Any) -> Any:
        return self._log(x)

    def sqrt(self, x: Any) -> Any:
        return self._sqrt(x)

    def floor(self, x: Any) -> Any:
        return int(self.context.floor(x))

    def ceil(self, x: Any) -> Any:
        return int(self.context.ceil(x))

    def round(self, values: Any, dtype: "str | np.dtype") -> np.ndarray:
        """Each value rounded once to the nearest value of ``dtype``."""
        name = dtype if isinstance(dtype, str) else np.dtype(dtype).name
        if np.asarray(values).dtype != object:
            values = self.array(values)
        nearest = self._rounded(values, name)
        return round_once(np.asarray(nearest, dtype=np.float64), name)  # representable: no rounding happens

    def _nearest(self, value: Any, name: str) -> float:
        """The float64 holding the nearest value of ``name`` to the real ``value``."""
        bits, lowest, largest = FORMATS[name]
        x = self.context.mpf(value)
        if not self.context.isfinite(x):
            return float(x)
        if x == 0:
            return 0.0
        negative, mantissa, exponent, _ = x._mpf_  # |x| = mantissa * 2**exponent, mantissa odd
        sign, mantissa = (-1.0 if negative else 1.0), int(mantissa)
        shift = max(mantissa.bit_length() - bits, lowest - exponent)  # bits below the last one kept
        if shift <= 0:
            result = math.ldexp(mantissa, exponent)
        else:
            kept, rest = mantissa >> shift, mantissa & ((1 << shift) - 1)
            half = 1 << (shift - 1)
            if mantissa.bit_length() > self.precision - MARGIN:  # rounded at the working precision
                error = (mantissa >> (self.precision - MARGIN)) + 1  # in units of the mantissa's last bit
                if abs(rest - half) <= error:
                    raise Ambiguous(f"{x} lies within 2**-{self.precision - MARGIN} of a {name} rounding boundary")
            kept += rest > half or (rest == half and kept & 1)  # else exact: a tie goes to even
            result = math.ldexp(kept, exponent + shift) if kept.bit_length() + exponent + shift <= 1024 else math.inf
        return sign * (math.inf if result > largest else result)


# name -> (significant bits, the exponent of the smallest subnormal, the largest finite value)
FORMATS: dict[str, tuple[int, int, float]] = {
    "float64": (53, -1074, float(np.finfo(np.float64).max)),
    "float32": (24, -149, float(np.finfo(np.float32).max)),
    "float16": (11, -24, 65504.0),
    "bfloat16": (8, -133, (2.0 - 2.0**-7) * 2.0**127),
}

FLOAT64 = Float64()
_ACTIVE: ContextVar[Optional[Exact]] = ContextVar("embconf_reference_arithmetic", default=None)


def active() -> Union[Float64, Exact]:
    """The arithmetic the reference computes in now (float64 outside :func:`exact`)."""
    return _ACTIVE.get() or FLOAT64


@lru_cache(maxsize=None)
def _exact(precision: int) -> Exact:
    return Exact(precision)


@contextmanager
def exact(precision: int = PRECISION) -> Iterator[Exact]:
    """Compute the reference exactly inside the block (ImportError with the install hint without mpmath)."""
    arithmetic = _exact(precision)
    token = _ACTIVE.set(arithmetic)
    try:
        yield arithmetic
    finally:
        _ACTIVE.reset(token)
