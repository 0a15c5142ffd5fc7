"""Linear position interpolation with the factor on the wrong side, and cos/sin cached in float16.

Inspired by: position-interpolation ports that write ``inv_freq * factor`` (or ``t * factor``) where
``t / factor`` is meant, so long contexts are squeezed the wrong way (each frequency factor^2 times the expected),
and cos/sin caches kept in float16 (vLLM's and llama.cpp's half caches).
"""

import numpy as np
from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED

MISTAKES = [
    {
        "phrase": ["frequenc", "times"],
        # inv_freq * factor is the mutant's theta_k / (1 / factor): the same frequencies, partial rotary included
        "mutants": ["rope.linear_factor_multiplied", "rope.tables.linear_factor_multiplied"],
        "claims": ["symptom:rope:frequencies:*:factor_multiplied"],
    },  # inv_freq * factor for linear scaling: factor^2 times the scaled frequencies
    {
        "phrase": ["float16", "rounded"],
        "mutants": [],
        "claims": ["symptom:rope:table_precision:*:float16"],
    },  # cos and sin cast to float16 (and back) before the rotation
]


class Port(Rope):
    def inv_freq(self, rotary_dim, base, scaling, position_ids):
        inv = super().inv_freq(rotary_dim, base, {}, position_ids)
        return (
            inv * scaling["factor"]
            if scaling.get("rope_type") == "linear"
            else super().inv_freq(rotary_dim, base, scaling, position_ids)
        )

    def tables(self, position_ids, rotary_dim, base, scaling):
        cos, sin = super().tables(position_ids, rotary_dim, base, scaling)
        return cos.astype(np.float16).astype(np.float64), sin.astype(np.float16).astype(np.float64)


rope_tables, rope_forward, rope_backward = Port().functions()
