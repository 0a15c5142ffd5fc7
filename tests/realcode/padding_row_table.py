"""A sinusoid table whose row 0 is zeroed for padding, computed with the frequencies over D - 1.

Inspired by: ``pe[padding_idx] = 0`` in sinusoid tables that reserve position 0 for padding (fairseq,
attention-is-all-you-need-pytorch's ``sinusoid_table[padding_idx] = 0.``), and exponents written
``2 * i / (d_model - 1)``.
"""

import math

import numpy as np

MISTAKES = [
    {
        "phrase": ["row 0", "position 0"],
        "mutants": [],
        "claims": ["symptom:zero_rows:sinusoidal_table:table:0", "symptom:zeros:sinusoidal_table:table"],
    },
    {"phrase": ["2k/(D-1)", "D-1"], "mutants": ["sin.d_minus_1"]},
]


def sinusoidal_table(max_len, embed_dim, dtype="float32"):
    position = np.arange(max_len, dtype=np.float64)[:, None]
    pairs = np.arange(0, embed_dim, 2, dtype=np.float64)
    angles = position * np.exp(-pairs * math.log(10000.0) / max(embed_dim - 1, 1))
    table = np.zeros((max_len, embed_dim))
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles[:, : embed_dim // 2])
    table[0] = 0.0
    return table.astype(dtype)
