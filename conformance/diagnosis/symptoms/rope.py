"""Symptoms of rotary position embeddings: what the rotation an implementation applied is, in the spec's terms.

The angles of the actual and the expected rotation are measured alike (``diagnosis.rope_fit``) and read
against each other: the other pairing, the negative angle (rotate_half's sign, or a backward that rotates
forward), cos and sin swapped, positions shifted, other frequencies (a base fitted from them, or the scaling
factor applied to every band), an error growing with the position as angles computed in a half dtype do, cos/sin
rounded to bfloat16, a wrong attention factor, pass-through features changed. Nothing is said when no reading
explains every measured angle: a correct float32 computation at any position gets no cause.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Optional

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.diagnosis.rope_fit import (
    EPS,
    PAIRINGS,
    Kind,
    Reading,
    Rotation,
    read,
    rotation,
    table_precision,
    table_rotation,
)
from embconf.diagnosis.rope_models import identified, mistaken, spec_frequencies
from embconf.diagnosis.symptoms.base import Symptom, symptom
from embconf.diagnosis.symptoms.values import epsilon

NOISE_ULPS = 8.0  # the output dtype's roundings an angle measured from it may carry
MEASURED_NOISE = 4e-7  # cos/sin measured back from a float32 rotation of x carry about 1e-7
COARSER = {"float16": "float16 or bfloat16", "bfloat16": "bfloat16 or coarser"}  # what a bound cannot tell apart
RESIDUAL = 1e-3  # the part of an output that is not a rotation of its input, at most, to read its angles
LENGTH_SLACK = 2.0**-6  # a pair's length may change this much (cos/sin rounded to bfloat16 change it by ~2^-9)
FIX_PRECISION = (
    "compute positions, inv_freq and their product in float32 (or wider) and round only cos/sin, once, to the "
    "activation dtype (the precision ruling of EMB-ROPE)"
)


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
        return [_passthrough(case, inputs, source, want, got, noise)]
    positions = np.asarray(inputs["position_ids"], dtype=np.int64)
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
            return [_other_pairing(case, pairing, other, also)] + ([_said(case, inputs, also)] if also else [])
        return []
    if not _is_rotation(actual, expected, scale):
        return []
    implied = actual.amplitude * np.exp(1j * actual.phi)
    if (
        source.dtype.itemsize >= 4
        and table_precision(implied.real[actual.valid], MEASURED_NOISE)
        and table_precision(implied.imag[actual.valid], MEASURED_NOISE)
    ):
        return _with_tables(case, inputs, _reading(actual, expected, positions, noise, inputs, sign))
    reading = _reading(actual, expected, positions, noise, inputs, sign)
    return [] if reading is None else [_said(case, inputs, reading)]


def rotation_symptoms(
    case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray
) -> list[Symptom]:
    """What is wrong with a rope_forward output or a rope_backward grad_x, each symptom under its mistake."""
    return [identified(s) for s in _rotation_symptoms(case, inputs, name, want, got)]


def table_symptoms(case: Case, inputs: Mapping[str, Any], actual: Mapping[str, Any]) -> list[Symptom]:
    """What is wrong with rope_tables' (cos, sin), each symptom under its mistake."""
    return [identified(s) for s in _table_symptoms(case, inputs, actual)]


def _is_rotation(actual: Rotation, expected: Rotation, tolerance: float) -> bool:
    """Whether the output is a rotation of the input, pair by pair, with one length scale for every pair (with a
    single leading row any pair is some rotation and scale of another: the scale tells them apart)."""
    valid = actual.valid & expected.valid & (expected.amplitude > 0)
    if actual.residual > tolerance or not valid.any():
        return False
    ratio = actual.amplitude[valid] / expected.amplitude[valid]
    return bool(np.allclose(ratio, np.median(ratio), rtol=max(tolerance, LENGTH_SLACK), atol=0.0))


