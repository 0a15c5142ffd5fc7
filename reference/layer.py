"""The embedding layer (EMB-LAY): token lookup, optional sqrt(D) scaling, plus positions."""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Union

import numpy as np

from embconf.model.dtypes import round_once
from embconf.model.sinusoid import SinusoidProfile
from embconf.reference.errors import EmbeddingError
from embconf.reference.lookup import validate_ids
from embconf.reference.options import resolve_padding_idx
from embconf.reference.positions import check_start_pos
from embconf.reference.sinusoid import CANONICAL, sinusoidal_table

POS_ENCODINGS = ("learned", "sinusoidal", "none")
DEFAULTS: dict[str, Any] = {
    "max_seq_len": 512,
    "pos_encoding": "learned",
    "scale_embeddings": False,
    "padding_idx": None,
}


def resolve_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The config with the spec's defaults filled in (EMB-LAY-1); unknown pos_encoding is invalid_config."""
    full = {**DEFAULTS, **config}
    if full["pos_encoding"] not in POS_ENCODINGS:
        raise EmbeddingError(
            "invalid_config", f"unknown pos_encoding {full['pos_encoding']!r}; expected one of {POS_ENCODINGS}"
        )
    full["padding_idx"] = resolve_padding_idx(
        full["padding_idx"], full["vocab_size"]
    )  # a row in [0, V), or None (EMB-PAD-5)
    return full


def token_scale(embed_dim: int, scale_embeddings: bool) -> float:
    """c = sqrt(D) when scaling, else 1 (applied to the token part only)."""
    return math.sqrt(embed_dim) if scale_embeddings else 1.0


def check_layer_inputs(
    config: Mapping[str, Any],
    token_weight: np.ndarray,
    position_table: Optional[np.ndarray],
    tokens: np.ndarray,
    start_pos: object,
) -> tuple[dict[str, Any], np.ndarray, np.ndarray, int]:
    """(full config, tokens as (B, T), validated int64 ids, start_pos) after the checks of EMB-LAY-7..9."""
    cfg = resolve_config(config)
    if tokens.ndim not in (1, 2):
        raise EmbeddingError("shape_mismatch", f"tokens must be 1-D or 2-D, got shape {tokens.shape}")
    batched = tokens if tokens.ndim == 2 else tokens[None]
    index = validate_ids(batched, cfg["vocab_size"])
    # Without positions there is no table to overrun (EMB-LAY-8 names learned and sinusoidal only).
    limit = cfg["max_seq_len"] if cfg["pos_encoding"] != "none" else math.inf
    s = check_start_pos(start_pos, batched.shape[1], limit)
    if cfg["pos_encoding"] == "learned" and (
        position_table is None or position_table.shape != (cfg["max_seq_len"], cfg["embed_dim"])
    ):
        raise EmbeddingError("shape_mismatch", "a learned layer needs a (max_seq_len, embed_dim) position_table")
    return cfg, batched, index, s


def _positions(
    cfg: dict[str, Any],
    position_table: Optional[np.ndarray],
    s: int,
    seq_len: int,
    convention: Union[str, SinusoidProfile] = CANONICAL,
) -> np.ndarray:
    if cfg["pos_encoding"] == "learned":
        assert position_table is not None  # check_layer_inputs requires it
        return position_table[s : s + seq_len].astype(np.float64)
    if cfg["pos_encoding"] == "sinusoidal":
        return sinusoidal_table(s + seq_len, cfg["embed_dim"], "float64", convention)[s:]
    return np.zeros((seq_len, cfg["embed_dim"]))


def embedding_layer_forward(
    config: Mapping[str, Any],
    token_weight: np.ndarray,
    position_table: Optional[np.ndarray],
    tokens: np.ndarray,
    start_pos: int = 0,
    convention: Union[str, SinusoidProfile] = CANONICAL,
) -> np.ndarray:
    """W[tokens] * c + positions[s:s+T], computed in float64 and rounded once (EMB-LAY-2..4); sinusoidal
    positions are the rows of ``convention``'s table (the canonical one unless a profile's case says)."""
    cfg, batched, index, s = check_layer_inputs(config, token_weight, position_table, tokens, start_pos)
    c = token_scale(cfg["embed_dim"], cfg["scale_embeddings"])
    positions = _positions(cfg, position_table, s, batched.shape[1], convention)
    out = token_weight[index].astype(np.float64) * c + positions[None]
    out = round_once(out, token_weight.dtype)
    return out if tokens.ndim == 2 else out[0]


def embedding_layer_backward(
    config: Mapping[str, Any],
    token_weight: np.ndarray,
    position_table: Optional[np.ndarray],
    tokens: np.ndarray,
    start_pos: int,
    grad_output: np.ndarray,
) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """(grad_token_weight, grad_position_table): c times the scatter-add; the batch sum for a learned
    table; None for a sinusoidal table (a constant) and for no positions (EMB-LAY-5/6)."""
    cfg, batched, index, s = check_layer_inputs(config, token_weight, position_table, tokens, start_pos)
    grad = grad_output if tokens.ndim == 2 else grad_output[None]
    if grad.shape != batched.shape + (cfg["embed_dim"],):
        raise EmbeddingError("shape_mismatch", f"grad_output has shape {grad_output.shape}")
    grad = grad.astype(np.float64)
    grad_w = np.zeros(token_weight.shape, dtype=np.float64)
    np.add.at(grad_w, index.reshape(-1), grad.reshape(-1, cfg["embed_dim"]))
    grad_w *= token_scale(cfg["embed_dim"], cfg["scale_embeddings"])
    if cfg["padding_idx"] is not None:
        grad_w[cfg["padding_idx"]] = 0.0
    if cfg["pos_encoding"] != "learned":
        return round_once(grad_w, token_weight.dtype), None
    assert position_table is not None  # check_layer_inputs requires it
    grad_p = np.zeros(position_table.shape, dtype=np.float64)
    grad_p[s : s + batched.shape[1]] = grad.sum(axis=0)
    return round_once(grad_w, token_weight.dtype), round_once(grad_p, position_table.dtype)
