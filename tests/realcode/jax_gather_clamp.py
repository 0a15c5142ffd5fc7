"""A JAX-style EmbeddingBag: rows gathered with NumPy-style negative indices and clamped out-of-bounds reads, the
gradient scattered with out-of-bounds updates dropped.

Inspired by: JAX's "Sharp Bits" (jax.readthedocs.io, "Out-of-bounds indexing": an out-of-bounds gather is clamped to
the last row, an out-of-bounds ``.at[].add`` update is dropped, no error is raised; negative indices count from the
end as in NumPy) inherited by bag layers written as ``jax.ops.segment_sum(table[ids], segment_ids)``, e.g. flax and
haiku ports of ``nn.EmbeddingBag``. Checked against JAX 0.10.2 (``jax.ops.segment_sum(table[ids], ...)`` and
``jax.grad`` of it) on the inputs of bag.error.id_too_large, id_negative, backward_id_too_large and
backward_id_negative: the same outputs and gradients.
"""

import numpy as np
from _bag import FEATURES, check_call, divisor, first_max, functions, gradients, pool

EMBCONF_FEATURES = FEATURES

MISTAKES = [
    {
        "phrase": ["clamp", "last row", "V - 1"],
        "mutants": [],
        "claims": ["symptom:ids_clamped", "symptom:ids_wrapped_or_clamped"],
    },  # forward: an id >= V reads row V - 1
    {
        "phrase": ["wrap", "negative id", "Python indexing"],
        "mutants": ["bag.negative_ids_wrapped", "bag.backward.negative_ids_wrapped"],
        "claims": ["symptom:ids_wrapped", "symptom:ids_wrapped_or_clamped"],
    },  # forward and backward: -V <= id < 0 reads (and trains) row V + id
    {
        "phrase": ["dropped", "no gradient", "out-of-bounds update"],
        "mutants": [],
    },  # backward: an id >= V gets no gradient (the update dropped), no error
]

FACTS = {"forward_ids": "clamps"}


def _wrapped(ids, vocab):
    """The ids as the gather normalizes them: -V <= id < 0 counted from the end."""
    ids = np.asarray(ids)
    return np.where((ids < 0) & (ids >= -vocab), ids + vocab, ids)


def _call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output=None):
    """The call on the ids as gathered: wrapped, then clamped to [0, V - 1]."""
    ids = np.clip(_wrapped(ids, weight.shape[0]), 0, weight.shape[0] - 1)
    return check_call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output)


def embedding_bag_backward(
    weight, ids, offsets, mode, grad_output, per_sample_weights=None, padding_idx=None, include_last_offset=False
):
    call = _call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output)
    wrapped = _wrapped(ids, weight.shape[0]).reshape(-1)
    in_bounds = (wrapped >= 0) & (wrapped < weight.shape[0])  # an update past the table is dropped
    _, grad_w = gradients(call, weight, grad_output)
    g, grad = np.asarray(grad_output, np.float64), np.zeros(weight.shape)
    for b in range(len(call.bounds)):
        p = call.positions(b)
        if not p.size:
            continue
        if mode == "max":
            winners = first_max(call, weight, b)
            kept = in_bounds[winners]
            np.add.at(grad, (call.flat[winners][kept], np.arange(weight.shape[1])[kept]), g[b][kept])
            continue
        d = divisor(mode, call.w[p])
        if d:
            q = p[in_bounds[p]]
            np.add.at(grad, call.flat[q], (call.w[q] / d)[:, None] * g[b])
    return grad.astype(weight.dtype), None if grad_w is None else grad_w.astype(weight.dtype)


embedding_bag_forward = functions(_call)[0]
