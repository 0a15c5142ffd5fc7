"""A TinyTorch module 11 with the optional RoPE extension (EMB-LAY-10): the example student's solution,
whose EmbeddingLayer also takes pos_encoding='rope' and rotates W[tokens] * c by positions start_pos ..
start_pos+T-1 (half_split pairing, base 10000, angles in float32), with its own autograd Function.

``tests/impls/tinytorch_rope_no_offset.py`` makes the typical mistake: positions from 0, start_pos ignored.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "tinytorch_student"))

import tinytorch.core.autograd  # noqa: E402,F401  (importing it enables autograd)
from tinytorch.core import embeddings as solution  # noqa: E402
from tinytorch.core.autograd import Function  # noqa: E402
from tinytorch.core.tensor import Tensor  # noqa: E402

Embedding, PositionalEncoding, _compute_sinusoidal_table = (
    solution.Embedding,
    solution.PositionalEncoding,
    solution._compute_sinusoidal_table,
)
BASE = 10000.0


def rope_angles(positions: np.ndarray, dim: int) -> np.ndarray:
    """(T, D/2) angles p * base^(-2k/D), computed in float32."""
    inv_freq = (BASE ** (-np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim))).astype(np.float32)
    return positions.astype(np.float32)[:, None] * inv_freq[None, :]


def rotate(x: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Half-split rotation: column k turns with column k + D/2 by angles[:, k] (broadcast over the batch)."""
    half = x.shape[-1] // 2
    cos, sin = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    first, second = x[..., :half], x[..., half:]
    return np.concatenate([first * cos - second * sin, second * cos + first * sin], axis=-1)


class RopeFunction(Function):
    """out = rotate(x, angles); its backward rotates grad_output by the negative angles (the transpose)."""

    def forward(self, x: np.ndarray, angles: np.ndarray) -> np.ndarray:
        self.angles = angles
        return rotate(x, angles)

    def backward(self, grad_output: np.ndarray) -> tuple[Any, ...]:
        return rotate(np.asarray(grad_output, dtype=np.float32), -self.angles), None


class EmbeddingLayer(solution.EmbeddingLayer):
    """The solution's layer, plus pos_encoding='rope': no position table and no length limit."""

    def __init__(
        self,
        vocab_size: int,
        embed_dim: int,
        max_seq_len: int = 512,
        pos_encoding: Any = "learned",
        scale_embeddings: bool = False,
    ) -> None:
        self.rope = pos_encoding == "rope"
        if self.rope and embed_dim % 2:
            raise ValueError(f"rope needs an even embed_dim, got {embed_dim}")
        super().__init__(vocab_size, embed_dim, max_seq_len, None if self.rope else pos_encoding, scale_embeddings)
        if self.rope:
            self.pos_encoding_type = "rope"

    def positions(self, start: int, seq_len: int) -> np.ndarray:
        return np.arange(start, start + seq_len)

    def forward(self, tokens: Tensor, start_pos: int = 0) -> Tensor:
        if not self.rope:
            return super().forward(tokens, start_pos)
        if tokens.ndim not in (1, 2):
            raise ValueError(f"tokens must be 1-D (seq,) or 2-D (batch, seq), got shape {tokens.shape}")
        start = solution._start_position(start_pos)
        seq_len = tokens.shape[-1]
        unbatched = tokens.ndim == 1
        if unbatched:
            tokens = tokens.reshape(1, seq_len)
        x = self.token_embedding(tokens)
        if self.scale_embeddings:
            x = x * math.sqrt(self.embed_dim)
        x = RopeFunction.apply(x, rope_angles(self.positions(start, seq_len), self.embed_dim))
        return x.reshape(x.shape[1:]) if unbatched else x
