"""An EmbeddingBag written as Keras layers: ``Embedding(mask_zero=True)`` followed by global pooling.

Inspired by: keras-team/keras #10895 and PR #10913 (``mask_zero=True`` reserves id 0 as the padding whatever the
model's padding id, and the masked ``GlobalAveragePooling1D`` divides the masked sum by the mask's sum: a row of
only padding is 0/0, NaN); and keras-team/keras #3777 / PR #3678 (``GlobalMaxPooling1D`` does not use the mask: the
masked positions' rows take part in the max). Checked against Keras 3.15.1 (``Embedding(8, 4, mask_zero=True)``
then each pooling, on ids [[0, 3, 5], [0, 0, 0], [2, 6, 0]]): the same outputs, the all-masked mean NaN and the max
over every row; Keras 3's ``GlobalMaxPooling1D`` takes no mask at all.
"""

import numpy as np
from _bag import FEATURES, check_call, divisor, functions, gradients, pool

EMBCONF_FEATURES = FEATURES

MISTAKES = [
    {
        "phrase": ["id 0", "mask_zero", "padding_idx"],
        "mutants": [],
        "claims": ["symptom:padding_counted:bag"],
    },  # the padding is id 0 (masked, in every mode but max) whatever padding_idx says; padding_idx's id counts
    {
        "phrase": ["max", "mask", "padding"],
        "mutants": [],
    },  # max ignores the mask: every position's row, padding included, takes part in the max and its gradient
    {
        "phrase": ["NaN", "0/0", "unguarded"],
        "mutants": ["bag.empty_bag_nan"],
    },  # mean and sqrtn divide unguarded: a bag with no unmasked id (or an empty one) is NaN
]


def _call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output=None):
    call = check_call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output)
    call.counted = call.flat != 0 if mode != "max" else np.ones(call.flat.shape, dtype=bool)
    return call


def embedding_bag_forward(
    weight, ids, offsets, mode, per_sample_weights=None, padding_idx=None, include_last_offset=False
):
    call = _call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset)
    if mode not in ("mean", "sqrtn"):
        return pool(call, weight).astype(weight.dtype)
    table, out = weight.astype(np.float64), np.zeros((len(call.bounds), weight.shape[1]))
    for b in range(len(call.bounds)):
        p = call.positions(b)
        with np.errstate(divide="ignore", invalid="ignore"):  # the masked mean's sum / count, unguarded
            out[b] = call.w[p] @ table[call.flat[p]] / divisor(mode, call.w[p])
    return out.astype(weight.dtype)


embedding_bag_backward = functions(_call)[1]
