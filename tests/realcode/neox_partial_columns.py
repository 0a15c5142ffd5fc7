"""A partial-rotary port whose rotate_half splits the whole head, not the rotary slice.

Inspired by: GPT-NeoX / Phi partial rotary ports (``rotary_pct``, ``partial_rotary_factor``) that slice
``x[..., :rotary_dim]`` for cos/sin but pair features with ``rotate_half(x)`` of the full head: pair k is
(k, k + d/2), so features d/2 .. d/2 + r/2 - 1 (pass-through ones) are rotated and r/2 .. r-1 are left as they came
(the "64..79 changed, 16..31 unrotated" shape); and the base argument hard-coded to 10000.
"""

import numpy as np
from _rope import FEATURES, Rope

EMBCONF_FEATURES = FEATURES

MISTAKES = [
    {"phrase": ["pass-through", "features"], "mutants": [], "claims": ["symptom:rope:passthrough:*:changed"]},
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
        h = rotary_dim // 2
        if pairing == "half_split":
            return np.arange(h), np.arange(h) + width // 2
        return super().columns(rotary_dim, width, pairing)


rope_tables, rope_forward, rope_backward = Port().functions()
