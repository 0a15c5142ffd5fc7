"""The embedding backward of Karpathy's makemore "becoming a backprop ninja" exercise, written the way students do.

Inspired by: karpathy/nn-zero-to-hero issue #57 (https://github.com/karpathy/nn-zero-to-hero/issues/57): the
loop ``for k in range(Xb.shape[0]): dC[Xb[k]] += demb[k]`` adds a whole sequence with one fancy-indexed ``+=``,
so an id repeated inside one sequence keeps a single gradient; the loop also assumes the ids have a batch axis.
"""

import numpy as np
from _spec import check_grad_shape, check_ids

MISTAKES = [
    {
        "phrase": "repeated",
        "mutants": [],
        "claims": ["symptom:repeated_rows_differ:token_table"],
    },  # dC[Xb[k]] += demb[k]: repeats within one sequence count once
    {"phrase": "0-d", "mutants": []},  # Xb.shape[0] of a 0-d id array is an IndexError
]


def embedding_forward(weight, ids):
    return np.take(weight, check_ids(ids, weight.shape[0]), axis=0)


def embedding_backward(weight, ids, grad_output):
    Xb = check_ids(ids, weight.shape[0])
    check_grad_shape(grad_output, Xb.shape + (weight.shape[1],))
    dC = np.zeros_like(weight)
    for k in range(Xb.shape[0]):
        dC[Xb[k]] += grad_output[k]
    return dC
