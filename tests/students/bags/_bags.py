"""What every bag student here starts from: the corpus's TinyTorch package and correct module-11 solution
(../_tinytorch.py), whose bag layer (the optional extension, spec section 16) each student changes in one place.

Kept out of the symptom corpus one folder up (tests/diagnosis judges that corpus on mistakes no catalogue lists):
these are the mistakes the bag mutants name, made the way a student makes them, on the student's own autograd.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _tinytorch import EmbeddingLayer, PositionalEncoding, Tensor, _compute_sinusoidal_table, solution  # noqa: E402

Embedding = solution.Embedding

__all__ = ["Embedding", "EmbeddingLayer", "PositionalEncoding", "Tensor", "_compute_sinusoidal_table", "bag_layer"]


def bag_layer(function: type) -> type:
    """The solution's EmbeddingBag reducing its bags with the student's ``function`` (an EmbeddingBagFunction)."""

    class EmbeddingBag(solution.EmbeddingBag):
        def reduce(self, inputs, ids, bounds):
            return function.apply(*inputs, ids=ids, bounds=bounds, mode=self.mode, padding_idx=self.padding_idx)

    return EmbeddingBag
