"""Dynamic NTK scaling applied whatever the length, with the length taken from the call's row count.

Inspired by: early dynamic-NTK patches (the reddit/LocalLLaMA "dynamically scaled RoPE" port and copies) that
rescale the base on every call, also below ``original_max_position_embeddings``, and use ``seq_len = x.shape[-2]``
instead of the largest position + 1 (transformers #29496's discussion of the cached length).
"""

import numpy as np
from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED

MISTAKES = [
    {
        "phrase": ["frequenc", "dynamic"],
        "mutants": [],
        "claims": [
            "symptom:rope:frequencies:rope_forward",
            "symptom:rope:frequencies:rope_tables",
            "symptom:rope:frequencies:rope_backward",
        ],
    },  # the base rescaled below original_max_position_embeddings too
    {
        "phrase": ["length", "row"],
        "mutants": [],
        "claims": [
            "symptom:rope:frequencies:rope_forward",
            "symptom:rope:frequencies:rope_tables",
            "symptom:rope:frequencies:rope_backward",
        ],
    },  # the length from the call's rows, not max(position_ids) + 1
]


class Port(Rope):
    def base_of(self, rotary_dim, base, scaling, position_ids):
        if scaling.get("rope_type") != "dynamic":
            return base
        length = np.size(position_ids)  # the call's rows, not max(position_ids) + 1
        original, factor = scaling["original_max_position_embeddings"], scaling["factor"]
        return base * ((factor * length / original) - (factor - 1)) ** (rotary_dim / (rotary_dim - 2))


rope_tables, rope_forward, rope_backward = Port().functions()