def _with_tables(case: Case, inputs: Mapping[str, Any], reading: Optional[Reading]) -> list[Symptom]:
    """cos/sin rounded to bfloat16, and the mistake the angles show besides it (read within that rounding)."""
    tables = _said(case, inputs, Reading(Kind.TABLE_PRECISION))
    if reading is None or not reading.params.get("rough"):
        return [tables]
    return [replace(tables, complete=False), _said(case, inputs, reading)]


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
    if want_cos.dtype.itemsize >= 4 and table_precision(got_cos) and table_precision(got_sin):
        return _with_tables(case, inputs, reading)
    return [] if reading is None else [_said(case, inputs, reading)]


FLOAT16_LARGEST = 65504


def _float16_overflow(case: Case, positions: np.ndarray, got: np.ndarray, axis: tuple[int, ...]) -> list[Symptom]:
    """Not-finite rows exactly where the position exceeds float16's largest finite value."""
    with np.errstate(all="ignore"):
        bad = ~np.all(np.isfinite(got.astype(np.float64)), axis=axis)
    if not bad.any() or bad.shape != positions.shape or not np.array_equal(bad, positions > FLOAT16_LARGEST):
        return []
    return [
        symptom(
            f"rope:angle_precision:{case.operation}:float16_overflow",
            f"the rows of positions above {FLOAT16_LARGEST} are not finite, and only those: the positions (and "
            "angles) were computed in float16, where they overflow to inf",
            FIX_PRECISION,
            title="the angles were computed in float16: positions above 65504 overflow to inf",
            precision="float16",
        )
    ]


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


POSITIONS_EXACT_UP_TO = {"bfloat16": 256, "float16": 2048}  # every integer up to here is exact in that precision


def _angle_words(case: Case) -> str:
    return "the angle -pos*theta_k" if case.operation == "rope_backward" else "the angle pos*theta_k"


def _departure(case: Case, inputs: Mapping[str, Any], departure: str) -> Symptom:
    """One departure of a model from the spec's computation (``rope_fit.family``), said for this operation."""
    op = case.operation
    if departure == "negated" and op == "rope_backward":
        return symptom(
            f"rope:negated:{op}",
            "the backward rotates by +pos*theta_k, the forward's own angle: the gradient of a rotation is the "
            "rotation by the negative angle (its transpose)",
            "rotate grad_output by -pos*theta_k: out_i = g_i*cos + g_j*sin, out_j = g_j*cos - g_i*sin",
        )
    if departure == "negated":
        return symptom(
            f"rope:negated:{op}",
            "rotates by the negative angle -pos*theta_k: rotate_half's sign flipped (cat(x2, -x1)) or sin negated",
            "rotate_half(x) = cat(-x2, x1) and out = x*cos + rotate_half(x)*sin: out_i = x_i*cos - x_j*sin",
        )
    if departure == "swapped":
        return symptom(
            f"rope:swapped:{op}",
            f"cos and sin swapped: each pair is rotated by pi/2 minus {_angle_words(case)}",
            "multiply x by cos(angle) and rotate_half(x) by sin(angle), not the other way round",
        )
    if departure == "shifted:1":
        return symptom(
            f"rope:shifted:{op}:1",
            "the angles are those of position_ids +1: positions counted from 1",
            "use position_ids as given (the first token of a sequence at offset 0 has position 0)",
        )
    if departure == "rows":
        return symptom(
            f"rope:rows:{op}",
            "the angles are those of positions 0..T-1 (the row numbers): position_ids are ignored (a cache offset "
            "or packed restarts lost)",
            "index cos/sin by position_ids, not by the row number",
        )
    if departure.startswith("frequencies:"):
        return _frequencies(case, inputs, {"candidate": departure.removeprefix("frequencies:")})
    part, precision = departure.split(":")
    what = {
        "inv_freq": f"inv_freq was rounded to {precision} before multiplying by the positions",
        "positions": f"the positions were made in {precision} (arange in the activations' dtype), not exact above "
        f"{POSITIONS_EXACT_UP_TO[precision]}",
    }.get(part, f"the angles were computed in {precision} (positions, inv_freq and their product)")
    return symptom(
        f"rope:angle_precision:{op}:{departure}",
        f"{what}: the angle error grows with the position",
        FIX_PRECISION,
        precision=precision,
    )


