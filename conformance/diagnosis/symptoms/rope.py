"""Symptoms of rotary position embeddings: what the rotation an implementation applied is, in the spec's terms.

The angles of the actual and the expected rotation are measured alike (``diagnosis.rope_fit``) and read
against each other: the other pairing, the negative angle (rotate_half's sign, or a backward that rotates
forward), cos and sin swapped, positions shifted, other frequencies (a base fitted from them, or the scaling
factor applied to every band), an error growing with the position as angles computed in a half dtype do, cos/sin
rounded to bfloat16, a wrong attention factor, pass-through features changed. Nothing is said when no reading
explains every measured angle: a correct float32 computation at any position gets no cause. Only one row of
positions ``(T,)`` is read: per-batch and M-RoPE positions (EMB-ROPE-14, 15) are left to the catalogue's replay.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Callable, Optional

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.diagnosis.factors import rounded_up
from embconf.diagnosis.rope_fit import (
    EPS,
    NEGATED,
    PAIRINGS,
    Kind,
    Reading,
    Rotation,
    pairs,
    read,
    rotation,
    table_rotation,
    tables_rounded_to,
    wrap,
)
from embconf.diagnosis.rope_models import identified, mistaken, spec_frequencies
from embconf.diagnosis.symptoms.base import Symptom, symptom
from embconf.diagnosis.symptoms.rope_words import (
    FIX_PRECISION,
    RESIDUAL,
    amplitude,
    amplitude_departs,
    departure,
    frequencies,
    passthrough,
)
from embconf.diagnosis.symptoms.values import epsilon
from embconf.judging.compare import out_of_tolerance
from embconf.model.symptom import ROPE, SymptomKey

NOISE_ULPS = 8.0  # the output dtype's roundings an angle measured from it may carry
MEASURED_NOISE = 4e-7  # cos/sin measured back from a float32 rotation of x carry about 1e-7
COARSER = {"float16": "float16 or bfloat16", "bfloat16": "bfloat16 or coarser"}  # what a bound cannot tell apart
LENGTH_SLACK = 2.0**-6  # a pair's length may change this much (cos/sin rounded to bfloat16 change it by ~2^-9)


def _rotation_symptoms(
    case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray
) -> list[Symptom]:
    """What is wrong with a rope_forward output or a rope_backward grad_x."""
    source = np.asarray(inputs["grad_output"] if case.operation == "rope_backward" else inputs["x"])
    if source.shape != want.shape or got.shape != want.shape or source.ndim < 2:
        return []
    d, r, pairing = want.shape[-1], int(inputs["rotary_dim"]), str(inputs["pairing"])
    noise = NOISE_ULPS * epsilon(want.dtype)
    sign = -1.0 if case.operation == "rope_backward" else 1.0
    if r < d and not np.array_equal(got[..., r:].astype(np.float64), source[..., r:].astype(np.float64)):
        return [passthrough(case, inputs, source, want, got, noise)]
    positions = np.asarray(inputs["position_ids"], dtype=np.int64)
    if positions.ndim != 1:  # per-batch or M-RoPE positions: no single angle per row to read
        return []
    overflow = _float16_overflow(case, positions, got[..., :r].reshape((-1,) + got.shape[-2:-1] + (r,)), axis=(0, 2))
    if overflow:
        return overflow
    expected = rotation(source, want, r, pairing)
    actual = rotation(source, got, r, pairing)
    other = next(p for p in PAIRINGS if p != pairing)
    scale = max(RESIDUAL, 16 * epsilon(want.dtype))
    if not _is_rotation(actual, expected, scale) and r > 2:
        swapped = rotation(source, got, r, other)
        if _is_rotation(swapped, expected, scale):
            also = _reading(swapped, expected, positions, noise, inputs, sign)
            besides = [replace(s, complete=False) for s in _said(case, inputs, also)] if also else []
            return [_other_pairing(case, pairing, other, also)] + besides  # the pairing and the angles: two parts
        return []
    if not _is_rotation(actual, expected, scale):
        return []
    implied = actual.amplitude * np.exp(1j * actual.phi)
    rounded = (
        tables_rounded_to(implied.real[actual.valid], implied.imag[actual.valid], MEASURED_NOISE)
        if source.dtype.itemsize >= 4
        else None
    )
    if rounded:
        reading = _reading(actual, expected, positions, noise, inputs, sign)
        steady = _within_rounding(actual, expected, positions, rounded, noise)
        return _with_tables(case, inputs, reading, rounded, steady)
    reading = _reading(actual, expected, positions, noise, inputs, sign)
    if reading is not None and reading.params.get("rough"):
        reading = _besides(reading, case, name, want, lambda turn: _turned(want, turn, r, pairing))
    return [] if reading is None else _said(case, inputs, reading)


def rotation_symptoms(
    case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray
) -> list[Symptom]:
    """What is wrong with a rope_forward output or a rope_backward grad_x, each symptom under its mistake."""
    return [identified(s) for s in _first_call(case, _rotation_symptoms(case, inputs, name, want, got))]


def table_symptoms(case: Case, inputs: Mapping[str, Any], actual: Mapping[str, Any]) -> list[Symptom]:
    """What is wrong with rope_tables' (cos, sin), each symptom under its mistake."""
    return [identified(s) for s in _first_call(case, _table_symptoms(case, inputs, actual))]


