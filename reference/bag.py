"""Bags: reduced lookups (spec section 16, EMB-BAG-1..15, since 2.1.0): ``embedding_bag`` of PyTorch, TensorFlow's
``embedding_lookup_sparse`` and TorchRec's pooled tables, forward and backward, and a sharded table's memory.

Bag b holds ids[offsets[b] : offsets[b+1]] (the last bag runs to N; with ``include_last_offset`` the last offset is
the end); 2-D ids (B, N) without offsets are B bags of N. A position is *counted* unless its id is ``padding_idx``;
w_i is its per-sample weight, or 1. sum: Σ w_i W[id_i]; mean: that / Σ w_i; sqrtn: that / sqrt(Σ w_i²); max: the
column-wise max of the counted rows. A bag with no counted position, or whose divisor is zero, is a zero row.
Every element is the exact value rounded once to the table's dtype (formulas over :mod:`.arithmetic`).

The backward routes g[b] * w_i / divisor to each counted occurrence (max: element j to the first counted position
holding the bag's max in column j); the gradient of a weight is d(g[b] . out[b]) / d w_i. The declared conventions
(EMB-BAG-V1, V2) are the ``conventions`` argument: ``drop_negative_ids`` and ``prune_nonpositive_weights``
(TensorFlow's ``safe_embedding_lookup_sparse``) make such positions not counted instead of refused or used.

Checks, in order (EMB-BAG-13): mode, flags and padding_idx (invalid_config), shapes and the upstream gradient's
(shape_mismatch), offsets (invalid_offsets), ids (index_out_of_range).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional

import numpy as np

from embconf.reference.arithmetic import active
from embconf.reference.errors import EmbeddingError
from embconf.reference.lookup import validate_ids
from embconf.reference.memory import element_size
from embconf.reference.options import check_flag, resolve_padding_idx

MODES = ("sum", "mean", "max", "sqrtn")
SHARDINGS = ("row_wise", "column_wise")
CONVENTIONS = ("drop_negative_ids", "prune_nonpositive_weights")


@dataclass(frozen=True)
class Bags:
    """The checked call: the ids as int64 (N,), each bag's [start, end), which positions count, the weights."""

    mode: str
    index: np.ndarray  # (N,) int64, flattened (a dropped id is -1 and never read)
    bounds: tuple[tuple[int, int], ...]  # per bag: [start, end) into index
    counted: np.ndarray  # (N,) bool
    weights: Optional[np.ndarray]  # (N,) as given, or None
    ids_shape: tuple[int, ...]


def _check_conventions(conventions: Iterable[str]) -> frozenset[str]:
    chosen = frozenset(conventions)
    unknown = sorted(chosen - set(CONVENTIONS))
    if unknown:
        raise EmbeddingError("invalid_config", f"unknown bag convention(s) {unknown}")
    return chosen


def bag_count(ids: np.ndarray, offsets: Any, include_last_offset: bool) -> int:
    """B, after the shape checks of EMB-BAG-1 and 13: 1-D ids with 1-D offsets, or 2-D ids without."""
    if ids.ndim == 2:
        if offsets is not None:
            raise EmbeddingError("shape_mismatch", f"2-D ids {ids.shape} are fixed-length bags: offsets must be null")
        return int(ids.shape[0])
    if ids.ndim != 1:
        raise EmbeddingError("shape_mismatch", f"ids must be 1-D with offsets or 2-D, got shape {ids.shape}")
    if offsets is None:
        raise EmbeddingError("shape_mismatch", "1-D ids need offsets")
    if np.ndim(offsets) != 1:
        raise EmbeddingError("shape_mismatch", f"offsets must be 1-D, got shape {np.shape(offsets)}")
    return max(len(offsets) - int(include_last_offset), 0)


def bag_ranges(ids: np.ndarray, offsets: Any, include_last_offset: bool) -> tuple[tuple[int, int], ...]:
    """Each bag's [start, end) (EMB-BAG-1, 8): the rows of 2-D ids, else from ``offsets`` (or invalid_offsets)."""
    if ids.ndim == 2:
        rows, width = ids.shape
        return tuple((b * width, (b + 1) * width) for b in range(rows))
    size, offsets = int(ids.shape[0]), np.asarray(offsets)
    if offsets.size and offsets.dtype.kind not in "iu":
        raise EmbeddingError("invalid_offsets", f"offsets must be integers, got dtype {offsets.dtype}")
    points = [int(v) for v in offsets]
    if not points and not include_last_offset:
        return ()  # no bag (B = 0)
    if not points or points[0] != 0:
        raise EmbeddingError("invalid_offsets", f"offsets must start at 0, got {points[:4]}")
    if any(b < a for a, b in zip(points, points[1:])):
        raise EmbeddingError("invalid_offsets", f"offsets must not decrease, got {points}")
    if points[-1] > size:
        raise EmbeddingError("invalid_offsets", f"an offset {points[-1]} exceeds the number of ids {size}")
    if not include_last_offset:
        return tuple(zip(points, points[1:] + [size]))
    if points[-1] != size:
        raise EmbeddingError(
            "invalid_offsets",
            f"with include_last_offset the last offset must be the number of ids {size}, got {points[-1]}",
        )
    return tuple(zip(points[:-1], points[1:]))


