"""Hostile: embedding_forward returns the right rows but then scales the table in place; the rest is correct."""

from embconf.reference import embedding_backward, sinusoidal_table  # noqa: F401  (correct)
from embconf.reference import embedding_forward as _forward


def embedding_forward(weight, ids):
    output = _forward(weight, ids)
    weight *= 2.0
    return output
