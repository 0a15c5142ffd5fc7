"""The fused rotation with the tables given as inputs (EMB-ROPE-16, 17; spec section 14, since 2.0.0).

``rope_apply(x, cos, sin, pairing)`` rotates x with tables the caller built (Hugging Face's
``apply_rotary_pos_emb(q, k, cos, sin)``, flash-attn's and Liger's rotary kernels): ``cos`` and ``sin`` are
(T, r) or (B, T, r) of x's dtype, one value per rotated column, so the two columns of a pair may read different
values. Column i of pair (i, j) is ``x_i cos_i - x_j sin_i`` and column j is ``x_j cos_j + x_i sin_j``; columns
r..d-1 pass through. ``rope_apply_backward`` is its transpose: ``g_i cos_i + g_j sin_j`` and ``g_j cos_j - g_i sin_i``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from embconf.reference.arithmetic import active
from embconf.reference.errors import EmbeddingError
from embconf.reference.rope import check_batch, pair_columns, pairing_of, per_row


def check_apply(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, pairing: Any) -> int:
    """r = cos.shape[-1], after the checks of EMB-ROPE-16: x (..., T, d), tables (T, r) or (B, T, r) alike."""
    try:
        pairing_of(pairing)
    except ValueError as exc:
        raise EmbeddingError("invalid_config", str(exc)) from None
    if x.ndim < 2:
        raise EmbeddingError("shape_mismatch", f"x must have rank >= 2 (..., T, d), got shape {x.shape}")
    if cos.shape != sin.shape or cos.ndim not in (2, 3):
        raise EmbeddingError("shape_mismatch", f"cos {cos.shape} and sin {sin.shape} must both be (T, r) or (B, T, r)")
    rotary = cos.shape[-1]
    if cos.shape[-2] != x.shape[-2]:
        raise EmbeddingError("shape_mismatch", f"x has T = {x.shape[-2]} rows, the tables have {cos.shape[-2]}")
    if rotary < 2 or rotary % 2 or rotary > x.shape[-1]:
        raise EmbeddingError(
            "shape_mismatch", f"the tables' width {rotary} must be even, >= 2 and <= d = {x.shape[-1]}"
        )
    if cos.ndim == 3:
        check_batch(x, cos.shape[0])
    return int(rotary)


def _apply(values: np.ndarray, cos: np.ndarray, sin: np.ndarray, pairing: Any, sign: float) -> np.ndarray:
    """The rotation with per-column tables (sign 1) or its transpose (sign -1), rounded once; the rest copied."""
    ar = active()
    rotary = check_apply(values, cos, sin, pairing)
    i, j = pair_columns(rotary, pairing)
    wide = ar.array(values)
    c, s = (per_row(ar.array(t), wide) for t in (cos, sin))
    vi, vj = wide[..., i], wide[..., j]
    out = values.copy()
    if sign > 0:
        out[..., i] = ar.round(vi * c[..., i] - vj * s[..., i], values.dtype)
        out[..., j] = ar.round(vj * c[..., j] + vi * s[..., j], values.dtype)
    else:
        out[..., i] = ar.round(vi * c[..., i] + vj * s[..., j], values.dtype)
        out[..., j] = ar.round(vj * c[..., j] - vi * s[..., i], values.dtype)
    return out


def rope_apply(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, pairing: str = "half_split") -> np.ndarray:
    """x rotated with the given tables (EMB-ROPE-16): x_i cos_i - x_j sin_i, x_j cos_j + x_i sin_j."""
    return _apply(x, cos, sin, pairing, 1.0)


def rope_apply_backward(
    x: np.ndarray, cos: np.ndarray, sin: np.ndarray, pairing: str, grad_output: np.ndarray
) -> np.ndarray:
    """grad_x of rope_apply (EMB-ROPE-17): g_i cos_i + g_j sin_j, g_j cos_j - g_i sin_i; the rest copied."""
    check_apply(x, cos, sin, pairing)
    if grad_output.shape != x.shape:
        raise EmbeddingError("shape_mismatch", f"grad_output has shape {grad_output.shape}, x has {x.shape}")
    return _apply(grad_output, cos, sin, pairing, -1.0)
