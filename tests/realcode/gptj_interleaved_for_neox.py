"""A rotary layer that always pairs adjacent features (GPT-J's rotate_every_two), and counts positions from 1.

Inspired by: the GPT-J / GPT-NeoX pairing mix-ups reported when converting checkpoints (``rotate_every_two`` used
for a model trained with ``rotate_half``, e.g. transformers' Llama conversion notes and candle #3520's rope_i for a
half-split model): the pairing argument is ignored; and ``position_ids = arange(1, T + 1)`` helpers.
"""

import numpy as np
from _rope import FEATURES, Rope

EMBCONF_FEATURES = FEATURES

MISTAKES = [
    {
        "phrase": ["pairs", "pairing"],
        "mutants": ["rope.pairing_swapped"],
        "claims": ["symptom:rope:pairing:*:interleaved"],
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

    def columns(self, rotary_dim, width, pairing):
        return super().columns(rotary_dim, width, "interleaved")


rope_tables, rope_forward, rope_backward = Port().functions()
