"""A sinusoid helper that rounds an odd width up to even, from positions 1..L.

Inspired by: the workaround common in positional-encoding snippets for odd ``d_model`` (``pe = torch.zeros(max_len,
d_model + 1)`` so that ``pe[:, 1::2] = cos`` fits, slicing back to ``d_model`` forgotten in the return) and the
"positions 1 to N" helpers (``position = torch.arange(1, max_len + 1)``) that keep position 0 for padding.
"""

import numpy as np

MISTAKES = [
    {
        "phrase": ["D + 1 columns", "1 column too many"],
        "mutants": [],
        "claims": ["symptom:shape:sinusoidal_table:D + N columns for D = N"],
    },  # odd D: d_model + 1 columns returned
    {
        "phrase": ["counted from 1", "from 1"],
        "mutants": ["sin.positions_from_1"],
        "claims": ["symptom:sinusoid:positions counted from 1 instead of 0;"],
    },  # arange(1, L + 1)
]


def sinusoidal_table(max_len, embed_dim, dtype="float32"):
    width = embed_dim + embed_dim % 2  # make the sin/cos pairs fit
    position = np.arange(1, max_len + 1, dtype=np.float64)[:, None]
    div_term = np.exp(np.arange(0, width, 2) * -(np.log(10000.0) / embed_dim))
    pe = np.zeros((max_len, width))
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term)
    return pe.astype(dtype)
