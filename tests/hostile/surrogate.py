"""Hostile: embedding_forward raises a message holding a lone surrogate and non-ASCII text; the rest is correct."""

from embconf.reference import embedding_backward, sinusoidal_table  # noqa: F401  (correct)


def embedding_forward(weight, ids):
    raise ValueError("bad byte \udcff in caf\u00e9")
