"""Which rotation a wrong rotary output is: its angles measured, then read against the spec's.

A rotary output rotates each pair of features (x_i, x_j) of a row by an angle: as a complex number
z = x_i + i x_j, out = a e^(i phi) z. :func:`rotation` measures phi and the amplitude a of every (row, pair)
from an input and an output (summed over the leading axes, so one noisy element does not decide), for either
pairing; the same measurement of the case's expected output gives the spec's angles, so nothing here
recomputes the reference. :func:`read` compares the two and returns the one reading that explains every
measured angle within the noise the output's dtype allows (``Reading``), or None: the other pairing, the
negative angle, cos and sin swapped, positions shifted, other frequencies (a base fitted from them), an error
that grows with the position as angles computed in a half dtype do, or tables rounded to bfloat16.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Iterator, NamedTuple, Optional

import numpy as np

from embconf.model.dtypes import rounded_to

PAIRINGS = ("half_split", "interleaved")
ANGLE_ULPS = 4.0  # roundings of an angle in the precision it was computed in (position, inv_freq, product)
EPS = {"float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}
HALF_PRECISIONS = ("float16", "bfloat16")
TABLE_ROUNDING = 2.0**-7  # radians: more than cos/sin rounded to bfloat16 move an angle
ROUGH = 2.0**-6  # radians: cos/sin rounded to bfloat16 move an angle by up to about 2^-8
LARGEST = {"float16": 65504.0, "bfloat16": 3.0e38}  # positions above this are not finite in that precision


class Kind(enum.Enum):
    OTHER_PAIRING = "other_pairing"
    FREQUENCIES = "frequencies"
    ANGLE_PRECISION = "angle_precision"
    TABLE_PRECISION = "table_precision"
    AMPLITUDE = "amplitude"
    MODEL = "model"  # a member of the family of wrong computations: params["departures"] lists its Departures


@dataclass(frozen=True)
class Reading:
    """What the actual angles are, in terms of the spec's: ``kind`` and its measured parameters."""

    kind: Kind
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Rotation:
    """Angles and amplitudes of every (row, pair), (T, h); ``valid`` where the input pair is not zero;
    ``residual`` the largest part of the output that is not a rotation of the input (relative)."""

    phi: np.ndarray
    amplitude: np.ndarray
    valid: np.ndarray
    residual: float


def pairs(v: np.ndarray, rotary_dim: int, pairing: str) -> np.ndarray:
    """The (L, T, h) complex pairs x_i + i x_j of a (..., T, d) array."""
    v = np.asarray(v, dtype=np.float64)
    v = v.reshape((-1,) + v.shape[-2:])
    h = rotary_dim // 2
    if pairing == "half_split":
        return v[..., :h] + 1j * v[..., h:rotary_dim]
    return v[..., 0:rotary_dim:2] + 1j * v[..., 1:rotary_dim:2]


def rotation(x: np.ndarray, out: np.ndarray, rotary_dim: int, pairing: str) -> Rotation:
    zx, zo = pairs(x, rotary_dim, pairing), pairs(out, rotary_dim, pairing)
    w = np.sum(np.conj(zx) * zo, axis=0)
    power = np.sum(np.abs(zx) ** 2, axis=0)
    valid = power > 0
    amplitude = np.where(valid, np.abs(w) / np.where(valid, power, 1.0), 0.0)
    phi = np.angle(w)
    fitted = amplitude * np.exp(1j * phi) * zx
    scale = max(float(np.max(np.abs(zo), initial=0.0)), float(np.max(np.abs(zx), initial=0.0)), 1e-30)
    residual = float(np.max(np.abs(zo - fitted), initial=0.0)) / scale
    return Rotation(phi, amplitude, valid, residual)


def table_rotation(cos: np.ndarray, sin: np.ndarray) -> Rotation:
    """The angles and amplitudes of (cos, sin) tables of shape (T, h)."""
    c, s = np.asarray(cos, dtype=np.float64), np.asarray(sin, dtype=np.float64)
    c, s = c.reshape((-1,) + c.shape[-1:]), s.reshape((-1,) + s.shape[-1:])
    return Rotation(np.arctan2(s, c), np.hypot(c, s), np.ones(c.shape, dtype=bool), 0.0)


