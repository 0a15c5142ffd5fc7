"""The arithmetic of the bag mistakes (mutants/bags.py): a bag reduction in float64 with one :class:`BagSlip`.

With the default slip it is the spec's (SPEC section 16): bag b holds ids[offsets[b] : offsets[b+1]] (rows of
2-D ids), a position is counted unless its id is padding_idx, sum/mean/sqrtn divide the weighted sum of the
counted rows by 1, the weight sum or the root of the squared weights' sum, max takes each column's largest
counted value, a bag with nothing counted is a zero row; the backward is the exact gradient of that forward,
a max's gradient going to the first counted position holding the maximum. Outputs are rounded once to the
table's dtype. Inputs are assumed checked (the caller asks the reference first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from embconf.adapters.bags import BagCall  # one call's inputs, as the adapters hold them
from embconf.model.bag import BAG_OPERATIONS
from embconf.model.dtypes import round_once, rounded_to

FWD, BWD = BAG_OPERATIONS
F64 = np.float64
DIVISORS = {"mean": "weights", "sqrtn": "squares"}  # the spec's: the weight sum, the root of the squares' sum


@dataclass(frozen=True)
class BagSlip:
    """What a mistake changes; the defaults are the spec's computation."""

    start_shift: int = 0  # bag b starts at offsets[b] + start_shift
    end_shift: int = 0  # and ends at offsets[b+1] + end_shift (clipped to N)
    last_offset_a_bag: bool = False  # include_last_offset ignored: the (B+1)-th offset starts one more bag
    one_bag_2d: bool = False  # 2-D ids read as one bag
    wrap_negative: bool = False  # an id -k reads row V-k
    padding_counted: bool = False  # a mean's or sqrtn's divisor is taken over padding positions too
    divisors: tuple[tuple[str, str], ...] = ()  # (mode, kind): count, sqrt_count, weights or squares
    weights_ignored: bool = False  # every weight taken as 1
    empty: str = ""  # "nan": an empty mean/sqrtn bag is 0/0; "-inf": an empty max bag is the max of nothing
    backward_undivided: bool = False  # a mean's or sqrtn's gradient not divided by the divisor
    padding_gradient: bool = False  # padding positions get a gradient as counted ones do
    max_gradient: str = "first"  # "all" tied positions, the "last" one, or the "mean" gradient to every one
    weight_gradient_as_sum: bool = False  # d out / d w_i taken as g . W[id_i] in every mode
    trailing_empty_dropped: bool = False  # no output row for the bags after the last one holding an id
    empty_refused: bool = False  # equal offsets (an empty bag) refused as invalid_offsets
    accumulate_in_dtype: bool = False  # a bag's sum rounded to the table's dtype after every addition
    repeats_overwritten: bool = False  # the backward assigns each occurrence's gradient: the last one of a row wins
    weight_gradient_missing: bool = False  # the backward returns no gradient for per_sample_weights (None)
    padding_weight_gradient: bool = False  # padding positions get g . W[pad] / divisor as a weight gradient
    last_bag_only: bool = False  # the forward returns the last bag's row alone, (D,): a loop's last value
    boundaries_only: bool = False  # B offsets read as B+1 boundaries: the last bag (offsets[-1] to N) is lost
    unreduced: bool = False  # the forward returns the ids' rows, ids.shape + (D,), without reducing the bags


@dataclass(frozen=True)
class Bag:
    """One bag as the slip reads it: its positions, what it divides by, and its output (float64)."""

    counted: np.ndarray  # positions whose id is not padding
    padded: np.ndarray  # positions whose id is padding
    over: np.ndarray  # positions the divisor is taken over
    divisor: float  # 1 for sum and max
    slope: np.ndarray  # d divisor / d w at each position of ``over``
    row: np.ndarray  # the bag's output, unrounded