STATE_ALIKE = "dynamic_static"  # frequencies grown for a longer length: what state kept from an earlier call gives


def _first_call(case: Case, found: list[Symptom]) -> list[Symptom]:
    """``found`` without the readings that, on a call made after others on one instance, state kept from an
    earlier call explains as well (dynamic frequencies grown for a longer length): said of a first call only."""
    if not case.before:
        return found
    return [s for s in found if s.symptom is None or STATE_ALIKE not in s.symptom.parts]


def _is_rotation(actual: Rotation, expected: Rotation, tolerance: float) -> bool:
    """Whether the output is a rotation of the input, pair by pair, with one length scale for every pair (with a
    single leading row any pair is some rotation and scale of another: the scale tells them apart)."""
    valid = actual.valid & expected.valid & (expected.amplitude > 0)
    if actual.residual > tolerance or not valid.any():
        return False
    ratio = actual.amplitude[valid] / expected.amplitude[valid]
    return bool(np.allclose(ratio, np.median(ratio), rtol=max(tolerance, LENGTH_SLACK), atol=0.0))


def _within_rounding(
    actual: Rotation, expected: Rotation, positions: np.ndarray, precision: str, noise: float
) -> Optional[tuple[int, int]]:
    """(smallest, largest position) when every measured angle is the spec's within what rounding cos and sin to
    ``precision`` moves an angle (half its epsilon, plus the measurement's noise), at two or more positions; else
    None (an angle further off, or a single position: nothing measured about the position)."""
    valid = actual.valid & expected.valid
    if actual.phi.shape != expected.phi.shape or positions.shape != actual.phi.shape[:1] or not valid.any():
        return None
    error = np.abs(wrap(actual.phi - expected.phi))
    rows = np.any(valid, axis=1)
    if np.unique(positions[rows]).size < 2 or not np.all(error[valid] <= EPS[precision] / 2 + noise):
        return None
    return int(positions[rows].min()), int(positions[rows].max())


def _with_tables(
    case: Case,
    inputs: Mapping[str, Any],
    reading: Optional[Reading],
    precision: str = "bfloat16",
    steady: Optional[tuple[int, int]] = None,
) -> list[Symptom]:
    """cos/sin rounded to ``precision``, and the mistake the angles show besides it (read within that rounding);
    ``steady``: the positions at every one of which each angle is the spec's within that rounding (measured)."""
    said = {"precision": precision, "steady": steady}
    tables = _said(case, inputs, Reading(Kind.TABLE_PRECISION, said))
    if reading is None or not reading.params.get("rough"):
        return tables
    named = Reading(reading.kind, {**reading.params, "rough": False})  # the error besides it is the tables' rounding
    return [replace(t, complete=False) for t in tables] + [
        replace(f, complete=False) for f in _said(case, inputs, named)
    ]


