"""A NumPy EmbeddingBag whose bags are summed by ``np.add.reduceat`` over the offsets.

Inspired by: NumPy's ``ufunc.reduceat`` documentation ("if indices[i] >= indices[i+1], the i-th generalized row is
simply array[indices[i]]", and an index equal to the length is out of bounds), the rule a segment sum written with
``np.add.reduceat(rows, offsets)`` inherits: an empty bag gets the row at its offset (the next bag's first id's) and
an empty bag at the end raises IndexError; pytorch/pytorch #3194 / #47858 (a mean skewed by padding: the divisor is
the bag's length, padding included); and the nn-zero-to-hero #57 / DLFS2 backward ``grad[ids] += g`` (an id
repeated among the positions is counted once).
"""

import numpy as np
from _bag import check_call

EMBCONF_FEATURES = ["bag-sum", "bag-mean", "bag-padding", "bag-2d"]

MISTAKES = [
    {
        "phrase": ["reduceat", "empty bag", "the next bag", "IndexError"],
        "mutants": [],
        "claims": ["symptom:untyped:IndexError:*"],
    },  # an empty bag reads the row at its offset; an empty last bag (offset N) raises IndexError
    {
        "phrase": ["padded length", "padding"],
        "mutants": ["bag.mean_counts_padding", "bag.backward.mean_counts_padding"],
    },  # mean divides by end - start, padding positions included (left out of the sum)
    {
        "phrase": ["repeated", "accumulat", "overwrit"],
        "mutants": ["bag.repeated_ids_overwritten"],  # grad[flat] += g is buffered: grad[ids] = g, the mutant's
        "claims": ["symptom:bag:repeated_rows:embedding_bag_backward"],
    },  # grad[ids] += g on a zero grad: a row a repeated id selects keeps only its last occurrence's gradient
]


def _segments(call, weight):
    """(rows weighted and masked (N, D) float64, each bag's start, each bag's length)."""
    rows = weight[call.flat].astype(np.float64) * (call.w * call.counted)[:, None]
    starts = np.array([s for s, _ in call.bounds], dtype=np.int64)
    lengths = np.array([e - s for s, e in call.bounds], dtype=np.int64)
    return rows, starts, lengths


def embedding_bag_forward(
    weight, ids, offsets, mode, per_sample_weights=None, padding_idx=None, include_last_offset=False
):
    call = check_call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset)
    rows, starts, lengths = _segments(call, weight)
    if not starts.size:
        return np.zeros((0, weight.shape[1]), dtype=weight.dtype)
    out = np.add.reduceat(rows, starts, axis=0)
    if mode == "mean":
        out = out / np.maximum(lengths, 1)[:, None]  # avoid dividing by zero for an empty bag
    return out.astype(weight.dtype)


def embedding_bag_backward(
    weight, ids, offsets, mode, grad_output, per_sample_weights=None, padding_idx=None, include_last_offset=False
):
    call = check_call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output)
    _, _, lengths = _segments(call, weight)
    bag_of = np.repeat(np.arange(len(call.bounds)), lengths)
    scale = call.w * call.counted
    if mode == "mean":
        scale = scale / np.maximum(lengths, 1)[bag_of]
    grad = np.zeros(weight.shape, dtype=np.float64)
    grad[call.flat] += scale[:, None] * np.asarray(grad_output, np.float64)[bag_of]
    return grad.astype(weight.dtype), None
