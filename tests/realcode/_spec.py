"""Correct building blocks the ``functions:`` modules of this corpus share, so that each module shows only its mistakes.

Each corpus module keeps its wrong code in its own file; whatever it takes from here is right (the spec's
typed errors, id and start_pos checks, a float64 scatter-add, the canonical sinusoid table, the layer's
defaults). Written for this corpus; it imports nothing from embconf.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

LAYER_DEFAULTS: dict[str, Any] = {"max_seq_len": 512, "pos_encoding": "learned", "scale_embeddings": False}


class SpecError(ValueError):
    """An error the spec names: ``kind`` is one of its six error kinds."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def check_ids(ids: Any, vocab_size: int) -> np.ndarray:
    """The ids as int64 after the spec's checks (float ids must be finite integers, then 0 <= id < V)."""
    ids = np.asarray(ids)
    if ids.dtype.kind == "f":
        as_float = ids.astype(np.float64)
        if not np.isfinite(as_float).all() or (as_float != np.trunc(as_float)).any():
            raise SpecError("invalid_index", "ids must be finite integers")
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        raise SpecError("index_out_of_range", f"an id lies outside [0, {vocab_size})")
    return ids.astype(np.int64)


def check_start(start_pos: Any, seq_len: int, limit: float) -> int:
    """``start_pos`` as an int after the spec's checks (an integer >= 0 and start_pos + T <= limit)."""
    if isinstance(start_pos, bool) or not isinstance(start_pos, (int, np.integer)) or start_pos < 0:
        raise SpecError("invalid_start_pos", f"start_pos {start_pos!r}")
    if start_pos + seq_len > limit:
        raise SpecError("sequence_too_long", f"{start_pos} + {seq_len} > {limit}")
    return int(start_pos)


def check_grad_shape(grad_output: np.ndarray, shape: tuple[int, ...]) -> None:
    if grad_output.shape != shape:
        raise SpecError("shape_mismatch", f"grad_output of shape {grad_output.shape}, expected {shape}")


def scatter_add(shape: tuple[int, ...], rows: np.ndarray, grad: np.ndarray, dtype: Any) -> np.ndarray:
    """Every upstream row added into a zero table (float64 sums, rounded once to ``dtype``)."""
    total = np.zeros(shape, dtype=np.float64)
    np.add.at(total, rows.reshape(-1), grad.reshape(-1, shape[1]).astype(np.float64))
    return total.astype(dtype)


def canonical_table(max_len: int, embed_dim: int, dtype: Any = "float32") -> np.ndarray:
    """The spec's interleaved table: sin at 2k, cos at 2k+1, frequency 10000^(-2k/D), positions from 0."""
    angles = np.arange(max_len, dtype=np.float64)[:, None] * np.exp(
        -np.arange(0, embed_dim, 2, dtype=np.float64) * math.log(10000.0) / embed_dim
    )
    table = np.zeros((max_len, embed_dim))
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles[:, : embed_dim // 2])
    return table.astype(dtype)


def layer_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The layer's config with the spec's defaults; an unknown pos_encoding is invalid_config."""
    cfg = {**LAYER_DEFAULTS, **config}
    if cfg["pos_encoding"] not in ("learned", "sinusoidal", "none"):
        raise SpecError("invalid_config", f"pos_encoding {cfg['pos_encoding']!r}")
    return cfg


def check_x(table: np.ndarray, x: np.ndarray) -> None:
    if x.ndim != 3 or x.shape[2] != table.shape[1]:
        raise SpecError("shape_mismatch", f"x of shape {x.shape} for a table of shape {table.shape}")


ROPE_TYPES = {  # rope_type -> the keys it needs
    "default": (),
    "linear": ("factor",),
    "dynamic": ("factor", "original_max_position_embeddings"),
    "yarn": ("factor", "original_max_position_embeddings"),
    "llama3": ("factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"),
}


def check_rope(
    x: Any, position_ids: Any, rotary_dim: Any, base: Any, scaling: Any, pairing: Any = "half_split"
) -> None:
    """The spec's rotary checks: shape_mismatch for x and position_ids, invalid_config for the rest."""
    if x is not None and np.ndim(x) < 2:
        raise SpecError("shape_mismatch", f"x of rank {np.ndim(x)}")
    if x is not None and np.shape(x)[-2] != np.size(position_ids):
        raise SpecError("shape_mismatch", "len(position_ids) != T")
    width = np.shape(x)[-1] if x is not None else rotary_dim
    if (
        isinstance(rotary_dim, bool)
        or not isinstance(rotary_dim, (int, np.integer))
        or rotary_dim % 2
        or not 2 <= rotary_dim <= width
    ):
        raise SpecError("invalid_config", f"rotary_dim {rotary_dim!r}")
    if isinstance(base, bool) or not isinstance(base, (int, float)) or not base > 0:
        raise SpecError("invalid_config", f"base {base!r}")
    rope_type = (scaling or {}).get("rope_type", "default")
    if rope_type not in ROPE_TYPES or pairing not in ("half_split", "interleaved"):
        raise SpecError("invalid_config", f"scaling {scaling!r}, pairing {pairing!r}")
    if any((scaling or {}).get(key) is None for key in ROPE_TYPES[rope_type]):
        raise SpecError("invalid_config", f"rope_type {rope_type!r} needs {ROPE_TYPES[rope_type]}")
    if (scaling or {}).get("rope_type") == "dynamic" and rotary_dim == 2:
        raise SpecError("invalid_config", "dynamic scaling with rotary_dim 2")


def check_grad(x: Any, grad_output: Any) -> None:
    if np.shape(grad_output) != np.shape(x):
        raise SpecError("shape_mismatch", "grad_output shape != x shape")
