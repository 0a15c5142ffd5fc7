"""A factor reading, measured: is an output k times the expected, on every element it cites, and how is k printed.

A reading "``x`` is exactly k times the expected value" is a predicate on the elements: each got is k * expected
rounded once to the output dtype (the product lies within half a spacing of got), never a window of many ulps.
Where that fails but every element divided by k is the expected within the case's own tolerance (the one the
comparison judges equality with), the reading drops "exactly". Elsewhere there is no factor. The k printed is a number the predicate
holds for (six significant digits when those are true, more when the predicate needs them: a ratio 0.9999995 is
never printed as 1), and a name (``D``, ``1/B`` ...) is given only when its own value makes the predicate hold.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from embconf.judging.compare import out_of_tolerance

DIGITS = 6  # significant digits a factor is printed with when they are true
MOST_DIGITS = 17  # enough for any float64
OWN_ROUNDING = 2.0**-50  # the float64 division's own error, where a float64 output's window is as fine as float64


@dataclass(frozen=True)
class Factor:
    """k such that got = k * want on every element: the interval of such k, the k printed, and whether it holds
    within one rounding of the dtype (``exact``) or only within the case's tolerance."""

    low: float
    high: float
    text: str
    exact: bool

    @property
    def value(self) -> float:
        return float(self.text)

    def holds(self, value: float) -> bool:
        """Whether the predicate holds for ``value`` (a name's value, such as sqrt(D))."""
        return self.low <= value <= self.high


def epsilon(dtype: np.dtype) -> float:
    """Machine epsilon of a float dtype, bfloat16 included (np.finfo does not know ml_dtypes' types)."""
    return 2.0**-7 if np.dtype(dtype).name == "bfloat16" else float(np.finfo(dtype).eps)


def _smallest(dtype: np.dtype) -> float:
    """The smallest positive (subnormal) number of the dtype."""
    if np.dtype(dtype).name == "bfloat16":
        return 2.0**-133
    return float(np.finfo(dtype).smallest_subnormal)


