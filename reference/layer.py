"""The embedding layer (EMB-LAY): token lookup, optional sqrt(D) scaling, plus positions."""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Union

import numpy as np

from embconf.model.arrays import Array, Config, Table
from embconf.model.rope import Pairing, pairing_of
from embconf.model.sinusoid import SinusoidProfile
from embconf.reference.arithmetic import active
from embconf.reference.errors import EmbeddingError
from embconf.reference.lookup import validate_ids
from embconf.reference.options import resolve_padding_idx
from embconf.reference.positions import check_start_pos
from embconf.reference.rope import rotated
from embconf.reference.sinusoid import CANONICAL, as_profile, family_rows

POS_ENCODINGS = ("learned", "sinusoidal", "none")  # every layer's (EMB-LAY-7)
WITH_ROPE = POS_ENCODINGS + ("rope",)  # a layer with the feature rope-layer (EMB-LAY-10)
DEFAULT_PAIRING = Pairing.HALF_SPLIT.value
ROPE_BASE = 10000.0  # a rope layer's base, default scaling, rotary_dim = D (EMB-LAY-10)
DEFAULTS: dict[str, Any] = {
    "max_seq_len": 512,
    "pos_encoding": "learned",
    "scale_embeddings": False,
    "padding_idx": None,
}


def resolve_config(config: Mapping[str, Any], rope_layer: bool = False) -> dict[str, Any]:
    """The config with the spec's defaults filled in (EMB-LAY-1); unknown pos_encoding is invalid_config, and so
    is 'rope' unless ``rope_layer`` (an implementation that claims the feature rope-layer; EMB-LAY-7), and a
    rope layer of odd D or an unknown ``rope_pairing`` (EMB-LAY-10)."""
    full = {**DEFAULTS, **config}
    known = WITH_ROPE if rope_layer else POS_ENCODINGS
    if full["pos_encoding"] not in known:
        raise EmbeddingError(
            "invalid_config", f"unknown pos_encoding {full['pos_encoding']!r}; expected one of {known}"
        )
    if full["pos_encoding"] == "rope":
        _check_rope(full)
    full["padding_idx"] = resolve_padding_idx(
        full["padding_idx"], full["vocab_size"]
    )  # a row in [0, V), or None (EMB-PAD-5)
    return full


def _check_rope(cfg: Mapping[str, Any]) -> None:
    """EMB-LAY-10's configuration: an even D and a known pairing (half_split unless ``rope_pairing`` says)."""
    if cfg["embed_dim"] % 2:
        raise EmbeddingError("invalid_config", f"a rope layer needs an even embed_dim, got {cfg['embed_dim']}")
    try:
        pairing_of(cfg.get("rope_pairing", DEFAULT_PAIRING))
    except ValueError as exc:
        raise EmbeddingError("invalid_config", str(exc)) from None


def rope_settings(cfg: Mapping[str, Any], start_pos: int, seq_len: int) -> dict[str, Any]:
    """The rope_forward / rope_backward arguments of a rope layer (EMB-LAY-10): positions s .. s+T-1,
    rotary_dim D, base 10000, default scaling, the config's pairing."""
    return {
        "position_ids": np.arange(start_pos, start_pos + seq_len, dtype=np.int64),
        "rotary_dim": cfg["embed_dim"],
        "base": ROPE_BASE,
        "scaling": {"rope_type": "default"},
        "pairing": cfg.get("rope_pairing", DEFAULT_PAIRING),
    }


def token_scale(embed_dim: int, scale_embeddings: bool) -> Any:
    """c = sqrt(D) when scaling, else 1 (applied to the token part only), in the active arithmetic."""
    ar = active()
    return ar.sqrt(ar.number(embed_dim)) if scale_embeddings else ar.number(1)


def _rotate_layer(values: np.ndarray, cfg: Mapping[str, Any], start_pos: int, sign: float) -> np.ndarray:
    """A rope layer's rotation (EMB-LAY-10; sign -1: its backward) of ``values`` (B, T, D), unrounded."""
    settings = rope_settings(cfg, start_pos, values.shape[1])
    return rotated(
        values,
        settings["position_ids"],
        cfg["embed_dim"],
        ROPE_BASE,
        settings["scaling"],
        pairing_of(settings["pairing"]),
        sign,
    )


