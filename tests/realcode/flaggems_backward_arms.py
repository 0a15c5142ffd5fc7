"""Triton-style EmbeddingBag backward kernels with two arms where three are needed and a weights' gradient that
knows only the sum.

Inspired by: flagos-ai/FlagGems #5220 ("_embedding_bag_dense_backward: mode=2 (max) silently receives the mean
gradient": ``mode == 0`` passes the bag's gradient, every other mode divides it by the bag size, and
``maximum_indices`` is never used); and the review of flagos-ai/FlagGems PR #3683
(``_embedding_bag_per_sample_weights_backward``: "The mode and padding_idx is not used, why?": the gradient of
``per_sample_weights`` is ``grad[bag] . weight[id]`` for every mode, and padding positions get it too).
"""

import numpy as np
from _bag import FEATURES, check_call, functions, gradients, pool

EMBCONF_FEATURES = FEATURES

MISTAKES = [
    {
        "phrase": ["mean's gradient", "g[b] / count", "arg-max", "as mean"],
        "mutants": ["bag.max_backward_as_mean"],
    },  # max backward: g[b] / count to every counted position
    {
        "phrase": ["sum's gradient", "g[b] . W", "mode"],
        "mutants": ["bag.weight_gradient_as_sum"],
    },  # grad of per_sample_weights: g[b] . W[id_i] in every mode
    {
        "phrase": ["padding position", "padding"],
        "mutants": ["bag.padding_weight_gradient"],  # the mutant's FlagGems #3683: padding positions not zeroed
        "claims": ["symptom:bag:padding_positions:embedding_bag_backward"],
    },  # ... and at padding positions too (W[padding_idx] . g[b] instead of 0)
]


def embedding_bag_backward(
    weight, ids, offsets, mode, grad_output, per_sample_weights=None, padding_idx=None, include_last_offset=False
):
    call = check_call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output)
    g = np.asarray(grad_output, np.float64)
    if mode == "max":  # the mean's arm
        grad = np.zeros(weight.shape)
        for b in range(len(call.bounds)):
            p = call.positions(b)
            np.add.at(grad, call.flat[p], g[b] / max(p.size, 1))
    else:
        grad, _ = gradients(call, weight, grad_output)
    if not call.weighted:
        return grad.astype(weight.dtype), None
    grad_w = np.zeros(call.flat.shape)
    for b, (start, end) in enumerate(call.bounds):
        grad_w[start:end] = weight[call.flat[start:end]].astype(np.float64) @ g[b]  # padding positions too
    return grad.astype(weight.dtype), grad_w.reshape(call.shape).astype(weight.dtype)


embedding_bag_forward = functions(check_call)[0]
