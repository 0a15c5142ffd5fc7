"""A lookup with ``np.take(..., mode="clip")`` in the forward and the backward, and a gradient averaged over the
tokens.

Inspired by: JAX/TF-style gathers ported to NumPy with ``mode="clip"`` (``jnp.take``'s default clamps out-of-range
ids, as Flax's and Haiku's embeddings do), neither direction validating; and a ``/ ids.size`` "mean" left in the
backward from a loss that averaged.
"""

import numpy as np
from _spec import check_grad_shape

MISTAKES = [
    {
        "phrase": ["clamp"],
        "mutants": ["fwd.clamped", "bwd.clamped"],
        "claims": ["symptom:ids_clamped", "symptom:ids_wrapped_or_clamped"],
    },
    {
        "phrase": ["number of ids", "divides"],
        "mutants": ["bwd.divided_by_count"],
        "claims": [
            "symptom:factor:gradient:token_table:1/N",
            "symptom:factor:gradient:token_table:1/D",
            "symptom:factor:gradient:token_table:1/sqrt(D)",
        ],
    },
]
FACTS = {"forward_ids": "clamps", "backward_ids": "clamps"}


def embedding_forward(weight, ids):
    return np.take(weight, np.asarray(ids).astype(np.int64), axis=0, mode="clip")


def embedding_backward(weight, ids, grad_output):
    ids = np.asarray(ids).astype(np.int64)
    check_grad_shape(grad_output, ids.shape + weight.shape[1:])
    rows = np.clip(ids, 0, weight.shape[0] - 1).reshape(-1)
    grad = np.zeros(weight.shape, dtype=np.float64)
    np.add.at(grad, rows, grad_output.reshape(-1, weight.shape[1]))
    return (grad / max(ids.size, 1)).astype(weight.dtype)
