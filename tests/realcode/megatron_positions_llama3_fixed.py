"""A Megatron-style rotary embedding: the table built for positions 0..T-1 whatever the position ids, and llama3
scaling with only the factor read from the config.

Inspired by: NVIDIA/Megatron-LM #453 ("RoPE ignores position IDs": the rotary tensor is generated for
``arange(seq_len)``, so ``--reset-position-ids`` and packed sequences get positions 0..T-1); and Megatron's
``--use-rope-scaling`` (``_apply_scaling`` with ``low_freq_factor=1``, ``high_freq_factor=4`` and
``original_max_position_embeddings=8192`` fixed: training scripts such as zyzshishui/slime's
``scripts/models/llama3.1-8B.sh`` pass only ``--rotary-scaling-factor``), ported for configs whose bands and
original length are other than Llama 3.1's.
"""

import numpy as np
from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED

MISTAKES = [
    {
        "phrase": ["position_ids are ignored", "ignores position_ids", "row numbers"],
        "mutants": ["rope.position_ids_ignored", "rope.tables.position_ids_ignored"],
        "claims": ["symptom:rope:rows:*"],
    },  # positions 0..T-1, whatever position_ids says
    {
        "phrase": ["llama3", "low_freq_factor", "bands"],
        "mutants": [],
        "claims": [
            "symptom:rope:frequencies:rope_forward",
            "symptom:rope:frequencies:rope_tables",
            "symptom:rope:frequencies:rope_backward",
        ],
    },  # llama3 with the config's factor but Llama 3.1's bands (1, 4) and original length 8192
]


class Port(Rope):
    def positions(self, position_ids):
        return np.arange(np.size(position_ids), dtype=self.work)

    def llama3(self, inv, s):
        fixed = dict(s, low_freq_factor=1.0, high_freq_factor=4.0, original_max_position_embeddings=8192)
        return super().llama3(inv, fixed)


rope_tables, rope_forward, rope_backward = Port().functions()