def wrap(a: np.ndarray) -> np.ndarray:
    """Angles folded into [-pi, pi) (NaN stays NaN)."""
    with np.errstate(invalid="ignore"):
        return (np.asarray(a) + math.pi) % (2.0 * math.pi) - math.pi


def _explains(actual: np.ndarray, model: np.ndarray, valid: np.ndarray, noise: np.ndarray) -> bool:
    return bool(np.all(np.abs(wrap(actual - model))[valid] <= noise[valid]))


def frequencies(phi: np.ndarray, positions: np.ndarray) -> Optional[np.ndarray]:
    """Each pair's angle per position step, (h,), from rows whose positions differ by one; None without such rows."""
    p = np.asarray(positions, dtype=np.int64)
    steps = np.nonzero(np.diff(p) == 1)[0]
    if steps.size == 0:
        return None
    return np.median(wrap(phi[steps + 1] - phi[steps]), axis=0)


def read(
    actual: Rotation,
    expected: Rotation,
    positions: np.ndarray,
    noise: float,
    theta: Optional[np.ndarray] = None,
    frequencies_of: Optional[Mapping[str, np.ndarray]] = None,
    base: Optional[float] = None,
    rotary_dim: int = 0,
) -> Optional[Reading]:
    """The reading of the actual angles that explains every valid one within ``noise`` (radians, the output
    dtype's share), or None. ``theta`` is the spec's signed frequency per pair (h,) when known (else estimated
    from the expected angles); ``frequencies_of`` names the (unsigned) frequencies of known mistakes, each tried
    in the family of models (:func:`family`); ``base`` (the case's, when it uses no scaling) lets a frequency
    reading name the base the actual frequencies follow."""
    valid = actual.valid & expected.valid & np.isfinite(actual.phi)
    if not valid.any():
        return None
    p = np.asarray(positions, dtype=np.float64)[:, None] * np.ones(actual.phi.shape)
    phi, want = actual.phi, expected.phi
    omega_want = theta if theta is not None else frequencies(want, positions)
    magnitude = p * np.abs(omega_want) if omega_want is not None else None
    # a float32 computation of the angles conforms (the precision ruling): its error is noise for every reading
    tight = noise + (ANGLE_ULPS * EPS["float32"] * magnitude if magnitude is not None else 0.0) + np.zeros(phi.shape)
    if _explains(phi, want, valid, tight):
        return _amplitude(actual, expected, valid)
    models = list(family(positions, theta, frequencies_of or {})) if theta is not None else []
    found = _first_model(phi, want, valid, tight, models)
    if found is not None:
        scaled = _amplitude(actual, expected, valid)  # a wrong amplitude besides (yarn's attention factor)
        return found if scaled is None else Reading(found.kind, {**found.params, **scaled.params})
    found = _precision(phi, want, valid, magnitude, noise, float(np.max(np.abs(positions), initial=0)))
    if found is not None and _linear_in_position(phi, want, valid, p, tight):
        return Reading(Kind.FREQUENCIES, {})  # a frequency changed a little (an exponent, a base): not a rounding
    if found is not None:
        return found
    omega = frequencies(phi, positions)
    if omega is not None and omega_want is not None and _explains(phi, p * omega, valid, tight):
        return _frequencies(omega, omega_want, base, rotary_dim)
    # a second, smaller error besides (cos/sin rounded to bfloat16): a model that holds within it is one of two
    fitted = _first_fit(phi, want, valid, tight + ROUGH, models, exact=False)
    if fitted is None:
        return None
    found, angles = fitted
    residual = np.where(valid, wrap(phi - angles), 0.0)  # what is left once the model's angles are the spec's
    return Reading(found.kind, {**found.params, "rough": True, "residual": residual})


