"""An embedding layer that scales its tokens by D instead of sqrt(D), whose position gradient ignores start_pos.

Inspired by: ``x = self.embed(tokens) * self.d_model`` (the square root forgotten, seen in Transformer tutorials
and their issue trackers) and a learned-positions backward written as ``grad_table[:T] += g.sum(0)`` (the window's
start forgotten: OpenNMT-tf #498's start offset).
"""

import math

import numpy as np
from _spec import check_grad_shape, check_ids, check_start, layer_config, scatter_add

MISTAKES = [
    {
        "phrase": ["by D instead", "scaled by D"],
        "mutants": ["layer.scale_d"],
        "claims": ["symptom:token_scale:D", "symptom:factor:gradient:token_table:D"],
    },
    {"phrase": ["whatever start_pos", "rows 0..T-1"], "mutants": ["pos.grad_start_ignored"]},
]


def learned_positions_forward(table, x, start_pos=0):
    start = check_start(start_pos, x.shape[1], table.shape[0])
    return x + table[start : start + x.shape[1]][None].astype(x.dtype)


def learned_positions_backward(table, x, grad_output, start_pos=0):
    check_start(start_pos, x.shape[1], table.shape[0])
    check_grad_shape(grad_output, x.shape)
    grad = np.zeros(table.shape, dtype=np.float64)
    grad[: x.shape[1]] += grad_output.astype(np.float64).sum(axis=0)
    return grad_output.copy(), grad.astype(table.dtype)


def _scale(cfg):
    return float(cfg["embed_dim"]) if cfg["scale_embeddings"] else 1.0


def embedding_layer_forward(config, token_weight, position_table, tokens, start_pos=0):
    cfg = layer_config(config)
    if cfg["pos_encoding"] != "learned":
        raise NotImplementedError("learned positions only")
    ids = check_ids(tokens, token_weight.shape[0])
    batch = ids.reshape((-1,) + ids.shape[-1:]) if ids.ndim else ids.reshape(1, 1)
    x = token_weight[batch].astype(np.float64) * _scale(cfg)
    out = learned_positions_forward(position_table.astype(np.float64), x, start_pos)
    return out.reshape(ids.shape + token_weight.shape[1:]).astype(token_weight.dtype)


def embedding_layer_backward(config, token_weight, position_table, tokens, grad_output, start_pos=0):
    cfg = layer_config(config)
    if cfg["pos_encoding"] != "learned":
        raise NotImplementedError("learned positions only")
    ids = check_ids(tokens, token_weight.shape[0])
    check_grad_shape(grad_output, ids.shape + token_weight.shape[1:])
    batch = ids.reshape((-1,) + ids.shape[-1:]) if ids.ndim else ids.reshape(1, 1)
    g = grad_output.astype(np.float64).reshape(batch.shape + token_weight.shape[1:])
    _, grad_pos = learned_positions_backward(position_table.astype(np.float64), g, g, start_pos)
    grad_tok = scatter_add(token_weight.shape, batch, g * _scale(cfg), token_weight.dtype)
    return grad_tok, grad_pos.astype(position_table.dtype)