def _table_symptoms(case: Case, inputs: Mapping[str, Any], actual: Mapping[str, Any]) -> list[Symptom]:
    """What is wrong with rope_tables' (cos, sin)."""
    want_cos, want_sin = case.expected_outputs.get("cos"), case.expected_outputs.get("sin")
    got_cos, got_sin = actual.get("cos"), actual.get("sin")
    arrays = (want_cos, want_sin, got_cos, got_sin)
    if not all(isinstance(a, np.ndarray) for a in arrays) or len({a.shape for a in arrays}) != 1:  # type: ignore[union-attr]
        return []
    assert isinstance(want_cos, np.ndarray) and isinstance(got_cos, np.ndarray) and isinstance(got_sin, np.ndarray)
    positions = np.asarray(inputs["position_ids"], dtype=np.int64)
    if want_cos.shape[:1] != positions.shape:
        return []
    noise = NOISE_ULPS * epsilon(want_cos.dtype)
    overflow = _float16_overflow(case, positions, got_cos[None], axis=(0, 2))
    if overflow:
        return overflow
    expected = table_rotation(want_cos, case.expected_outputs["sin"])
    reading = _reading(table_rotation(got_cos, got_sin), expected, positions, noise, inputs, 1.0)
    rounded = tables_rounded_to(got_cos, got_sin) if want_cos.dtype.itemsize >= 4 else None
    if rounded:
        steady = _within_rounding(table_rotation(got_cos, got_sin), expected, positions, rounded, noise)
        return _with_tables(case, inputs, reading, rounded, steady)
    if reading is not None and reading.params.get("rough"):
        wanted = want_cos.astype(np.float64) + 1j * np.asarray(want_sin, dtype=np.float64)
        reading = _besides(reading, case, "cos", want_cos, lambda turn: (wanted * np.exp(1j * turn)).real)
        if reading.params.get("rough") is False:  # cos within tolerance once fixed: sin must be too
            reading = _besides(
                reading, case, "sin", np.asarray(want_sin), lambda turn: (wanted * np.exp(1j * turn)).imag
            )
    return [] if reading is None else _said(case, inputs, reading)


FLOAT16_LARGEST = 65504


def _float16_overflow(case: Case, positions: np.ndarray, got: np.ndarray, axis: tuple[int, ...]) -> list[Symptom]:
    """Not-finite rows exactly where the position exceeds float16's largest finite value."""
    with np.errstate(all="ignore"):
        bad = ~np.all(np.isfinite(got.astype(np.float64)), axis=axis)
    if not bad.any() or bad.shape != positions.shape or not np.array_equal(bad, positions > FLOAT16_LARGEST):
        return []
    return [
        symptom(
            SymptomKey.of(ROPE, "angle_precision", case.operation, "float16_overflow"),
            f"the rows of positions above {FLOAT16_LARGEST} are not finite, and only those: the positions (and "
            "angles) were computed in float16, where they overflow to inf",
            FIX_PRECISION,
            title="the angles were computed in float16: positions above 65504 overflow to inf",
            precision="float16",
        )
    ]


def _turned(want: np.ndarray, turn: np.ndarray, rotary_dim: int, pairing: str) -> np.ndarray:
    """The expected output with each pair rotated further by ``turn`` (T, h): what is left of the implementation's
    output once the named mistake is fixed (the rest of its angle error)."""
    z = pairs(want, rotary_dim, pairing) * np.exp(1j * turn)[None]
    out = np.array(want, dtype=np.float64).reshape((-1,) + want.shape[-2:])
    h = rotary_dim // 2
    first, second = (
        (slice(0, h), slice(h, rotary_dim))
        if pairing == "half_split"
        else (slice(0, rotary_dim, 2), slice(1, rotary_dim, 2))
    )
    out[..., first], out[..., second] = z.real, z.imag
    return out.reshape(want.shape)


def _besides(
    reading: Reading, case: Case, name: str, want: np.ndarray, fixed: Callable[[np.ndarray], np.ndarray]
) -> Reading:
    """A reading that held only roughly (a second, smaller error besides its mistake) said without that second
    error when fixing the mistake would make the case pass: the expected output turned by the angles left over
    (``fixed``) is within the case's tolerance of the expected. ``rough`` False: measured, no error besides."""
    residual = reading.params.get("residual")
    if not isinstance(residual, np.ndarray):
        return reading
    try:
        left = fixed(residual).astype(want.dtype)
    except ValueError:
        return reading
    if left.shape != want.shape or out_of_tolerance(want, left, case.tolerance.get(name, {"kind": "exact"})).any():
        return reading
    return Reading(reading.kind, {**reading.params, "rough": False})


