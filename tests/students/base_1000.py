"""Student: the sinusoid uses base 1000 instead of 10000, computed in float32 like the rest of TinyTorch."""

SYMPTOM = "base 1000"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

import numpy as np
from _tinytorch import Tensor


def _compute_sinusoidal_table(max_len, embed_dim):
    position = np.arange(max_len, dtype=np.float32)[:, None]
    div_term = np.exp(np.arange(0, embed_dim, 2, dtype=np.float32) * -(np.log(np.float32(1000.0)) / embed_dim))
    pe = np.zeros((max_len, embed_dim), dtype=np.float32)
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term[: embed_dim // 2])
    return pe
