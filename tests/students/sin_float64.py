"""Student: builds the sinusoid table with np.zeros (float64) and returns it without casting to float32."""

SYMPTOM = "float64"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

import math

import numpy as np
from _tinytorch import Tensor


def _compute_sinusoidal_table(max_len, embed_dim):
    pe = np.zeros((max_len, embed_dim))
    position = np.arange(max_len)[:, None]
    div_term = np.exp(np.arange(0, embed_dim, 2) * (-math.log(10000.0) / embed_dim))
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term[: embed_dim // 2])
    return pe
