"""A GPT-NeoX rotary cache computed in float16, indexed by row number.

Inspired by: gpt-neox #1003 (``inv_freq.half()`` and ``t.type_as(inv_freq)``: float16 positions, inf past
65504) and transformers #25813 (``cos_cached[:seq_len]`` instead of ``cos_cached[position_ids]``: a cache offset or
packed sequences lose their positions).
"""

import numpy as np
from _rope import FEATURES, Rope

EMBCONF_FEATURES = FEATURES

MISTAKES = [
    {
        "phrase": ["float16"],
        "mutants": ["rope.angles_float16", "rope.tables.angles_float16"],
        "claims": [
            "symptom:rope:angle_precision:*:angles:float16",
            "symptom:rope:angle_precision:*:angles:half",
            "symptom:rope:angle_precision:*:float16_overflow",
            "symptom:rope:angle_precision:*:float16",
            "symptom:rope:table_precision:*:float16",  # np.cos of float16 angles: float16 tables too
        ],
    },
    {
        "phrase": ["position_ids are ignored", "row numbers"],
        "mutants": ["rope.position_ids_ignored", "rope.tables.position_ids_ignored"],
        "claims": ["symptom:rope:rows:*"],
    },
]


class Port(Rope):
    work = np.float16

    def positions(self, position_ids):
        return np.arange(np.size(position_ids)).astype(np.float16)

    def angles(self, position_ids, inv_freq):
        with np.errstate(over="ignore"):
            return super().angles(position_ids, inv_freq)


rope_tables, rope_forward, rope_backward = Port().functions()
