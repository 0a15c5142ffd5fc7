"""Hostile: changes numpy's global state (then answers correctly): embedding_forward turns on
np.seterr(all='raise'), sinusoidal_table changes the print options; embedding_backward is correct."""

import numpy as np

from embconf.reference import embedding_backward  # noqa: F401  (correct)
from embconf.reference import embedding_forward as _forward
from embconf.reference import sinusoidal_table as _table


def embedding_forward(weight, ids):
    np.seterr(all="raise")
    return _forward(weight, ids)


def sinusoidal_table(max_len, embed_dim, dtype="float32"):
    np.set_printoptions(precision=2, threshold=5)
    return _table(max_len, embed_dim, dtype)
