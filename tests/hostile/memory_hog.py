"""Hostile: embedding_backward allocates (and touches) 128 MiB blocks without bound; the rest is correct."""

import numpy as np

from embconf.reference import embedding_forward, sinusoidal_table  # noqa: F401  (correct)


def embedding_backward(weight, ids, grad_output):
    blocks = []
    while True:
        blocks.append(np.ones(2**24))
