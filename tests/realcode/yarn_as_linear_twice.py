"""A YaRN port reduced to linear interpolation, with the attention factor applied twice.

Inspired by: YaRN configs run by code that knows only ``factor`` (every band divided: the high-frequency ones must
keep theta_k) and ``mscale`` multiplied into the cache and again into the attention logits' inputs.
"""

from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED

MISTAKES = [
    {
        "phrase": ["every band", "every frequency"],
        "mutants": ["rope.scaling_every_band", "rope.tables.scaling_every_band"],
        "claims": ["symptom:rope:frequencies:*:every_band"],
    },
    {"phrase": ["applied twice", "attention factor"], "mutants": [], "claims": ["symptom:rope:amplitude:*:twice"]},
]


class Port(Rope):
    def yarn(self, rotary_dim, base, s):
        return base ** -(self.exponents(rotary_dim)) / s["factor"]

    def attention(self, scaling):
        a = super().attention(scaling)
        return a * a


rope_tables, rope_forward, rope_backward = Port().functions()
