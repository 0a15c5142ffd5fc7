"""A fused rotary kernel port that writes only the rotary columns into a fresh output, and swaps cos and sin.

Inspired by: fused rotary kernels (apex ``fused_rope``, flash-attention's ``apply_rotary``) called with
``inplace=False`` on an output allocated with ``empty``/``zeros`` whose pass-through columns are never copied
(the partial-rotary copy lives in the Python wrapper ports drop), and argument order mix-ups ``(x, sin, cos)``.
"""

import numpy as np
from _rope import FEATURES, Rope

EMBCONF_FEATURES = FEATURES

MISTAKES = [
    {
        "phrase": ["pass-through", "features"],
        "mutants": [],
        "claims": ["symptom:rope:passthrough:*:zeroed", "symptom:rope:passthrough:*:changed"],
    },
    {
        "phrase": ["cos and sin swapped"],
        "mutants": ["rope.cos_sin_swapped", "rope.tables.cos_sin_swapped"],
        "claims": ["symptom:rope:swapped:*"],
    },
]


class Port(Rope):
    def tables(self, position_ids, rotary_dim, base, scaling):
        cos, sin = super().tables(position_ids, rotary_dim, base, scaling)
        return sin, cos

    def rotate(self, v, cos, sin, rotary_dim, pairing, sign):
        rotated = super().rotate(v, cos, sin, rotary_dim, pairing, sign)
        out = np.zeros_like(v)
        out[..., :rotary_dim] = rotated[..., :rotary_dim]
        return out


rope_tables, rope_forward, rope_backward = Port().functions()
