"""A Llama port whose rotary positions live in bfloat16, and which treats llama3 scaling as none.

Inspired by: transformers #25681 (the rotary ``inv_freq`` buffer and ``t = arange(seq_len)`` cast with the model to
bfloat16: positions above 256 are no longer exact, angle errors of radians at long positions) and ports of Llama
3.1 that read ``rope_scaling`` only for ``"linear"`` and ``"dynamic"``, so a ``"llama3"`` config runs with the
unscaled theta_k.
"""

import ml_dtypes
import numpy as np
from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED + ["bfloat16"]

MISTAKES = [
    {
        "phrase": ["bfloat16", "positions were made in"],
        "mutants": ["rope.positions_in_activation_dtype"],
        "claims": [
            "symptom:rope:angle_precision:*:positions:bfloat16",
            "symptom:rope:angle_precision:*:positions:half",
        ],
    },
    {"phrase": ["llama3", "scaling"], "mutants": [], "claims": ["symptom:rope:frequencies:*:scaling_ignored"]},
]


class Port(Rope):
    def positions(self, position_ids):
        return np.asarray(position_ids).astype(ml_dtypes.bfloat16).astype(np.float64)

    def llama3(self, inv, s):
        return inv  # only "linear" and "dynamic" were ported


rope_tables, rope_forward, rope_backward = Port().functions()
