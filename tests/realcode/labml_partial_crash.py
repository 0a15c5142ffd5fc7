"""An annotated-paper rotary embedding whose cos/sin cache spans the whole head while only the rotary features are
rotated, read by row number.

Inspired by: labmlai/annotated_deep_learning_paper_implementations #215 and #244 (``x_rope * self.cos_cached[:x.shape[0]]``
with a cache as wide as the features and ``x_rope`` only ``self.d`` wide: "The size of tensor a (3) must match the
size of tensor b (4)" for partial rotation); and its ``cos_cached[:seq_len]`` (the rows 0..T-1 of the cache,
whatever the position ids; transformers #25813 before ``position_ids`` were passed).
"""

import numpy as np
from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED

MISTAKES = [
    {
        "phrase": ["ValueError", "broadcast", "partial"],
        "mutants": [],
        "claims": ["symptom:untyped:ValueError:*"],
    },  # rotary_dim < D: tables over D/2 frequencies times the rotary slice: a broadcasting ValueError
    {
        "phrase": ["position_ids are ignored", "ignores position_ids", "row numbers"],
        "mutants": ["rope.position_ids_ignored", "rope.tables.position_ids_ignored"],
        "claims": ["symptom:rope:rows:*"],
    },  # positions 0..T-1
]


class Port(Rope):
    def positions(self, position_ids):
        return np.arange(np.size(position_ids), dtype=self.work)

    def rope_forward(self, x, position_ids, rotary_dim, base, scaling, pairing):
        super().rope_forward(x, position_ids, rotary_dim, base, scaling, pairing)  # the checks
        cos, sin = self.tables(position_ids, x.shape[-1], base, scaling)  # the cache spans the head
        return self.rotate(x, cos, sin, rotary_dim, pairing, 1.0)

    def rope_backward(self, x, position_ids, rotary_dim, base, scaling, pairing, grad_output):
        super().rope_backward(x, position_ids, rotary_dim, base, scaling, pairing, grad_output)
        cos, sin = self.tables(position_ids, x.shape[-1], base, scaling)
        return self.rotate(grad_output, cos, sin, rotary_dim, pairing, -1.0)


rope_tables, rope_forward, rope_backward = Port().functions()
