"""A YaRN port that multiplies by the attention factor in the cache and again in the rotation, and swaps beta_fast
and beta_slow.

Inspired by: YaRN ports where ``mscale`` is folded into the cos/sin cache and the attention code multiplies the
rotated queries by it once more (the factor applied twice, e.g. the discussions around vLLM's and sglang's
``YaRNScalingRotaryEmbedding`` and DeepSeek's ``mscale_all_dim``); and configs read as ``beta_slow, beta_fast =
beta_fast, beta_slow`` (the ramp between interpolated and original bands turned around).
"""

from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED

MISTAKES = [
    {"phrase": ["applied twice", "attention factor"], "mutants": []},
    {
        "phrase": ["frequenc", "ramp"],
        "mutants": [],
        "claims": [
            "symptom:rope:frequencies:rope_forward",
            "symptom:rope:frequencies:rope_tables",
            "symptom:rope:frequencies:rope_backward",
        ],
    },
]


class Port(Rope):
    def yarn_bounds(self, rotary_dim, base, s):
        swapped = dict(s, beta_fast=s.get("beta_slow") or 1.0, beta_slow=s.get("beta_fast") or 32.0)
        return super().yarn_bounds(rotary_dim, base, swapped)

    def rotate(self, v, cos, sin, rotary_dim, pairing, sign):
        return super().rotate(v, cos * self.factor, sin * self.factor, rotary_dim, pairing, sign)

    def rope_forward(self, x, position_ids, rotary_dim, base, scaling, pairing):
        self.factor = self.attention(dict(scaling or {}))  # once in the cache, once more here
        return super().rope_forward(x, position_ids, rotary_dim, base, scaling, pairing)

    def rope_backward(self, x, position_ids, rotary_dim, base, scaling, pairing, grad_output):
        self.factor = self.attention(dict(scaling or {}))
        return super().rope_backward(x, position_ids, rotary_dim, base, scaling, pairing, grad_output)


rope_tables, rope_forward, rope_backward = Port().functions()
