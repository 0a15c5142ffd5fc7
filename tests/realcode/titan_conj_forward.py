"""A complex-number rotary (torchtitan / Meta style) that multiplies by the conjugate, with autograd's backward,
and llama3 scaling left out.

Inspired by: ``freqs_cis = torch.polar(ones, freqs)`` applied as ``x * freqs_cis.conj()`` (the negative angle,
consistently: the backward autograd derives is the exact transpose of that forward, so it rotates by +angle), and
torchtitan/llama ports predating ``apply_scaling`` (the llama3 rope_type ignored).
"""

import numpy as np
from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED

MISTAKES = [
    {
        "phrase": ["negative angle", "conjugate"],
        "mutants": ["rope.rotate_half_sign", "rope.backward_rotates_forward"],
        "claims": ["symptom:rope:negated:*"],
    },
    {"phrase": ["llama3", "scaling"], "mutants": [], "claims": ["symptom:rope:frequencies:*:scaling_ignored"]},
]


class Port(Rope):
    def llama3(self, inv, s):
        return inv

    def tables(self, position_ids, rotary_dim, base, scaling):
        cos, sin = super().tables(position_ids, rotary_dim, base, scaling)
        return cos, -sin  # freqs_cis.conj()


rope_tables, rope_forward, rope_backward = Port().functions()
