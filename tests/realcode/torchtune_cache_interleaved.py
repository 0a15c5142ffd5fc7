"""A torchtune-style rotary embedding: a cache of max_seq_len positions indexed by the position ids, and pairs of
adjacent features whatever the model's layout.

Inspired by: pytorch/torchtune ``RotaryPositionalEmbeddings`` (``build_rope_cache`` for ``max_seq_len=4096``
positions, then ``self.cache[input_pos]``: a position past the cache raises IndexError) and its
``x.reshape(..., -1, 2)`` pairing (adjacent features; pytorch/torchtitan #801 "RoPE here is GPT-J style instead of
NeoX/Llama style"), ported to a model whose weights were not permuted for it. Checked against torchtune 0.6.1
(``RotaryPositionalEmbeddings(dim=16)``, positions 3, 7, 100, 4000, 4095, 2): this module called with half_split
gives torchtune's output (within 5e-5, torchtune's float32 angles at position 4000), and position 4096 raises
IndexError in both.
"""

import numpy as np
from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED

MAX_SEQ_LEN = 4096

MISTAKES = [
    {
        "phrase": ["IndexError", "4096", "cache"],
        "mutants": [],
        "claims": ["symptom:untyped:IndexError:*"],
    },  # positions >= 4096 index past the cache: IndexError
    {
        "phrase": ["pairs", "pairing", "adjacent"],
        "mutants": ["rope.pairing_swapped"],
        "claims": ["symptom:rope:pairing:*"],
    },  # always interleaved: half_split models rotated as adjacent pairs
]


class Port(Rope):
    def positions(self, position_ids):
        cache = np.arange(MAX_SEQ_LEN, dtype=self.work)
        return cache[np.asarray(position_ids)]

    def columns(self, rotary_dim, width, pairing):
        return super().columns(rotary_dim, width, "interleaved")


rope_tables, rope_forward, rope_backward = Port().functions()
