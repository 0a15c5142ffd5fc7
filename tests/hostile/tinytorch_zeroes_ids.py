"""Hostile TinyTorch module 11: the correct solution, except that Embedding.forward zeroes the token Tensor
it was given after the lookup (``indices.data[...] = 0``). The adapter hands it a fresh Tensor of its own."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "tinytorch_student"))

import tinytorch.core.autograd  # noqa: E402,F401  (importing it enables autograd)
from tinytorch.core import embeddings as solution  # noqa: E402
from tinytorch.core.tensor import Tensor  # noqa: E402,F401

PositionalEncoding, EmbeddingLayer = solution.PositionalEncoding, solution.EmbeddingLayer
_compute_sinusoidal_table = solution._compute_sinusoidal_table


class Embedding(solution.Embedding):
    def forward(self, indices):
        output = super().forward(indices)
        indices.data[...] = 0
        return output
