"""An EmbeddingBag whose bag sizes keep the padding positions and whose backward trains the padding row.

Inspired by: pytorch/pytorch #26302 and #28716 (the padding row's gradient is not zero on GPU, for inputs longer than
768 ids: the kernel's path accumulates every id's gradient) and #103023 (the same on MPS); and the review of
pytorch/pytorch PR #49237 (``bag_size_data[add_indices_data[i]]--`` "to reflect that the index is padded" done in
one branch only: elsewhere a mean's bag size counts the padding positions, its divisor the padded length).
"""

import numpy as np
from _bag import FEATURES, check_call, gradients, pool

EMBCONF_FEATURES = FEATURES

MISTAKES = [
    {
        "phrase": ["padding row", "padding positions", "gradient"],
        "mutants": ["bag.padding_gets_gradient"],
        "claims": ["symptom:padding_counted:bag"],
    },  # backward: padding positions scatter g[b] * w_i / divisor into the padding row
    {
        "phrase": ["padded length", "padding"],
        "mutants": ["bag.mean_counts_padding", "bag.backward.mean_counts_padding"],
        # bags.pairs.embedding_bag_forward.038: counted weights 4.0193613 / all six positions' 2.6727316 = 1.50384025
        "claims": ["symptom:factor:embedding_bag_forward:output:1.50384025"],
    },  # mean divides by the bag's length with padding (sqrtn by its root), forward and backward
]


def _every_position(call, weight):
    """The call with every position counted, on a table whose padding row reads as zeros (the sum leaves padding
    out, the divisor and the scatter keep it)."""
    zeroed = weight.astype(np.float64)
    padding = np.unique(call.flat[~call.counted])
    zeroed[padding] = 0.0
    call.counted = np.ones(call.flat.shape, dtype=bool)
    return call, zeroed


def embedding_bag_forward(
    weight, ids, offsets, mode, per_sample_weights=None, padding_idx=None, include_last_offset=False
):
    call = check_call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset)
    if mode in ("mean", "sqrtn"):
        call, table = _every_position(call, weight)
        return pool(call, table).astype(weight.dtype)
    return pool(call, weight).astype(weight.dtype)


def embedding_bag_backward(
    weight, ids, offsets, mode, grad_output, per_sample_weights=None, padding_idx=None, include_last_offset=False
):
    call = check_call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output)
    if mode == "max":
        grad, grad_w = gradients(call, weight, grad_output)
    else:
        call, table = _every_position(call, weight)
        grad, grad_w = gradients(call, table, grad_output)
    return grad.astype(weight.dtype), None if grad_w is None else grad_w.astype(weight.dtype)
