"""A complete NumPy implementation of the spec for the ``functions:`` adapter, written apart from embconf.reference.

Conventions of the functions adapter: one function per spec operation, keyword
arguments named as the operation's inputs, and errors raised as exceptions
with a ``kind`` attribute. Sums are taken in float64 and rounded once.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional

import numpy as np

EMBCONF_FEATURES = ["float64", "int32_ids", "float_ids", "row_sparse_grad", "large_tables"]
EMBCONF_SINUSOID_CONVENTION = "interleaved"

ITEM_BYTES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}
LAYER_DEFAULTS = {"max_seq_len": 512, "pos_encoding": "learned", "scale_embeddings": False}


class SpecError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


# ----- validation ----------------------------------------------------------------------


def _rows(ids: np.ndarray, vocab_size: int) -> np.ndarray:
    ids = np.asarray(ids)
    if ids.dtype.kind == "f":
        as_float = ids.astype(np.float64)
        if not np.isfinite(as_float).all() or (as_float != np.round(as_float)).any():
            raise SpecError("invalid_index", "ids must be finite integers")
    elif ids.dtype.kind not in "iu":
        raise SpecError("invalid_index", f"ids of dtype {ids.dtype}")
    if ids.size and ((ids < 0).any() or (ids >= vocab_size).any()):
        raise SpecError("index_out_of_range", f"an id lies outside [0, {vocab_size})")
    return ids.astype(np.int64)


def _start(start_pos: Any, seq_len: int, limit: float) -> int:
    if isinstance(start_pos, bool) or not isinstance(start_pos, (int, np.integer)):
        raise SpecError("invalid_start_pos", f"start_pos {start_pos!r} is not an integer")
    if start_pos < 0:
        raise SpecError("invalid_start_pos", f"start_pos {start_pos} < 0")
    if start_pos + seq_len > limit:
        raise SpecError("sequence_too_long", f"{start_pos} + {seq_len} > {limit}")
    return int(start_pos)


def _scatter(shape: tuple[int, ...], rows: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """float64 sum of the rows of ``grad`` into a zero table, per id."""
    total = np.zeros(shape, dtype=np.float64)
    np.add.at(total, rows.reshape(-1), grad.reshape(-1, shape[1]).astype(np.float64))
    return total


# ----- token lookup --------------------------------------------------------------------


def embedding_forward(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    return np.take(weight, _rows(ids, weight.shape[0]), axis=0)


def embedding_backward(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    rows = _rows(ids, weight.shape[0])
    if grad_output.shape != rows.shape + (weight.shape[1],):
        raise SpecError("shape_mismatch", f"grad_output shape {grad_output.shape}")
    return _scatter(weight.shape, rows, grad_output).astype(weight.dtype)


def embedding_backward_sparse(
    weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    dense = embedding_backward(weight, ids, grad_output)
    used = np.unique(_rows(ids, weight.shape[0])).astype(np.int64)
    return used, dense[used]


# ----- positions -----------------------------------------------------------------------


def sinusoidal_table(max_len: int, embed_dim: int, dtype: str = "float32") -> np.ndarray:
    pos = np.arange(max_len, dtype=np.float64).reshape(-1, 1)
    even_columns = np.arange(0, embed_dim, 2, dtype=np.float64)
    angle = pos * np.power(10000.0, -even_columns / embed_dim)
    out = np.zeros((max_len, embed_dim))
    out[:, 0::2] = np.sin(angle)
    out[:, 1::2] = np.cos(angle[:, : embed_dim // 2])
    return out.astype(dtype)


def _check_x(table: np.ndarray, x: np.ndarray) -> None:
    if x.ndim != 3 or x.shape[2] != table.shape[1]:
        raise SpecError("shape_mismatch", f"x of shape {x.shape} for a table of shape {table.shape}")


def learned_positions_forward(table: np.ndarray, x: np.ndarray, start_pos: int = 0) -> np.ndarray:
    _check_x(table, x)
    s = _start(start_pos, x.shape[1], table.shape[0])
    return (x.astype(np.float64) + table[s : s + x.shape[1]].astype(np.float64)).astype(x.dtype)


def learned_positions_backward(
    table: np.ndarray, x: np.ndarray, start_pos: int, grad_output: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    _check_x(table, x)
    s = _start(start_pos, x.shape[1], table.shape[0])
    if grad_output.shape != x.shape:
        raise SpecError("shape_mismatch", f"grad_output shape {grad_output.shape}")
    grad_table = np.zeros(table.shape)
    grad_table[s : s + x.shape[1]] = grad_output.astype(np.float64).sum(axis=0)
    return np.array(grad_output), grad_table.astype(table.dtype)


# ----- the layer -----------------------------------------------------------------------


def _config(config: Mapping[str, Any]) -> dict[str, Any]:
    cfg = {**LAYER_DEFAULTS, **config}
    if cfg["pos_encoding"] not in ("learned", "sinusoidal", "none"):
        raise SpecError("invalid_config", f"pos_encoding {cfg['pos_encoding']!r}")
    return cfg


def _layer_parts(
    config: Mapping[str, Any], tokens: np.ndarray, start_pos: Any
) -> tuple[dict[str, Any], np.ndarray, int, float]:
    """(config with defaults, ids as (batch, seq), start, token scale) after the layer's checks."""
    cfg = _config(config)
    if tokens.ndim not in (1, 2):
        raise SpecError("shape_mismatch", f"tokens of shape {tokens.shape}")
    batch = tokens if tokens.ndim == 2 else tokens[None]
    rows = _rows(batch, cfg["vocab_size"])
    limit = math.inf if cfg["pos_encoding"] == "none" else cfg["max_seq_len"]
    s = _start(start_pos, batch.shape[1], limit)
    scale = math.sqrt(cfg["embed_dim"]) if cfg["scale_embeddings"] else 1.0
    return cfg, rows, s, scale


