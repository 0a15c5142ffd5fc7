"""A Keras-style rotary layer whose YaRN correction range is left unrounded unless the config asks, with the
positions made in the activations' dtype.

Inspired by: keras-team/keras-hub PR #2981 ("Match the reference YaRN implementation in RotaryEmbedding":
``truncate`` defaulted to False, so a config without the key got an unrounded correction range; the PR's second
difference, the range's upper end clamped to ``rotary_dim // 2 - 1``, is left out: no golden case's range reaches
past it, so no measurement could show it); and keras-team/keras-hub PR #1544's review (``start_index`` cast to the
layer's compute dtype: an incrementing position held in bfloat16 or float16). Checked against keras-hub 0.32.0,
which has the fix: its ``RotaryEmbedding(rope_type="yarn", truncate=False)``, the old default, gives this module's
frequencies (relative difference 3e-8, float32) for rotary_dim 64 / original 4096 / factor 4 and 128 / 8192 / 8.
"""

import numpy as np
from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED + ["float16", "bfloat16"]

MISTAKES = [
    {
        "phrase": ["truncate", "yarn", "ramp", "correction range"],
        # the mutant's keras-hub #2981: truncate false unless given (it differs only on truncate: true, no golden's)
        "mutants": ["rope.yarn_never_truncates", "rope.tables.yarn_never_truncates"],
        "claims": [
            "symptom:rope:frequencies:*:yarn_untruncated",
            "symptom:rope:frequencies:rope_forward",
            "symptom:rope:frequencies:rope_tables",
            "symptom:rope:frequencies:rope_backward",
        ],
    },  # yarn's correction range rounded only when truncate is given as True
    {
        "phrase": ["bfloat16", "float16", "positions were made in"],
        "mutants": ["rope.positions_in_activation_dtype", "rope.tables.positions_in_activation_dtype"],
        "claims": [
            "symptom:rope:angle_precision:*:positions:bfloat16",
            "symptom:rope:angle_precision:*:positions:half",
            "symptom:rope:angle_precision:*:positions:float16",
        ],
    },  # positions cast to x's dtype (the tables' dtype in rope_tables) before the angles
]


class Port(Rope):
    def yarn_bounds(self, rotary_dim, base, s):
        return super().yarn_bounds(rotary_dim, base, dict(s, truncate=s.get("truncate") is True))

    def positions(self, position_ids):  # in the call's dtype (x's; the tables' in rope_tables)
        return np.asarray(position_ids).astype(self.cast(np.zeros(1), self.call_dtype).dtype).astype(self.work)


rope_tables, rope_forward, rope_backward = Port().functions()
