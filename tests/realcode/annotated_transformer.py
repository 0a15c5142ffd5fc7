"""The Annotated Transformer's Embeddings + PositionalEncoding, ported to NumPy and to the spec's layer.

Inspired by: harvardnlp/annotated-transformer (http://nlp.seas.harvard.edu/annotated-transformer/): its
``PositionalEncoding`` fills ``pe[:, 1::2] = torch.cos(position * div_term)``, which cannot fit ceil(D/2)
columns into floor(D/2) for odd D (codertimo/BERT-pytorch #78, gc-os-ai/pyaptamer #526 report the same crash);
``Embeddings.forward`` always returns ``lut(x) * sqrt(d_model)``; ``PositionalEncoding.forward`` adds
``pe[:, :x.size(1)]`` (no start index and no length check: a too long input fails inside the broadcast).
"""

import math

import numpy as np
from _spec import SpecError, check_grad_shape, check_ids, layer_config, scatter_add

MISTAKES = [
    {
        "phrase": "odd",
        "mutants": [],
        "claims": ["symptom:untyped:ValueError:None"],
    },  # pe[:, 1::2] = cos(position * div_term) fails for odd D
    {
        "phrase": ["sqrt(D) times", "even when"],
        "mutants": ["layer.scale_always"],
        "claims": [
            "symptom:token_scale:sqrt(D)",
            "symptom:factor:gradient:token_table:sqrt(D)",
            "symptom:factor:embedding_layer_forward:output:sqrt(D)",
        ],
    },  # lut(x) * sqrt(d_model) whatever scale_embeddings says
    {
        "phrase": ["ignores start_pos", "rows 0..T-1", "start at 0"],
        "mutants": ["layer.start_pos_ignored", "pos.grad_start_ignored"],
    },  # x + pe[:, :T]: always positions 0..T-1
    {
        "phrase": "max_seq_len",
        "mutants": [],
        "claims": ["symptom:untyped:ValueError:sequence_too_long", "symptom:boundary:accepts_s+T=L+1"],
    },  # no length check: T > max_len is a broadcast ValueError
]
FACTS = {"length_check": "none"}


def sinusoidal_table(max_len, embed_dim, dtype="float32"):
    pe = np.zeros((max_len, embed_dim), dtype=np.float32)
    position = np.arange(0, max_len, dtype=np.float32)[:, None]
    div_term = np.exp(np.arange(0, embed_dim, 2, dtype=np.float32) * -(math.log(10000.0) / embed_dim))
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term)
    return pe.astype(dtype)


def _parts(config, tokens):
    cfg = layer_config(config)
    if tokens.ndim not in (1, 2):
        raise SpecError("shape_mismatch", f"tokens of shape {tokens.shape}")
    batch = tokens if tokens.ndim == 2 else tokens[None]
    return cfg, check_ids(batch, cfg["vocab_size"])


def _positions(cfg, position_table, seq_len):
    if cfg["pos_encoding"] == "learned":
        return position_table[:seq_len]
    if cfg["pos_encoding"] == "sinusoidal":
        return sinusoidal_table(cfg["max_seq_len"], cfg["embed_dim"])[:seq_len]
    return 0.0


def embedding_layer_forward(config, token_weight, position_table, tokens, start_pos=0):
    cfg, ids = _parts(config, tokens)
    x = token_weight[ids] * np.float32(math.sqrt(cfg["embed_dim"]))  # Embeddings.forward
    out = (x + _positions(cfg, position_table, ids.shape[1])).astype(token_weight.dtype)
    return out if tokens.ndim == 2 else out[0]


def embedding_layer_backward(config, token_weight, position_table, tokens, start_pos, grad_output):
    cfg, ids = _parts(config, tokens)
    check_grad_shape(grad_output, tokens.shape + (cfg["embed_dim"],))
    grad = grad_output.reshape(ids.shape + (cfg["embed_dim"],))
    _ = grad + _positions(cfg, position_table, ids.shape[1])  # the forward's broadcast, as autograd replays it
    grad_tokens = scatter_add(token_weight.shape, ids, grad * math.sqrt(cfg["embed_dim"]), token_weight.dtype)
    if cfg["pos_encoding"] != "learned":
        return grad_tokens, None
    grad_positions = np.zeros(position_table.shape, dtype=position_table.dtype)
    grad_positions[: ids.shape[1]] = grad.sum(axis=0)
    return grad_tokens, grad_positions
