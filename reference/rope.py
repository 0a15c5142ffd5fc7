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
from typing import Any, Iterable, Mapping, Optional

import numpy as np

from embconf.model.rope import (
    MROPE_AXES,
    YARN_BETA_FAST,
    YARN_BETA_SLOW,
    Pairing,
    RopeScaling,
    RopeType,
    batch_positions,
    pairing_of,
)
from embconf.reference.arithmetic import active
from embconf.reference.errors import EmbeddingError

TABLE_DTYPES = ("float32", "float64", "float16", "bfloat16")
# The rotary conventions an implementation may declare (EMB-ROPE-V1..V3): the reference answers under them when
# asked (the ``conventions`` argument), for the goldens under a convention and the cases a run computes for one.
NEGATIVE_SENSE, ATTENTION_BY_CALLER, FLOAT32_TABLES = "negative_sense", "attention_by_caller", "float32_tables"
CONVENTIONS = (NEGATIVE_SENSE, ATTENTION_BY_CALLER, FLOAT32_TABLES)


def under_conventions(scaling: Any, conventions: Iterable[str]) -> Any:
    """The scaling a rotation under ``conventions`` uses: YaRN's attention factor 1 when it is left to the caller
    (EMB-ROPE-V2); ``scaling`` as it is otherwise. An unknown convention is invalid_config."""
    chosen = frozenset(conventions)
    unknown = sorted(chosen - set(CONVENTIONS))
    if unknown:
        raise EmbeddingError("invalid_config", f"unknown rope convention(s) {unknown}")
    if ATTENTION_BY_CALLER in chosen and isinstance(scaling, Mapping) and scaling.get("rope_type") == "yarn":
        return {**scaling, "attention_factor": 1.0}
    return scaling


def sense(conventions: Iterable[str]) -> float:
    """+1, or -1 for the rotation by the negative angle (EMB-ROPE-V1)."""
    return -1.0 if NEGATIVE_SENSE in frozenset(conventions) else 1.0


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
    h = int(rotary_dim) // 2
    for name in ("short_factor", "long_factor"):
        factors = getattr(typed, name)
        if factors is not None and len(factors) != h:
            raise EmbeddingError(
                "invalid_config", f"scaling {name} needs rotary_dim/2 = {h} numbers, got {len(factors)}"
            )
    if typed.mrope_section is not None and sum(typed.mrope_section) != h:
        raise EmbeddingError(
            "invalid_config", f"scaling mrope_section must sum to rotary_dim/2 = {h}, got {list(typed.mrope_section)}"
        )
    return int(rotary_dim), float(base), typed


def _positions(position_ids: Any, scaling: Any = None) -> np.ndarray:
    """position_ids as int64: (T,) or (B, T) (EMB-ROPE-15), with M-RoPE (3, T) or (3, B, T) (EMB-ROPE-14)."""
    ids = np.asarray(position_ids)
    if ids.dtype.kind not in "iu":
        raise EmbeddingError("shape_mismatch", f"position_ids must be an integer array, got dtype {ids.dtype}")
    try:
        mrope = RopeScaling.of(scaling).mrope_section is not None
    except ValueError:
        mrope = False
    if mrope and (ids.ndim not in (2, 3) or ids.shape[0] != MROPE_AXES):
        raise EmbeddingError(
            "shape_mismatch", f"M-RoPE position_ids must be (3, T) or (3, B, T), got shape {ids.shape}"
        )
    if not mrope and ids.ndim not in (1, 2):
        raise EmbeddingError("shape_mismatch", f"position_ids must be (T,) or (B, T), got shape {ids.shape}")
    return ids.astype(np.int64)


def position_grid(ids: np.ndarray, rotary_dim: int, scaling: Any) -> np.ndarray:
    """The position each frequency k of each row turns by, (..., T, h): ``ids`` itself for every k, or with
    M-RoPE the temporal, height or width row that k's section names (EMB-ROPE-14)."""
    h = rotary_dim // 2
    section = RopeScaling.of(scaling).mrope_section
    if section is None:
        return np.broadcast_to(ids[..., None], ids.shape + (h,))
    axis_of = np.repeat(np.arange(MROPE_AXES), section)  # frequency k -> its position axis
    return np.moveaxis(ids[axis_of], 0, -1)


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


def _longrope(r: int, base: Any, s: RopeScaling, length: int) -> tuple[Any, Any]:
    """longrope (SPEC.md EMB-ROPE-13): each frequency divided by its own factor, the long ones past the original
    length; the attention factor given, or sqrt(1 + ln(factor) / ln(L0)) for a factor above 1."""
    ar = active()
    original = s.original_max_position_embeddings or 1
    chosen = s.long_factor if length > original else s.short_factor
    inv_freq = _frequencies(r, base) / ar.array(np.asarray(chosen, dtype=np.float64))
    if s.attention_factor is not None:
        return inv_freq, ar.number(s.attention_factor)
    factor = ar.number(s.factor or 1.0)
    if factor <= 1:
        return inv_freq, ar.number(1)
    return inv_freq, ar.sqrt(1 + ar.log(factor) / ar.log(ar.number(original)))


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
    if s.rope_type is RopeType.LONGROPE:
        return _longrope(r, b, s, max_position + 1)
    inv_freq = _frequencies(r, b)
    if s.rope_type is RopeType.LINEAR:
        inv_freq = inv_freq / ar.number(s.factor or 1.0)
    elif s.rope_type is RopeType.LLAMA3:
        inv_freq = _llama3(inv_freq, s)
    return inv_freq, ar.number(1)


