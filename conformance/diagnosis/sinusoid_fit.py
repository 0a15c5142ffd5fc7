"""Which sinusoid a wrong table is: a fit against a parameterised family of tables.

A member of the family is angle(pos, k) = (pos + origin) * base^(sign * s_k), with
the exponent form s_k (2k/D canonical, k/D, 2k/(D-1), 4k/D, k/(h-1), 0), a layout
of the sine and cosine columns (interleaved, swapped, [sin | cos], [cos | sin]),
and the precision the angles were computed in (float64, float32, float16); a table whose position-0 row is
c x (0, 1, ...) is fitted divided by c, the amplitude (MLX scales by sqrt(2/D)).
Candidates are compared on a sample of rows; an element is judged with the
case's tolerance plus the error its angle carries in that precision
(16 * |angle| * eps), so a mistake computed in float32 is recognised as itself.
The simplest matching member wins (fewest departures from the spec, then the
highest precision); nothing is stated when no member matches.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from embconf.reference.sinusoid import BASE

SAMPLE_ROWS = 48
Form = Callable[[np.ndarray, int], np.ndarray]  # (pair index k, D) -> s_k

FORMS: dict[str, Form] = {
    "2k/D": lambda k, d: 2.0 * k / d,
    "k/D": lambda k, d: k / d,
    "2k/(D-1)": lambda k, d: 2.0 * k / max(d - 1, 1),
    "4k/D": lambda k, d: 4.0 * k / d,
    "k/(h-1)": lambda k, d: k / max(d // 2 - 1, 1),
    "0": lambda k, d: 0.0 * k,
}
BASES: dict[str, float] = {"10000": BASE, "1000": 1000.0, "100": 100.0, "e^4": math.exp(4.0), "10": 10.0, "100000": 1e5}
LAYOUTS = ("interleaved", "swapped", "[sin | cos]", "[cos | sin]")
PRECISIONS = ("float64", "float32", "float16")
CANONICAL = {"base": "10000", "form": "2k/D", "sign": -1, "origin": 0, "layout": "interleaved"}


@dataclass(frozen=True)
class Fit:
    base: str
    form: str
    sign: int
    origin: int
    layout: str
    precision: str
    amplitude: float = 1.0  # every value multiplied by this (MLX's sqrt(2/D)); 1 for the spec's table

    def params(self) -> dict[str, Any]:
        found = {"base": self.base, "form": self.form, "sign": self.sign, "origin": self.origin, "layout": self.layout}
        return found if self.amplitude == 1.0 else {**found, "amplitude": self.amplitude}

    def departures(self) -> list[str]:
        """What differs from the spec's table, in words."""
        words = []
        if self.form == "0":
            return [
                "every pair has frequency 1 (the exponent evaluates to 0: 10000^0, e.g. integer division 2*i // D)"
            ] + self._layout_words()
        if self.base != CANONICAL["base"]:
            words.append(f"base {self.base} instead of 10000")
        if self.sign != -1:
            words.append("the exponent's sign flipped (base^(+s_k): frequencies grow with k)")
        if self.form != CANONICAL["form"]:
            words.append(f"exponent {self.form} instead of 2k/D")
        if self.origin:
            words.append(f"positions counted from {self.origin} instead of 0")
        return words + self._layout_words()  # the amplitude is said where it can be named (symptoms.values)

    def _layout_words(self) -> list[str]:
        return (
            []
            if self.layout == "interleaved"
            else [f"layout {self.layout} instead of interleaved (sin at 2k, cos at 2k+1)"]
        )


PairAngles = tuple[np.ndarray, np.ndarray, np.ndarray]  # sin, cos and |angle| per pair, in float64


