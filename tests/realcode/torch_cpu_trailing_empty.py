"""An EmbeddingBag with PyTorch CPU's reading of a terminal offset short of N and the older releases' empty bags.

Inspired by: pytorch/pytorch #191965 ("embedding_bag(include_last_offset=True): sum, mean and max implement three
different semantics on CPU": with a terminal offset < N the trailing ids are left out of a sum, counted in a mean's
divisor but not its sum, and included in a max; reproduced with torch 2.13.0+cpu: W = [[1,1],[5,5],[9,9]], ids
[0, 1, 2], offsets [0, 2] give sum 6, mean 2, max 9, and this module gives the same); pytorch/pytorch PR #21400
(before it, a mean over an empty bag was NaN: the sum divided by a zero bag size); and pytorch/pytorch #4169 (an
empty bag gave -inf in the output: a max started from -inf over nothing, as ``segment_max`` of an empty segment).
"""

import numpy as np
from _bag import FEATURES, bag_bounds, check_call, gradients

EMBCONF_FEATURES = FEATURES

MISTAKES = [
    {
        "phrase": ["terminal offset", "last offset", "trailing"],
        "mutants": [],
        "claims": ["symptom:accepts:embedding_bag_forward:invalid_offsets"],
    },  # include_last_offset with a last offset < N accepted: CPU's three semantics for the trailing ids
    {
        "phrase": ["NaN", "0/0", "unguarded"],
        "mutants": ["bag.empty_bag_nan"],
    },  # mean and sqrtn divide unguarded: an empty bag (or only padding) is NaN
    {
        "phrase": ["-inf", "max of nothing"],
        "mutants": ["bag.empty_max_minus_inf"],
    },  # max of an empty bag (or only padding) is -inf
]


def _bounds(ids, offsets, last):
    """The spec's bounds, except that a terminal offset short of N is accepted (the trailing ids are read below)."""
    if ids.ndim == 1 and last and len(offsets) and 0 < int(offsets[-1]) < ids.size:
        return bag_bounds(ids[: int(offsets[-1])], offsets, last)
    return bag_bounds(ids, offsets, last)


def _pool(call, weight, trailing):
    """(B, D) float64; ``trailing``: the positions after the terminal offset (counted in mean, read by max)."""
    table, out = weight.astype(np.float64), np.zeros((len(call.bounds), weight.shape[1]))
    for b in range(len(call.bounds)):
        p = call.positions(b)
        last = b == len(call.bounds) - 1
        if call.mode == "max":
            p = np.concatenate([p, trailing]) if last else p
            out[b] = table[call.flat[p]].max(axis=0) if p.size else -np.inf
            continue
        total = call.w[p] @ table[call.flat[p]]
        with np.errstate(divide="ignore", invalid="ignore"):
            if call.mode == "mean":
                out[b] = total / (call.w[p].sum() + (trailing.size if last else 0))
            elif call.mode == "sqrtn":
                out[b] = total / np.sqrt((call.w[p] ** 2).sum())
            else:
                out[b] = total
    return out


def _call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output=None):
    call = check_call(
        weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output, _bounds
    )
    end = call.bounds[-1][1] if call.bounds else 0
    return call, np.arange(end, np.size(ids)) if np.ndim(ids) == 1 else np.arange(0)


def embedding_bag_forward(
    weight, ids, offsets, mode, per_sample_weights=None, padding_idx=None, include_last_offset=False
):
    call, trailing = _call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset)
    return _pool(call, weight, trailing).astype(weight.dtype)


def embedding_bag_backward(
    weight, ids, offsets, mode, grad_output, per_sample_weights=None, padding_idx=None, include_last_offset=False
):
    call, _ = _call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output)
    grad, grad_w = gradients(call, weight, grad_output)
    return grad.astype(weight.dtype), None if grad_w is None else grad_w.astype(weight.dtype)
