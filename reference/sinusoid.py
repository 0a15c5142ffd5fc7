"""Fixed sinusoidal position tables (EMB-SIN).

The canonical table (EMB-SIN-2/3) is interleaved: pair k has frequency
w_k = base^(-2k/D); column 2k holds sin(pos * w_k) and column 2k+1 holds
cos(pos * w_k), positions counted from 0. Two conventions seen in the wild are
kept as named, non-canonical profiles (EMB-SIN-V1, EMB-SIN-V2) so that an
implementation of another convention can be told which one it follows.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from embconf.model.dtypes import numpy_dtype

BASE = 10000.0

CANONICAL = "interleaved"


def _positions(max_len: int) -> np.ndarray:
    return np.arange(max_len, dtype=np.float64)[:, None]


def interleaved(max_len: int, embed_dim: int) -> np.ndarray:
    """Canonical table in float64: ceil(D/2) sine and floor(D/2) cosine columns."""
    pairs = np.arange((embed_dim + 1) // 2, dtype=np.float64)
    angles = _positions(max_len) * BASE ** (-2.0 * pairs / embed_dim)
    table = np.empty((max_len, embed_dim), dtype=np.float64)
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles[:, : embed_dim // 2])
    return table


def concatenated(max_len: int, embed_dim: int) -> np.ndarray:
    """[sin block | cos block] with the canonical frequencies (Marian); sin block has ceil(D/2) columns."""
    pairs = np.arange((embed_dim + 1) // 2, dtype=np.float64)
    angles = _positions(max_len) * BASE ** (-2.0 * pairs / embed_dim)
    return np.concatenate([np.sin(angles), np.cos(angles[:, : embed_dim // 2])], axis=1)


def tensor2tensor(max_len: int, embed_dim: int) -> np.ndarray:
    """tensor2tensor/fairseq timing signal: h = floor(D/2) frequencies base^(-k/(h-1)), [sin | cos], zero column for odd D."""
    half = embed_dim // 2
    pairs = np.arange(half, dtype=np.float64)
    angles = _positions(max_len) * BASE ** (-pairs / max(half - 1, 1))
    blocks = [np.sin(angles), np.cos(angles)]
    if embed_dim % 2:
        blocks.append(np.zeros((max_len, 1)))
    return np.concatenate(blocks, axis=1)


CONVENTIONS: dict[str, Callable[[int, int], np.ndarray]] = {
    "interleaved": interleaved,
    "concatenated": concatenated,
    "tensor2tensor": tensor2tensor,
}


def sinusoidal_table(max_len: int, embed_dim: int, dtype: str = "float32", convention: str = CANONICAL) -> np.ndarray:
    """The (max_len, embed_dim) table of ``convention``, computed in float64 and rounded once to ``dtype``."""
    return CONVENTIONS[convention](max_len, embed_dim).astype(numpy_dtype(dtype))
