"""fairseq's positional embeddings (sinusoidal and learned) driven as the spec's position-from-0 operations.

Inspired by: facebookresearch/fairseq, fairseq/modules/sinusoidal_positional_embedding.py and
learned_positional_embedding.py with ``utils.make_positions``: ``get_embedding`` uses ``half_dim = D // 2``
frequencies ``exp(-k * log(10000) / (half_dim - 1))`` laid out as ``[sin | cos]`` (tensor2tensor's timing
signal), divides by zero for D = 2 or 3 (``math.log(10000) / 0``), and positions are numbered from
``padding_idx + 1`` (2 with fairseq's default padding_idx = 1), for the sinusoid and the learned table alike.
"""

import math

import numpy as np
from _spec import check_grad_shape, check_start, check_x

PADDING_IDX = 1  # fairseq's dictionary puts <pad> at 1

MISTAKES = [
    {
        "phrase": ["k/(h-1)", "tensor2tensor"],
        "mutants": ["sin.tensor2tensor", "sin.odd_last_zero"],
        "claims": ["symptom:zeros:sinusoidal_table:table"],
    },  # k/(h-1) frequencies, [sin | cos] blocks, zero column
    {
        "phrase": ["ZeroDivision", "by zero"],
        "mutants": [],
        "claims": ["symptom:untyped:ZeroDivisionError:None"],
    },  # half_dim - 1 == 0 for D = 2, 3: ZeroDivisionError
    {
        "phrase": "by 2",
        "mutants": [],
        "claims": ["symptom:positions_shifted:2"],
    },  # make_positions: position t is numbered padding_idx + 1 + t
]


def get_embedding(num_embeddings, embedding_dim, padding_idx=None):
    half_dim = embedding_dim // 2
    emb = math.log(10000) / (half_dim - 1)
    emb = np.exp(np.arange(half_dim, dtype=np.float32) * -emb)
    emb = np.arange(num_embeddings, dtype=np.float32)[:, None] * emb[None, :]
    emb = np.concatenate([np.sin(emb), np.cos(emb)], axis=1).reshape(num_embeddings, -1)
    if embedding_dim % 2 == 1:
        emb = np.concatenate([emb, np.zeros((num_embeddings, 1), dtype=np.float32)], axis=1)  # zero pad
    if padding_idx is not None:
        emb[padding_idx, :] = 0
    return emb


def sinusoidal_table(max_len, embed_dim, dtype="float32"):
    weights = get_embedding(max_len + PADDING_IDX + 1, embed_dim, PADDING_IDX)
    positions = np.arange(max_len) + PADDING_IDX + 1  # make_positions on a sequence without padding
    return weights[positions].astype(dtype)


def _positions(start, seq_len):
    return np.arange(start, start + seq_len) + PADDING_IDX + 1


def learned_positions_forward(table, x, start_pos=0):
    check_x(table, x)
    start = check_start(start_pos, x.shape[1], table.shape[0])
    return x + table[_positions(start, x.shape[1])]


def learned_positions_backward(table, x, start_pos, grad_output):
    check_x(table, x)
    start = check_start(start_pos, x.shape[1], table.shape[0])
    check_grad_shape(grad_output, x.shape)
    grad_table = np.zeros_like(table)
    np.add.at(grad_table, _positions(start, x.shape[1]), grad_output.sum(axis=0))
    return grad_output.copy(), grad_table
