"""A Phi-style partial rotary port whose frequencies divide by the head dim, and which drops YaRN's factor.

Inspired by: partial-rotary ports (Phi, StableLM, GPT-NeoX ``rotary_pct``) that build
``inv_freq = 1 / base ** (arange(0, rotary_dim, 2) / head_dim)`` (the exponent over the head dim d, not over
rotary_dim), and YaRN ports keeping only the frequencies of ``_compute_yarn_parameters``.
"""

import numpy as np
from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED

MISTAKES = [
    {
        "phrase": ["head dim", "frequenc"],
        "mutants": [],
        "claims": [
            "symptom:rope:frequencies:*:head_dim",
            "symptom:rope:frequencies:*:step_1|head_dim",
            "symptom:rope:frequencies:*:head_dim|step_1",
        ],
    },
    {
        "phrase": ["attention factor"],
        "mutants": ["rope.yarn_attention_factor_missing", "rope.tables.yarn_attention_factor_missing"],
        "claims": ["symptom:rope:amplitude:*:missing"],
    },
]


class Port(Rope):
    head_dim = None

    def exponents(self, rotary_dim):
        return np.arange(0, rotary_dim, 2, dtype=np.float64) / (self.head_dim or rotary_dim)

    def attention(self, scaling):
        return 1.0

    def rope_forward(self, x, position_ids, rotary_dim, base, scaling, pairing):
        self.head_dim = np.shape(x)[-1]
        try:
            return super().rope_forward(x, position_ids, rotary_dim, base, scaling, pairing)
        finally:
            self.head_dim = None

    def rope_backward(self, x, position_ids, rotary_dim, base, scaling, pairing, grad_output):
        self.head_dim = np.shape(x)[-1]
        try:
            return super().rope_backward(x, position_ids, rotary_dim, base, scaling, pairing, grad_output)
        finally:
            self.head_dim = None


rope_tables, rope_forward, rope_backward = Port().functions()