def embedding_layer_forward(
    config: Mapping[str, Any],
    token_weight: np.ndarray,
    position_table: Optional[np.ndarray],
    tokens: np.ndarray,
    start_pos: Any = 0,
) -> np.ndarray:
    cfg, rows, s, scale = _layer_parts(config, tokens, start_pos)
    seq = rows.shape[1]
    out = token_weight[rows].astype(np.float64) * scale
    if cfg["pos_encoding"] == "learned":
        out += position_table[s : s + seq].astype(np.float64)
    elif cfg["pos_encoding"] == "sinusoidal":
        out += sinusoidal_table(s + seq, cfg["embed_dim"], "float64")[s:]
    out = out.astype(token_weight.dtype)
    return out if tokens.ndim == 2 else out[0]


def embedding_layer_backward(
    config: Mapping[str, Any],
    token_weight: np.ndarray,
    position_table: Optional[np.ndarray],
    tokens: np.ndarray,
    start_pos: Any,
    grad_output: np.ndarray,
) -> tuple[np.ndarray, Optional[np.ndarray]]:
    cfg, rows, s, scale = _layer_parts(config, tokens, start_pos)
    if grad_output.shape != tokens.shape + (cfg["embed_dim"],):
        raise SpecError("shape_mismatch", f"grad_output shape {grad_output.shape}")
    grad = grad_output.reshape(rows.shape + (cfg["embed_dim"],)).astype(np.float64)
    grad_tokens = (_scatter(token_weight.shape, rows, grad) * scale).astype(token_weight.dtype)
    if cfg["pos_encoding"] != "learned":
        return grad_tokens, None
    grad_positions = np.zeros(position_table.shape)
    grad_positions[s : s + rows.shape[1]] = grad.sum(axis=0)
    return grad_tokens, grad_positions.astype(position_table.dtype)


# ----- memory --------------------------------------------------------------------------


def _item(dtype: str) -> int:
    if dtype not in ITEM_BYTES:
        raise SpecError("invalid_config", f"unknown dtype {dtype!r}")
    return ITEM_BYTES[dtype]


def parameter_count(config: Mapping[str, Any]) -> dict[str, int]:
    cfg = _config(config)
    tokens = cfg["vocab_size"] * cfg["embed_dim"]
    positions = cfg["max_seq_len"] * cfg["embed_dim"]
    learned = cfg["pos_encoding"] == "learned"
    stored = cfg["pos_encoding"] == "sinusoidal"
    return {"trainable": tokens + (positions if learned else 0), "non_trainable": positions if stored else 0}


def table_bytes(num_rows: int, embed_dim: int, dtype: str) -> dict[str, Any]:
    size = num_rows * embed_dim * _item(dtype)
    return {"bytes": size, "megabytes": size / 1e6, "mebibytes": size / 2**20}


def gradient_bytes(vocab_size: int, embed_dim: int, dtype: str, ids: np.ndarray) -> dict[str, int]:
    item = _item(dtype)
    touched = len(np.unique(np.asarray(ids)))
    return {"dense": vocab_size * embed_dim * item, "row_sparse": touched * (embed_dim * item + 8)}


def adam_state_bytes(num_params: int, dtype: str) -> dict[str, int]:
    return {"bytes": 2 * num_params * _item(dtype)}
