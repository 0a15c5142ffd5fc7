"""A hand-written bag pooling whose max starts from zeros, its backward a mask, and a vocabulary split per shard.

Inspired by: max pooling written as ``out = np.zeros(D); for row in bag: out = np.maximum(out, row)`` (a zero start,
so a column whose rows are all negative pools to 0; the padding-row convention of pytorch/pytorch #49237, where an
empty bag is zeros, makes the zero start look right); Theano/Theano #5404 (a max's gradient sent to every position
equal to the max, a mask ``W[id] == out``); and Megatron-LM's ``VocabUtility`` (``per_partition_vocab_size =
global_vocab_size // world_size``, whose ``divide`` asserts divisibility; MindSpeed's VocabParallelEmbedding
raises ValueError when the vocabulary does not divide) ported without the assertion: every shard holds V // S
rows and the remainder rows are held by no shard.
"""

import numpy as np
from _bag import check_call, gradients, pool, shard_bytes

EMBCONF_FEATURES = ["bag-sum", "bag-max", "bag-padding", "bag-2d", "bag-sharding"]

MISTAKES = [
    {
        "phrase": ["zero", "negative"],
        "mutants": [],
        "claims": ["symptom:zero_values:embedding_bag_forward:output"],
    },  # max starts from 0: a column whose counted values are all negative pools to 0 (its gradient then goes nowhere,
    # measured in plain words on the backward, which no identity ties to the forward's zeros)
    {
        "phrase": ["every tied", "every counted position holding the maximum", "tie"],
        "mutants": ["bag.max_gradient_to_every_tie"],
    },  # g[b][j] to every counted position equal to out[b][j]
    {
        "phrase": ["remainder", "V // S", "floor"],
        "mutants": [],
    },  # each shard V // S rows (D // S columns): the remainder is in no shard
]


def _max_from_zero(call, weight, b):
    out = np.zeros(weight.shape[1], dtype=np.float64)
    for p in call.positions(b):
        out = np.maximum(out, weight[call.flat[p]].astype(np.float64))
    return out


def embedding_bag_forward(
    weight, ids, offsets, mode, per_sample_weights=None, padding_idx=None, include_last_offset=False
):
    call = check_call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset)
    if mode != "max":
        return pool(call, weight).astype(weight.dtype)
    out = np.stack([_max_from_zero(call, weight, b) for b in range(len(call.bounds))]) if call.bounds else None
    return (out if out is not None else np.zeros((0, weight.shape[1]))).astype(weight.dtype)


def embedding_bag_backward(
    weight, ids, offsets, mode, grad_output, per_sample_weights=None, padding_idx=None, include_last_offset=False
):
    call = check_call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output)
    if mode != "max":
        grad, grad_w = gradients(call, weight, grad_output)
        return grad.astype(weight.dtype), None if grad_w is None else grad_w.astype(weight.dtype)
    grad = np.zeros(weight.shape, dtype=np.float64)
    for b in range(len(call.bounds)):
        out, p = _max_from_zero(call, weight, b), call.positions(b)
        hit = weight[call.flat[p]].astype(np.float64) == out  # every position equal to the max
        np.add.at(grad, call.flat[p], hit * np.asarray(grad_output, np.float64)[b])
    return grad.astype(weight.dtype), None


def _floor_split(total, shards):
    return [total // shards] * shards


def sharded_table_bytes(vocab_size, embed_dim, dtype, shards, sharding):
    return shard_bytes(vocab_size, embed_dim, dtype, shards, sharding, _floor_split)
