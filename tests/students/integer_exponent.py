"""Student: computes the exponent with integer division (2 * i // d_model), so every frequency is 1."""

SYMPTOM = "frequency 1"  # what a correct symptom diagnosis says (tests/diagnosis/test_diagnosis.py)

import numpy as np
from _tinytorch import Tensor


def _compute_sinusoidal_table(max_len, embed_dim):
    pe = np.zeros((max_len, embed_dim), dtype=np.float32)
    for pos in range(max_len):
        for i in range(0, embed_dim, 2):
            angle = pos / (10000 ** (2 * (i // 2) // embed_dim))
            pe[pos, i] = np.sin(angle)
            if i + 1 < embed_dim:
                pe[pos, i + 1] = np.cos(angle)
    return pe
