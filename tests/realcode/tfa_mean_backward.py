"""A port of TensorFlow Addons' EmbeddingBag: a mean whose gradient is not divided, a mean over the padded length,
and no weights with mean.

Inspired by: tensorflow/addons #2502 / PR #2505 ("Fix bugged gradients when combiner == 'MEAN'": the custom op's
backward gave every row of a mean bag the bag's gradient whole; the fix computes a mean as a sum with weights
``1 / tf.shape(indices)[1]``, the padded width of the 2-D ids, so padding counts in the divisor); and the same
review ("combiner == 'mean' does not support weights"): weights with mean (or sqrtn) refused with ValueError.
"""

import numpy as np
from _bag import FEATURES, check_call, divisor, gradients

EMBCONF_FEATURES = FEATURES

MISTAKES = [
    {
        "phrase": ["not divide", "undivided", "divisor"],
        "mutants": ["bag.mean_backward_undivided"],
        "claims": ["symptom:factor:gradient:token_table:*"],
    },  # mean and sqrtn backward: each counted row gets g[b] * w_i whole
    {
        "phrase": ["padded length", "padding"],
        "mutants": ["bag.mean_counts_padding"],
    },  # forward mean divides by end - start (sqrtn by its root), padding included
    {
        "phrase": ["ValueError", "weights", "not support"],
        "mutants": [],
        "claims": ["symptom:untyped:ValueError:*"],
    },  # per_sample_weights with mean or sqrtn refused with ValueError
]


def _call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output=None):
    call = check_call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output)
    if call.weighted and mode in ("mean", "sqrtn"):
        raise ValueError(f"combiner {mode!r} does not support weights")
    return call


def embedding_bag_forward(
    weight, ids, offsets, mode, per_sample_weights=None, padding_idx=None, include_last_offset=False
):
    call = _call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset)
    table, out = weight.astype(np.float64), np.zeros((len(call.bounds), weight.shape[1]))
    for b, (start, end) in enumerate(call.bounds):
        p = call.positions(b)
        if mode == "max":
            out[b] = table[call.flat[p]].max(axis=0) if p.size else 0.0
            continue
        d = divisor(mode, np.ones(end - start)) if mode != "sum" else 1.0  # the padded length
        if d:
            out[b] = call.w[p] @ table[call.flat[p]] / d
    return out.astype(weight.dtype)


def embedding_bag_backward(
    weight, ids, offsets, mode, grad_output, per_sample_weights=None, padding_idx=None, include_last_offset=False
):
    call = _call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output)
    if mode in ("mean", "sqrtn"):
        call.mode = "sum"  # the op's backward: every counted row gets g[b] whole
    grad, grad_w = gradients(call, weight, grad_output)
    return grad.astype(weight.dtype), None if grad_w is None else grad_w.astype(weight.dtype)
