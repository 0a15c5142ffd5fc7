"""A TinyTorch module 11 whose ``Embedding`` allocates one gradient buffer when it is built ("to save memory") and
adds every backward into it without zeroing it: a fresh layer's first backward is right, so every case of one call
passes, and a layer trained for two steps hands its second step the sum of both (EMB-STA-4)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "tinytorch_student"))

import tinytorch.core.autograd  # noqa: E402,F401  (importing it enables autograd)
from tinytorch.core import embeddings as solution  # noqa: E402
from tinytorch.core.autograd import Function  # noqa: E402
from tinytorch.core.tensor import Tensor  # noqa: E402,F401  (the adapter finds the module's Tensor here)

_compute_sinusoidal_table = solution._compute_sinusoidal_table
create_sinusoidal_embeddings = solution.create_sinusoidal_embeddings
PositionalEncoding = solution.PositionalEncoding


class EmbeddingFunction(Function):
    def forward(self, weight, indices, buffer=None):
        self.ids, self.buffer = solution._token_ids(indices, weight.shape[0]), buffer
        return np.take(weight, self.ids, axis=0)

    def backward(self, grad_output):
        np.add.at(self.buffer, self.ids, grad_output)  # the layer's own buffer, never zeroed
        return (self.buffer.copy(),)


class Embedding(solution.Embedding):
    def __init__(self, vocab_size: int, embed_dim: int) -> None:
        super().__init__(vocab_size, embed_dim)
        self._grad = np.zeros((vocab_size, embed_dim), dtype=np.float32)

    def forward(self, indices):
        ids = solution._token_ids(indices, self.vocab_size)
        return EmbeddingFunction.apply(self.weight, indices=ids, buffer=self._grad)


class EmbeddingLayer(solution.EmbeddingLayer):
    def __init__(self, vocab_size, embed_dim, max_seq_len=512, pos_encoding="learned", scale_embeddings=False):
        super().__init__(vocab_size, embed_dim, max_seq_len, pos_encoding, scale_embeddings)
        self.token_embedding = Embedding(vocab_size, embed_dim)
