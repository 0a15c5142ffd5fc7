"""Hostile: embedding_forward raises a 5 MB message, and a lone surrogate in it; the other operations are correct."""

from embconf.reference import embedding_backward, sinusoidal_table  # noqa: F401  (correct)


def embedding_forward(weight, ids):
    raise ValueError("\udcff surrogate, then " + "x" * (5 << 20))
