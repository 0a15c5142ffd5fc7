"""Bags (spec section 16) as real code computes them, written apart from embconf.reference: plain loops over each
bag's positions, sums accumulated in float32 (float64 for a float64 table, float32 for a half one) in bag order,
the mean's and sqrtn's divisor in that dtype, one rounding to the table's dtype at the end. Section 8.9 says this
conforms; tests/spec/test_bags.py runs it over every bag case.

``forward``/``backward`` take the conventions they follow; the spec's functions follow none
(``tests/impls/bag_float32_safe.py`` declares and follows both).
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Optional

import numpy as np

EMBCONF_FEATURES = [
    "bag-sum",
    "bag-mean",
    "bag-max",
    "bag-sqrtn",
    "bag-2d",
    "bag-weights",
    "bag-weighted-mean",
    "bag-padding",
    "bag-last-offset",
    "bag-sharding",
    "float64",
    "float16",
    "bfloat16",
    "int32_ids",
]
MODES = ("sum", "mean", "max", "sqrtn")
ITEM_BYTES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}


class SpecError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _accumulator(dtype: np.dtype) -> type:
    return np.float64 if dtype == np.float64 else np.float32


def _bags(
    weight, ids, offsets, mode, grad, conventions, per_sample_weights=None, padding_idx=None, include_last_offset=False
) -> list[list[tuple[int, int, float]]]:
    """Each bag's counted (position, row, weight), after the checks in the spec's order."""
    if mode not in MODES:
        raise SpecError("invalid_config", f"mode {mode!r}")
    weights, last = per_sample_weights, include_last_offset
    if not isinstance(last, (bool, np.bool_)):
        raise SpecError("invalid_config", "include_last_offset must be a boolean")
    vocab = weight.shape[0]
    pad = None
    if padding_idx is not None:
        if (
            isinstance(padding_idx, bool)
            or not isinstance(padding_idx, (int, np.integer))
            or not -vocab <= padding_idx < vocab
        ):
            raise SpecError("invalid_config", f"padding_idx {padding_idx!r}")
        pad = int(padding_idx) % vocab
    if weights is not None and mode == "max":
        raise SpecError("invalid_config", "weights with max")
    ids = np.asarray(ids)
    if ids.ndim == 2 and offsets is None:
        starts, n = [r * ids.shape[1] for r in range(ids.shape[0])], ids.size
        ends = [s + ids.shape[1] for s in starts]
    elif ids.ndim == 1 and offsets is not None and np.ndim(offsets) == 1:
        starts, n, ends = [int(v) for v in offsets], ids.size, None
    else:
        raise SpecError(
            "shape_mismatch", f"ids {ids.shape} with offsets {None if offsets is None else np.shape(offsets)}"
        )
    count = len(starts) - (1 if last and ends is None else 0)
    if weights is not None and np.shape(weights) != ids.shape:
        raise SpecError("shape_mismatch", "weights of another shape than ids")
    if grad is not None and np.shape(grad) != (max(count, 0), weight.shape[1]):
        raise SpecError("shape_mismatch", "grad_output is not (B, D)")
    if ends is None:
        if last and (not starts or starts[-1] != n):
            raise SpecError("invalid_offsets", "the last offset is not N")
        if starts and (starts[0] != 0 or any(b < a for a, b in zip(starts, starts[1:])) or starts[-1] > n):
            raise SpecError("invalid_offsets", f"offsets {starts}")
        ends = starts[1:] if last else starts[1:] + [n]
        starts = starts[:count]
    flat = [int(i) for i in ids.reshape(-1)]
    for i in flat:
        if i >= vocab or (i < 0 and "drop_negative_ids" not in conventions):
            raise SpecError("index_out_of_range", f"id {i}")
    w = [1.0] * len(flat) if weights is None else [float(x) for x in np.asarray(weights, np.float64).reshape(-1)]
    bags = []
    for start, end in zip(starts, ends):
        keep = [(p, flat[p], w[p]) for p in range(start, end) if flat[p] >= 0 and flat[p] != pad]
        if weights is not None and "prune_nonpositive_weights" in conventions:
            keep = [(p, r, x) for p, r, x in keep if x > 0]
        bags.append(keep)
    return bags


def _pool(weight, bag, mode, acc):
    """(sum of w W, divisor) of one bag in the accumulator's dtype, None for a zero divisor."""
    total = np.zeros(weight.shape[1], acc)
    for _, row, x in bag:
        total += acc(x) * weight[row].astype(acc)
    if mode == "sum":
        divisor = acc(1)
    elif mode == "mean":
        divisor = acc(sum((acc(x) for _, _, x in bag), acc(0)))
    else:
        divisor = acc(math.sqrt(sum((acc(x) * acc(x) for _, _, x in bag), acc(0))))
    return total, (divisor if bag and divisor != 0 else None)


