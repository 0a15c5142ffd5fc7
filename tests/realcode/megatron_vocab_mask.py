"""A bag lookup on Megatron's vocabulary-parallel embedding: ids outside the partition masked to zero rows, and
shards that must divide the table.

Inspired by: NVIDIA/Megatron-LM ``VocabParallelEmbedding.forward`` (``input_mask = (input_ < vocab_start_index) |
(input_ >= vocab_end_index)``, the masked ids looked up as 0 and their output rows zeroed before the all-reduce: with
one partition an id outside [0, V) is a zero row, counted like any id, and its gradient is dropped, never an error);
and Megatron's ``VocabUtility`` / ``divide(numerator, denominator)`` (``assert numerator % denominator == 0``:
a table whose rows or columns the shards do not divide is refused with AssertionError).
"""

import numpy as np
from _bag import FEATURES, check_call, gradients, pool, shard_bytes

EMBCONF_FEATURES = FEATURES + ["bag-sharding"]

MISTAKES = [
    {
        "phrase": ["zero row", "masked", "outside"],
        "mutants": [],
        "claims": ["symptom:ids_zeroed_row"],
    },  # an id < 0 or >= V is a zero row (counted in mean and sqrtn, 0 in max), its gradient dropped: no error
    {
        "phrase": ["AssertionError", "divisible", "divide"],
        "mutants": [],
        "claims": ["symptom:untyped:AssertionError:*"],
    },  # shards must divide the sharded dimension (AssertionError otherwise)
]


def _call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output=None):
    """The call on the table with one zero row appended, every id outside [0, V) sent to it."""
    ids, vocab = np.asarray(ids), weight.shape[0]
    masked = np.where((ids < 0) | (ids >= vocab), vocab, ids)
    padded = np.concatenate([weight, np.zeros((1, weight.shape[1]), weight.dtype)])
    pad = padding_idx % vocab if isinstance(padding_idx, (int, np.integer)) and -vocab <= padding_idx < vocab else None
    rest = (offsets, mode, per_sample_weights)
    given = (padding_idx, include_last_offset, grad_output)
    check_call(weight, np.where(masked == vocab, 0, masked), *rest, *given)  # the checks, on the table as given
    call = check_call(padded, masked, *rest, pad, include_last_offset, grad_output)
    return call, padded


def embedding_bag_forward(
    weight, ids, offsets, mode, per_sample_weights=None, padding_idx=None, include_last_offset=False
):
    call, padded = _call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset)
    return pool(call, padded).astype(weight.dtype)


def embedding_bag_backward(
    weight, ids, offsets, mode, grad_output, per_sample_weights=None, padding_idx=None, include_last_offset=False
):
    call, padded = _call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output)
    grad, grad_w = gradients(call, padded, grad_output)
    return grad[:-1].astype(weight.dtype), None if grad_w is None else grad_w.astype(weight.dtype)


def _divide(total, shards):
    assert total % shards == 0, f"{total} is not divisible by {shards}"
    return [total // shards] * shards


def sharded_table_bytes(vocab_size, embed_dim, dtype, shards, sharding):
    return shard_bytes(vocab_size, embed_dim, dtype, shards, sharding, _divide)
