"""A rotary port with ``arange(0, dim)`` (no step 2) in its exponent, and dynamic scaling left out.

Inspired by: Meta's ``precompute_freqs_cis`` copied without the step (vllm #863's discussion:
``torch.arange(0, dim)[: dim // 2] / dim``, i.e. k/d), and ports that know only linear scaling (a ``"dynamic"``
config runs unscaled past its original length).
"""

import numpy as np
from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED

MISTAKES = [
    {
        "phrase": ["k/d", "step 2"],
        "mutants": ["rope.frequencies_step_1", "rope.tables.frequencies_step_1"],
        "claims": [
            "symptom:rope:frequencies:*:step_1",
            "symptom:rope:frequencies:rope_forward",
            "symptom:rope:frequencies:rope_tables",
            "symptom:rope:frequencies:rope_backward",
            "symptom:rope:frequencies:*:step_1|head_dim",
            "symptom:rope:frequencies:*:head_dim|step_1",
        ],
    },
    {
        "phrase": ["dynamic", "scaling"],
        "mutants": [],
        "claims": [
            "symptom:rope:frequencies:rope_forward",
            "symptom:rope:frequencies:rope_tables",
            "symptom:rope:frequencies:rope_backward",
        ],
    },
]


class Port(Rope):
    def exponents(self, rotary_dim):
        return np.arange(0, rotary_dim, dtype=np.float64)[: rotary_dim // 2] / rotary_dim

    def base_of(self, rotary_dim, base, scaling, position_ids):
        return base


rope_tables, rope_forward, rope_backward = Port().functions()
