"""The options of a production embedding (spec 1.1): padding_idx, max_norm, scale_grad_by_freq.

EMB-PAD: the padding row is returned as stored and gets an exactly zero gradient;
a negative padding_idx counts from the end. EMB-NRM: before the lookup, every
referenced row whose p-norm exceeds max_norm is rescaled by
max_norm / (norm + 1e-7); the table after the call is an output. EMB-FRQ: each
row's gradient is divided by how often its id occurs in the whole ids input.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from embconf.reference.arithmetic import active
from embconf.reference.errors import EmbeddingError
from embconf.reference.ids import distinct

RENORM_EPSILON = 1e-7  # added to the norm before dividing (PyTorch's embedding_renorm_)


def _is_integer(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def resolve_padding_idx(padding_idx: Any, vocab_size: int) -> Optional[int]:
    """padding_idx as a row in [0, V) (a negative one is padding_idx + V), None for none (EMB-PAD-3/4)."""
    if padding_idx is None:
        return None
    if not _is_integer(padding_idx) or not -vocab_size <= int(padding_idx) < vocab_size:
        raise EmbeddingError(
            "invalid_config", f"padding_idx must be an integer in [-{vocab_size}, {vocab_size}), got {padding_idx!r}"
        )
    return int(padding_idx) % vocab_size


def check_flag(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise EmbeddingError("invalid_config", f"{name} must be a boolean, got {value!r}")
    return bool(value)


def apply_options(
    grad: np.ndarray, index: np.ndarray, padding_row: Optional[int], scale_grad_by_freq: bool
) -> np.ndarray:
    """The float64 scatter-add ``grad`` (V, D) divided by each id's count (EMB-FRQ-1), its padding row zeroed (EMB-PAD-2)."""
    if scale_grad_by_freq:
        counts = np.bincount(index.reshape(-1), minlength=grad.shape[0])[:, None]
        grad = grad / np.maximum(counts, 1)
    if padding_row is not None:
        grad[padding_row] = 0.0
    return grad


def check_renorm_args(max_norm: Any, norm_type: Any) -> tuple[float, float]:
    """max_norm a finite number > 0 and norm_type a number > 0 (EMB-NRM-4), as floats."""
    for name, value in (("max_norm", max_norm), ("norm_type", norm_type)):
        if (
            isinstance(value, (bool, np.bool_))
            or not isinstance(value, (int, float, np.integer, np.floating))
            or not value > 0
            or math.isnan(value)
        ):
            raise EmbeddingError("invalid_config", f"{name} must be a number > 0, got {value!r}")
    if not math.isfinite(max_norm):
        raise EmbeddingError("invalid_config", f"max_norm must be finite, got {max_norm!r}")
    return float(max_norm), float(norm_type)


def row_norms(rows: np.ndarray, norm_type: float) -> np.ndarray:
    """The p-norm of each row, (sum |w|^p)^(1/p), in the active arithmetic."""
    ar = active()
    magnitudes = np.abs(ar.array(rows))
    if norm_type == 1:
        return magnitudes.sum(axis=-1)
    if norm_type == 2:
        return ar.sqrt((magnitudes * magnitudes).sum(axis=-1))
    p = ar.number(norm_type)
    return ar.power(ar.power(magnitudes, p).sum(axis=-1), 1 / p)


def renormed(weight: np.ndarray, index: np.ndarray, max_norm: float, norm_type: float) -> np.ndarray:
    """The table after EMB-NRM-1: referenced rows of norm > max_norm (strictly) scaled, each once; others untouched."""
    after = weight.copy()
    rows = distinct(index)
    if not rows.size:
        return after
    ar = active()
    norms = row_norms(weight[rows], norm_type)
    exceeds = np.asarray(norms > max_norm, dtype=bool)
    scale = max_norm / (norms[exceeds] + ar.number(repr(RENORM_EPSILON)))  # the decimal 1e-7
    after[rows[exceeds]] = ar.round(ar.array(weight[rows[exceeds]]) * scale[:, None], weight.dtype)
    return after
