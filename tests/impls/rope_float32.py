"""Rotary position embeddings as real code computes them (spec section 14): angles in float32, a half x
rotated in its own dtype. EMB-ROPE-11 says this conforms at every position; the spec's tests prove it.

The frequencies of the default, linear, dynamic and longrope scalings are computed in float32 as Hugging Face
does (``1 / base ** (arange(0, r, 2) / r)``, longrope's ``1 / (ext * base ** ...)``); YaRN's and llama3's are the
reference's rounded to float32. M-RoPE and per-batch positions index the angles as the reference does;
``rope_apply`` computes in x's dtype, as ``apply_rotary_pos_emb`` does. The
module attribute ``ANGLE_DTYPE`` names the dtype of the positions, frequencies and their product:
``tests/impls/rope_bfloat16_angles.py`` sets it to bfloat16, the bug EMB-ROPE-11 forbids.
"""

from __future__ import annotations

import numpy as np

from embconf.model.dtypes import numpy_dtype
from embconf.model.rope import RopeScaling, RopeType, rope_features
from embconf.reference.errors import EmbeddingError
from embconf.reference.rope import check_call, inverse_frequencies, pair_columns, per_row, position_grid
from embconf.reference.rope_apply import check_apply

EMBCONF_FEATURES = [*rope_features(), "float16", "bfloat16", "float64"]
ANGLE_DTYPE = "float32"


def _frequencies(rotary_dim, base, scaling, max_position):
    typed = RopeScaling.of(scaling)
    if typed.rope_type in (RopeType.YARN, RopeType.LLAMA3):
        inv_freq, attention = inverse_frequencies(rotary_dim, base, scaling, max_position)
        return inv_freq.astype(np.float32), np.float32(attention)
    if typed.rope_type is RopeType.DYNAMIC:
        length, original, factor = max_position + 1, typed.original_max_position_embeddings, typed.factor
        if length > original:
            base = base * ((factor * length / original) - (factor - 1)) ** (rotary_dim / (rotary_dim - 2))
    exponents = np.arange(0, rotary_dim, 2, dtype=np.float32) / np.float32(rotary_dim)
    if typed.rope_type is RopeType.LONGROPE:
        _, attention = inverse_frequencies(rotary_dim, base, scaling, max_position)
        long = max_position + 1 > typed.original_max_position_embeddings
        ext = np.asarray(typed.long_factor if long else typed.short_factor, dtype=np.float32)
        return np.float32(1.0) / (ext * np.float32(base) ** exponents), np.float32(attention)
    inv_freq = np.float32(1.0) / (np.float32(base) ** exponents)
    if typed.rope_type is RopeType.LINEAR:
        inv_freq = inv_freq / np.float32(typed.factor)
    return inv_freq.astype(np.float32), np.float32(1.0)


def _tables(position_ids, rotary_dim, base, scaling):
    ids = np.asarray(position_ids)
    inv_freq, attention = _frequencies(rotary_dim, base, scaling, int(ids.max(initial=0)))
    angle_dtype = numpy_dtype(ANGLE_DTYPE)
    grid = position_grid(ids.astype(np.int64), rotary_dim, scaling)
    angles = (grid.astype(angle_dtype) * inv_freq.astype(angle_dtype)).astype(np.float32)
    return np.cos(angles) * attention, np.sin(angles) * attention


def rope_tables(position_ids, rotary_dim, base, scaling, dtype):
    from embconf.reference.rope import rope_tables as checked

    checked(position_ids, rotary_dim, base, scaling, dtype)  # the reference's checks: errors are not the point here
    cos, sin = _tables(position_ids, rotary_dim, base, scaling)
    return cos.astype(numpy_dtype(dtype)), sin.astype(numpy_dtype(dtype))


def _rotate(values, position_ids, rotary_dim, base, scaling, pairing, sign):
    cos, sin = _tables(position_ids, rotary_dim, base, scaling)
    work = values.dtype if values.dtype.itemsize <= 4 else np.dtype(np.float64)
    cos, sin = per_row(cos.astype(work), values), per_row(sin.astype(work), values)
    i, j = pair_columns(rotary_dim, pairing)
    xi, xj = values[..., i].astype(work), values[..., j].astype(work)
    out = values.copy()
    out[..., i] = (xi * cos - work.type(sign) * (xj * sin)).astype(values.dtype)
    out[..., j] = (xj * cos + work.type(sign) * (xi * sin)).astype(values.dtype)
    return out


def rope_forward(x, position_ids, rotary_dim, base, scaling, pairing):
    check_call(x, position_ids, rotary_dim, base, scaling, pairing)
    return _rotate(x, position_ids, rotary_dim, base, scaling, pairing, 1.0)


def rope_backward(x, position_ids, rotary_dim, base, scaling, pairing, grad_output):
    check_call(x, position_ids, rotary_dim, base, scaling, pairing)
    if grad_output.shape != x.shape:
        raise EmbeddingError("shape_mismatch", "grad_output's shape is not x's")
    return _rotate(grad_output, position_ids, rotary_dim, base, scaling, pairing, -1.0)


def _apply(values, cos, sin, pairing, sign):
    i, j = pair_columns(cos.shape[-1], pairing)
    c, s = per_row(cos, values), per_row(sin, values)
    out = values.copy()
    vi, vj = values[..., i], values[..., j]
    if sign > 0:
        out[..., i], out[..., j] = vi * c[..., i] - vj * s[..., i], vj * c[..., j] + vi * s[..., j]
    else:
        out[..., i], out[..., j] = vi * c[..., i] + vj * s[..., j], vj * c[..., j] - vi * s[..., i]
    return out


def rope_apply(x, cos, sin, pairing):
    check_apply(x, cos, sin, pairing)
    return _apply(x, cos, sin, pairing, 1.0)


def rope_apply_backward(x, cos, sin, pairing, grad_output):
    check_apply(x, cos, sin, pairing)
    if grad_output.shape != x.shape:
        raise EmbeddingError("shape_mismatch", "grad_output's shape is not x's")
    return _apply(grad_output, cos, sin, pairing, -1.0)
