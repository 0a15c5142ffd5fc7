"""A rotary embedding in the style of xformers' ``RotaryEmbedding``: the frequencies cast to the input's dtype, and
the cos/sin tables cached by sequence length and dtype only.

Inspired by: facebookresearch/xformers ``components/positional_embedding/rotary.py`` as quoted in
facebookresearch/xformers #779 (``freqs = torch.einsum("i,j->ij", t, self.inv_freq.to(x.dtype))``: inv_freq rounded
to float16 or bfloat16 for half-precision inputs; and ``_update_cos_sin_tables`` rebuilding the cache only when
``seq_len != self._seq_len_cached`` or the dtype changed), as a module-level cache in a functions port: a later
call of the same length and dtype gets the first call's tables, whatever its positions, base or scaling.
"""

import numpy as np
from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED + ["float16", "bfloat16"]

MISTAKES = [
    {
        "phrase": ["inv_freq", "float16", "bfloat16"],
        "mutants": ["rope.inv_freq_bfloat16", "rope.tables.inv_freq_bfloat16"],
        "claims": ["symptom:rope:angle_precision:*:inv_freq:*"],
    },  # inv_freq rounded to x's dtype (float16 or bfloat16) before the product with the positions
    {
        "phrase": ["cache", "earlier call", "same length", "state"],
        "mutants": ["rope.state.cache_by_length"],
        "claims": ["symptom:stale_buffer:*", "symptom:state:*"],
    },  # tables cached by (T, dtype): another call's positions, base, scaling or rotary_dim reused
]


class Port(Rope):
    def __init__(self):
        self.cache = {}

    def inv_freq(self, rotary_dim, base, scaling, position_ids):
        inv = super().inv_freq(rotary_dim, base, scaling, position_ids)
        return self.cast(inv, self.call_dtype).astype(np.float64) if self.call_dtype in ("float16", "bfloat16") else inv

    def tables(self, position_ids, rotary_dim, base, scaling):
        key = (np.size(position_ids), self.call_dtype)
        if key not in self.cache:
            self.cache[key] = super().tables(position_ids, rotary_dim, base, scaling)
        return self.cache[key]


rope_tables, rope_forward, rope_backward = Port().functions()
