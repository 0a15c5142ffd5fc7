"""``max_norm`` the way ``tf.nn.embedding_lookup(params, ids, max_norm=...)`` implements it, in NumPy.

Inspired by: tensorflow/python/ops/embedding_ops.py, ``_clip``: after the gather, each looked-up embedding is
passed through ``clip_ops.clip_by_norm(params, max_norm, axes)``, i.e. ``t * max_norm / maximum(l2norm(t),
max_norm)``. Compared with PyTorch's ``nn.Embedding(max_norm=..., norm_type=...)`` (spec EMB-NRM): only the
gathered copy is clipped and the table is never renormalised, the norm is always L2, the scale has no 1e-7 in its
denominator, and nothing checks that max_norm is positive.
"""

import numpy as np
from _spec import check_ids

EMBCONF_FEATURES = ["max_norm"]

MISTAKES = [
    {
        "phrase": ["weight_after", "table is never"],
        "mutants": ["opt.max_norm_after_lookup"],
    },  # clips the gathered rows: weight_after never changes
    {"phrase": "norm_type", "mutants": ["opt.max_norm_always_l2"]},  # always the L2 norm
    {
        "phrase": ["positive", "max_norm 0", "max_norm <= 0"],
        "mutants": ["opt.max_norm_unchecked"],
    },  # max_norm <= 0 accepted (clip_by_norm with clip_norm 0 gives zeros)
    {"phrase": "1e-7", "mutants": []},  # max_norm / norm, not max_norm / (norm + 1e-7): tiny rows come out different
]


def embedding_forward(weight, ids):
    return np.take(weight, check_ids(ids, weight.shape[0]), axis=0)


def _clip_by_norm(t, clip_norm):
    l2norm = np.sqrt(np.sum(t * t, axis=-1, keepdims=True))
    return t * np.float32(clip_norm) / np.maximum(l2norm, np.float32(clip_norm))


def embedding_forward_max_norm(weight, ids, max_norm, norm_type):
    params = embedding_forward(weight, ids)
    return _clip_by_norm(params, max_norm).astype(weight.dtype), weight.copy()