def _reading(
    actual: Rotation, expected: Rotation, positions: np.ndarray, noise: float, inputs: Mapping[str, Any], sign: float
) -> Optional[Reading]:
    """``sign`` is -1 for the backward (the spec rotates by the negative angle there)."""
    scaling = inputs.get("scaling") or {}
    plain = isinstance(scaling, Mapping) and scaling.get("rope_type", "default") == "default"
    base = float(inputs["base"]) if plain and isinstance(inputs.get("base"), (int, float)) else None
    theta = spec_frequencies(inputs, positions)
    signed = None if theta is None else sign * theta
    return read(actual, expected, positions, noise, signed, mistaken(inputs), base, int(inputs.get("rotary_dim") or 0))


def _said(case: Case, inputs: Mapping[str, Any], reading: Reading) -> list[Symptom]:
    """The symptoms that state ``reading`` for this operation: one per mistake it shows (each not complete when
    there are several)."""
    found = _stated(case, inputs, reading)
    if len(found) > 1:  # one mistake each: the case is explained once all of them are named
        found = [replace(f, complete=False, measured={**f.measured, "parts": len(found)}) for f in found]
    if not reading.params.get("rough"):
        return found
    besides = "; a smaller error besides (cos/sin or the angles in a lower precision)"
    return [replace(f, title=f.title + besides, summary=f.summary + besides, complete=False) for f in found]


def _stated(case: Case, inputs: Mapping[str, Any], reading: Reading) -> list[Symptom]:
    op, kind, p = case.operation, reading.kind, reading.params
    key = SymptomKey.of(ROPE, kind.value, op)
    if kind is Kind.MODEL:
        said = [departure(case, inputs, d) for d in p["departures"]]
        return said + ([amplitude(case, inputs, p)] if "factor" in p and amplitude_departs(case, p) else [])
    if kind is Kind.FREQUENCIES and p.get("negative"):  # two mistakes: the sense, and the frequencies
        return [departure(case, inputs, NEGATED), frequencies(case, inputs, {**p, "negative": False})]
    if kind is Kind.ANGLE_PRECISION:
        precision = p["precision"]
        return [
            symptom(
                key.extended(precision),
                f"the angles are wrong by an error that grows with the position (up to "
                f"{rounded_up(p['max_error'], 3)} rad, up to {rounded_up(p['small_angle_error'], 2)} rad at the case's "
                f"smaller angles), within {precision}'s rounding of the "
                f"angle and beyond float32's: the angles (positions, inv_freq or their product) were computed in "
                f"{COARSER[precision]}",
                FIX_PRECISION,
                title=f"the angles were computed in {COARSER[precision]} (positions, inv_freq or their product): the "
                "error grows with the position",
                precision=precision,
                max_error=p["max_error"],
            )
        ]
    if kind is Kind.TABLE_PRECISION:  # that the error stays within the rounding: said only where measured
        half, steady = p.get("precision", "bfloat16"), p.get("steady")
        still = (
            f" (on this case every angle is the spec's within that rounding, at every position from {steady[0]} to "
            f"{steady[1]}: no error grows with the position beyond that rounding)"
            if steady
            else ""
        )
        return [
            symptom(
                key if half == "bfloat16" else key.extended(half),
                f"cos and sin were rounded to {half} before rotating a float32 x: every cos and sin the output implies is a {half} number{still}",
                f"keep cos/sin in float32 (or x's dtype when x is float32); round to {half} only for a {half} x",
                title=f"cos and sin were rounded to {half} before rotating a float32 x",
            )
        ]
    if kind is Kind.AMPLITUDE:
        return [amplitude(case, inputs, p)] if amplitude_departs(case, p) else []
    return [frequencies(case, inputs, p)]


def _other_pairing(case: Case, pairing: str, other: str, also: Optional[Reading]) -> Symptom:
    what = {"half_split": "(k, k + r/2), rotate_half", "interleaved": "(2k, 2k + 1), adjacent features"}
    extra = "" if also is None else ", and its angles are off too"
    return symptom(
        SymptomKey.of(ROPE, "pairing", case.operation, other),
        f"rotates the {other} pairs {what[other]} where the case asks for {pairing} {what[pairing]}{extra}",
        f"pair features as {pairing} does, or declare the feature rope-{other} (the pairing you implement) instead "
        f"of rope-{pairing}",
        complete=not extra,
    )


__all__ = ["EPS", "rotation_symptoms", "table_symptoms"]
