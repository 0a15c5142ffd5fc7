"""A lookup whose forward checks the ids and whose backward, written later for training, does not.

Inspired by: custom autograd Functions whose ``forward`` validates (``if (ids < 0).any() or (ids >=
num_embeddings).any(): raise``) while ``backward`` scatters straight away (``grad.index_add_(0, ids, g)``), as in
the PyTorch forum threads on "index out of range only in backward"; and a float64 accumulator returned as is.
"""

import numpy as np
from _spec import check_grad_shape, check_ids

MISTAKES = [
    {
        "phrase": ["backward", "negative"],
        "mutants": ["bwd.negative_wraps"],
        "claims": ["symptom:untyped:IndexError:index_out_of_range"],
    },
    {
        "phrase": ["float64"],
        "mutants": ["bwd.float64_dtype"],
        "claims": ["symptom:dtype:embedding_backward:float64->float32"],
    },
]
FACTS = {"backward_ids": "none"}


def embedding_forward(weight, ids):
    return weight[check_ids(ids, weight.shape[0])]


def embedding_backward(weight, ids, grad_output):
    ids = np.asarray(ids).astype(np.int64)
    check_grad_shape(grad_output, ids.shape + weight.shape[1:])
    grad = np.zeros(weight.shape, dtype=np.float64)
    np.add.at(grad, ids.reshape(-1), grad_output.reshape(-1, weight.shape[1]))
    return grad
