"""Hostile: embedding_forward returns a list nested 100000 deep; the rest is correct."""

from embconf.reference import embedding_backward, sinusoidal_table  # noqa: F401  (correct)


def embedding_forward(weight, ids):
    value: list = []
    for _ in range(100_000):
        value = [value]
    return value
