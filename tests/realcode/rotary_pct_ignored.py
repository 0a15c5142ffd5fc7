"""A GPT-NeoX port that ignores ``rotary_pct`` (every feature rotated, frequencies over the head dim) and makes
its positions in bfloat16.

Inspired by: GPT-NeoX / Pythia conversions where ``rotary_pct`` (0.25) is dropped so the whole head is rotated,
and gpt-neox #1003 / transformers #25681's positions made with ``arange(..., dtype=bfloat16)``.
"""

import ml_dtypes
import numpy as np
from _rope import FEATURES, Rope

EMBCONF_FEATURES = FEATURES + ["bfloat16"]

MISTAKES = [
    {
        "phrase": ["every feature", "pass-through"],
        "mutants": ["rope.partial_rotates_all"],
        "claims": ["symptom:rope:passthrough:*:rotated"],
    },
    {
        "phrase": ["bfloat16", "positions were made in"],
        "mutants": ["rope.positions_in_activation_dtype"],
        "claims": [
            "symptom:rope:angle_precision:*:positions:bfloat16",
            "symptom:rope:angle_precision:*:positions:half",
        ],
    },
]


class Port(Rope):
    def positions(self, position_ids):
        return np.asarray(position_ids).astype(ml_dtypes.bfloat16).astype(np.float64)

    def rope_forward(self, x, position_ids, rotary_dim, base, scaling, pairing):
        return super().rope_forward(x, position_ids, np.shape(x)[-1], base, scaling, pairing)

    def rope_backward(self, x, position_ids, rotary_dim, base, scaling, pairing, grad_output):
        return super().rope_backward(x, position_ids, np.shape(x)[-1], base, scaling, pairing, grad_output)


rope_tables, rope_forward, rope_backward = Port().functions()