def check_bags(
    weight: np.ndarray,
    ids: Any,
    offsets: Any,
    mode: Any,
    per_sample_weights: Any = None,
    padding_idx: Any = None,
    include_last_offset: Any = False,
    conventions: Iterable[str] = (),
    grad_output: Any = None,
) -> Bags:
    """The call checked (EMB-BAG-1, 7, 8, 9, 13) and resolved into bags; the first error of the order
    invalid_config, shape_mismatch, invalid_offsets, index_out_of_range (``grad_output``: a backward's, checked)."""
    chosen = _check_conventions(conventions)
    if not isinstance(mode, str) or mode not in MODES:
        raise EmbeddingError("invalid_config", f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    last = check_flag("include_last_offset", include_last_offset)
    vocab = weight.shape[0]
    padding_row = resolve_padding_idx(padding_idx, vocab)
    if per_sample_weights is not None and mode == "max":
        raise EmbeddingError("invalid_config", "per_sample_weights are not defined for mode max")
    ids = np.asarray(ids)
    count = bag_count(ids, offsets, last)
    weights = None
    if per_sample_weights is not None:
        weights = np.asarray(per_sample_weights)
        if weights.shape != ids.shape:
            raise EmbeddingError("shape_mismatch", f"per_sample_weights has shape {weights.shape}, the ids {ids.shape}")
        weights = weights.reshape(-1)
    if grad_output is not None and np.shape(grad_output) != (count, weight.shape[1]):
        expected = (count, weight.shape[1])
        raise EmbeddingError("shape_mismatch", f"grad_output has shape {np.shape(grad_output)}, expected {expected}")
    bounds = bag_ranges(ids, offsets, last)
    flat = ids.reshape(-1)
    dropped = np.zeros(flat.shape, dtype=bool)
    if "drop_negative_ids" in chosen and flat.dtype.kind in "iu":
        dropped = flat < 0
    index = validate_ids(np.where(dropped, 0, flat), vocab)
    counted = ~dropped
    if padding_row is not None:
        counted &= index != padding_row
    if weights is not None and "prune_nonpositive_weights" in chosen:
        counted &= weights > 0
    return Bags(mode, np.where(dropped, -1, index), bounds, counted, weights, ids.shape)


def _counted(bags: Bags, b: int) -> np.ndarray:
    """The positions of bag b that count (EMB-BAG-7: not a padding id, nor one a declared convention drops)."""
    start, end = bags.bounds[b]
    return np.arange(start, end)[bags.counted[start:end]]


def _weights(bags: Bags, positions: np.ndarray) -> np.ndarray:
    """The weights of ``positions`` (1 without per-sample weights) in the active arithmetic."""
    given = np.ones(positions.size) if bags.weights is None else bags.weights[positions]
    return active().array(given)


def _divisor(mode: str, w: np.ndarray) -> Any:
    """What a bag's weighted sum is divided by: 1 (sum), Σw (mean), sqrt(Σw²) (sqrtn); zero for no counted position."""
    ar = active()
    if not w.size:
        return ar.number(0)
    if mode == "sum":
        return ar.number(1)
    return w.sum() if mode == "mean" else ar.sqrt((w * w).sum())


def _pooled(mode: str, rows: np.ndarray, w: np.ndarray, table: np.ndarray) -> tuple[Any, np.ndarray]:
    """(divisor, S/divisor) of one bag's counted ``rows`` and weights in the active arithmetic (a zero row where
    the divisor is zero)."""
    divisor = _divisor(mode, w)
    if divisor == 0:
        return divisor, active().zeros((table.shape[1],))
    return divisor, (w[:, None] * table[rows]).sum(axis=0) / divisor


def embedding_bag_forward(
    weight: np.ndarray,
    ids: np.ndarray,
    offsets: Optional[np.ndarray],
    mode: str,
    per_sample_weights: Optional[np.ndarray] = None,
    padding_idx: Optional[int] = None,
    include_last_offset: bool = False,
    conventions: Iterable[str] = (),
) -> np.ndarray:
    """(B, D) in the table's dtype: each bag reduced by ``mode`` (EMB-BAG-1..9, 14), rounded once."""
    bags = check_bags(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, conventions)
    count, dim = len(bags.bounds), weight.shape[1]
    if bags.mode == "max":
        out = np.zeros((count, dim), dtype=weight.dtype)
        for b in range(count):
            rows = bags.index[_counted(bags, b)]
            if rows.size:
                out[b] = weight[rows].max(axis=0)  # a copy of stored values: no rounding
        return out
    ar = active()
    table = ar.array(weight)
    exact = ar.zeros((count, dim))
    for b in range(count):
        positions = _counted(bags, b)
        exact[b] = _pooled(bags.mode, bags.index[positions], _weights(bags, positions), table)[1]
    return ar.round(exact, weight.dtype)


def _max_backward(bags: Bags, weight: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """EMB-BAG-11: element j of g[b] to the first counted position of bag b holding its max in column j."""
    ar = active()
    total = ar.zeros(weight.shape)
    for b in range(len(bags.bounds)):
        rows = bags.index[_counted(bags, b)]
        if not rows.size:
            continue
        first = np.argmax(weight[rows] == weight[rows].max(axis=0), axis=0)  # argmax: the first True
        for j, k in enumerate(first):
            total[rows[k], j] = total[rows[k], j] + grad[b, j]
    return total


def embedding_bag_backward(
    weight: np.ndarray,
    ids: np.ndarray,
    offsets: Optional[np.ndarray],
    mode: str,
    grad_output: np.ndarray,
    per_sample_weights: Optional[np.ndarray] = None,
    padding_idx: Optional[int] = None,
    include_last_offset: bool = False,
    conventions: Iterable[str] = (),
) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """(grad_weight (V, D), grad_per_sample_weights (ids' shape) or None) (EMB-BAG-10..12), each rounded once."""
    bags = check_bags(
        weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, conventions, grad_output
    )
    ar = active()
    grad = ar.array(grad_output)
    if bags.mode == "max":
        return ar.round(_max_backward(bags, weight, grad), weight.dtype), None
    table = ar.array(weight)
    total = ar.zeros(weight.shape)
    grad_w = ar.zeros((bags.index.size,)) if bags.weights is not None else None
    for b in range(len(bags.bounds)):
        positions = _counted(bags, b)
        rows, w = bags.index[positions], _weights(bags, positions)
        divisor, pooled = _pooled(bags.mode, rows, w, table)
        if divisor == 0:
            continue  # nothing counted, or a zero divisor: the bag is a constant zero row
        for k, row in enumerate(rows):
            total[row] = total[row] + grad[b] * (w[k] / divisor)
        if grad_w is not None:
            grad_w[positions] = _weight_gradients(bags.mode, table[rows], w, grad[b], pooled, divisor)
    grad_weights = None if grad_w is None else ar.round(grad_w, weight.dtype).reshape(bags.ids_shape)
    return ar.round(total, weight.dtype), grad_weights


def _weight_gradients(
    mode: str, rows: np.ndarray, w: np.ndarray, g: np.ndarray, pooled: np.ndarray, divisor: Any
) -> np.ndarray:
    """EMB-BAG-12: d(g . out) / d w_i of one bag's counted positions. sum: g.W_i; mean: g.(W_i - out)/Σw;
    sqrtn: g.W_i/s - w_i (g.S)/s³ with S = Σ w W = out * s."""
    dots = (rows * g[None, :]).sum(axis=1)
    if mode == "sum":
        return dots
    if mode == "mean":
        return (dots - (pooled * g).sum()) / divisor
    return dots / divisor - w * (pooled * g).sum() / (divisor * divisor)


def sharded_table_bytes(vocab_size: int, embed_dim: int, dtype: str, shards: int, sharding: str) -> np.ndarray:
    """EMB-BAG-15: the bytes each of ``shards`` shards holds (int64 (S,)). row_wise: blocks of ceil(V/S) rows,
    shard k holds clamp(V - k*block, 0, block) rows of D columns; column_wise the same over D's columns."""
    size = element_size(dtype)
    for name, value in (("vocab_size", vocab_size), ("embed_dim", embed_dim), ("shards", shards)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
            raise EmbeddingError("invalid_config", f"{name} must be an integer >= 1, got {value!r}")
    if sharding not in SHARDINGS:
        raise EmbeddingError("invalid_config", f"sharding must be one of {', '.join(SHARDINGS)}, got {sharding!r}")
    split, other = (int(vocab_size), int(embed_dim)) if sharding == "row_wise" else (int(embed_dim), int(vocab_size))
    block = -(-split // int(shards))
    held = [min(max(split - k * block, 0), block) for k in range(int(shards))]
    return np.array([count * other * size for count in held], dtype=np.int64)