def positions(made: BagSlip, ids: np.ndarray, offsets: Any, include_last_offset: bool) -> list[np.ndarray]:
    """Each bag's positions in the flattened ids, as the slip reads them."""
    n = int(np.size(ids))
    if made.boundaries_only and np.ndim(ids) == 1 and not include_last_offset:
        include_last_offset = True  # offsets taken as B+1 boundaries: bag b ends at offsets[b+1], none runs to N
    if np.ndim(ids) == 2:
        rows, width = np.shape(ids)
        if made.one_bag_2d:
            return [np.arange(n)]
        starts = np.arange(rows, dtype=np.int64) * width
        ends = starts + width
    else:
        offs = np.asarray(offsets, dtype=np.int64).reshape(-1)
        if include_last_offset:
            starts, ends = offs[:-1], offs[1:]
        else:
            starts, ends = offs, np.append(offs[1:], n)
    bags = []
    for start, end in zip(starts.tolist(), ends.tolist()):
        first, last = min(start + made.start_shift, n), min(end + made.end_shift, n)
        bags.append(np.arange(first, max(first, last)))
    return bags


def divisor(kind: str, weights: np.ndarray) -> tuple[float, np.ndarray]:
    """(the divisor, its derivative with respect to each weight) of ``kind`` over ``weights``."""
    if kind == "count":
        return float(weights.size), np.zeros(weights.size)
    if kind == "sqrt_count":
        return float(np.sqrt(weights.size)), np.zeros(weights.size)
    if kind == "weights":
        return float(weights.sum()), np.ones(weights.size)
    root = float(np.sqrt((weights * weights).sum()))
    return root, (weights / root if root else np.zeros(weights.size))


@dataclass(frozen=True)
class BagReading:
    """The inputs as the slip reads them: the ids (flat, wrapped if it wraps), the weights, the bags."""

    table: np.ndarray  # float64
    ids: np.ndarray  # flat int64
    weights: np.ndarray  # one per position (1 without weights, or where they are ignored)
    bags: list[Bag]


def read(made: BagSlip, call: BagCall) -> BagReading:
    """The call as the slip reads it: every bag's positions, divisor and output."""
    ids, mode, per_sample_weights, padding_idx = call.ids, call.mode, call.per_sample_weights, call.padding_idx
    table = np.asarray(call.weight).astype(F64)
    vocab, width = table.shape
    flat = np.asarray(ids).reshape(-1).astype(np.int64)
    if made.wrap_negative:
        flat = np.where(flat < 0, flat + vocab, flat)
    weights = (
        np.ones(flat.size)
        if per_sample_weights is None or made.weights_ignored
        else np.asarray(per_sample_weights).reshape(-1).astype(F64)
    )
    pad = None if padding_idx is None else int(padding_idx) % vocab
    kinds = {**DIVISORS, **dict(made.divisors)}
    bags = []
    for where in positions(made, np.asarray(ids), call.offsets, call.include_last_offset):
        is_pad = flat[where] == pad if pad is not None else np.zeros(where.size, dtype=bool)
        counted, padded = where[~is_pad], where[is_pad]
        over = where if made.padding_counted else counted
        rows = table[flat[counted]]
        if mode == "max":
            empty = -np.inf if made.empty == "-inf" else 0.0
            row = rows.max(axis=0) if counted.size else np.full(width, empty)
            bags.append(Bag(counted, padded, over, 1.0, np.zeros(0), row))
            continue
        total = (weights[counted, None] * rows).sum(axis=0)
        if made.accumulate_in_dtype:  # a running sum in the table's dtype, one rounding per addition
            total = np.zeros(width)
            for product in weights[counted, None] * rows:
                total = rounded_to(total + rounded_to(product, _dtype(call)), _dtype(call))
        scale, slope = (1.0, np.zeros(0)) if mode == "sum" else divisor(kinds[mode], weights[over])
        with np.errstate(all="ignore"):
            if counted.size and scale:
                row = total / scale
            elif made.empty == "nan" and not scale:
                row = total / scale  # 0/0
            else:
                row = np.zeros(width)
        bags.append(Bag(counted, padded, over, scale, slope, row))
    return BagReading(table, flat, weights, bags)