def check_layer_inputs(
    config: Config,
    token_weight: Array,
    position_table: Table,
    tokens: Array,
    start_pos: object,
    rope_layer: bool = False,
) -> tuple[dict[str, Any], np.ndarray, np.ndarray, int]:
    """(full config, tokens as (B, T), validated int64 ids, start_pos) after the checks of EMB-LAY-7..10."""
    cfg = resolve_config(config, rope_layer)
    if tokens.ndim not in (1, 2):
        raise EmbeddingError("shape_mismatch", f"tokens must be 1-D or 2-D, got shape {tokens.shape}")
    batched = tokens if tokens.ndim == 2 else tokens[None]
    index = validate_ids(batched, cfg["vocab_size"])
    # Without a table there is none to overrun (EMB-LAY-8 names learned and sinusoidal only; rope: EMB-LAY-10).
    limit = cfg["max_seq_len"] if cfg["pos_encoding"] in ("learned", "sinusoidal") else math.inf
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
    """Rows s .. s+T-1 of the positions, unrounded in the active arithmetic."""
    if cfg["pos_encoding"] == "learned":
        assert position_table is not None  # check_layer_inputs requires it
        return active().array(position_table[s : s + seq_len])
    if cfg["pos_encoding"] == "sinusoidal":
        return family_rows(range(s, s + seq_len), cfg["embed_dim"], as_profile(convention))
    return active().zeros((seq_len, cfg["embed_dim"]))


def embedding_layer_forward(
    config: Config,
    token_weight: Array,
    position_table: Table,
    tokens: Array,
    start_pos: int = 0,
    convention: Union[str, SinusoidProfile] = CANONICAL,
    rope_layer: bool = False,
) -> np.ndarray:
    """W[tokens] * c + positions[s:s+T], computed in the active arithmetic and rounded once (EMB-LAY-2..4); sinusoidal
    positions are the rows of ``convention``'s table (the canonical one unless a profile's case says); a rope
    layer rotates W[tokens] * c instead (EMB-LAY-10), with ``rope_layer`` (the feature rope-layer); without it
    'rope' is an unknown pos_encoding (EMB-LAY-7), the answer of every implementation that does not claim it."""
    cfg, batched, index, s = check_layer_inputs(config, token_weight, position_table, tokens, start_pos, rope_layer)
    ar = active()
    tokens_part = ar.array(token_weight[index]) * token_scale(cfg["embed_dim"], cfg["scale_embeddings"])
    if cfg["pos_encoding"] == "rope":
        out = _rotate_layer(tokens_part, cfg, s, 1.0)
    else:
        out = tokens_part + _positions(cfg, position_table, s, batched.shape[1], convention)[None]
    out = ar.round(out, token_weight.dtype)
    return out if tokens.ndim == 2 else out[0]


def embedding_layer_backward(
    config: Config,
    token_weight: Array,
    position_table: Table,
    tokens: Array,
    start_pos: int,
    grad_output: Array,
    rope_layer: bool = False,
) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """(grad_token_weight, grad_position_table): c times the scatter-add (of the rope backward of G for a rope
    layer, EMB-LAY-10); the batch sum for a learned table; None for a sinusoidal table (a constant), for no
    positions and for rope (EMB-LAY-5/6)."""
    cfg, batched, index, s = check_layer_inputs(config, token_weight, position_table, tokens, start_pos, rope_layer)
    grad = grad_output if tokens.ndim == 2 else grad_output[None]
    if grad.shape != batched.shape + (cfg["embed_dim"],):
        raise EmbeddingError("shape_mismatch", f"grad_output has shape {grad_output.shape}")
    ar = active()
    grad = ar.array(grad)
    if cfg["pos_encoding"] == "rope":
        grad = _rotate_layer(grad, cfg, s, -1.0)
    grad_w = ar.zeros(token_weight.shape)
    np.add.at(grad_w, index.reshape(-1), grad.reshape(-1, cfg["embed_dim"]))
    grad_w = grad_w * token_scale(cfg["embed_dim"], cfg["scale_embeddings"])
    if cfg["padding_idx"] is not None:
        grad_w[cfg["padding_idx"]] = 0
    if cfg["pos_encoding"] != "learned":
        return ar.round(grad_w, token_weight.dtype), None
    assert position_table is not None  # check_layer_inputs requires it
    grad_p = ar.zeros(position_table.shape)
    grad_p[s : s + batched.shape[1]] = grad.sum(axis=0)
    return ar.round(grad_w, token_weight.dtype), ar.round(grad_p, position_table.dtype)


def own_tables(config: Mapping[str, Any], rope_layer: bool = False) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """Float32 tables of a layer's shapes (EMB-LAY-12): the token table, and the learned position table or None."""
    cfg = resolve_config(config, rope_layer)
    learned = cfg["pos_encoding"] == "learned"
    tokens = np.zeros((cfg["vocab_size"], cfg["embed_dim"]), dtype=np.float32)
    return tokens, (np.zeros((cfg["max_seq_len"], cfg["embed_dim"]), dtype=np.float32) if learned else None)


def embedding_layer_own_backward(
    config: Mapping[str, Any], tokens: np.ndarray, start_pos: int, grad_output: np.ndarray, rope_layer: bool = False
) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """What the parameters a freshly constructed layer made itself receive from its own forward and backward
    (EMB-LAY-12): the gradients of EMB-LAY-5/6/11, which do not depend on the parameters' values."""
    token_weight, position_table = own_tables(config, rope_layer)
    return embedding_layer_backward(config, token_weight, position_table, tokens, start_pos, grad_output, rope_layer)
