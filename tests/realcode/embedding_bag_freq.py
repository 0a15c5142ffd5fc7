"""``scale_grad_by_freq`` implemented the way PyTorch's CPU embedding_bag backward did it until 2026, with padding.

Inspired by: pytorch/pytorch #190063 / PR #190264 ("embedding_bag CPU dense backward scales gradients by the wrong
frequency for mixed-count indices": the divisor was ``counts[indices_data[i]]`` with ``i`` the loop counter over
unique indices, not the current group's index) and pytorch/pytorch #26302 / #28716 (the padding row's gradient is
not zero on one kernel path): here the frequency-scaled path forgets ``padding_idx`` while the plain path honours it.
"""

import numpy as np
from _spec import SpecError, check_grad_shape, check_ids

EMBCONF_FEATURES = ["scale_grad_by_freq", "padding_idx"]

MISTAKES = [
    {"phrase": "count", "mutants": []},  # divides a group by the count of the id at sorted position i
    {
        "phrase": "padding",
        "mutants": ["opt.padding_grad_kept"],
    },  # with scale_grad_by_freq the padding row keeps its gradient
]


def _padding(padding_idx, vocab_size):
    if padding_idx is None:
        return None
    if not -vocab_size <= padding_idx < vocab_size:
        raise SpecError("invalid_config", f"padding_idx {padding_idx} outside [-{vocab_size}, {vocab_size})")
    return padding_idx % vocab_size


def embedding_forward(weight, ids, padding_idx=None, scale_grad_by_freq=False):
    _padding(padding_idx, weight.shape[0])
    return np.take(weight, check_ids(ids, weight.shape[0]), axis=0)


def embedding_backward(weight, ids, grad_output, padding_idx=None, scale_grad_by_freq=False):
    pad = _padding(padding_idx, weight.shape[0])
    rows = check_ids(ids, weight.shape[0])
    check_grad_shape(grad_output, rows.shape + (weight.shape[1],))
    flat, g = rows.reshape(-1), grad_output.reshape(-1, weight.shape[1]).astype(np.float64)
    grad = np.zeros(weight.shape, dtype=np.float64)
    if not scale_grad_by_freq:
        np.add.at(grad, flat, g)
        if pad is not None:
            grad[pad] = 0
        return grad.astype(weight.dtype)
    counts = np.bincount(flat, minlength=weight.shape[0])
    order = np.argsort(flat, kind="stable")
    sorted_ids = flat[order]
    for i, index in enumerate(np.unique(flat)):
        members = order[sorted_ids == index]
        grad[index] = g[members].sum(axis=0) / counts[sorted_ids[i]]  # counts[indices_data[i]]
    return grad.astype(weight.dtype)