def bag_forward(made: BagSlip, call: BagCall) -> np.ndarray:
    """(B, D) in the table's dtype: each bag's output as the slip computes it, rounded once."""
    if made.unreduced:  # the lookup of every id, as an embedding layer returns it
        rows = np.asarray(call.weight).astype(F64)[np.asarray(call.ids).astype(np.int64)]
        return round_once(rows, call.weight.dtype)
    bags = read(made, call).bags
    if made.trailing_empty_dropped:
        while bags and not (bags[-1].counted.size or bags[-1].padded.size):
            bags = bags[:-1]
    out = np.stack([bag.row for bag in bags]) if bags else np.zeros((0, call.weight.shape[1]))
    if made.last_bag_only and len(out):
        out = out[-1]
    return round_once(out, call.weight.dtype)


def bag_backward(made: BagSlip, call: BagCall, grad_output: np.ndarray) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """(grad_weight, grad_per_sample_weights or None) of the slip's forward (or with its wrong gradient)."""
    reading = read(made, call)
    grad = np.zeros(reading.table.shape)
    grad_w = np.zeros(reading.ids.size)
    upstream = np.asarray(grad_output).astype(F64)
    for b, bag in enumerate(reading.bags):
        g = upstream[b]
        if call.mode == "max":
            _route_max(made, reading, bag, g, grad)
            continue
        if made.padding_weight_gradient and bag.padded.size:
            grad_w[bag.padded] = reading.table[reading.ids[bag.padded]] @ g / (bag.divisor or 1.0)
        if not bag.counted.size or not bag.divisor:
            continue  # nothing counted, or a zero divisor: the bag is a constant zero row
        scale = 1.0 if made.backward_undivided else bag.divisor
        getting = np.concatenate([bag.counted, bag.padded]) if made.padding_gradient else bag.counted
        _scatter(made, grad, reading.ids[getting], reading.weights[getting, None] * g / scale)
        dots = reading.table[reading.ids[bag.counted]] @ g
        if made.weight_gradient_as_sum:
            grad_w[bag.counted] = dots
            continue
        grad_w[bag.counted] = dots / bag.divisor
        if bag.slope.size:
            grad_w[bag.over] -= float(g @ bag.row) / bag.divisor * bag.slope
    if made.weights_ignored:
        grad_w[:] = 0.0
    dtype = call.weight.dtype
    none = call.per_sample_weights is None or made.weight_gradient_missing
    weights_grad = None if none else round_once(grad_w.reshape(np.shape(call.ids)), dtype)
    return round_once(grad[: call.weight.shape[0]], dtype), weights_grad


def _dtype(call: BagCall) -> str:
    return np.dtype(call.weight.dtype).name


def _scatter(made: BagSlip, grad: np.ndarray, rows: np.ndarray, values: np.ndarray) -> None:
    """grad[rows] += values, every occurrence added (the spec); or assigned: the last occurrence of a row wins."""
    if made.repeats_overwritten:
        grad[rows] = values
    else:
        np.add.at(grad, rows, values)


def _route_max(made: BagSlip, reading: BagReading, bag: Bag, g: np.ndarray, grad: np.ndarray) -> None:
    """A max's gradient: column j of g to the first counted position holding the maximum in j (the spec), or as
    the slip sends it."""
    if not bag.counted.size:
        return
    rows = reading.ids[bag.counted]
    if made.max_gradient == "mean":
        np.add.at(grad, rows, np.broadcast_to(g / bag.counted.size, (rows.size, g.size)))
        return
    values = reading.table[rows]
    tied = values == values.max(axis=0)
    if made.max_gradient == "all":
        np.add.at(grad, rows, tied * g)
        return
    winner = tied.argmax(axis=0) if made.max_gradient == "first" else rows.size - 1 - tied[::-1].argmax(axis=0)
    if made.repeats_overwritten:
        grad[rows[winner], np.arange(g.size)] = g
        return
    np.add.at(grad, (rows[winner], np.arange(g.size)), g)