def _cos_sin(position_ids: np.ndarray, rotary_dim: int, base: float, scaling: Any) -> tuple[np.ndarray, np.ndarray]:
    """a*cos(angle), a*sin(angle) of shape (..., T, h), unrounded in the active arithmetic."""
    ar = active()
    inv_freq, attention = inverse_frequencies(rotary_dim, base, scaling, int(position_ids.max(initial=0)))
    angles = ar.array(position_grid(position_ids, rotary_dim, scaling)) * inv_freq
    return attention * ar.cos(angles), attention * ar.sin(angles)


def rope_tables(
    position_ids: np.ndarray,
    rotary_dim: int,
    base: float = 10000.0,
    scaling: Optional[Mapping[str, Any]] = None,
    dtype: str = "float32",
    conventions: Iterable[str] = (),
) -> tuple[np.ndarray, np.ndarray]:
    """(cos, sin), each (T, h): a*cos(p*theta_k) and a*sin(p*theta_k), rounded once to ``dtype`` (EMB-ROPE-1)."""
    scaling = under_conventions(scaling, conventions)
    _config(rotary_dim, base, scaling)
    ids = _positions(position_ids, scaling)
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
    r, _, typed = _config(rotary_dim, base, scaling)
    ids = _positions(position_ids, scaling)
    if x.ndim < 2:
        raise EmbeddingError("shape_mismatch", f"x must have rank >= 2 (..., T, d), got shape {x.shape}")
    if x.shape[-2] != ids.shape[-1]:
        raise EmbeddingError("shape_mismatch", f"x has T = {x.shape[-2]} rows, position_ids has {ids.shape[-1]}")
    if batch_positions(ids.ndim, typed.mrope_section is not None):
        check_batch(x, ids.shape[-2])
    if r > x.shape[-1]:
        raise EmbeddingError("invalid_config", f"rotary_dim {r} exceeds the width d = {x.shape[-1]}")
    try:
        pairing_of(pairing)
    except ValueError as exc:
        raise EmbeddingError("invalid_config", str(exc)) from None
    return ids


def check_batch(x: np.ndarray, batch: int) -> None:
    """Per-batch positions or tables (B, T, ...) need x of shape (B, ..., T, d) (EMB-ROPE-15)."""
    if x.ndim < 3 or x.shape[0] != batch:
        raise EmbeddingError(
            "shape_mismatch", f"per-batch positions of B = {batch} rows need x (B, ..., T, d), got {x.shape}"
        )


def per_row(table: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A (T, w) or (B, T, w) table shaped to broadcast against x (..., T, d) or (B, ..., T, d)."""
    if table.ndim == 2:
        return table
    return table.reshape(table.shape[:1] + (1,) * (x.ndim - 3) + table.shape[1:])


def rotated(
    wide: np.ndarray, ids: np.ndarray, rotary_dim: int, base: float, scaling: Any, pairing: Pairing, sign: float
) -> np.ndarray:
    """``wide`` (in the active arithmetic) with each pair rotated by sign * angle, unrounded; other columns as
    they are."""
    cos, sin = (per_row(t, wide) for t in _cos_sin(ids, rotary_dim, base, scaling))
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
    conventions: Iterable[str] = (),
) -> np.ndarray:
    """x with each pair (i, j) of frequency k rotated by p*theta_k (EMB-ROPE-2..5); columns >= r copied."""
    scaling = under_conventions(scaling, conventions)
    ids = check_call(x, position_ids, rotary_dim, base, scaling, pairing)
    return _rotate(x, ids, int(rotary_dim), float(base), scaling, pairing_of(pairing), sense(conventions))


def rope_backward(
    x: np.ndarray,
    position_ids: np.ndarray,
    rotary_dim: int,
    base: float,
    scaling: Optional[Mapping[str, Any]],
    pairing: str,
    grad_output: np.ndarray,
    conventions: Iterable[str] = (),
) -> np.ndarray:
    """grad_x: grad_output rotated by the negative angle, the transpose of the forward (EMB-ROPE-6)."""
    scaling = under_conventions(scaling, conventions)
    ids = check_call(x, position_ids, rotary_dim, base, scaling, pairing)
    if grad_output.shape != x.shape:
        raise EmbeddingError("shape_mismatch", f"grad_output has shape {grad_output.shape}, x has {x.shape}")
    return _rotate(grad_output, ids, int(rotary_dim), float(base), scaling, pairing_of(pairing), -sense(conventions))
