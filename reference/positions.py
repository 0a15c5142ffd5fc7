"""Learned position tables (EMB-POS): output = x + P[s:s+T], broadcast over the batch."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from embconf.model.dtypes import round_once
from embconf.reference.errors import EmbeddingError


def check_start_pos(start_pos: Any, seq_len: int, max_len: float) -> int:
    """Return ``start_pos`` as int after the checks of EMB-POS-6/7 (also used by the layer)."""
    if isinstance(start_pos, bool) or not isinstance(start_pos, numbers.Integral):
        raise EmbeddingError("invalid_start_pos", f"start_pos must be an integer, got {start_pos!r}")
    start = int(start_pos)
    if start < 0:
        raise EmbeddingError("invalid_start_pos", f"start_pos must be >= 0, got {start}")
    if start + seq_len > max_len:
        raise EmbeddingError(
            "sequence_too_long",
            f"start_pos {start} + sequence length {seq_len} exceeds max_seq_len {max_len}",
        )
    return start


def check_positions_input(table: np.ndarray, x: np.ndarray, start_pos: object) -> int:
    """start_pos as int, after the checks of EMB-POS-5..7 on x and start_pos."""
    if x.ndim != 3:
        raise EmbeddingError("shape_mismatch", f"x must be 3-D (batch, seq, embed_dim), got shape {x.shape}")
    if x.shape[2] != table.shape[1]:
        raise EmbeddingError("shape_mismatch", f"x has embed_dim {x.shape[2]}, the table has {table.shape[1]}")
    return check_start_pos(start_pos, x.shape[1], table.shape[0])


def learned_positions_forward(table: np.ndarray, x: np.ndarray, start_pos: int = 0) -> np.ndarray:
    """x + table[start_pos:start_pos+T] in float64, rounded once to x's dtype (EMB-POS-1/2)."""
    s = check_positions_input(table, x, start_pos)
    rows = table[s : s + x.shape[1]].astype(np.float64)
    return round_once(x.astype(np.float64) + rows[None], x.dtype)


def learned_positions_backward(
    table: np.ndarray, x: np.ndarray, start_pos: int, grad_output: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(grad_x, grad_table): grad_x = G; rows s..s+T-1 get the batch sum of G, all others exactly zero."""
    s = check_positions_input(table, x, start_pos)
    if grad_output.shape != x.shape:
        raise EmbeddingError("shape_mismatch", f"grad_output has shape {grad_output.shape}, expected {x.shape}")
    grad_table = np.zeros(table.shape, dtype=np.float64)
    grad_table[s : s + x.shape[1]] = grad_output.astype(np.float64).sum(axis=0)
    return grad_output.copy(), round_once(grad_table, table.dtype)
