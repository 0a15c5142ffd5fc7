"""Quantizing a float table into each format (spec section 17, EMB-QNT-8..12), as the format's public reference
quantizer does it, in float32 arithmetic operation by operation (NumPy float32 is IEEE binary32, round to nearest
even, so these are the same bits on any machine): ggml's ``quantize_row_q8_0_ref`` and ``quantize_row_q4_0_ref``,
FBGEMM's ``FloatToFused8BitRowwiseQuantized`` and ``FloatToFusedNBitRowwiseQuantizedSBHalf`` references, MLX's
``affine_quantize``. The declared quantize conventions (EMB-QNT-V1..V4, ``conventions``) change one step each.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from embconf.model.quantize_conventions import QuantizeConvention
from embconf.model.quantized import GGML_BLOCK, QuantFormat
from embconf.reference.errors import EmbeddingError
from embconf.reference.quantized import checked_format, checked_width
from embconf.reference.quantized_codec import pack_rows

F = np.float32
HALF_EVEN, HALF_AWAY = QuantizeConvention.ROUND_HALF_EVEN.value, QuantizeConvention.ROUND_HALF_AWAY.value
AS_STORED, FROM_MIN = QuantizeConvention.SCALE_AS_STORED.value, QuantizeConvention.BIAS_FROM_MIN.value


def round_away(v: np.ndarray) -> np.ndarray:
    """C's roundf: the nearest integer, a tie away from zero (exact on float32: no sum is rounded)."""
    a = np.abs(v.astype(np.float64))
    return (np.sign(v) * np.floor(a + 0.5)).astype(F)


def _div(a: Any, b: Any) -> np.ndarray:
    """float32 ``a / b``, a zero divisor giving 0 (ggml's ``d ? 1/d : 0``)."""
    a, b = np.asarray(a, F), np.asarray(b, F)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b != 0, a / np.where(b != 0, b, F(1)), F(0)).astype(F)


def _half(values: np.ndarray) -> np.ndarray:
    """float32 values rounded to float16 and back (to nearest even), as ggml and FBGEMM store a scale."""
    return values.astype(np.float16).astype(F)


def _q8_0(x: np.ndarray, chosen: frozenset[str]) -> tuple[np.ndarray, ...]:
    amax = np.abs(x).max(axis=-1)
    d = (amax / F(127)).astype(F)
    inverse = _div(F(1), _half(d) if AS_STORED in chosen else d)
    v = (x * inverse[..., None]).astype(F)
    q = np.rint(v) if HALF_EVEN in chosen else round_away(v)
    return np.clip(q, -128, 127).astype(np.int64), d.astype(np.float16), None  # type: ignore[return-value]


def _q4_0(x: np.ndarray, chosen: frozenset[str]) -> tuple[np.ndarray, ...]:
    first = np.abs(x).argmax(axis=-1)[..., None]  # the first element of the largest magnitude, with its sign
    d = (np.take_along_axis(x, first, axis=-1)[..., 0] / F(-8)).astype(F)
    inverse = _div(F(1), _half(d) if AS_STORED in chosen else d)
    v = (x * inverse[..., None]).astype(F)
    q = np.rint(v) + 8 if HALF_EVEN in chosen else np.trunc((v + F(8.5)).astype(F))
    return np.clip(q, 0, 15).astype(np.int64), d.astype(np.float16), None  # type: ignore[return-value]


def _rint(v: np.ndarray, chosen: frozenset[str]) -> np.ndarray:
    """The nearest integer, a tie to even (lrintf, MLX's round) or away from zero under round_half_away."""
    return round_away(v) if HALF_AWAY in chosen else np.rint(v)


def _fused8(x: np.ndarray, chosen: frozenset[str]) -> tuple[np.ndarray, ...]:
    low, high = x.min(axis=-1), x.max(axis=-1)
    span = (high - low).astype(F)
    scale = (span / F(255)).astype(F)
    inverse = (F(255) / (span + F(1e-8)).astype(F)).astype(F)
    v = ((x - low[:, None]).astype(F) * inverse[:, None]).astype(F)
    return np.clip(_rint(v, chosen), 0, 255).astype(np.int64), scale[:, None], low[:, None].astype(F)


