"""``padding_idx`` the way PaddlePaddle's ``nn.Embedding`` / ``F.embedding`` treat it, in NumPy.

Inspired by: PaddlePaddle's embedding documentation ("output all-zero padding data" for the padding id) and its
``padding_idx`` normalisation ``num_embeddings + padding_idx`` for negative values, where anything still negative
means "no padding" (measured behaviour in /work/shared/docs/conventions.md: "padding_idx < -V is silently
dropped"). PyTorch, and the spec (EMB-PAD-1, EMB-PAD-4), return the stored row and reject padding_idx outside
[-V, V).
"""

import numpy as np
from _spec import SpecError, check_grad_shape, check_ids, scatter_add

EMBCONF_FEATURES = ["padding_idx"]

MISTAKES = [
    {
        "phrase": "zero",
        "mutants": ["opt.padding_zeroed_forward"],
        "claims": ["symptom:ids_zeroed_row"],
    },  # the padding id's output row is zeros
    {
        "phrase": "range",
        "mutants": ["opt.padding_range_unchecked"],
    },  # padding_idx < -V accepted and ignored instead of invalid_config
]


def _padding(padding_idx, vocab_size):
    if padding_idx is None:
        return -1
    if padding_idx >= vocab_size:
        raise SpecError("invalid_config", f"padding_idx must be within [-{vocab_size}, {vocab_size})")
    return padding_idx if padding_idx >= 0 else vocab_size + padding_idx  # still < 0: no padding


def embedding_forward(weight, ids, padding_idx=None):
    pad = _padding(padding_idx, weight.shape[0])
    rows = check_ids(ids, weight.shape[0])
    out = np.take(weight, rows, axis=0)
    if pad >= 0:
        out[rows == pad] = 0  # "output all-zero padding data"
    return out


def embedding_backward(weight, ids, grad_output, padding_idx=None):
    pad = _padding(padding_idx, weight.shape[0])
    rows = check_ids(ids, weight.shape[0])
    check_grad_shape(grad_output, rows.shape + (weight.shape[1],))
    grad = scatter_add(weight.shape, rows, grad_output, weight.dtype)
    if pad >= 0:
        grad[pad] = 0
    return grad
