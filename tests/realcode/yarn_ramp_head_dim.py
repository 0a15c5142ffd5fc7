"""A YaRN port whose correction range is computed over the head dim, with the angles in float16.

Inspired by: YaRN ports (``find_correction_dim(num_rotations, dim, base, max_position_embeddings)``) called with
the head dim where the rotary dim is meant (partial rotary models: the ramp lands on the wrong pairs), and
half-precision caches (gpt-neox #1003).
"""

import numpy as np
from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED

MISTAKES = [
    {
        "phrase": ["frequenc", "ramp"],
        "mutants": [],
        "claims": [
            "symptom:rope:frequencies:rope_forward",
            "symptom:rope:frequencies:rope_tables",
            "symptom:rope:frequencies:rope_backward",
        ],
    },
    {
        "phrase": ["float16"],
        "mutants": ["rope.angles_float16", "rope.tables.angles_float16"],
        "claims": [
            "symptom:rope:angle_precision:*",
            "symptom:rope:table_precision:*:float16",  # np.cos of float16 angles: float16 tables too
        ],
    },
]


class Port(Rope):
    work = np.float16
    width = None

    def yarn_bounds(self, rotary_dim, base, s):
        return super().yarn_bounds(self.width or rotary_dim, base, s)

    def angles(self, position_ids, inv_freq):
        with np.errstate(over="ignore"):
            return super().angles(position_ids, inv_freq)

    def rope_forward(self, x, position_ids, rotary_dim, base, scaling, pairing):
        self.width = np.shape(x)[-1] * 2  # the model's full head dim, twice the rotary slice
        try:
            return super().rope_forward(x, position_ids, rotary_dim, base, scaling, pairing)
        finally:
            self.width = None


rope_tables, rope_forward, rope_backward = Port().functions()
