"""A lookup that checks its ids before use, raising the built-in IndexError, and whose backward overwrites.

Inspired by: ``if (ids >= self.num_embeddings).any() or (ids < 0).any(): raise IndexError("index out of range in
self")`` (PyTorch's own message, copied into NumPy ports) where the spec's typed error is meant; and the
``grad[ids] = g`` backward.
"""

import numpy as np
from _spec import check_grad_shape

MISTAKES = [
    {"phrase": ["IndexError", "own check"], "mutants": [], "claims": ["symptom:untyped:IndexError:index_out_of_range"]},
    {"phrase": ["accumulat"], "mutants": ["bwd.overwrite"], "claims": ["symptom:repeated_rows:token_table"]},
]
FACTS = {"forward_ids": "untyped", "backward_ids": "untyped", "own_checks": ["index_out_of_range"]}


def _checked(weight, ids):
    ids = np.asarray(ids)
    if ids.size and (ids.min() < 0 or ids.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    return ids.astype(np.int64)


def embedding_forward(weight, ids):
    return weight[_checked(weight, ids)]


def embedding_backward(weight, ids, grad_output):
    rows = _checked(weight, ids)
    check_grad_shape(grad_output, rows.shape + weight.shape[1:])
    grad = np.zeros_like(weight)
    grad[rows.reshape(-1)] = grad_output.reshape(-1, weight.shape[1])
    return grad
