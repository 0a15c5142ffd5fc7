"""What every student module in this corpus starts from: the TinyTorch package (its float32 Tensor and
autograd) and the correct module-11 solution, which each student file changes in exactly one place.

The corpus measures the symptom diagnosis on mistakes the mutant catalogue does not list; keep it out
of the catalogue's tuning (its mistakes must not be added to conformance/mutants/).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "tinytorch_student"))

import tinytorch.core.autograd  # noqa: E402,F401  (importing it enables autograd)
from tinytorch.core import embeddings as solution  # noqa: E402
from tinytorch.core.autograd import Function  # noqa: E402
from tinytorch.core.tensor import Tensor  # noqa: E402

Embedding, PositionalEncoding, EmbeddingLayer = solution.Embedding, solution.PositionalEncoding, solution.EmbeddingLayer
_compute_sinusoidal_table = solution._compute_sinusoidal_table

__all__ = [
    "Embedding",
    "EmbeddingLayer",
    "Function",
    "PositionalEncoding",
    "Tensor",
    "_compute_sinusoidal_table",
    "checked_start",
    "positional_encoding",
    "solution",
    "AddPositions",
]


def checked_start(encoding, x, start_pos):
    """The solution's checks of ``PositionalEncoding.forward`` (x's shape, start_pos, the fit): the start."""
    if x.ndim != 3 or x.shape[2] != encoding.embed_dim:
        raise ValueError(f"bad x shape {x.shape}")
    start = solution._start_position(start_pos)
    solution._check_fits(start, x.shape[1], encoding.max_seq_len)
    return start


class AddPositions(Function):
    """``x + table[start : start + T]`` as a Function; a student subclass writes its backward."""

    def forward(self, x, table, start=0):
        self.table_shape, self.start = table.shape, start
        return x + table[start : start + x.shape[1]]


def positional_encoding(add):
    """The solution's PositionalEncoding, adding its table through the Function ``add`` after the solution's checks."""

    class PositionalEncoding(solution.PositionalEncoding):
        def forward(self, x, start_pos=0):
            return add.apply(x, self.position_embeddings, start=checked_start(self, x, start_pos))

    return PositionalEncoding
