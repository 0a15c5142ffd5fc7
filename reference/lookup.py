"""Token lookup: forward gather, backward scatter-add, id validation (EMB-FWD, EMB-BWD, EMB-IDX)."""

from __future__ import annotations

from typing import Optional

import numpy as np

from embconf.model.dtypes import round_once
from embconf.reference.errors import EmbeddingError
from embconf.reference.ids import distinct
from embconf.reference.options import apply_options, check_flag, check_renorm_args, renormed, resolve_padding_idx


def validate_ids(ids: np.ndarray, vocab_size: int) -> np.ndarray:
    """Return ``ids`` as int64, or raise the error kind the spec names.

    Float containers (TinyTorch stores ids as float32) must hold finite integers
    (EMB-IDX-4, checked first); every id must lie in [0, vocab_size) (EMB-IDX-1/2).
    """
    ids = np.asarray(ids)
    if ids.dtype.kind == "f":
        if not np.all(np.isfinite(ids)) or not np.all(ids == np.floor(ids)):
            raise EmbeddingError("invalid_index", "token ids must be finite integers")
    elif ids.dtype.kind not in "iu":
        raise EmbeddingError("invalid_index", f"token ids must be integers, got dtype {ids.dtype}")
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        bad = ids[(ids < 0) | (ids >= vocab_size)].flat[0]
        raise EmbeddingError("index_out_of_range", f"token id {bad} out of range [0, {vocab_size})")
    return ids.astype(np.int64)


def embedding_forward(
    weight: np.ndarray, ids: np.ndarray, padding_idx: Optional[int] = None, scale_grad_by_freq: bool = False
) -> np.ndarray:
    """Rows of ``weight`` gathered by ``ids``: shape ids.shape + (D,), dtype of weight, bit-exact.

    The options only change the gradient: the padding row is returned as stored (EMB-PAD-1)
    and frequencies scale nothing here (EMB-FRQ-2); they are still checked (EMB-PAD-4).
    """
    resolve_padding_idx(padding_idx, weight.shape[0])
    check_flag("scale_grad_by_freq", scale_grad_by_freq)
    index = validate_ids(ids, weight.shape[0])
    return weight[index]  # fancy indexing copies: a new array, never a view


def embedding_backward(
    weight: np.ndarray,
    ids: np.ndarray,
    grad_output: np.ndarray,
    padding_idx: Optional[int] = None,
    scale_grad_by_freq: bool = False,
) -> np.ndarray:
    """Gradient of the table: every occurrence of an id adds its upstream row (scatter-add).

    Accumulates in float64 and rounds once to the table's dtype, so the result is
    the correctly rounded exact sum; rows of ids not present are exactly zero. With
    the options, each row is divided by its id's count in all of ``ids`` (EMB-FRQ-1)
    and the padding row is exactly zero (EMB-PAD-2).
    """
    padding_row = resolve_padding_idx(padding_idx, weight.shape[0])
    by_freq = check_flag("scale_grad_by_freq", scale_grad_by_freq)
    index = validate_ids(ids, weight.shape[0])
    check_grad_shape(grad_output, index.shape + weight.shape[1:])
    total = np.zeros(weight.shape, dtype=np.float64)
    np.add.at(total, index.reshape(-1), grad_output.reshape(-1, weight.shape[1]).astype(np.float64))
    return round_once(apply_options(total, index, padding_row, by_freq), weight.dtype)


def embedding_forward_max_norm(
    weight: np.ndarray, ids: np.ndarray, max_norm: float, norm_type: float = 2.0
) -> tuple[np.ndarray, np.ndarray]:
    """(output, weight_after): the lookup from the table renormalised before it (EMB-NRM-1..3).

    ``weight`` itself is not modified (EMB-GEN-1): the in-place update a stateful
    layer makes to its own table is reported as ``weight_after``.
    """
    max_norm, norm_type = check_renorm_args(max_norm, norm_type)
    index = validate_ids(ids, weight.shape[0])
    after = renormed(weight, index, max_norm, norm_type)
    return after[index], after


def embedding_backward_sparse(
    weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Row-sparse gradient: sorted unique ids (int64) and their summed rows (EMB-BWD-5)."""
    dense = embedding_backward(weight, ids, grad_output)
    indices = distinct(validate_ids(ids, weight.shape[0]))
    return indices, dense[indices]


def check_grad_shape(grad_output: np.ndarray, expected: tuple[int, ...]) -> None:
    """The upstream gradient must have the forward output's shape (EMB-BWD-1)."""
    if grad_output.shape != expected:
        raise EmbeddingError("shape_mismatch", f"grad_output has shape {grad_output.shape}, expected {expected}")
