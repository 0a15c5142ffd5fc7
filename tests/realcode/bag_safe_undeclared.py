"""TensorFlow's ``safe_embedding_lookup_sparse`` rules in an EmbeddingBag that does not declare them, and PyTorch's
reading of a short last offset.

Inspired by: ``tf.nn.safe_embedding_lookup_sparse`` (``sparse_ops.sparse_retain`` of ids >= 0 and of weights > 0
before the lookup: negative ids and non-positive weights dropped, not refused nor used), copied into a module
judged by the canonical rules without declaring EMB-BAG-V1/V2; and pytorch/pytorch #106374 / the EmbeddingBag
documentation (with ``include_last_offset`` the last offset is read as the end of the last bag, and the ids after a
last offset smaller than N are ignored, never refused).
"""

import numpy as np
from _bag import bag_bounds, check_call, functions, gradients, pool, resolve_padding

EMBCONF_FEATURES = ["bag-sum", "bag-mean", "bag-weights", "bag-weighted-mean", "bag-last-offset"]

MISTAKES = [
    {
        "phrase": ["negative id", "drops", "dropped"],
        "mutants": [],
        "claims": ["symptom:convention:bag:drop_negative_ids", "symptom:accepts:*:index_out_of_range"],
    },  # a negative id is left out of the bag instead of raising index_out_of_range
    {
        "phrase": ["non-positive", "weight <= 0", "zero or negative weight", "prun"],
        "mutants": [],
        "claims": ["symptom:convention:bag:prune_nonpositive_weights"],
    },  # a weight <= 0 is left out of the bag (sum, count and weight sum), its gradient 0
    {
        "phrase": ["last offset", "include_last_offset"],
        "mutants": [],
        "claims": ["symptom:accepts:embedding_bag_forward:invalid_offsets"],
    },  # with include_last_offset a last offset < N is read as the end: the ids after it ignored
]


def _bounds(ids, offsets, last):
    if ids.ndim == 1 and last and len(offsets) and 0 < int(offsets[-1]) < ids.size:
        return bag_bounds(ids[: int(offsets[-1])], offsets, last)  # the ids after the last offset are not read
    return bag_bounds(ids, offsets, last)


def _call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output=None):
    """The call with TensorFlow's retained positions: negative ids and weights <= 0 not counted."""
    ids = np.asarray(ids)
    kept = ids >= 0  # an id >= V is still refused, by the checks
    call = check_call(
        weight,
        np.where(kept, ids, 0),
        offsets,
        mode,
        per_sample_weights,
        padding_idx,
        include_last_offset,
        grad_output,
        bounds_of=_bounds,
        padding_of=resolve_padding,
    )
    call.counted &= kept.reshape(-1)
    if call.weighted:
        call.counted &= call.w > 0
    return call


embedding_bag_forward, embedding_bag_backward = functions(_call)