MAX_DEPARTURES = 3
GROWTH = 4.0  # a precision error at the largest angle is at least this many times the one at the smaller angles
UNWRAPPED = 1.0  # radians: an angle error below this has not wrapped, so a frequency change shows as p * delta


class Departure(NamedTuple):
    """One way a model departs from the spec's rotary computation: ``what`` (``frequencies``, ``shifted``, ``rows``,
    ``negated``, ``swapped``, or the part of the computation held in a half precision: ``angles``, ``inv_freq``,
    ``positions``) and its ``detail`` (the frequencies' name, the shift, the precision)."""

    what: str
    detail: str = ""

    @property
    def parts(self) -> tuple[str, ...]:
        """What a symptom key says of it: ``what`` and the detail, if any."""
        return (self.what, self.detail) if self.detail else (self.what,)


SHIFTED, ROWS, NEGATED, SWAPPED = (
    Departure("shifted", "1"),
    Departure("rows"),
    Departure("negated"),
    Departure("swapped"),
)
POSITIONS = (None, SHIFTED, ROWS)
PARTS = ("angles", "inv_freq", "positions")  # the parts of the computation a precision bug holds in a half dtype
COMPUTATIONS = (None,) + tuple(Departure(part, precision) for precision in ("float16", "bfloat16") for part in PARTS)


def family(
    positions: np.ndarray, theta: np.ndarray, frequencies_of: Mapping[str, np.ndarray]
) -> Iterator[tuple[tuple[Departure, ...], np.ndarray]]:
    """(departures, angles (T, h)) of every model of a wrong rotary computation, fewest departures first: the
    frequencies (the spec's ``theta``, signed, or a named mistake's), the positions (as given, plus one, the row
    numbers), the computation (exact, or a public precision bug's form), the sense (the negative angle) and cos
    and sin swapped (both signs of pi/2: the forward's and the transpose's)."""
    sign = -1.0 if np.median(theta) < 0 else 1.0
    options = []
    frequencies: dict[Optional[Departure], np.ndarray] = {None: np.abs(theta)}
    frequencies.update({Departure("frequencies", n): f for n, f in frequencies_of.items()})
    for freq_name, omega in frequencies.items():
        for pos_name in POSITIONS:
            if pos_name == ROWS and np.array_equal(positions, np.arange(positions.size)):
                continue
            used = positions + 1 if pos_name == SHIFTED else np.arange(positions.size) if pos_name else positions
            for computation in COMPUTATIONS:
                angles = _computed(used, omega, computation)
                for negated in (False, True):
                    model = -sign * angles if negated else sign * angles
                    for swap in ("", "+", "-"):
                        shaped = (1.0 if swap == "+" else -1.0) * math.pi / 2 - model if swap else model
                        named = (
                            freq_name,
                            pos_name,
                            computation,
                            NEGATED if negated else None,
                            SWAPPED if swap else None,
                        )
                        departures = tuple(d for d in named if d is not None)
                        if 0 < len(departures) <= MAX_DEPARTURES:
                            options.append((departures, shaped))
    return iter(sorted(options, key=lambda option: len(option[0])))


def _computed(positions: np.ndarray, omega: np.ndarray, computation: Optional[Departure]) -> np.ndarray:
    """The angles of ``computation``: exact, or a precision bug's form (the part named held in a half precision;
    a product of two half numbers is exact in float64, so rounding it once is the half multiply)."""
    if computation is None:
        return positions.astype(np.float64)[:, None] * omega
    part, precision = computation
    with np.errstate(all="ignore"):
        if part == "inv_freq":
            rounded = rounded_to(omega, precision).astype(np.float32)
            return (positions.astype(np.float32)[:, None] * rounded).astype(np.float64)
        held = rounded_to(positions, precision).astype(np.float32)
        if part == "positions":  # positions made in the activations' dtype, inv_freq and the product in float32
            return (held[:, None] * omega.astype(np.float32)).astype(np.float64)
        return rounded_to(held.astype(np.float64)[:, None] * rounded_to(omega, precision), precision)


