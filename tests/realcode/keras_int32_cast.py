"""A Keras-flavoured NumPy port: ``Embedding`` casts ids to int32 first, and the sinusoid table is the TF tutorial's
``get_angles`` with the sines and cosines concatenated instead of interleaved.

Inspired by: keras.layers.Embedding, which casts its ids to int32 (spec appendix A: floats are truncated and int64
ids can wrap), and xingchensong/Speech-Transformer-tf2.0 models/modules/positional_encoding.py, which follows the
TensorFlow Transformer tutorial's ``get_angles`` but returns ``np.concatenate([sines, cosines], axis=-1)`` (the
layout tatp22/multidim-positional-encoding #20 and Hugging Face's Marian use as well).
"""

import numpy as np
from _spec import SpecError, check_grad_shape, scatter_add

EMBCONF_FEATURES = ["float_ids", "int32_ids"]

MISTAKES = [
    {"phrase": "int32", "mutants": ["fwd.int32_wrap"]},  # cast(ids, int32) before the range check: 2^32 wraps to 0
    {
        "phrase": "truncat",
        "mutants": ["fwd.float_truncated", "bwd.float_truncated"],
        "claims": ["symptom:ids_rounded_or_truncated", "symptom:ids_truncated"],
    },  # 0.5 -> row 0, 2.7 -> row 2
    {
        "phrase": "concatenat",
        "mutants": ["sin.concatenated"],
        "claims": ["symptom:sinusoid:layout [[]sin | cos[]] instead of interleaved (sin at 2k, cos at 2k+1);"],
    },  # [sin | cos] blocks, not interleaved
]


def _ids(ids, vocab_size):
    ids = np.asarray(ids).astype(np.int32)  # cast to int32, as Keras does
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        raise SpecError("index_out_of_range", f"an id lies outside [0, {vocab_size})")
    return ids


def embedding_forward(weight, ids):
    return np.take(weight, _ids(ids, weight.shape[0]), axis=0)


def embedding_backward(weight, ids, grad_output):
    rows = _ids(ids, weight.shape[0])
    check_grad_shape(grad_output, rows.shape + (weight.shape[1],))
    return scatter_add(weight.shape, rows, grad_output, weight.dtype)


def get_angles(pos, i, d_model):
    angle_rates = 1 / np.power(10000, (2 * (i // 2)) / np.float32(d_model))
    return pos * angle_rates


def sinusoidal_table(max_len, embed_dim, dtype="float32"):
    angle_rads = get_angles(np.arange(max_len)[:, np.newaxis], np.arange(embed_dim)[np.newaxis, :], embed_dim)
    sines = np.sin(angle_rads[:, 0::2])  # apply sin to even indices in the array; 2i
    cosines = np.cos(angle_rads[:, 1::2])  # apply cos to odd indices in the array; 2i+1
    return np.concatenate([sines, cosines], axis=-1).astype(dtype)
