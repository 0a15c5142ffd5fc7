"""A ``[sin | cos]`` sinusoid table that declares its convention, and numbers its positions from 1.

Inspired by: tensor2tensor-style tables (``concat([sin, cos])``) in code that declares the convention it follows
(here ``EMBCONF_SINUSOID_CONVENTION = "concatenated"``, as the docs ask), combined with "positions 1 to N"
helpers (``np.arange(1, max_len + 1)``), a ``dtype`` argument that is never read (always float32), and
tensor2tensor's zero column for odd D (for D = 1 the whole table).
"""

import math

import numpy as np

EMBCONF_SINUSOID_CONVENTION = "concatenated"

MISTAKES = [
    {
        "phrase": ["from 1", "counted from 1"],
        "mutants": ["sin.positions_from_1"],
        "claims": ["symptom:sinusoid:positions counted from 1 instead of 0;"],
    },
    {"phrase": ["float32"], "mutants": []},
    {
        "phrase": ["zeros", "zero column"],
        "mutants": [],
        "claims": ["symptom:zeros:sinusoidal_table:table", "symptom:zero_values:sinusoidal_table:table"],
    },
]


def sinusoidal_table(max_len, embed_dim, dtype="float32"):
    half = embed_dim // 2
    position = np.arange(1, max_len + 1, dtype=np.float64)[:, None]
    freq = np.exp(-np.arange(half, dtype=np.float64) * 2.0 * math.log(10000.0) / embed_dim)
    table = np.concatenate([np.sin(position * freq), np.cos(position * freq)], axis=1)
    if embed_dim % 2:
        table = np.concatenate([table, np.zeros((max_len, 1))], axis=1)
    return table.astype(np.float32)  # the dtype argument is never read
