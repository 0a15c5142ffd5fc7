"""A TinyTorch module 11 that builds its token and position tables without ``requires_grad=True`` (a mistake
seen in a student's package): its forward and backward are right on tables handed to it, but in the student's
own layer ``weight.grad`` stays None after its own ``backward`` (EMB-LAY-12)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "tinytorch_student"))

import tinytorch.core.autograd  # noqa: E402,F401  (importing it enables autograd)
from tinytorch.core import embeddings as solution  # noqa: E402
from tinytorch.core.tensor import Tensor  # noqa: E402

_compute_sinusoidal_table = solution._compute_sinusoidal_table
create_sinusoidal_embeddings = solution.create_sinusoidal_embeddings


class Embedding(solution.Embedding):
    def __init__(self, vocab_size: int, embed_dim: int) -> None:
        super().__init__(vocab_size, embed_dim)
        limit = math.sqrt(6.0 / (vocab_size + embed_dim))
        self.weight = Tensor(np.random.uniform(-limit, limit, (vocab_size, embed_dim)))  # requires_grad forgotten


class PositionalEncoding(solution.PositionalEncoding):
    def __init__(self, max_seq_len: int, embed_dim: int) -> None:
        super().__init__(max_seq_len, embed_dim)
        limit = math.sqrt(2.0 / embed_dim)
        self.position_embeddings = Tensor(np.random.uniform(-limit, limit, (max_seq_len, embed_dim)))  # the same


class EmbeddingLayer(solution.EmbeddingLayer):
    def __init__(self, vocab_size, embed_dim, max_seq_len=512, pos_encoding="learned", scale_embeddings=False):
        super().__init__(vocab_size, embed_dim, max_seq_len, pos_encoding, scale_embeddings)
        self.token_embedding = Embedding(vocab_size, embed_dim)
        if pos_encoding == "learned":
            self.pos_encoding = PositionalEncoding(max_seq_len, embed_dim)
