"""What every quantized student here starts from: the corpus's TinyTorch package and correct module-11 solution
(../_tinytorch.py), and a ``QuantizedEmbedding`` (the optional extension, spec section 17) reading ggml's Q8_0 and
Q4_0 and FBGEMM's fused 8-bit rows from a Tensor of their bytes, as a course's quantization module would write it.
Each wrong student changes one method of it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _tinytorch import EmbeddingLayer, PositionalEncoding, Tensor, _compute_sinusoidal_table, solution  # noqa: E402

Embedding = solution.Embedding

__all__ = [
    "Embedding",
    "EmbeddingLayer",
    "PositionalEncoding",
    "QuantizedEmbedding",
    "Tensor",
    "_compute_sinusoidal_table",
]


class QuantizedEmbedding:
    """Rows of a quantized table, dequantized on lookup into float32 Tensors."""

    FORMATS = ("q8_0", "q4_0", "fused8_rowwise")

    def __init__(self, qweight, format, embed_dim):
        if format not in self.FORMATS:
            raise ValueError(f"unknown format {format}")
        self.bytes = qweight.data.astype(np.uint8)
        self.format, self.embed_dim = format, embed_dim

    def nibbles(self, body):
        """The 32 values of a Q4_0 block's 16 bytes: the low nibbles first, then the high ones."""
        return np.concatenate([body & 15, body >> 4], axis=-1).astype(np.float32)

    def row(self, r):
        data, d = self.bytes[r], self.embed_dim
        if self.format == "fused8_rowwise":
            scale, bias = data[d:].view(np.float32)
            return data[:d].astype(np.float32) * scale + bias
        step = 34 if self.format == "q8_0" else 18
        out = []
        for block in data.reshape(-1, step):
            scale = block[:2].view(np.float16).astype(np.float32)[0]
            if self.format == "q8_0":
                out.append(block[2:].view(np.int8).astype(np.float32) * scale)
            else:
                out.append((self.nibbles(block[2:]) - 8) * scale)
        return np.concatenate(out)

    def forward(self, indices):
        ids = indices.data.astype(np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= self.bytes.shape[0]):
            raise ValueError("index out of range")
        rows = [self.row(r) for r in ids.reshape(-1)]
        return Tensor(np.array(rows, np.float32).reshape(*ids.shape, self.embed_dim))
