"""Hostile: sinusoidal_table adds fresh random noise of one ulp (within tolerance) to one element on
every call, from the OS's entropy (no global state); the other operations are deterministic and correct."""

import numpy as np

from embconf.reference import embedding_backward, embedding_forward  # noqa: F401  (correct)
from embconf.reference import sinusoidal_table as _table


def sinusoidal_table(max_len, embed_dim, dtype="float32"):
    table = _table(max_len, embed_dim, dtype)
    if table.size:
        rng = np.random.default_rng()
        index = tuple(int(rng.integers(n)) for n in table.shape)
        table[index] = np.nextafter(table[index], np.inf if rng.integers(2) else -np.inf)
    return table
