"""A correct bag lookup (spec section 16) in small steps, shared by the corpus's bag modules so that each
overrides only the step its source got wrong: the checks in the spec's order (:func:`check_call`, with the
offsets read by :func:`bag_bounds`), each bag's counted positions, the pooled rows (:func:`pool`), the gradient
of the table and of the weights (:func:`gradients`), both as a module's two functions (:func:`functions`), and a
sharded table's bytes (:func:`shard_bytes`).

Written for this corpus, sums in float64 rounded once; it imports nothing from embconf.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np
from _spec import SpecError

MODES = ("sum", "mean", "max", "sqrtn")
FEATURES = ["bag-sum", "bag-mean", "bag-max", "bag-sqrtn", "bag-weights", "bag-weighted-mean", "bag-padding"]
FEATURES += ["bag-2d", "bag-last-offset"]  # a module's EMBCONF_FEATURES: every bag feature but sharding
ITEM_BYTES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}


@dataclass
class Call:
    """A checked call: each bag's [start, end), the flat ids, which positions count, the weights (ones if none)."""

    mode: str
    bounds: list[tuple[int, int]]
    flat: np.ndarray
    counted: np.ndarray
    w: np.ndarray
    weighted: bool
    shape: tuple[int, ...]

    def positions(self, b: int) -> np.ndarray:
        start, end = self.bounds[b]
        return start + np.flatnonzero(self.counted[start:end])


def resolve_padding(padding_idx: Any, vocab: int) -> Optional[int]:
    if padding_idx is None:
        return None
    if isinstance(padding_idx, bool) or not isinstance(padding_idx, (int, np.integer)):
        raise SpecError("invalid_config", f"padding_idx {padding_idx!r}")
    if not -vocab <= padding_idx < vocab:
        raise SpecError("invalid_config", f"padding_idx {padding_idx} outside [-{vocab}, {vocab})")
    return int(padding_idx) % vocab


def bag_count(ids: np.ndarray, offsets: Any, last: bool) -> int:
    """B after the shape checks: 1-D ids with 1-D offsets, or 2-D ids without offsets."""
    if ids.ndim == 2 and offsets is None:
        return int(ids.shape[0])
    if ids.ndim != 1 or offsets is None or np.ndim(offsets) != 1:
        raise SpecError(
            "shape_mismatch", f"ids {ids.shape} with offsets {None if offsets is None else np.shape(offsets)}"
        )
    return max(len(offsets) - int(last), 0)


def bag_bounds(ids: np.ndarray, offsets: Any, last: bool) -> list[tuple[int, int]]:
    """Each bag's [start, end): the rows of 2-D ids, else the offsets (checked: from 0, never decreasing, within N,
    and with ``last`` ending at N)."""
    if ids.ndim == 2:
        width = ids.shape[1]
        return [(b * width, (b + 1) * width) for b in range(ids.shape[0])]
    starts, n = [int(v) for v in offsets], ids.size
    if not starts and not last:
        return []
    if not starts or starts[0] != 0 or any(b < a for a, b in zip(starts, starts[1:])) or starts[-1] > n:
        raise SpecError("invalid_offsets", f"offsets {starts} for {n} ids")
    if last:
        if starts[-1] != n:
            raise SpecError("invalid_offsets", f"the last offset {starts[-1]} is not {n}")
        return list(zip(starts[:-1], starts[1:]))
    return list(zip(starts, starts[1:] + [n]))


def check_ids(flat: np.ndarray, vocab: int) -> np.ndarray:
    if flat.size and (flat.min() < 0 or flat.max() >= vocab):
        raise SpecError("index_out_of_range", f"an id lies outside [0, {vocab})")
    return flat.astype(np.int64)


def check_call(
    weight: np.ndarray,
    ids: Any,
    offsets: Any,
    mode: Any,
    per_sample_weights: Any = None,
    padding_idx: Any = None,
    include_last_offset: Any = False,
    grad_output: Any = None,
    bounds_of: Callable[[np.ndarray, Any, bool], list[tuple[int, int]]] = bag_bounds,
    padding_of: Callable[[Any, int], Optional[int]] = resolve_padding,
) -> Call:
    """The call checked in the spec's order (invalid_config, shape_mismatch, invalid_offsets, index_out_of_range)."""
    if not isinstance(mode, str) or mode not in MODES:
        raise SpecError("invalid_config", f"mode {mode!r}")
    if not isinstance(include_last_offset, (bool, np.bool_)):
        raise SpecError("invalid_config", f"include_last_offset {include_last_offset!r}")
    pad = padding_of(padding_idx, weight.shape[0])
    if per_sample_weights is not None and mode == "max":
        raise SpecError("invalid_config", "per_sample_weights with mode max")
    ids = np.asarray(ids)
    count = bag_count(ids, offsets, bool(include_last_offset))
    if per_sample_weights is not None and np.shape(per_sample_weights) != ids.shape:
        raise SpecError("shape_mismatch", "per_sample_weights of another shape than ids")
    if grad_output is not None and np.shape(grad_output) != (count, weight.shape[1]):
        raise SpecError("shape_mismatch", f"grad_output {np.shape(grad_output)}, expected {(count, weight.shape[1])}")
    bounds = bounds_of(ids, offsets, bool(include_last_offset))
    flat = check_ids(ids.reshape(-1), weight.shape[0])
    counted = flat != pad if pad is not None else np.ones(flat.shape, dtype=bool)
    weighted = per_sample_weights is not None
    w = np.asarray(per_sample_weights, np.float64).reshape(-1) if weighted else np.ones(flat.shape)
    return Call(mode, bounds, flat, counted, w, weighted, ids.shape)