def _first_max(weight, bag, column):
    best = bag[0][1]
    for _, row, _ in bag[1:]:
        if weight[row, column] > weight[best, column]:
            best = row  # strictly greater: a tie keeps the first
    return best


def forward(weight, ids, offsets, mode, conventions: Iterable[str] = (), **options):
    bags = _bags(weight, ids, offsets, mode, None, set(conventions), **options)
    acc = _accumulator(weight.dtype)
    out = np.zeros((len(bags), weight.shape[1]), acc)
    for b, bag in enumerate(bags):
        if mode == "max":
            for j in range(weight.shape[1]):
                out[b, j] = weight[_first_max(weight, bag, j), j] if bag else 0
            continue
        total, divisor = _pool(weight, bag, mode, acc)
        if divisor is not None:
            out[b] = total / divisor
    return out.astype(weight.dtype)


def backward(weight, ids, offsets, mode, grad_output, conventions: Iterable[str] = (), **options):
    bags = _bags(weight, ids, offsets, mode, grad_output, set(conventions), **options)
    acc = _accumulator(weight.dtype)
    grad = np.zeros(weight.shape, acc)
    grad_w: Optional[np.ndarray] = None if options.get("per_sample_weights") is None else np.zeros(np.size(ids), acc)
    for b, bag in enumerate(bags):
        g = grad_output[b].astype(acc)
        if mode == "max":
            for j in range(weight.shape[1]):
                if bag:
                    grad[_first_max(weight, bag, j), j] += g[j]
            continue
        total, divisor = _pool(weight, bag, mode, acc)
        if divisor is None:
            continue
        for position, row, x in bag:
            grad[row] += g * (acc(x) / divisor)
            if grad_w is not None:
                grad_w[position] = _weight_gradient(mode, weight[row].astype(acc), acc(x), g, total, divisor)
    weights_out: Any = None if grad_w is None else grad_w.reshape(np.shape(ids)).astype(weight.dtype)
    return grad.astype(weight.dtype), weights_out


def _weight_gradient(mode, row, x, g, total, divisor):
    dot = (g * row).sum()
    if mode == "sum":
        return dot
    if mode == "mean":
        return (dot - (g * (total / divisor)).sum()) / divisor
    return dot / divisor - x * (g * total).sum() / (divisor * divisor * divisor)


def embedding_bag_forward(weight, ids, offsets, mode, **options):
    return forward(weight, ids, offsets, mode, **options)


def embedding_bag_backward(weight, ids, offsets, mode, grad_output, **options):
    return backward(weight, ids, offsets, mode, grad_output, **options)


def sharded_table_bytes(vocab_size, embed_dim, dtype, shards, sharding):
    if dtype not in ITEM_BYTES or sharding not in ("row_wise", "column_wise") or shards < 1:
        raise SpecError("invalid_config", f"dtype {dtype!r}, sharding {sharding!r}, shards {shards!r}")
    split, other = (vocab_size, embed_dim) if sharding == "row_wise" else (embed_dim, vocab_size)
    block = (split + shards - 1) // shards
    return [min(block, max(0, split - k * block)) * other * ITEM_BYTES[dtype] for k in range(shards)]
