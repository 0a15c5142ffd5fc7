"""``nn.Embedding`` with ``padding_idx`` as MindSpore 2.x behaves on CPU, in NumPy.

Inspired by: MindSpore's ``nn.Embedding`` (mindspore/python/mindspore/nn/layer/embedding.py), whose padding_idx
only zeroes the initial table (the row still learns), which refuses a negative padding_idx, and whose Gather
wraps a negative id once while the backward's UnsortedSegmentSum drops it (all measured and listed in
/work/shared/docs/conventions.md, "More frameworks"). PyTorch #26302 and #28716 are the same "padding row gets a
gradient" symptom in PyTorch's CUDA kernel.
"""

import numpy as np
from _spec import SpecError, check_grad_shape

EMBCONF_FEATURES = ["padding_idx"]

MISTAKES = [
    {
        "phrase": "padding",
        "mutants": ["opt.padding_grad_kept"],
        "claims": ["symptom:repeated_rows_differ:token_table"],
    },  # the padding row keeps its gradient
    {
        "phrase": ["negative padding", "padding_idx -1"],
        "mutants": [],
    },  # padding_idx -1 (the last row) refused as invalid_config
    {
        "phrase": ["negative id", "wraps"],
        "mutants": ["fwd.negative_wraps", "bwd.drops_missing_ids"],
        "claims": ["symptom:ids_wrapped", "symptom:ids_wrapped_or_clamped"],
    },  # -1 wraps; backward drops it
]


def _check_padding(padding_idx, vocab_size):
    if padding_idx is not None and not 0 <= padding_idx < vocab_size:
        raise SpecError("invalid_config", f"padding_idx {padding_idx} must be in [0, {vocab_size})")


def _gather_ids(ids, vocab_size):
    ids = np.asarray(ids).astype(np.int64)
    if ids.size and (ids.max() >= vocab_size or ids.min() < -vocab_size):
        raise SpecError("index_out_of_range", f"an id lies outside [-{vocab_size}, {vocab_size})")
    return np.where(ids < 0, ids + vocab_size, ids)  # Gather wraps a negative id once


def embedding_forward(weight, ids, padding_idx=None):
    _check_padding(padding_idx, weight.shape[0])
    return np.take(weight, _gather_ids(ids, weight.shape[0]), axis=0)


def embedding_backward(weight, ids, grad_output, padding_idx=None):
    _check_padding(padding_idx, weight.shape[0])
    ids = np.asarray(ids).astype(np.int64)
    if ids.size and ids.max() >= weight.shape[0]:
        raise SpecError("index_out_of_range", "an id lies outside the table")
    check_grad_shape(grad_output, ids.shape + (weight.shape[1],))
    grad = np.zeros(weight.shape, dtype=np.float64)
    keep = ids.reshape(-1) >= 0  # UnsortedSegmentSum drops negative segment ids
    np.add.at(grad, ids.reshape(-1)[keep], grad_output.reshape(-1, weight.shape[1])[keep])
    return grad.astype(weight.dtype)  # padding_idx only zeroed the initial table: its row still gets a gradient