def divisor(mode: str, w: np.ndarray) -> float:
    """What a bag's weighted sum is divided by (0 when nothing is counted)."""
    if not w.size:
        return 0.0
    return {"sum": 1.0, "mean": float(w.sum()), "sqrtn": float(np.sqrt((w * w).sum()))}.get(mode, 1.0)


def pool(call: Call, weight: np.ndarray) -> np.ndarray:
    """(B, D) float64: each bag reduced by its mode; a bag with nothing counted or a zero divisor is zeros."""
    table = weight.astype(np.float64)
    out = np.zeros((len(call.bounds), weight.shape[1]))
    for b in range(len(call.bounds)):
        p = call.positions(b)
        if call.mode == "max":
            out[b] = table[call.flat[p]].max(axis=0) if p.size else 0.0
            continue
        d = divisor(call.mode, call.w[p])
        if d != 0:
            out[b] = call.w[p] @ table[call.flat[p]] / d
    return out


def first_max(call: Call, weight: np.ndarray, b: int) -> np.ndarray:
    """Per column, the first counted position of bag b holding its max."""
    p = call.positions(b)
    rows = weight[call.flat[p]]
    return p[np.argmax(rows == rows.max(axis=0), axis=0)]


def gradients(call: Call, weight: np.ndarray, grad_output: np.ndarray) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """(grad_weight, grad_per_sample_weights or None), float64."""
    table, g = weight.astype(np.float64), np.asarray(grad_output, np.float64)
    out = pool(call, weight)
    grad = np.zeros(weight.shape)
    grad_w = np.zeros(call.flat.shape)
    for b in range(len(call.bounds)):
        p = call.positions(b)
        if not p.size:
            continue
        if call.mode == "max":
            winners = first_max(call, weight, b)
            np.add.at(grad, (call.flat[winners], np.arange(weight.shape[1])), g[b])
            continue
        d = divisor(call.mode, call.w[p])
        if d == 0:
            continue
        np.add.at(grad, call.flat[p], (call.w[p] / d)[:, None] * g[b])
        dots = table[call.flat[p]] @ g[b]
        if call.mode == "sum":
            grad_w[p] = dots
        elif call.mode == "mean":
            grad_w[p] = (dots - out[b] @ g[b]) / d
        else:
            grad_w[p] = dots / d - call.w[p] * (out[b] @ g[b]) / (d * d)
    return grad, (grad_w.reshape(call.shape) if call.weighted else None)


def functions(call_of: Callable[..., Call]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """(embedding_bag_forward, embedding_bag_backward) pooling and differentiating the calls ``call_of`` makes, as
    ``call_of(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output)``
    (:func:`check_call` itself, or a module's reading of the call)."""

    def embedding_bag_forward(
        weight, ids, offsets, mode, per_sample_weights=None, padding_idx=None, include_last_offset=False
    ):
        call = call_of(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, None)
        return pool(call, weight).astype(weight.dtype)

    def embedding_bag_backward(
        weight, ids, offsets, mode, grad_output, per_sample_weights=None, padding_idx=None, include_last_offset=False
    ):
        call = call_of(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output)
        grad, grad_w = gradients(call, weight, grad_output)
        return grad.astype(weight.dtype), None if grad_w is None else grad_w.astype(weight.dtype)

    return embedding_bag_forward, embedding_bag_backward


def shard_bytes(vocab_size: int, embed_dim: int, dtype: str, shards: int, sharding: str, sizes: Callable) -> np.ndarray:
    """Each shard's bytes when the sharded dimension is split by ``sizes(total, shards)``, after the checks."""
    if dtype not in ITEM_BYTES or sharding not in ("row_wise", "column_wise"):
        raise SpecError("invalid_config", f"dtype {dtype!r}, sharding {sharding!r}")
    if isinstance(shards, bool) or not isinstance(shards, (int, np.integer)) or shards < 1:
        raise SpecError("invalid_config", f"shards {shards!r}")
    split, other = (vocab_size, embed_dim) if sharding == "row_wise" else (embed_dim, vocab_size)
    return np.array([n * other * ITEM_BYTES[dtype] for n in sizes(int(split), int(shards))], dtype=np.int64)


def ceil_blocks(total: int, shards: int) -> list[int]:
    block = -(-total // shards)
    return [min(block, max(0, total - k * block)) for k in range(shards)]
