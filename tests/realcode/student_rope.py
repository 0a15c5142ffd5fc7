"""A course student's first rotary embedding, written from a blog post's formulas.

Inspired by the common RoPE mistakes of tutorial and homework code: the frequency exponent divided by ``d - 1``
(``np.arange(0, d, 2) / (d - 1)``, the sinusoid's "D - 1" slip carried over), cos and sin swapped in the
rotation (``x * sin + rotate_half(x) * cos``), and positions generated as ``np.arange(1, T + 1)`` ("positions 1
to N", as in the sinusoid helpers of tt_positions_from_one).
"""

import numpy as np
from _spec import check_grad, check_rope

EMBCONF_FEATURES = ["rope-half_split"]

MISTAKES = [
    {
        "phrase": ["d-1", "d - 1"],
        "mutants": ["rope.frequencies_over_d_minus_1", "rope.tables.frequencies_over_d_minus_1"],
        "claims": ["symptom:rope:frequencies:*:d_minus_1"],
    },
    {
        "phrase": ["cos and sin swapped"],
        "mutants": ["rope.cos_sin_swapped", "rope.tables.cos_sin_swapped"],
        "claims": ["symptom:rope:swapped:*"],
    },
    {
        "phrase": ["from 1", "position_ids +1"],
        "mutants": ["rope.positions_from_1", "rope.tables.positions_from_1"],
        "claims": ["symptom:rope:shifted:*:1"],
    },
]


def _angles(seq_len, d, base):
    theta = base ** (-np.arange(0, d, 2) / (d - 1))
    positions = np.arange(1, seq_len + 1)
    return np.outer(positions, theta)


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def _rotate(v, angles, rotary_dim, sign=1.0):
    cos = np.concatenate([np.cos(angles)] * 2, axis=-1)
    sin = sign * np.concatenate([np.sin(angles)] * 2, axis=-1)
    rot = v[..., :rotary_dim].astype(np.float64)
    out = rot * sin + rotate_half(rot) * cos  # cos and sin in each other's place
    return np.concatenate([out.astype(v.dtype), v[..., rotary_dim:]], axis=-1)


def rope_tables(position_ids, rotary_dim, base, scaling, dtype="float32"):
    check_rope(None, position_ids, rotary_dim, base, scaling)
    angles = _angles(int(np.max(position_ids)) + 1, rotary_dim, base)[position_ids]
    return np.sin(angles).astype(dtype), np.cos(angles).astype(dtype)


def rope_forward(x, position_ids, rotary_dim, base, scaling, pairing):
    check_rope(x, position_ids, rotary_dim, base, scaling, pairing)
    angles = _angles(int(np.max(position_ids)) + 1, rotary_dim, base)[position_ids]
    return _rotate(x, angles, rotary_dim)


def rope_backward(x, position_ids, rotary_dim, base, scaling, pairing, grad_output):
    check_rope(x, position_ids, rotary_dim, base, scaling, pairing)
    check_grad(x, grad_output)
    angles = _angles(int(np.max(position_ids)) + 1, rotary_dim, base)[position_ids]
    return _rotate(grad_output, -angles, rotary_dim)
