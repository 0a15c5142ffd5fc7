"""Hostile: embedding_backward never returns (an infinite loop); the other operations are correct."""

from embconf.reference import embedding_forward, sinusoidal_table  # noqa: F401  (correct)


def embedding_backward(weight, ids, grad_output):
    while True:
        pass
