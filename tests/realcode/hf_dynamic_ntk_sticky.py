"""A dynamic-NTK rotary embedding that keeps the base it grew for a long call, with the growth exponent over the head
width.

Inspired by: huggingface/transformers #25306 / #27226 ("long context inference will impact short context
inference": ``LlamaDynamicNTKScalingRotaryEmbedding`` stored the grown ``inv_freq`` and never scaled it back) and
PR #46624 (``dynamic_frequency_update`` wrote ``None_max_seq_len_cached``, so the reset branch never ran after a
long sequence); and dynamic-NTK ports written before transformers' ``_compute_dynamic_ntk_parameters`` read
``partial_rotary_factor``: ``base * (...) ** (dim / (dim - 2))`` with ``dim`` the head width, not the rotary width.
"""

import numpy as np
from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED

MISTAKES = [
    {
        "phrase": ["kept", "never shrinks", "earlier call", "state"],
        "mutants": ["rope.state.dynamic_never_shrinks"],
        "claims": ["symptom:state:*", "symptom:stale_buffer:*"],
    },  # the base grown for a long dynamic call is used by every later, shorter dynamic call
    {
        "phrase": ["head width", "head_dim", "dim / (dim - 2)", "exponent"],
        "mutants": [],
        "claims": [
            "symptom:rope:frequencies:rope_forward",
            "symptom:rope:frequencies:rope_backward",
        ],
    },  # partial rotary: the dynamic base grows with D / (D - 2) (x's width), not rotary_dim / (rotary_dim - 2)
]


class Port(Rope):
    def __init__(self):
        self.grown = None  # the module's buffer: set by a long call, never reset

    def base_of(self, rotary_dim, base, scaling, position_ids):
        if scaling.get("rope_type") != "dynamic":
            return base
        length = int(np.max(position_ids, initial=0)) + 1
        original, factor = scaling["original_max_position_embeddings"], scaling["factor"]
        if length > original:
            dim = self.call_width or rotary_dim  # x's width: the head, not the rotary features
            self.grown = base * ((factor * length / original) - (factor - 1)) ** (dim / (dim - 2))
        return base if self.grown is None else self.grown


rope_tables, rope_forward, rope_backward = Port().functions()
