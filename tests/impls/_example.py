"""Shared by the wrong variants: the example student package, imported from examples/."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable

import numpy as np

EXAMPLE_ROOT = Path(__file__).resolve().parents[2] / "examples" / "tinytorch_student"
Wave = Callable[[np.ndarray], np.ndarray]


def student_embeddings() -> ModuleType:
    """The correct example's ``tinytorch.core.embeddings`` (each variant then breaks one thing in it)."""
    if str(EXAMPLE_ROOT) not in sys.path:
        sys.path.insert(0, str(EXAMPLE_ROOT))
    import tinytorch.core.embeddings as embeddings

    return embeddings


def sinusoid_table(even: Wave = np.sin, odd: Wave = np.cos, sign: float = -1.0) -> Callable[[int, int], np.ndarray]:
    """The example's ``_compute_sinusoidal_table``, with its even/odd waves and exponent sign as parameters."""

    def _compute_sinusoidal_table(max_len: int, embed_dim: int) -> np.ndarray:
        positions = np.arange(max_len, dtype=np.float64)[:, np.newaxis]
        two_i = np.arange(0, embed_dim, 2, dtype=np.float64)
        angles = positions * np.exp(sign * two_i * math.log(10000.0) / embed_dim)
        table = np.empty((max_len, embed_dim), dtype=np.float64)
        table[:, 0::2] = even(angles)
        table[:, 1::2] = odd(angles[:, : embed_dim // 2])
        return table.astype(np.float32)

    return _compute_sinusoidal_table
