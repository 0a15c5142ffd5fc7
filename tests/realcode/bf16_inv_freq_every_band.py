"""A long-context port that rounds inv_freq to bfloat16 and divides every band by the llama3 factor.

Inspired by: sglang-jax #1472 / transformers #29496 (``inv_freq`` kept in the model's bfloat16 before the
position product) and llama3 ports that reduce ``apply_scaling`` to ``inv_freq / factor`` (the high-frequency
bands must keep theta_k).
"""

import ml_dtypes
import numpy as np
from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED

MISTAKES = [
    {
        "phrase": ["bfloat16", "inv_freq"],
        "mutants": ["rope.inv_freq_bfloat16", "rope.tables.inv_freq_bfloat16"],
        "claims": ["symptom:rope:angle_precision:*:inv_freq:*"],
    },
    {
        "phrase": ["every band", "every frequency"],
        "mutants": ["rope.scaling_every_band", "rope.tables.scaling_every_band"],
        "claims": ["symptom:rope:frequencies:*:every_band"],
    },
]


class Port(Rope):
    def llama3(self, inv, s):
        return inv / s["factor"]

    def inv_freq(self, rotary_dim, base, scaling, position_ids):
        inv = super().inv_freq(rotary_dim, base, scaling, position_ids)
        return inv.astype(ml_dtypes.bfloat16).astype(np.float64)


rope_tables, rope_forward, rope_backward = Port().functions()