def pair_angles(rows: np.ndarray, dim: int, fit: Fit) -> PairAngles:
    """The sines, cosines and |angles| of ``fit``'s pairs at positions ``rows``: everything but the layout."""
    dtype = np.dtype(fit.precision)
    pairs = np.arange((dim + 1) // 2, dtype=np.float64)
    with np.errstate(all="ignore"):
        freq = (BASES[fit.base] ** (fit.sign * FORMS[fit.form](pairs, dim))).astype(dtype)
        angles = (rows.astype(dtype)[:, None] + dtype.type(fit.origin)) * freq[None]
        sin_all, cos_all = np.sin(angles).astype(np.float64), np.cos(angles).astype(np.float64)
    return sin_all, cos_all, np.abs(angles.astype(np.float64))


def candidate(
    rows: np.ndarray, dim: int, fit: Fit, angles: Optional[PairAngles] = None
) -> tuple[np.ndarray, np.ndarray]:
    """(table rows, |angle| per column) of ``fit`` at positions ``rows``, from its ``pair_angles`` when given."""
    sin_all, cos_all, magnitude = pair_angles(rows, dim, fit) if angles is None else angles
    half = dim // 2
    even, odd = {
        "interleaved": (sin_all, cos_all),
        "swapped": (cos_all, sin_all),
        "[sin | cos]": (sin_all, cos_all),
        "[cos | sin]": (cos_all, sin_all),
    }[fit.layout]
    if fit.layout in ("interleaved", "swapped"):
        table, angle = np.empty((rows.size, dim)), np.empty((rows.size, dim))
        table[:, 0::2], table[:, 1::2] = even, odd[:, :half]
        angle[:, 0::2], angle[:, 1::2] = magnitude, magnitude[:, :half]
        return table, angle
    return np.concatenate([even, odd[:, :half]], axis=1), np.concatenate([magnitude, magnitude[:, :half]], axis=1)


def sample_rows(max_len: int) -> np.ndarray:
    if max_len <= SAMPLE_ROWS:
        return np.arange(max_len)
    return np.unique(np.concatenate([np.arange(16), np.linspace(16, max_len - 1, SAMPLE_ROWS - 16).astype(np.int64)]))


_EPS = {precision: float(np.finfo(precision).eps) for precision in PRECISIONS}


def _slack(angle: np.ndarray, precision: str) -> np.ndarray:
    """Per element, how far a table computed in ``precision`` may stray: exp() of a rounded exponent carries ~10
    ulps of relative error, times the angle; an element whose slack reaches 0.25 says nothing (not informative)."""
    eps = _EPS[precision]
    return 16.0 * angle * eps + 2.0 * eps


def _matches(actual: np.ndarray, table: np.ndarray, angle: np.ndarray, precision: str, atol: np.ndarray) -> bool:
    slack = _slack(angle, precision)
    informative = slack < 0.25
    if informative.mean() < 0.5 or not np.isfinite(actual).all():
        return False
    error = np.abs(actual - table)
    return bool((error <= atol + slack)[informative].all())


def _contradicts(actual: np.ndarray, table: np.ndarray, angle: np.ndarray, precision: str, atol: np.ndarray) -> bool:
    """Whether some element whose value the precision still determines is out of bounds (a cheap first test)."""
    slack = _slack(angle, precision)
    return bool(((np.abs(actual - table) > atol + slack) & (slack < 0.25)).any())


_FITTED: dict[int, tuple[np.ndarray, int, int, Optional[Fit]]] = {}  # the last tables fitted (replay and symptoms ask)


def fit_table(actual: np.ndarray, max_len: int, dim: int) -> Optional[Fit]:
    """The simplest member of the family that reproduces ``actual`` (a (max_len, dim) table), or None."""
    known = _FITTED.get(id(actual))
    if known is not None and known[0] is actual and known[1:3] == (max_len, dim):
        return known[3]
    fit = _fit(actual, max_len, dim)
    if len(_FITTED) >= 4:
        _FITTED.clear()
    _FITTED[id(actual)] = (actual, max_len, dim, fit)
    return fit


def _fit(actual: np.ndarray, max_len: int, dim: int) -> Optional[Fit]:
    if actual.shape != (max_len, dim) or dim < 2 or max_len < 2:
        return None
    rows = sample_rows(max_len)
    got = actual[rows].astype(np.float64)
    largest = float(np.abs(got).max()) if np.isfinite(got).all() else np.inf
    amplitude = 1.0
    if not 0.7 <= largest <= 1.0 + 1e-3:  # every member is sines and cosines: within [-1, 1], sin^2 + cos^2 = 1
        amplitude = _amplitude(got[0]) if rows[0] == 0 else 0.0
        if not amplitude:
            return None
        got = got / amplitude
    probe = np.unique(np.array([0, 1, 2, 3, rows.size // 2, rows.size - 1]).clip(0, rows.size - 1))
    dtype = actual.dtype if actual.dtype.kind == "f" else np.dtype(np.float32)
    # the case's own bound, 2u + 4 * spacing(pos) in the table's dtype (spec 8.4), per row
    atol = (float(np.finfo(dtype).eps) + 4.0 * np.spacing(np.maximum(rows, 1).astype(dtype)).astype(np.float64))[
        :, None
    ] / abs(amplitude)
    best: Optional[tuple[int, int, Fit]] = None
    probed: dict[tuple[Any, ...], PairAngles] = {}  # the four layouts of one member share its angles
    sampled: dict[tuple[Any, ...], PairAngles] = {}
    for base, form, sign, origin, layout in itertools.product(BASES, FORMS, (-1, 1), (0, 1), LAYOUTS):
        if form == "0" and (base != "10000" or sign != -1):
            continue  # one member stands for 'frequency 1'
        cost = len(Fit(base, form, sign, origin, layout, PRECISIONS[0]).departures())  # the same in every precision
        if best is not None and cost > best[0]:
            continue  # no precision of a member with more departures can win
        for rank, precision in enumerate(PRECISIONS):
            if best is not None and (cost, rank) >= best[:2]:
                continue
            fit = Fit(base, form, sign, origin, layout, precision, amplitude)
            key = (base, form, sign, origin, precision)
            if key not in probed:
                probed[key] = pair_angles(rows[probe], dim, fit)
            quick, quick_angle = candidate(rows[probe], dim, fit, probed[key])
            if _contradicts(got[probe], quick, quick_angle, precision, atol[probe]):
                continue
            if key not in sampled:
                sampled[key] = pair_angles(rows, dim, fit)
            table, angle = candidate(rows, dim, fit, sampled[key])
            if _matches(got, table, angle, precision, atol):
                best = (cost, rank, fit)
                break
    return None if best is None else best[2]


def _amplitude(first_row: np.ndarray) -> float:
    """c when position 0's row is c x (sin 0 = 0, cos 0 = 1): every value 0 or one constant c (|c| not 1, not 0);
    0.0 otherwise (no amplitude to try: the table is no scaled sinusoid)."""
    nonzero = first_row[first_row != 0]
    if not nonzero.size or not np.all(nonzero == nonzero[0]) or nonzero.size * 2 < first_row.size - 1:
        return 0.0
    value = float(nonzero[0])
    return value if abs(abs(value) - 1.0) > 1e-3 else 0.0
