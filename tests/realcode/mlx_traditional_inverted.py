"""An MLX rotary wrapper with its ``traditional`` flag read backwards, and the base fixed at 10000.

Inspired by: mlx-vlm / mlx-lm model ports where ``nn.RoPE(dims, traditional=...)`` is given the opposite of the
checkpoint's convention (traditional=True is the interleaved pairing), so every model gets the other pairing;
and wrappers that never forward ``base`` (``rope_theta``) to the kernel.
"""

from _rope import FEATURES, Rope

EMBCONF_FEATURES = FEATURES

MISTAKES = [
    {"phrase": ["pairs", "pairing"], "mutants": ["rope.pairing_swapped"], "claims": ["symptom:rope:pairing:*"]},
    {
        "phrase": ["base 10000", "base argument"],
        "mutants": ["rope.base_ignored", "rope.tables.base_ignored"],
        "claims": ["symptom:rope:frequencies:*:base_10000"],
    },
]


class Port(Rope):
    def base_of(self, rotary_dim, base, scaling, position_ids):
        return 10000.0

    def columns(self, rotary_dim, width, pairing):
        other = "interleaved" if pairing == "half_split" else "half_split"
        return super().columns(rotary_dim, width, other)


rope_tables, rope_forward, rope_backward = Port().functions()