def _first_model(
    phi: np.ndarray,
    want: np.ndarray,
    valid: np.ndarray,
    bound: np.ndarray,
    models: list[tuple[tuple[Departure, ...], np.ndarray]],
) -> Optional[Reading]:
    """The simplest model that explains every valid angle within ``bound``."""
    fitted = _first_fit(phi, want, valid, bound, models)
    return None if fitted is None else fitted[0]


def _first_fit(
    phi: np.ndarray,
    want: np.ndarray,
    valid: np.ndarray,
    bound: np.ndarray,
    models: list[tuple[tuple[Departure, ...], np.ndarray]],
    exact: bool = True,
) -> Optional[tuple[Reading, np.ndarray]]:
    """The simplest model that explains every valid angle within ``bound`` (not ``exact``: and that differs from
    the spec's angles by more than that bound on most of them), with its angles."""
    fits = {d: a for d, a in models}
    for departures, angles in models:
        if _explains(phi, angles, valid, bound) and (exact or _distinct(angles, want, valid, bound)):
            told = [_told(d, departures, fits, phi, valid, bound) for d in departures]
            return Reading(Kind.MODEL, {"departures": told}), angles
    return None


def _told(
    departure: Departure,
    departures: tuple[Departure, ...],
    fits: Mapping[tuple[Departure, ...], np.ndarray],
    phi: np.ndarray,
    valid: np.ndarray,
    bound: np.ndarray,
) -> Departure:
    """A float16 departure as ``(part, "half")`` when the same model in bfloat16 explains the angles too (the cases
    cannot tell the two precisions apart)."""
    if departure.what not in PARTS or departure.detail != "float16":
        return departure
    other = tuple(d._replace(detail="bfloat16") if d == departure else d for d in departures)
    angles = fits.get(other)
    if angles is not None and _explains(phi, angles, valid, bound):
        return departure._replace(detail="half")
    return departure


def _linear_in_position(phi: np.ndarray, want: np.ndarray, valid: np.ndarray, p: np.ndarray, tight: np.ndarray) -> bool:
    """Whether the angle error is position * (a constant per pair): a frequency that differs, which rounding of
    positions or of their product is not (rounding inv_freq alone is, and is a candidate of its own)."""
    error = wrap(phi - want)
    unwrapped = valid & (np.abs(error) < UNWRAPPED)  # where the error has not yet wrapped around pi
    if np.sum(unwrapped) * 2 < np.sum(valid):
        return False
    error = np.where(unwrapped, error, 0.0)
    weight = np.where(unwrapped, p, 0.0)
    denominator = np.sum(weight**2, axis=0)
    delta = np.sum(weight * error, axis=0) / np.where(denominator == 0, 1.0, denominator)
    return _explains(phi, want + p * delta, unwrapped, tight) and bool(np.any(np.abs(delta) > 0))


def _distinct(model: np.ndarray, want: np.ndarray, valid: np.ndarray, bound: np.ndarray) -> bool:
    """Whether ``model`` differs from the spec's angles by more than twice ``bound`` on most valid elements:
    within a rough bound, only then does matching it say anything."""
    far = np.abs(wrap(model - want)) > 2.0 * bound
    return bool(np.sum(far & valid) * 2 > np.sum(valid))


def _amplitude(actual: Rotation, expected: Rotation, valid: np.ndarray) -> Optional[Reading]:
    ratio = actual.amplitude[valid] / np.where(expected.amplitude[valid] == 0, 1.0, expected.amplitude[valid])
    factor = float(np.median(ratio))
    if abs(factor - 1.0) > 1e-3 and np.allclose(ratio, factor, rtol=1e-3):  # low, high: the ratios measured
        return Reading(Kind.AMPLITUDE, {"factor": factor, "low": float(ratio.min()), "high": float(ratio.max())})
    return None


