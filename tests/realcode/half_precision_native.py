"""A lookup and a sinusoid table that "just work in the table's dtype", claiming float16 and bfloat16.

Inspired by: PyTorch's CPU embedding backward, which accumulates repeated ids with ``index_add_`` in the table's
own half dtype (spec appendix A: a bfloat16 row used 980 times sums to 512), and the rotary/sinusoid precision
bugs where positions and angles are built in the activation dtype, e.g. ``torch.arange(seq_len, dtype=x.dtype)``
(huggingface/transformers #25681 and #29285, EleutherAI/gpt-neox #1003): bfloat16 positions stop being exact
at 256, float16 ones at 2048.
"""

import math

import ml_dtypes
import numpy as np
from _spec import check_grad_shape, check_ids

EMBCONF_FEATURES = ["float16", "bfloat16"]
DTYPES = {"float32": np.float32, "float64": np.float64, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}

MISTAKES = [
    {
        "phrase": "accumulat",
        "mutants": ["half.sequential_accumulation"],
        "claims": ["symptom:factor:gradient:token_table:0.995208"],
    },  # np.add.at in the half dtype, term by term
    {
        "phrase": ["position", "angle"],
        "mutants": ["half.positions_in_dtype"],
    },  # positions and angles in float16 / bfloat16
]


def embedding_forward(weight, ids):
    return np.take(weight, check_ids(ids, weight.shape[0]), axis=0)


def embedding_backward(weight, ids, grad_output):
    rows = check_ids(ids, weight.shape[0])
    check_grad_shape(grad_output, rows.shape + (weight.shape[1],))
    grad = np.zeros_like(weight)
    np.add.at(grad, rows.reshape(-1), grad_output.reshape(-1, weight.shape[1]))  # index_add_ in the table's dtype
    return grad


def sinusoidal_table(max_len, embed_dim, dtype="float32"):
    dt = DTYPES[dtype]
    position = np.arange(max_len, dtype=dt)[:, None]
    div_term = np.exp(np.arange(0, embed_dim, 2).astype(dt) * dt(-math.log(10000.0) / embed_dim)).astype(dt)
    angles = (position * div_term).astype(dt)
    pe = np.zeros((max_len, embed_dim), dtype=dt)
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles[:, : embed_dim // 2])
    return pe
