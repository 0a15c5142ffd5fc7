"""A row-wise sharded EmbeddingBag whose mean is taken on each shard and the shards' results summed, and whose
weighted mean divides by the number of ids.

Inspired by: meta-pytorch/torchrec #2362 ("EBC Mean pooling division is not handled properly": FBGEMM divides each
shard's partial sum by the *local* bag size and TorchRec's row-wise output_dist is a SUM reduce-scatter, so a bag
whose ids lie on several shards gets the sum of per-shard means), ported with two row-wise shards of ceil(V / 2)
rows; and uxlfoundation/oneDNN PR #5643's review (per-sample weights "supported for both sum and mean", the weighted
mean divided by the bag's length as PyTorch's unweighted mean is, not by the weights' sum).
"""

import numpy as np
from _bag import FEATURES, ceil_blocks, check_call, gradients, pool, shard_bytes

EMBCONF_FEATURES = FEATURES + ["bag-sharding"]
SHARDS = 2

MISTAKES = [
    {
        "phrase": ["shard", "local", "per-shard"],
        "mutants": [],
    },  # mean: sum over the two row-wise shards of (the shard's weighted sum / the shard's count)
    {
        "phrase": ["number of ids", "count", "weights' sum"],
        "mutants": ["bag.weighted_mean_divides_by_count", "bag.backward.weighted_mean_divides_by_count"],
        # bags.pairs.embedding_bag_forward.038: one shard holds the 3 counted ids: weight sum 4.0193613 / 3 = 1.3397871
        "claims": ["symptom:factor:embedding_bag_forward:output:1.3397871"],
    },  # weighted mean divided by the count, not by the sum of the weights
]


def _shard_of(call, weight):
    return call.flat // ceil_blocks(weight.shape[0], SHARDS)[0]


def _local_means(call, weight, grad_output=None):
    """Forward rows (and, given grad_output, the table's and the weights' gradients) of the sharded mean."""
    table, shard = weight.astype(np.float64), _shard_of(call, weight)
    out = np.zeros((len(call.bounds), weight.shape[1]))
    grad, grad_w = np.zeros(weight.shape), np.zeros(call.flat.shape)
    for b in range(len(call.bounds)):
        for s in range(SHARDS):
            p = call.positions(b)
            p = p[shard[p] == s]
            if not p.size:
                continue
            out[b] += call.w[p] @ table[call.flat[p]] / p.size  # the shard's local bag size
            if grad_output is not None:
                g = np.asarray(grad_output, np.float64)[b]
                np.add.at(grad, call.flat[p], (call.w[p] / p.size)[:, None] * g)
                grad_w[p] = table[call.flat[p]] @ g / p.size
    return out, grad, grad_w


def embedding_bag_forward(
    weight, ids, offsets, mode, per_sample_weights=None, padding_idx=None, include_last_offset=False
):
    call = check_call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset)
    out = _local_means(call, weight)[0] if mode == "mean" else pool(call, weight)
    return out.astype(weight.dtype)


def embedding_bag_backward(
    weight, ids, offsets, mode, grad_output, per_sample_weights=None, padding_idx=None, include_last_offset=False
):
    call = check_call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output)
    if mode == "mean":
        _, grad, grad_w = _local_means(call, weight, grad_output)
    else:
        grad, grad_w = gradients(call, weight, grad_output)
    grad_w = grad_w.reshape(call.shape) if call.weighted else None
    return grad.astype(weight.dtype), None if grad_w is None else grad_w.astype(weight.dtype)


def sharded_table_bytes(vocab_size, embed_dim, dtype, shards, sharding):
    return shard_bytes(vocab_size, embed_dim, dtype, shards, sharding, ceil_blocks)
