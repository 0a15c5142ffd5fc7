"""A rotary helper whose exponent divides by d - 1 and whose table function returns (sin, cos).

Inspired by: tutorial RoPE code with ``theta = 10000 ** (-2 * (i - 1) / d)`` style off-by-ones (``arange(0, d, 2) /
(d - 1)``, as in several homework solutions) and cache helpers returning ``emb.sin(), emb.cos()`` to callers that
unpack ``cos, sin``.
"""

import numpy as np
from _rope import FEATURES, Rope

EMBCONF_FEATURES = FEATURES

MISTAKES = [
    {
        "phrase": ["d-1", "d - 1"],
        "mutants": ["rope.frequencies_over_d_minus_1", "rope.tables.frequencies_over_d_minus_1"],
        "claims": ["symptom:rope:frequencies:*:d_minus_1"],
    },
    {
        "phrase": ["cos and sin swapped"],
        "mutants": ["rope.tables.cos_sin_swapped"],
        "claims": ["symptom:rope:swapped:rope_tables"],
    },
]


class Port(Rope):
    def exponents(self, rotary_dim):
        return np.arange(0, rotary_dim, 2, dtype=np.float64) / max(rotary_dim - 1, 1)

    def rope_tables(self, position_ids, rotary_dim, base, scaling, dtype="float32"):
        cos, sin = super().rope_tables(position_ids, rotary_dim, base, scaling, dtype)
        return sin, cos


rope_tables, rope_forward, rope_backward = Port().functions()
