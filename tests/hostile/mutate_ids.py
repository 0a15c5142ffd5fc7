"""Hostile: embedding_forward gathers the right rows, then sorts 1-D ids in place; the rest is correct."""

from embconf.reference import embedding_backward, sinusoidal_table  # noqa: F401  (correct)
from embconf.reference import embedding_forward as _forward


def embedding_forward(weight, ids):
    output = _forward(weight, ids)
    if ids.ndim == 1:
        ids.sort()
    return output
