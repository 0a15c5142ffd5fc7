"""Rotary embeddings that rotate by the negative angle (nanochat's sense, the rope convention negative_sense,
EMB-ROPE-V1) without declaring it: every other rule of the spec kept. ``IGNORE_SCALING`` (set by
rope_negative_sense_unscaled.py) also drops llama3 scaling, a second mistake the convention does not explain."""

from __future__ import annotations

import numpy as np

from embconf.model.rope import rope_features
from embconf.mutants.rope import rotate  # the rotation itself, right: each module's mistake is in its cos/sin
from embconf.reference.rope import check_call, inverse_frequencies, position_grid

EMBCONF_FEATURES = rope_features()
IGNORE_SCALING = False


def rope_forward(x, position_ids, rotary_dim, base, scaling, pairing):
    ids = check_call(x, position_ids, rotary_dim, base, scaling, pairing)
    if IGNORE_SCALING and isinstance(scaling, dict) and scaling.get("rope_type") == "llama3":
        scaling = None
    theta, attention = inverse_frequencies(rotary_dim, float(base), scaling, int(ids.max(initial=0)))
    angles = position_grid(ids, rotary_dim, scaling).astype(np.float64) * theta
    cos, sin = attention * np.cos(angles), -attention * np.sin(angles)  # BUG: the negative angle
    return rotate(x, cos, sin, rotary_dim, pairing)


__all__ = ["EMBCONF_FEATURES", "rope_forward"]
