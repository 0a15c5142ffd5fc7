"""The embedding and positional-encoding helpers of the widely copied TensorFlow Transformer by Kyubyong Park (2017-18).

Inspired by: Kyubyong/transformer modules.py before its 2019 rewrite and its many copies (found with the string
"np.power(10000, 2.*i/num_units)"): ``embedding(..., zero_pad=True, scale=True)`` makes row 0 of the token table
a constant zero row, ``positional_encoding`` puts the column index ``i`` (not the pair index) in the exponent,
and with ``scale=True`` both the token embedding and the positional encoding are multiplied by sqrt(num_units)
(issues #60 and #130 of that repository ask about the scaling).
"""

import math

import numpy as np
from _spec import SpecError, check_grad_shape, check_ids, check_start, layer_config, scatter_add

MISTAKES = [
    {"phrase": "column", "mutants": ["sin.column_exponent"]},  # 2*i/num_units with i the column index
    {
        "phrase": ["zeros", "zero row"],
        "mutants": ["fwd.id0_zero_row", "bwd.padding_row_zeroed"],
        "claims": [
            "symptom:ids_zeroed_row",
            "symptom:zeros:embedding_forward:output",
            "symptom:no_gradient_rows:token_table",
            "symptom:zeros:embedding_backward:grad_weight",
        ],
    },  # zero_pad: row 0 is a constant zero
    {
        "phrase": "positions",
        "mutants": ["layer.scale_sum"],
        "claims": ["symptom:factor:gradient:position_table:sqrt(D)", "symptom:position_scale:sqrt(D)"],
    },  # scale=True on the positions too: (tokens + positions) * sqrt(D)
]


def _lookup_table(weight):
    """zero_pad=True: row 0 is replaced by zeros (a constant, so it also gets no gradient)."""
    return np.concatenate([np.zeros((1, weight.shape[1]), weight.dtype), weight[1:]])


def embedding_forward(weight, ids):
    return np.take(_lookup_table(weight), check_ids(ids, weight.shape[0]), axis=0)


def embedding_backward(weight, ids, grad_output):
    rows = check_ids(ids, weight.shape[0])
    check_grad_shape(grad_output, rows.shape + (weight.shape[1],))
    grad = scatter_add(weight.shape, rows, grad_output, weight.dtype)
    grad[0] = 0  # the zero row is a constant
    return grad


def sinusoidal_table(max_len, embed_dim, dtype="float32"):
    position_enc = np.array(
        [[pos / np.power(10000, 2.0 * i / embed_dim) for i in range(embed_dim)] for pos in range(max_len)]
    ).reshape(max_len, embed_dim)
    position_enc[:, 0::2] = np.sin(position_enc[:, 0::2])  # dim 2i
    position_enc[:, 1::2] = np.cos(position_enc[:, 1::2])  # dim 2i+1
    return position_enc.astype(dtype)


def _layer(config, token_weight, position_table, tokens, start_pos):
    cfg = layer_config(config)
    if tokens.ndim not in (1, 2):
        raise SpecError("shape_mismatch", f"tokens of shape {tokens.shape}")
    batch = tokens if tokens.ndim == 2 else tokens[None]
    rows = check_ids(batch, cfg["vocab_size"])
    limit = math.inf if cfg["pos_encoding"] == "none" else cfg["max_seq_len"]
    start = check_start(start_pos, batch.shape[1], limit)
    scale = math.sqrt(cfg["embed_dim"]) if cfg["scale_embeddings"] else 1.0
    return cfg, rows, start, scale


def embedding_layer_forward(config, token_weight, position_table, tokens, start_pos=0):
    cfg, rows, start, scale = _layer(config, token_weight, position_table, tokens, start_pos)
    out = _lookup_table(token_weight)[rows].astype(np.float64)
    seq = rows.shape[1]
    if cfg["pos_encoding"] == "learned":
        out = out + position_table[start : start + seq]
    elif cfg["pos_encoding"] == "sinusoidal":
        out = out + sinusoidal_table(start + seq, cfg["embed_dim"], "float64")[start:]
    out = (out * scale).astype(token_weight.dtype)  # scale=True: the positional part is scaled as well
    return out if tokens.ndim == 2 else out[0]


def embedding_layer_backward(config, token_weight, position_table, tokens, start_pos, grad_output):
    cfg, rows, start, scale = _layer(config, token_weight, position_table, tokens, start_pos)
    check_grad_shape(grad_output, tokens.shape + (cfg["embed_dim"],))
    grad = grad_output.reshape(rows.shape + (cfg["embed_dim"],)).astype(np.float64) * scale
    grad_tokens = scatter_add(token_weight.shape, rows, grad, token_weight.dtype)
    grad_tokens[0] = 0
    if cfg["pos_encoding"] != "learned":
        return grad_tokens, None
    grad_positions = np.zeros(position_table.shape)
    grad_positions[start : start + rows.shape[1]] = grad.sum(axis=0)
    return grad_tokens, grad_positions.astype(position_table.dtype)