def _said(case: Case, inputs: Mapping[str, Any], reading: Reading) -> Symptom:
    """The symptom that states ``reading`` for this operation."""
    found = _stated(case, inputs, reading)
    if not reading.params.get("rough"):
        return found
    besides = "; a smaller error besides (cos/sin or the angles in a lower precision)"
    return replace(found, title=found.title + besides, summary=found.summary + besides, complete=False)


def _stated(case: Case, inputs: Mapping[str, Any], reading: Reading) -> Symptom:
    op, kind, p = case.operation, reading.kind, reading.params
    key = f"rope:{kind.value}:{op}"
    if kind is Kind.MODEL:
        said = [_departure(case, inputs, d) for d in p["departures"]]
        said += [_amplitude(case, inputs, float(p["factor"]))] if "factor" in p else []
        if len(said) == 1:
            return said[0]
        return symptom(
            f"rope:combined:{op}:{'+'.join(p['departures'] + (['amplitude'] if 'factor' in p else []))}",
            "; and ".join(s.summary for s in said),
            "; and ".join(s.hint for s in said),
            title="; and ".join(s.title for s in said),
        )
    if kind is Kind.ANGLE_PRECISION:
        precision = p["precision"]
        return symptom(
            f"{key}:{precision}",
            f"the angles are wrong by an error that grows with the position (up to {p['max_error']:.3g} rad, "
            f"{p['small_angle_error']:.2g} rad at the case's smaller angles), within {precision}'s rounding of the "
            f"angle and beyond float32's: the angles (positions, inv_freq or their product) were computed in "
            f"{COARSER[precision]}",
            FIX_PRECISION,
            title=f"the angles were computed in {COARSER[precision]} (positions, inv_freq or their product): the "
            "error grows with the position",
            precision=precision,
            max_error=p["max_error"],
        )
    if kind is Kind.TABLE_PRECISION:
        return symptom(
            key,
            "cos and sin were rounded to bfloat16 before rotating a float32 x (the tables' precision, not the "
            "angles': the error does not grow with the position)",
            "keep cos/sin in float32 (or x's dtype when x is float32); round to bfloat16 only for a bfloat16 x",
        )
    if kind is Kind.AMPLITUDE:
        return _amplitude(case, inputs, float(p["factor"]))
    return _frequencies(case, inputs, p)


CANDIDATE_WORDS = {
    "d_minus_1": "the exponent is 2k/(d-1), not 2k/d (frequencies over d-1)",
    "step_1": "the exponent is k/d, not 2k/d (arange(0, d) without step 2)",
    "head_dim": "the exponent divides by the head dim d, not rotary_dim (partial rotary's frequencies over d)",
    "base_10000": "base 10000 instead of the case's base: the base argument is ignored",
    "every_band": "the scaling factor divides every frequency band (llama3 and yarn scale only the low-frequency ones)",
}
FREQUENCY_FIX = (
    "theta_k = base^(-2k/rotary_dim) for pair k = 0 .. rotary_dim/2 - 1 "
    "(inv_freq = 1 / base ** (arange(0, rotary_dim, 2) / rotary_dim))"
)


