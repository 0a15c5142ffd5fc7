"""Rotary embeddings whose first call of a configuration computes in float64 and keeps its cos/sin in float32 for
the calls after it, which rotate in float32: every answer is within the tolerance (EMB-ROPE-11), but a repeated call
does not give the first one's bits (EMB-STA-1)."""

from __future__ import annotations

import json

import numpy as np

from embconf.model.rope import rope_features
from embconf.reference import rope_backward
from embconf.reference import rope_forward as exact_forward
from embconf.reference.rope import check_call, pair_columns, rope_tables

EMBCONF_FEATURES = rope_features()
_TABLES: dict[str, tuple[np.ndarray, np.ndarray]] = {}


def rope_forward(x, position_ids, rotary_dim, base, scaling, pairing):
    check_call(x, position_ids, rotary_dim, base, scaling, pairing)
    key = json.dumps([np.asarray(position_ids).tolist(), rotary_dim, float(base), scaling])
    if key not in _TABLES:
        _TABLES[key] = rope_tables(position_ids, rotary_dim, base, scaling, "float32")
        return exact_forward(x, position_ids, rotary_dim, base, scaling, pairing)
    cos, sin = _TABLES[key]
    i, j = pair_columns(rotary_dim, pairing)
    out = x.copy()
    out[..., i] = x[..., i] * cos - x[..., j] * sin
    out[..., j] = x[..., j] * cos + x[..., i] * sin
    return out


__all__ = ["rope_backward", "rope_forward"]
