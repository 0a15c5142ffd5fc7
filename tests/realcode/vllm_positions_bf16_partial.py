"""A serving-engine rotary with positions cast to the activations' bfloat16 and the rotary slice taken from the
end of the head.

Inspired by: transformers #25681 / #29285 (positions in bfloat16: angle errors growing with the position) and
partial-rotary code that rotates ``x[..., -rotary_dim:]`` (the last features) instead of the first ones.
"""

import ml_dtypes
import numpy as np
from _rope import FEATURES, Rope

EMBCONF_FEATURES = FEATURES + ["bfloat16"]

MISTAKES = [
    {
        "phrase": ["bfloat16", "positions were made in"],
        "mutants": ["rope.positions_in_activation_dtype"],
        "claims": [
            "symptom:rope:angle_precision:*:positions:bfloat16",
            "symptom:rope:angle_precision:*:positions:half",
        ],
    },
    {
        "phrase": ["pass-through", "features"],
        "mutants": [],
        "claims": ["symptom:rope:passthrough:*:changed", "symptom:rope:passthrough:*:rotated"],
    },
]


class Port(Rope):
    def positions(self, position_ids):
        return np.asarray(position_ids).astype(ml_dtypes.bfloat16).astype(np.float64)

    def columns(self, rotary_dim, width, pairing):
        i, j = super().columns(rotary_dim, width, pairing)
        return i + width - rotary_dim, j + width - rotary_dim


rope_tables, rope_forward, rope_backward = Port().functions()
