"""Student: uses pos / 2 as the position (thinking each pair of columns shares a position)."""

SYMPTOM = "position"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

import numpy as np
from _tinytorch import Tensor


def _compute_sinusoidal_table(max_len, embed_dim):
    position = (np.arange(max_len, dtype=np.float32) / 2)[:, None]
    div_term = np.exp(np.arange(0, embed_dim, 2, dtype=np.float32) * -(np.log(np.float32(10000.0)) / embed_dim))
    pe = np.zeros((max_len, embed_dim), dtype=np.float32)
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term[: embed_dim // 2])
    return pe