def rounding_window(got: np.ndarray, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """(below, above): how far under and over each value of ``got`` (numbers of ``dtype``) a real number may be and
    still round to it, half the spacing to each neighbour (the spacing below a power of two is half)."""
    bits = 1 - round(math.log2(epsilon(dtype)))  # significand bits, the implicit one included
    magnitude = np.abs(got)
    _, exponent = np.frexp(magnitude)  # magnitude = m * 2**exponent, 0.5 <= m < 1
    spacing = np.where(magnitude > 0, np.maximum(np.ldexp(1.0, exponent - bits), _smallest(dtype)), _smallest(dtype))
    power_of_two = (magnitude > 0) & (np.ldexp(1.0, exponent - 1) == magnitude)
    lower = np.where(power_of_two, np.maximum(spacing / 2, _smallest(dtype)), spacing)
    toward_zero, away = lower / 2, spacing / 2
    negative = got < 0
    return np.where(negative, away, toward_zero), np.where(negative, toward_zero, away)


def _interval(w: np.ndarray, g: np.ndarray, below: np.ndarray, above: np.ndarray) -> tuple[float, float]:
    """The k with g - below <= k w <= g + above on every element (w != 0): the intersection of their intervals."""
    a, b = (g - below) / w, (g + above) / w
    low, high = float(np.max(np.minimum(a, b))), float(np.min(np.maximum(a, b)))
    return low - abs(low) * OWN_ROUNDING, high + abs(high) * OWN_ROUNDING


def printed(low: float, high: float, near: float, holds: Optional[Callable[[float], bool]] = None) -> str:
    """The number in [low, high] to print: ``near`` at six significant digits when that is inside (and ``holds``),
    else with as many digits as it takes (never a rounder number the interval does not hold); "" when none does."""
    for digits in range(DIGITS, MOST_DIGITS + 1):
        text = f"{near:.{digits}g}"
        if low <= float(text) <= high and (holds is None or holds(float(text))):
            return text
    return ""


def shortest(value: float, dtype: Any = np.float64) -> str:
    """The shortest decimal that is ``value`` as ``dtype`` holds it (an id 10000000.5 is never "1e+07", a float32
    denormal is the number it is): what a sentence prints for a number it names exactly."""
    kind = np.dtype(dtype) if np.dtype(dtype).kind == "f" else np.dtype(np.float32)  # bfloat16: a float32 number
    held = np.asarray(value, dtype=np.float64).astype(dtype).astype(kind).reshape(-1)[0]  # the dtype's own number
    if held == 0 or 1e-4 <= abs(float(held)) < 1e16:
        return np.format_float_positional(held, unique=True, trim="-")
    return np.format_float_scientific(held, unique=True, trim="-")


def within(low: float, high: float, near: float, noise: float = 0.0) -> str:
    """A measured number: ``near`` printed with the digits that keep it inside the measured values' range [low,
    high] widened by the measurement's relative ``noise`` (six digits when those are inside; a ratio measured as
    0.9999995 on every element is never "1")."""
    low, high = min(low, high), max(low, high)
    widened = (low - abs(low) * noise, high + abs(high) * noise)
    return printed(widened[0], widened[1], min(max(near, widened[0]), widened[1])) or repr(near)


def rounded_up(value: float, digits: int) -> str:
    """``value`` (>= 0) printed with ``digits`` significant digits, rounded up: a bound said "up to" stays one."""
    if value <= 0:
        return shortest(value)
    step = 10.0 ** (math.floor(math.log10(value)) - digits + 1)
    up = float(f"{math.ceil(value / step) * step:.{digits}g}")
    return shortest(up if up >= value else up + step)


def factor_of(
    want: np.ndarray, got: np.ndarray, dtype: np.dtype, rule: Optional[Mapping[str, Any]] = None
) -> Optional[Factor]:
    """The factor k with got = k * want on every element (finite, same shape; zeros where want is zero), exact
    within the dtype's rounding, else within the case's tolerance ``rule``; None when no k holds on all."""
    found = factors_of(want, got, dtype, rule)
    return found[0] if found else None


def factors_of(
    want: np.ndarray, got: np.ndarray, dtype: np.dtype, rule: Optional[Mapping[str, Any]] = None
) -> list[Factor]:
    """Each reading that holds, the exact one first: k within one rounding of the dtype, and k within the case's
    tolerance ``rule`` (a wider interval, where a name such as 1/N may hold that the exact k is not)."""
    w, g = want.astype(np.float64).reshape(-1), got.astype(np.float64).reshape(-1)
    if w.shape != g.shape or not w.size or not (np.isfinite(w).all() and np.isfinite(g).all()):
        return []
    nonzero = w != 0
    if not nonzero.any() or np.any(g[~nonzero] != 0):
        return []
    w, g = w[nonzero], g[nonzero]
    if want.dtype.kind == "f" and np.unique(np.abs(w)).size < 2:  # one magnitude: any value is a multiple of it
        return []
    near = float(np.median(g / w))
    below, above = rounding_window(g, dtype)
    low, high = _interval(w, g, below, above)  # k * want rounds to got, element by element
    found = []

    def rounds(k: float) -> bool:  # checked as NumPy rounds (a tie at the window's edge goes to the even side)
        return bool(np.array_equal((k * w).astype(dtype).astype(np.float64), g))

    for near_k in (near, (low + high) / 2) if low <= high else ():
        text = printed(low, high, min(max(near_k, low), high), rounds)
        if text:
            found.append(Factor(low, high, text, exact=True))
            break
    if rule is None or rule.get("kind") != "close" or "position" in rule:  # a position term needs the whole output
        return found
    slack = abs(near) * (float(rule["atol"]) + float(rule["rtol"]) * np.abs(w))  # k times the case's tolerance
    low, high = _interval(w, g, below + slack, above + slack)
    if low > high or low <= 0 <= high:
        return found

    def judged(k: float) -> bool:  # got / k is equal to the expected as the case judges equality
        return not out_of_tolerance(w, g / k, rule).any()

    text = printed(low, high, min(max(near, low), high), judged)
    return found + [Factor(low, high, text, exact=False)] if text else found


def named(factor: Factor, names: Mapping[str, float], dtype: np.dtype) -> tuple[list[str], bool]:
    """The names whose value makes the factor's predicate hold, as a real number or as ``dtype`` holds it (sqrt(D)
    computed in float32), the plain numbers 2 and 1/2 only when no size does; and whether some name held only
    once rounded to ``dtype``."""
    exact = [name for name, value in names.items() if factor.holds(value)]
    rounded = [name for name, value in names.items() if factor.holds(float(np.asarray(value).astype(dtype)))]
    hits = exact or rounded
    return [h for h in hits if h not in ("2", "1/2")] or hits, not exact and bool(rounded)