def _precision(
    phi: np.ndarray,
    want: np.ndarray,
    valid: np.ndarray,
    magnitude: Optional[np.ndarray],
    noise: float,
    largest_position: float,
) -> Optional[Reading]:
    """An error that grows with the angle, within a half precision's rounding of it and beyond float32's (the
    tightest precision that explains it; float16 only for positions it can hold)."""
    if magnitude is None:
        return None
    error = np.abs(wrap(phi - want))
    float32 = ANGLE_ULPS * EPS["float32"] * magnitude + noise
    beyond = valid & (error > 8.0 * float32) & (error > TABLE_ROUNDING)
    if not beyond.any():
        return None
    for precision in HALF_PRECISIONS:
        if largest_position > LARGEST[precision]:
            continue
        bound = ANGLE_ULPS * EPS[precision] * magnitude + noise
        measurable = valid & (bound < math.pi / 4)  # where the bound still says something
        if measurable.any() and bool(np.all(error[valid] <= bound[valid])) and (beyond & measurable).any():
            worst = np.unravel_index(int(np.argmax(np.where(valid, error, -1.0))), error.shape)
            small = valid & (magnitude <= np.median(magnitude[valid]))
            if np.max(error[small], initial=0.0) * GROWTH > error[worst]:
                return None  # as large at the small angles: an error that does not grow is no rounding of the angle
            return Reading(
                Kind.ANGLE_PRECISION,
                {
                    "precision": precision,
                    "max_error": float(error[worst]),
                    "row": int(worst[0]),
                    "small_angle_error": float(np.max(error[small], initial=0.0)),
                },
            )
    return None


def _frequencies(omega: np.ndarray, want: np.ndarray, base: Optional[float], rotary_dim: int) -> Reading:
    """Other frequencies: a constant ratio to the spec's, or a base fitted from them (``omega_k = B'^(-2k/r)``)."""
    ratio = np.abs(omega) / np.where(want == 0, 1.0, np.abs(want))
    params: dict[str, Any] = {"negative": bool(np.all(np.sign(omega) == -np.sign(want)))}
    if np.allclose(ratio, ratio[0], rtol=1e-3):
        spread = {"ratio": float(np.median(ratio)), "low": float(ratio.min()), "high": float(ratio.max())}
        return Reading(Kind.FREQUENCIES, {**params, **spread})
    h = omega.size
    if base is not None and rotary_dim and h >= 2 and abs(abs(omega[0]) - 1.0) < 1e-4:
        k = np.arange(1, h)
        with np.errstate(divide="ignore", invalid="ignore"):
            fitted = np.exp(-np.log(np.abs(omega[1:])) * rotary_dim / (2.0 * k))
        if np.all(np.isfinite(fitted)) and np.allclose(fitted, fitted[0], rtol=1e-2):
            spread = {"low": float(fitted.min()), "high": float(fitted.max())}
            return Reading(Kind.FREQUENCIES, {**params, "base": float(np.median(fitted)), **spread})
    return Reading(Kind.FREQUENCIES, params)


TABLE_EVIDENCE = 8  # values large enough that the precision's spacing dwarfs float32's noise, needed to say so
EVIDENCE_FROM = {"bfloat16": 2.0**-4, "float16": 2.0**-2}  # |value| from which a value is such evidence


def table_precision(values: np.ndarray, noise: float = 0.0, precision: str = "bfloat16") -> bool:
    """Whether every value is a ``precision`` number (tables rounded to bfloat16 or float16), within float32's own
    rounding and ``noise`` (absolute: what measuring cos/sin back from a rotated x adds), on enough values to tell."""
    v = np.asarray(values, dtype=np.float64)
    rounded = rounded_to(v, precision)
    close = np.abs(v - rounded) <= 4.0 * EPS["float32"] * np.abs(v) + noise
    return int(np.sum(np.abs(v) >= EVIDENCE_FROM[precision])) >= TABLE_EVIDENCE and bool(np.all(close))


def tables_rounded_to(cos: np.ndarray, sin: np.ndarray, noise: float = 0.0) -> Optional[str]:
    """The half precision every cos and sin is a number of (bfloat16 first: its numbers are float16 ones too)."""
    return next(
        (p for p in ("bfloat16", "float16") if table_precision(cos, noise, p) and table_precision(sin, noise, p)), None
    )
