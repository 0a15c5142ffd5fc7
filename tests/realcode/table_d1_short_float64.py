"""A sinusoid table that returns float64 and has no column for D = 1 (every other odd D is right).

Inspired by: odd-D handling guarded by ``half = d // 2; if half == 0: return np.zeros((max_len, 0))`` (right for
every odd D > 1, short only for d = 1), and NumPy tables built in float64 and never cast back (their values are
the float32 table's once cast).
"""

import numpy as np
from _spec import canonical_table

MISTAKES = [
    {
        "phrase": ["D = 1", "D - 1 columns"],
        "mutants": [],
        "claims": ["symptom:shape:sinusoidal_table:D - N columns for D = N"],
    },
    {
        "phrase": ["float64"],
        "mutants": [],
        "claims": ["symptom:dtype:sinusoidal_table:float64->float32", "symptom:dtype:sinusoidal_table:float64->*"],
    },
]
FACTS = {"dtype_only": ["sinusoidal_table"]}


def sinusoidal_table(max_len, embed_dim, dtype="float32"):
    if embed_dim // 2 == 0:
        return np.zeros((max_len, 0))
    return canonical_table(max_len, embed_dim, "float64")
