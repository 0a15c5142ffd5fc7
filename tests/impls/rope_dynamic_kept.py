"""Dynamic NTK that keeps the frequencies grown for a long call: a call longer than the original length grows them
for its own length, a call no longer than it uses the last grown ones (transformers #25306's kept ``inv_freq``, reset
only by a longer call: neither catalogue rule of keeping), so a shorter call after a long one on an instance fails."""

from __future__ import annotations

import numpy as np

from embconf.model.rope import rope_features
from embconf.mutants.rope import rotate  # the rotation itself, right: each module's mistake is in its cos/sin
from embconf.reference.rope import check_call, inverse_frequencies

EMBCONF_FEATURES = rope_features()
_GROWN = [0]  # the largest position the frequencies were last grown for (0: never)


def rope_forward(x, position_ids, rotary_dim, base, scaling, pairing):
    ids = check_call(x, position_ids, rotary_dim, base, scaling, pairing)
    largest = int(ids.max(initial=0))
    if isinstance(scaling, dict) and scaling.get("rope_type") == "dynamic":
        if largest + 1 > int(scaling["original_max_position_embeddings"]):
            _GROWN[0] = largest
        elif _GROWN[0]:
            largest = _GROWN[0]  # BUG: kept for a shorter call
    theta, attention = inverse_frequencies(rotary_dim, float(base), scaling, largest)
    angles = ids.astype(np.float64)[..., None] * theta
    cos, sin = attention * np.cos(angles), attention * np.sin(angles)
    return rotate(x, cos, sin, rotary_dim, pairing)


__all__ = ["rope_forward"]
