"""A rotary module that is right on its first call and doubles every later answer (a call counter kept at module
level), and that crashes whenever it is loaded again by the same runner: every failing case crashes when it is run
again alone on a fresh worker (the marker file, one per runner process, tells the run's worker from a later one)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from embconf.model.rope import rope_features
from embconf.reference import rope_forward as exact_forward

EMBCONF_FEATURES = rope_features()
MARKER = Path(tempfile.gettempdir(), f"embconf-rope-crash-alone.{os.getppid()}")
_AGAIN = MARKER.exists()
MARKER.touch()
_CALLS = [0]


def rope_forward(x, position_ids, rotary_dim, base, scaling, pairing):
    if _AGAIN:
        os._exit(7)
    _CALLS[0] += 1
    out = exact_forward(x, position_ids, rotary_dim, base, scaling, pairing)
    return out if _CALLS[0] == 1 else out * 2


__all__ = ["rope_forward"]