def _frequencies(case: Case, inputs: Mapping[str, Any], p: Mapping[str, Any]) -> Symptom:
    key = f"rope:frequencies:{case.operation}"
    scaling = inputs.get("scaling") if isinstance(inputs.get("scaling"), Mapping) else {}
    rope_type = str((scaling or {}).get("rope_type", "default"))
    factor = (scaling or {}).get("factor")
    sign = "negated, and " if p.get("negative") else ""
    if p.get("candidate") == "every_band":
        return symptom(
            f"{key}:every_band",
            f"every frequency is divided by the scaling factor {factor}: {rope_type} scales only the "
            "low-frequency bands (the high-frequency ones keep theta_k), so the factor was applied to every band",
            f"apply {rope_type}'s band rule: wavelengths below the high-frequency cutoff keep theta_k, those above "
            "the low-frequency cutoff get theta_k / factor, the band between is interpolated",
        )
    if p.get("candidate") in CANDIDATE_WORDS:
        return symptom(f"{key}:{p['candidate']}", CANDIDATE_WORDS[p["candidate"]], FREQUENCY_FIX)
    if "ratio" in p:
        ratio = float(p["ratio"])
        return symptom(
            f"{key}:ratio",
            f"{sign}every frequency is {ratio:.6g} times the spec's theta_k",
            "theta_k = base^(-2k/rotary_dim), angle = position * theta_k (with the scaling the case asks for)",
            ratio=ratio,
        )
    if "base" in p:
        return symptom(
            f"{key}:base",
            f"{sign}the frequencies follow base {float(p['base']):.6g} instead of {float(inputs['base']):g}",
            FREQUENCY_FIX,
            base=float(p["base"]),
        )
    return symptom(
        key,
        f"{sign}the frequencies differ from theta_k = base^(-2k/rotary_dim): every pair is a rotation by position "
        "times a frequency of its own",
        FREQUENCY_FIX,
    )


def _amplitude(case: Case, inputs: Mapping[str, Any], factor: float) -> Symptom:
    scaling = inputs.get("scaling") if isinstance(inputs.get("scaling"), Mapping) else {}
    if (scaling or {}).get("rope_type") == "yarn":
        return symptom(
            f"rope:amplitude:{case.operation}:yarn",
            f"cos and sin are {factor:.6g} times the expected: yarn's attention factor is not applied as the spec "
            "applies it (cos and sin are each multiplied by it once)",
            "multiply cos and sin by the attention factor (scaling['attention_factor'], or 0.1*ln(factor) + 1)",
            factor=factor,
        )
    return symptom(
        f"rope:amplitude:{case.operation}",
        f"cos and sin are {factor:.6g} times the expected: a rotation must keep each pair's length",
        "cos(angle) and sin(angle) themselves (times yarn's attention factor only)",
        factor=factor,
    )


def _other_pairing(case: Case, pairing: str, other: str, also: Optional[Reading]) -> Symptom:
    what = {"half_split": "(k, k + r/2), rotate_half", "interleaved": "(2k, 2k + 1), adjacent features"}
    extra = "" if also is None else ", and its angles are off too"
    return symptom(
        f"rope:pairing:{case.operation}:{other}",
        f"rotates the {other} pairs {what[other]} where the case asks for {pairing} {what[pairing]}{extra}",
        f"pair features as {pairing} does, or declare the feature rope-{other} (the pairing you implement) instead "
        f"of rope-{pairing}",
        complete=not extra,
    )


def _passthrough(
    case: Case, inputs: Mapping[str, Any], source: np.ndarray, want: np.ndarray, got: np.ndarray, noise: float
) -> Symptom:
    d, r, pairing = want.shape[-1], int(inputs["rotary_dim"]), str(inputs["pairing"])
    whole = rotation(source, got, d, pairing)
    rotated = whole.residual <= RESIDUAL and not np.allclose(whole.phi[:, r // 2 :], 0.0, atol=noise)
    said = "rotated as well: every feature is rotated" if rotated else "changed"
    return symptom(
        f"rope:passthrough:{case.operation}:{'rotated' if rotated else 'changed'}",
        f"features rotary_dim..d-1 ({r}..{d - 1}) are {said}; partial rotary passes them through unchanged",
        "rotate only x[..., :rotary_dim] and concatenate x[..., rotary_dim:] back unchanged",
    )


__all__ = ["EPS", "rotation_symptoms", "table_symptoms"]
