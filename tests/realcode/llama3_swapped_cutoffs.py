"""Meta's ``apply_scaling`` for Llama 3.1 ported with the two wavelength cutoffs swapped, and positions from 1.

Inspired by: meta-llama/llama-models ``apply_scaling`` (``low_freq_wavelen = old_context_len / low_freq_factor``,
``high_freq_wavelen = old_context_len / high_freq_factor``) and ports that compare against the wrong one, so the
band kept and the band divided trade places; and cache code that numbers positions from 1.
"""

import math

import numpy as np
from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED

MISTAKES = [
    {
        "phrase": ["llama3", "frequenc"],
        "mutants": [],
        "claims": [
            "symptom:rope:frequencies:rope_forward",
            "symptom:rope:frequencies:rope_tables",
            "symptom:rope:frequencies:rope_backward",
        ],
    },
    {
        "phrase": ["from 1", "+1"],
        "mutants": ["rope.positions_from_1", "rope.tables.positions_from_1"],
        "claims": ["symptom:rope:shifted:*:1"],
    },
]


class Port(Rope):
    def positions(self, position_ids):
        return np.asarray(position_ids).astype(np.float64) + 1

    def llama3(self, inv, s):
        factor, original = s["factor"], s["original_max_position_embeddings"]
        low, high = s["low_freq_factor"], s["high_freq_factor"]
        wavelen = 2 * math.pi / inv
        scaled = np.where(wavelen < original / high, inv / factor, inv)  # the cutoffs traded
        smooth = (original / wavelen - low) / (high - low)
        medium = ~(wavelen < original / high) & ~(wavelen > original / low)
        return np.where(medium, (1 - smooth) * scaled / factor + smooth * scaled, scaled)


rope_tables, rope_forward, rope_backward = Port().functions()
