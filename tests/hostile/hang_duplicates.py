"""Hostile: embedding_backward hangs when an id repeats (a TinyTorch-style accumulation bug); the rest is correct."""

import numpy as np

from embconf.reference import embedding_backward as _backward  # noqa: F401
from embconf.reference import embedding_forward, sinusoidal_table


def embedding_backward(weight, ids, grad_output):
    flat = np.asarray(ids).reshape(-1)
    if len(np.unique(flat)) < len(flat):
        while True:
            pass
    return _backward(weight, ids, grad_output)
