"""A rotary port whose exponent is integer division, and whose rotate_half has the wrong sign.

Inspired by: ``inv_freq = 1.0 / base ** (torch.arange(0, dim, 2) // dim)`` (integer division: every exponent 0,
every frequency 1) in ports from Python 2 era code and student homework, and ``rotate_half`` written as
``cat((x2, -x1))`` (the negative angle; transformers' discussion of rotate_half conventions).
"""

import numpy as np
from _rope import FEATURES, Rope

EMBCONF_FEATURES = FEATURES

MISTAKES = [
    {"phrase": ["frequency 1", "frequenc"], "mutants": [], "claims": ["symptom:rope:frequencies:*:one"]},
    {
        "phrase": ["negative angle", "sign"],
        "mutants": ["rope.rotate_half_sign"],
        "claims": ["symptom:rope:negated:*"],
    },
]


class Port(Rope):
    def exponents(self, rotary_dim):
        return (np.arange(0, rotary_dim, 2) // rotary_dim).astype(np.float64)

    def tables(self, position_ids, rotary_dim, base, scaling):
        cos, sin = super().tables(position_ids, rotary_dim, base, scaling)
        return cos, -sin


rope_tables, rope_forward, rope_backward = Port().functions()
