"""Rotary position embeddings (EMB-ROPE, spec section 14), in the active arithmetic and rounded once.

r = rotary_dim (even, 2 <= r <= d), h = r/2, k = 0..h-1. The frequencies theta_k = base^(-2k/r), changed
by the scaling family (linear, dynamic NTK, YaRN, llama3: Hugging Face's formulas, restated in SPEC.md section 14);
the angle of a position p is p * theta_k. ``rope_tables`` returns one column per frequency, scaled by the
attention factor a (1 unless YaRN). ``rope_forward`` rotates each pair (i, j) of frequency k by the angle of
its row's position; columns r..d-1 pass through. ``rope_backward`` applies the transpose (the negative angle).
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Mapping, Optional

import numpy as np

from embconf.model.rope import YARN_BETA_FAST, YARN_BETA_SLOW, Pairing, RopeScaling, RopeType, pairing_of
from embconf.reference.arithmetic import active
from embconf.reference.errors import EmbeddingError

TABLE_DTYPES = ("float32", "float64", "float16", "bfloat16")


def _config(rotary_dim: Any, base: Any, scaling: Any) -> tuple[int, float, RopeScaling]:
    if isinstance(rotary_dim, bool) or not isinstance(rotary_dim, numbers.Integral):
        raise EmbeddingError("invalid_config", f"rotary_dim must be an integer, got {rotary_dim!r}")
    if rotary_dim < 2 or rotary_dim % 2:
        raise EmbeddingError("invalid_config", f"rotary_dim must be even and >= 2, got {rotary_dim}")
    if isinstance(base, bool) or not isinstance(base, numbers.Real) or not math.isfinite(base) or base <= 0:
        raise EmbeddingError("invalid_config", f"base must be a finite number > 0, got {base!r}")
    try:
        typed = RopeScaling.of(scaling)
    except ValueError as exc:
        raise EmbeddingError("invalid_config", str(exc)) from None
    if typed.rope_type is RopeType.DYNAMIC and rotary_dim == 2:
        raise EmbeddingError("invalid_config", "dynamic scaling needs rotary_dim >= 4 (its exponent is r / (r - 2))")
    return int(rotary_dim), float(base), typed


def _positions(position_ids: Any) -> np.ndarray:
    ids = np.asarray(position_ids)
    if ids.dtype.kind not in "iu":
        raise EmbeddingError("shape_mismatch", f"position_ids must be an integer array, got dtype {ids.dtype}")
    if ids.ndim != 1:
        raise EmbeddingError("shape_mismatch", f"position_ids must be 1-D (T,), got shape {ids.shape}")
    return ids.astype(np.int64)


def _frequencies(r: int, base: Any) -> Any:
    """theta_k = base^(-2k/r), k = 0..r/2-1, in the active arithmetic."""
    ar = active()
    return ar.power(base, -2 * ar.array(np.arange(r // 2)) / r)


def _yarn(r: int, base: Any, s: RopeScaling) -> tuple[Any, Any]:
    """YaRN (SPEC.md EMB-ROPE-9): a ramp between interpolated and original frequencies, and an attention factor."""
    ar = active()
    factor, original = ar.number(s.factor or 1.0), ar.number(s.original_max_position_embeddings or 1)
    extrapolation = _frequencies(r, base)
    interpolation = extrapolation / factor

    def correction_dim(rotations: float) -> Any:
        return r * ar.log(original / (rotations * 2 * ar.pi)) / (2 * ar.log(base))

    low, high = correction_dim(s.beta_fast or YARN_BETA_FAST), correction_dim(s.beta_slow or YARN_BETA_SLOW)
    if s.truncate is not False:
        low, high = ar.floor(low), ar.ceil(high)
    low, high = max(low, 0), min(high, r - 1)
    if low == high:
        high += ar.number("0.001")
    ramp = np.clip((ar.array(np.arange(r // 2)) - low) / (high - low), 0, 1)
    keep = 1 - ramp  # the share of the original (extrapolated) frequency
    inv_freq = interpolation * (1 - keep) + extrapolation * keep

    def mscale(scale: Any, m: float = 1.0) -> Any:
        return ar.number(1) if scale <= 1 else ar.number("0.1") * m * ar.log(scale) + 1

    if s.attention_factor is not None:
        attention = ar.number(s.attention_factor)
    elif s.mscale and s.mscale_all_dim:
        attention = mscale(factor, s.mscale) / mscale(factor, s.mscale_all_dim)
    else:
        attention = mscale(factor)
    return inv_freq, attention


def _llama3(inv_freq: np.ndarray, s: RopeScaling) -> np.ndarray:
    """llama3 (SPEC.md EMB-ROPE-9): long wavelengths divided by factor, short ones kept, a smooth ramp between."""
    ar = active()
    factor, original = ar.number(s.factor or 1.0), ar.number(s.original_max_position_embeddings or 1)
    low, high = ar.number(s.low_freq_factor or 1.0), ar.number(s.high_freq_factor or 1.0)
    wavelen = 2 * ar.pi / inv_freq
    long = np.asarray(wavelen > original / low, dtype=bool)
    scaled = np.where(long, inv_freq / factor, inv_freq)
    smooth = (original / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~np.asarray(wavelen < original / high, dtype=bool) & ~long
    return np.where(medium, smoothed, scaled)


def inverse_frequencies(
    rotary_dim: int, base: float, scaling: Optional[Mapping[str, Any]], max_position: int
) -> tuple[np.ndarray, Any]:
    """(theta_k for k = 0..h-1, the attention factor a) of a configuration, in the active arithmetic (float64
    unless exact); ``max_position`` is max(position_ids), which only dynamic scaling reads."""
    ar = active()
    r, number, s = _config(rotary_dim, base, scaling)
    b = ar.number(number)
    if s.rope_type is RopeType.DYNAMIC:
        length, original, factor = (
            max_position + 1,
            ar.number(s.original_max_position_embeddings or 1),
            ar.number(s.factor or 1),
        )
        if length > original:
            b = b * ar.power((factor * length / original) - (factor - 1), ar.number(r) / (r - 2))
    if s.rope_type is RopeType.YARN:
        return _yarn(r, b, s)
    inv_freq = _frequencies(r, b)
    if s.rope_type is RopeType.LINEAR:
        inv_freq = inv_freq / ar.number(s.factor or 1.0)
    elif s.rope_type is RopeType.LLAMA3:
        inv_freq = _llama3(inv_freq, s)
    return inv_freq, ar.number(1)


def _cos_sin(position_ids: np.ndarray, rotary_dim: int, base: float, scaling: Any) -> tuple[np.ndarray, np.ndarray]:
    """a*cos(angle), a*sin(angle) of shape (T, h), unrounded in the active arithmetic."""
    ar = active()
    inv_freq, attention = inverse_frequencies(rotary_dim, base, scaling, int(position_ids.max(initial=0)))
    angles = ar.array(position_ids)[:, None] * inv_freq[None, :]
    return attention * ar.cos(angles), attention * ar.sin(angles)


def rope_tables(
    position_ids: np.ndarray,
    rotary_dim: int,
    base: float = 10000.0,
    scaling: Optional[Mapping[str, Any]] = None,
    dtype: str = "float32",
) -> tuple[np.ndarray, np.ndarray]:
    """(cos, sin), each (T, h): a*cos(p*theta_k) and a*sin(p*theta_k), rounded once to ``dtype`` (EMB-ROPE-1)."""
    ids = _positions(position_ids)
    _config(rotary_dim, base, scaling)
    if dtype not in TABLE_DTYPES:
        raise EmbeddingError("invalid_config", f"unknown dtype {dtype!r} (known: {', '.join(TABLE_DTYPES)})")
    cos, sin = _cos_sin(ids, rotary_dim, base, scaling)
    return active().round(cos, dtype), active().round(sin, dtype)


def pair_columns(rotary_dim: int, pairing: Any) -> tuple[np.ndarray, np.ndarray]:
    """(i, j): the columns of the pairs, i[k] and j[k] rotating together by frequency k (EMB-ROPE-3)."""
    h = rotary_dim // 2
    if pairing_of(pairing) is Pairing.HALF_SPLIT:
        return np.arange(h), np.arange(h) + h
    return 2 * np.arange(h), 2 * np.arange(h) + 1


def check_call(x: np.ndarray, position_ids: Any, rotary_dim: Any, base: Any, scaling: Any, pairing: Any) -> np.ndarray:
    """position_ids as int64, after the checks of EMB-ROPE-12 on a forward or backward call."""
    ids = _positions(position_ids)
    if x.ndim < 2:
        raise EmbeddingError("shape_mismatch", f"x must have rank >= 2 (..., T, d), got shape {x.shape}")
    if x.shape[-2] != ids.shape[0]:
        raise EmbeddingError("shape_mismatch", f"x has T = {x.shape[-2]} rows, position_ids has {ids.shape[0]}")
    r, _, _ = _config(rotary_dim, base, scaling)
    if r > x.shape[-1]:
        raise EmbeddingError("invalid_config", f"rotary_dim {r} exceeds the width d = {x.shape[-1]}")
    try:
        pairing_of(pairing)
    except ValueError as exc:
        raise EmbeddingError("invalid_config", str(exc)) from None
    return ids


def rotated(
    wide: np.ndarray, ids: np.ndarray, rotary_dim: int, base: float, scaling: Any, pairing: Pairing, sign: float
) -> np.ndarray:
    """``wide`` (in the active arithmetic) with each pair rotated by sign * angle, unrounded; other columns as
    they are."""
    cos, sin = _cos_sin(ids, rotary_dim, base, scaling)
    i, j = pair_columns(rotary_dim, pairing)
    xi, xj = wide[..., i], wide[..., j]
    out = wide.copy()
    out[..., i] = xi * cos - sign * xj * sin
    out[..., j] = xj * cos + sign * xi * sin
    return out


def _rotate(
    values: np.ndarray, ids: np.ndarray, rotary_dim: int, base: float, scaling: Any, pairing: Pairing, sign: float
) -> np.ndarray:
    """``values`` with each pair rotated by sign * angle, rounded once to their dtype; other columns copied."""
    ar = active()
    turned = rotated(ar.array(values), ids, rotary_dim, base, scaling, pairing, sign)
    i, j = pair_columns(rotary_dim, pairing)
    out = values.copy()
    out[..., i] = ar.round(turned[..., i], values.dtype)
    out[..., j] = ar.round(turned[..., j], values.dtype)
    return out


def rope_forward(
    x: np.ndarray,
    position_ids: np.ndarray,
    rotary_dim: int,
    base: float = 10000.0,
    scaling: Optional[Mapping[str, Any]] = None,
    pairing: str = "half_split",
) -> np.ndarray:
    """x with each pair (i, j) of frequency k rotated by p*theta_k (EMB-ROPE-2..5); columns >= r copied."""
    ids = check_call(x, position_ids, rotary_dim, base, scaling, pairing)
    return _rotate(x, ids, int(rotary_dim), float(base), scaling, pairing_of(pairing), 1.0)


def rope_backward(
    x: np.ndarray,
    position_ids: np.ndarray,
    rotary_dim: int,
    base: float,
    scaling: Optional[Mapping[str, Any]],
    pairing: str,
    grad_output: np.ndarray,
) -> np.ndarray:
    """grad_x: grad_output rotated by the negative angle, the transpose of the forward (EMB-ROPE-6)."""
    ids = check_call(x, position_ids, rotary_dim, base, scaling, pairing)
    if grad_output.shape != x.shape:
        raise EmbeddingError("shape_mismatch", f"grad_output has shape {grad_output.shape}, x has {x.shape}")
    return _rotate(grad_output, ids, int(rotary_dim), float(base), scaling, pairing_of(pairing), -1.0)