def _fused4(x: np.ndarray, chosen: frozenset[str]) -> tuple[np.ndarray, ...]:
    low = _half(x.min(axis=-1))
    span = (x.max(axis=-1) - low).astype(F)
    scale = _half((span / F(15)).astype(F))
    scale = np.where(scale == 0, F(1), scale).astype(F)
    with np.errstate(divide="ignore"):
        inverse = (F(1) / scale).astype(F)
    infinite = np.isinf(inverse)
    scale, inverse = np.where(infinite, F(1), scale), np.where(infinite, F(1), inverse)
    v = ((x - low[:, None]).astype(F) * inverse[:, None]).astype(F)
    q = np.clip(_rint(v, chosen), 0, 15).astype(np.int64)
    return q, scale[:, None].astype(np.float16), low[:, None].astype(np.float16)


def _affine(x: np.ndarray, fmt: QuantFormat, chosen: frozenset[str]) -> tuple[np.ndarray, ...]:
    assert fmt.group is not None
    groups = x.reshape(x.shape[0], -1, fmt.group)
    low, high, bins = groups.min(axis=-1), groups.max(axis=-1), F(2**fmt.bits - 1)
    scale = np.maximum(((high - low).astype(F) / bins).astype(F), F(1e-7)).astype(F)
    if FROM_MIN in chosen:
        bias = low
    else:
        lower = np.abs(low) > np.abs(high)
        scale = np.where(lower, scale, -scale).astype(F)
        edge = np.where(lower, low, high).astype(F)
        q0 = np.rint((edge / scale).astype(F))
        scale = np.where(q0 != 0, _div(edge, q0), scale).astype(F)
        bias = np.where(q0 == 0, F(0), edge).astype(F)
    v = ((groups - bias[..., None]).astype(F) / scale[..., None]).astype(F)
    q = np.clip(_rint(v, chosen), 0, bins).astype(np.int64).reshape(x.shape)
    return q, _stored(scale, fmt.scale_dtype), _stored(bias, fmt.scale_dtype)


def _stored(values: np.ndarray, dtype: str) -> np.ndarray:
    """float32 scales as the format stores them (bfloat16 as its bits, rounded to nearest even)."""
    if dtype == "bfloat16":
        from embconf.model.dtypes import bfloat16_bits

        return bfloat16_bits(values.astype(np.float64))
    return values.astype(dtype)


def quantize_table(weight: Any, format: str, conventions: Iterable[str] = ()) -> np.ndarray:
    """The bytes (int32 0..255, (R, row_bytes)) of the float32 table ``weight`` quantized into ``format`` by its
    reference quantizer (EMB-QNT-8..12), under the declared quantize ``conventions`` (EMB-QNT-V1..V4)."""
    fmt = checked_format(format)
    chosen = frozenset(conventions)
    unknown = chosen - {c.value for c in QuantizeConvention}
    if unknown:
        raise EmbeddingError("invalid_config", f"unknown quantize convention(s) {sorted(unknown)}")
    x = np.asarray(weight)
    if x.ndim != 2:
        raise EmbeddingError("shape_mismatch", f"weight must be 2-D (num_rows, embed_dim), got shape {x.shape}")
    width = checked_width(fmt, x.shape[1])
    x = x.astype(F)
    if fmt.kind in ("q8_0", "q4_0"):
        blocks = x.reshape(x.shape[0], width // GGML_BLOCK, GGML_BLOCK)
        q, d, _ = (_q8_0 if fmt.kind == "q8_0" else _q4_0)(blocks, chosen)
        signed = q if fmt.kind == "q8_0" else q - 8  # Q4_0's nibble less 8, as the codec holds it
        return pack_rows(signed.reshape(x.shape), d, d, fmt).astype(np.int32)
    if fmt.kind == "fused8_rowwise":
        q, scale, bias = _fused8(x, chosen)
    elif fmt.kind == "fused4_rowwise":
        q, scale, bias = _fused4(x, chosen)
    else:
        q, scale, bias = _affine(x, fmt, chosen)
    return pack_rows(q, scale, bias, fmt).astype(np.int32)
