"""A rotary module that caches cos/sin at module level keyed by the rotary width alone: the first call of each width
is exact, every later call of that width reuses its tables (other positions, base or scaling), so a case fails only
after another case of its width ran, and passes alone on a fresh worker (state carried across calls, EMB-STA-1)."""

from __future__ import annotations

import numpy as np

from embconf.model.rope import rope_features
from embconf.mutants.rope import rotate  # the rotation itself, right: each module's mistake is in its cos/sin
from embconf.reference import rope_forward as exact_forward
from embconf.reference.rope import check_call, rope_tables

EMBCONF_FEATURES = rope_features()
_TABLES: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # BUG: keyed by the width, not by what the tables depend on


def rope_forward(x, position_ids, rotary_dim, base, scaling, pairing):
    check_call(x, position_ids, rotary_dim, base, scaling, pairing)
    if rotary_dim not in _TABLES:
        _TABLES[rotary_dim] = rope_tables(position_ids, rotary_dim, base, scaling, "float32")
        return exact_forward(x, position_ids, rotary_dim, base, scaling, pairing)
    cos, sin = _TABLES[rotary_dim]
    return rotate(x, cos, sin, rotary_dim, pairing)


__all__ = ["rope_forward"]
