"""The RoPE extension of tests/impls/tinytorch_rope.py with a typical mistake: the positions always start at
0, so a call with start_pos > 0 (a KV-cache decode step) rotates by the wrong angles (EMB-LAY-10)."""

from __future__ import annotations

import numpy as np
from tinytorch_rope import Embedding, PositionalEncoding, Tensor, _compute_sinusoidal_table  # noqa: F401
from tinytorch_rope import EmbeddingLayer as CorrectLayer


class EmbeddingLayer(CorrectLayer):
    def positions(self, start: int, seq_len: int) -> np.ndarray:
        return np.arange(seq_len)  # start_pos forgotten
