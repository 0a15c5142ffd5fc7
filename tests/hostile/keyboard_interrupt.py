"""Hostile: embedding_forward raises KeyboardInterrupt; the other operations are correct."""

from embconf.reference import embedding_backward, sinusoidal_table  # noqa: F401  (correct)


def embedding_forward(weight, ids):
    raise KeyboardInterrupt
