"""nanoGPT's input layer (``wte`` + ``wpe``) and its ``get_num_params``, driven as the spec's embedding layer.

Inspired by: karpathy/nanoGPT model.py, ``GPT.forward``: ``assert t <= self.config.block_size``, ``pos =
torch.arange(0, t)`` (no offset: generation re-feeds the cropped context instead of caching), ``x = tok_emb +
pos_emb`` (GPT-2 never scales by sqrt(d)), and ``get_num_params(non_embedding=True)``, which subtracts
``wpe`` from the count. nanoGPT has no sinusoidal positions, so this port declines them.
"""

import numpy as np
from _spec import check_grad_shape, check_ids, layer_config, scatter_add

MISTAKES = [
    {
        "phrase": ["ignores start_pos", "rows 0..T-1", "start at 0"],
        "mutants": ["layer.start_pos_ignored", "pos.start_ignored", "pos.grad_start_ignored"],
    },  # pos = arange(0, t)
    {
        "phrase": "AssertionError",
        "mutants": [],
        "claims": ["symptom:untyped:AssertionError:sequence_too_long"],
    },  # too long is an assert, not sequence_too_long
    {
        "phrase": ["by 1 instead", "never scales"],
        "mutants": ["layer.scale_missing"],
        "claims": ["symptom:token_scale:1.0"],
    },  # scale_embeddings is ignored: never times sqrt(D)
    {"phrase": "trainable", "mutants": ["mem.learned_not_counted"]},  # get_num_params subtracts wpe
]
FACTS = {"length_check": "untyped"}


def _forward_parts(config, tokens):
    cfg = layer_config(config)
    if cfg["pos_encoding"] == "sinusoidal":
        raise NotImplementedError("nanoGPT has learned positions only")
    idx = check_ids(np.atleast_2d(tokens), cfg["vocab_size"])
    b, t = idx.shape
    assert t <= cfg["max_seq_len"], f"Cannot forward sequence of length {t}, block size is only {cfg['max_seq_len']}"
    return cfg, idx, t


def embedding_layer_forward(config, token_weight, position_table, tokens, start_pos=0):
    cfg, idx, t = _forward_parts(config, tokens)
    x = token_weight[idx]  # tok_emb
    if cfg["pos_encoding"] == "learned":
        x = x + position_table[np.arange(0, t)]  # pos_emb
    return x if tokens.ndim == 2 else x[0]


def embedding_layer_backward(config, token_weight, position_table, tokens, start_pos, grad_output):
    cfg, idx, t = _forward_parts(config, tokens)
    check_grad_shape(grad_output, tokens.shape + (cfg["embed_dim"],))
    grad = grad_output.reshape(idx.shape + (cfg["embed_dim"],))
    grad_wte = scatter_add(token_weight.shape, idx, grad, token_weight.dtype)
    if cfg["pos_encoding"] != "learned":
        return grad_wte, None
    grad_wpe = np.zeros_like(position_table)
    grad_wpe[:t] = grad.sum(axis=0)
    return grad_wte, grad_wpe


def parameter_count(config):
    cfg = layer_config(config)
    if cfg["pos_encoding"] == "sinusoidal":
        raise NotImplementedError("nanoGPT has learned positions only")
    n_params = cfg["vocab_size"] * cfg["embed_dim"]
    if cfg["pos_encoding"] == "learned":
        wpe = cfg["max_seq_len"] * cfg["embed_dim"]
        n_params += wpe
        n_params -= wpe  # get_num_params(non_embedding=True): "the position embeddings get subtracted"
    return {"trainable": n_params, "non_trainable": 0}
