"""Hostile: embedding_backward zeroes the upstream gradient after use ("to free it"); the rest is correct."""

from embconf.reference import embedding_backward as _backward
from embconf.reference import embedding_forward, sinusoidal_table  # noqa: F401  (correct)


def embedding_backward(weight, ids, grad_output):
    grad_weight = _backward(weight, ids, grad_output)
    grad_output[...] = 0
    return grad_weight
