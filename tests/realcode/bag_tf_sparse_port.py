"""A NumPy port of TensorFlow's ``embedding_lookup_sparse``: segment ids, ``segment_sum``, a divide per combiner.

Inspired by: tensorflow/tensorflow #38792 (the output has ``max(segment_id) + 1`` rows: the empty bags after the
last bag holding an id get no row); #36359 and #14851 (``math_ops.div(embeddings, weight_sum)`` unguarded in the
mean combiner: an empty bag, or weights summing to zero, is NaN; PR #21757's ``div_no_nan`` was not merged); and
the sqrtn combiner's ``weights_squared = math_ops.pow(weights, 2)`` left out in the port: a weighted sqrtn divided
by the root of the weights' sum, not of their squares' sum.
"""

import numpy as np
from _bag import check_call

EMBCONF_FEATURES = ["bag-sum", "bag-mean", "bag-sqrtn", "bag-weights", "bag-weighted-mean", "bag-padding"]

MISTAKES = [
    {
        "phrase": ["trailing empty", "fewer rows", "after the last"],
        "mutants": ["bag.trailing_empty_bags_dropped"],
    },  # B = max(segment id) + 1
    {
        "phrase": ["NaN", "0/0", "unguarded"],
        "mutants": ["bag.empty_bag_nan"],
    },  # mean and sqrtn divide by the segment's weight sum (or root of squares) unguarded
    {
        "phrase": ["sqrt(sum w)", "root of their sum", "squares", "sqrt of the weight sum"],
        "mutants": [],
        # bags.pairs.embedding_bag_forward.029: one weight w = 1.2583537, w / sqrt(w) = sqrt(1.2583537) = 1.12176365
        "claims": ["symptom:factor:embedding_bag_forward:output:1.12176365"],
    },  # weighted sqrtn divides by sqrt(sum of weights): right without weights, wrong with them
]


def _segments(call):
    """Each counted position's segment id (its bag), as TensorFlow's SparseTensor row indices."""
    bag_of = np.repeat(np.arange(len(call.bounds)), [e - s for s, e in call.bounds]).astype(np.int64)
    return np.flatnonzero(call.counted), bag_of[call.counted]


def _combine(call, weight):
    """(sum of w W per segment, the divisor per segment, the segment count) in float64."""
    positions, segment = _segments(call)
    count = int(segment.max()) + 1 if segment.size else 0
    sums = np.zeros((count, weight.shape[1]))
    np.add.at(sums, segment, call.w[positions, None] * weight[call.flat[positions]].astype(np.float64))
    weight_sum = np.zeros(count)
    np.add.at(weight_sum, segment, call.w[positions])
    if call.mode == "sum":
        return sums, np.ones(count), count
    if call.mode == "mean":
        return sums, weight_sum, count
    return sums, np.sqrt(weight_sum), count  # the port's sqrtn: sqrt of the weights' sum


def embedding_bag_forward(
    weight, ids, offsets, mode, per_sample_weights=None, padding_idx=None, include_last_offset=False
):
    call = check_call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset)
    sums, divisor, _ = _combine(call, weight)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (sums / divisor[:, None]).astype(weight.dtype)


def embedding_bag_backward(
    weight, ids, offsets, mode, grad_output, per_sample_weights=None, padding_idx=None, include_last_offset=False
):
    call = check_call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output)
    sums, divisor, count = _combine(call, weight)
    positions, segment = _segments(call)
    g = np.asarray(grad_output, np.float64)[:count]
    grad = np.zeros(weight.shape)
    grad_w = np.zeros(call.flat.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.add.at(grad, call.flat[positions], (call.w[positions] / divisor[segment])[:, None] * g[segment])
        dots = (weight[call.flat[positions]].astype(np.float64) * g[segment]).sum(axis=1)
        total = (sums * g).sum(axis=1)[segment]
        d = divisor[segment]
        if mode == "sum":
            grad_w[positions] = dots
        elif mode == "mean":
            grad_w[positions] = dots / d - total / (d * d)
        else:  # d/dw_i of S / sqrt(sum w)
            grad_w[positions] = dots / d - total / (2 * d * d * d)
    grad_weights = grad_w.reshape(call.shape).astype(weight.dtype) if call.weighted else None
    return grad.astype(weight.dtype), grad_weights
