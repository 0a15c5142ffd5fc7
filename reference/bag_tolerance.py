"""The tolerance of bags (spec section 8.9, EMB-BAG-14, since 2.1.0): section 8's model resolved per bag case.

A bag's sum is a summation (8.3) with ``k`` its counted size and ``S`` the largest sum of ``|w_i W[id_i, j]|``
divided by the bag's divisor; a weight adds one rounding per term (the product), mean and sqrtn a division and a
square root (``n = 2`` ulps relative, as a scale of 8.5) and the error of their divisor (a weighted mean's Σw
loses ``(k-1)·u·Σ|w|/|Σw|`` relative to itself: the bag's condition). max is exact (a row copy). The backward is
the scatter-add of the terms ``g[b]·w_i/divisor`` (8.3, ``k`` the most terms meeting in one element, one ulp per
product and division); the gradient of a weight is a dot product of D terms, bounded term by term. Half
precision takes its own ``u`` while ``(k-1)·u ≤ 1/8``, else float32's (EMB-HLF-3).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from embconf.reference.tolerance import EXACT, Rule, accumulation_roundoff, close, summation, unit_roundoff

DIVISION_ULPS = 2.0  # mean and sqrtn: the division and the square root, relative (as a scale, section 8.5)


def _bags(inputs: dict[str, Any]) -> Any:
    """The call resolved into bags by the reference (its checks passed: a case with outputs)."""
    from embconf.reference.bag import check_bags

    return check_bags(
        inputs["weight"],
        inputs["ids"],
        inputs.get("offsets"),
        inputs["mode"],
        per_sample_weights=inputs.get("per_sample_weights"),
        padding_idx=inputs.get("padding_idx"),
        include_last_offset=inputs.get("include_last_offset", False),
        conventions=inputs.get("conventions", ()),
    )


def _terms(bags: Any, weight: np.ndarray, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(positions, rows, |w| as float64, the divisor's magnitude) of bag b's counted positions."""
    start, end = bags.bounds[b]
    positions = np.arange(start, end)[bags.counted[start:end]]
    w = np.ones(positions.size) if bags.weights is None else bags.weights[positions].astype(np.float64)
    if bags.mode == "mean":
        divisor = abs(float(w.sum()))
    elif bags.mode == "sqrtn":
        divisor = float(np.sqrt((w * w).sum()))
    else:
        divisor = 1.0
    return positions, bags.index[positions], w, divisor


def _condition(bags: Any, w: np.ndarray) -> float:
    """Relative error of a bag's divisor, in units of u: (k-1)·Σ|w|/|Σw| (weighted mean), k (sqrtn), else 0."""
    if bags.mode == "sqrtn":
        return float(w.size)
    if bags.mode == "mean" and bags.weights is not None:
        return max(w.size - 1, 0) * float(np.abs(w).sum()) / abs(float(w.sum()))
    return 0.0


def _forward(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    weight = inputs["weight"]
    dtype, bags = weight.dtype.name, _bags(inputs)
    if bags.mode == "max":
        return {"output": EXACT}
    table = np.abs(weight.astype(np.float64))
    largest, worst, magnitude = 0, 0.0, 0.0
    for b in range(len(bags.bounds)):
        _, rows, w, divisor = _terms(bags, weight, b)
        if not rows.size or divisor == 0:
            continue
        spread = float((np.abs(w)[:, None] * table[rows]).sum(axis=0).max()) / divisor
        extra = (1.0 if bags.weights is not None else 0.0) + _condition(bags, w)
        largest, magnitude = max(largest, rows.size), max(magnitude, spread)
        worst = max(worst, (max(rows.size - 1, 0) + extra) * spread)
    ulps = DIVISION_ULPS if bags.mode != "sum" else 0.0
    if worst == 0.0 and not ulps:
        return {"output": summation(largest, magnitude, dtype)}
    u_acc, u = accumulation_roundoff(dtype, largest), unit_roundoff(dtype)
    rule = (
        f"bag {bags.mode}: max over bags of (k-1 + products + divisor condition)*u*S/divisor, k <= {largest}, "
        f"S/divisor <= {magnitude:.6g}, u={u_acc:.3g}; rtol {2 * (1 + ulps):g}u"
    )
    return {"output": close(worst * u_acc, 2 * u * (1 + ulps), rule)}


def _max_routes(bags: Any, weight: np.ndarray, grad: np.ndarray) -> tuple[int, float]:
    """(k, S) of the max backward: how many bags route column j to one row, and the largest sum of their |g|."""
    counts = np.zeros(weight.shape, dtype=np.int64)
    sums = np.zeros(weight.shape)
    for b, (start, end) in enumerate(bags.bounds):
        rows = bags.index[start:end][bags.counted[start:end]]
        if rows.size:
            first = rows[np.argmax(weight[rows] == weight[rows].max(axis=0), axis=0)]
            columns = np.arange(weight.shape[1])
            counts[first, columns] += 1
            sums[first, columns] += np.abs(grad[b].astype(np.float64))
    return int(counts.max(initial=0)), float(sums.max(initial=0.0))


def _backward(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    weight, grad = inputs["weight"], inputs["grad_output"]
    dtype, bags = weight.dtype.name, _bags(inputs)
    if bags.mode == "max":
        k, spread = _max_routes(bags, weight, grad)
        return {"grad_weight": summation(k, spread, dtype), "grad_per_sample_weights": EXACT}
    g = np.abs(grad.astype(np.float64))
    table = np.abs(weight.astype(np.float64))
    counts, sums = np.zeros(weight.shape[0], dtype=np.int64), np.zeros(weight.shape)
    extra, weight_atol = 0.0, 0.0
    for b in range(len(bags.bounds)):
        positions, rows, w, divisor = _terms(bags, weight, b)
        if not rows.size or divisor == 0:
            continue
        np.add.at(counts, rows, 1)
        np.add.at(sums, rows, np.abs(w)[:, None] * g[b][None, :] / divisor)
        condition = _condition(bags, w)
        extra = max(extra, (bags.weights is not None) + (bags.mode != "sum") + condition)
        weight_atol = max(weight_atol, _weight_bound(bags.mode, table[rows], w, g[b], divisor, condition))
    k = int(counts.max(initial=0))
    spread = float(sums.max(initial=0.0))
    u_acc, u = accumulation_roundoff(dtype, max(k, weight.shape[1])), unit_roundoff(dtype)
    if extra:
        rule = f"bag {bags.mode} backward: scatter-add of g*w/divisor, (k-1 + {extra:.3g})*u*S with k={k}, S={spread:.6g}, u={u_acc:.3g}; rtol 2u"
        grad_weight = close((max(k - 1, 0) + extra) * u_acc * spread, 2 * u, rule)
    else:
        grad_weight = summation(k, spread, dtype)
    if bags.weights is None:
        return {"grad_weight": grad_weight, "grad_per_sample_weights": EXACT}
    rule = f"bag {bags.mode} weight gradient: a dot product of D={weight.shape[1]} terms, bounded term by term, u={u_acc:.3g}; rtol 2u"
    return {"grad_weight": grad_weight, "grad_per_sample_weights": close(weight_atol * u_acc, 2 * u, rule)}


def _weight_bound(mode: str, rows: np.ndarray, w: np.ndarray, g: np.ndarray, divisor: float, condition: float) -> float:
    """The largest error of one bag's weight gradients in units of u: (D + k + 4 + condition) times the sum of
    the magnitudes of the terms (sum: Σ|g W_i|; mean: Σ|g W_i|/Σw + Σ|g| T/Σw²; sqrtn: Σ|g W_i|/s + |w_i| Σ|g| T/s³,
    T the sum of |w W| per column)."""
    dots = (rows * g[None, :]).sum(axis=1)
    if mode == "sum":
        return float(rows.shape[1] * dots.max(initial=0.0))
    pooled = float((g * (np.abs(w)[:, None] * rows).sum(axis=0)).sum())  # Σ|g| T, T the sum of |w W| per column
    if mode == "mean":
        terms = dots / divisor + pooled / divisor**2
    else:
        terms = dots / divisor + np.abs(w) * pooled / divisor**3
    return float((rows.shape[1] + w.size + 4 + condition) * terms.max(initial=0.0))


def _sharded(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    return {name: EXACT for name in outputs}


RULES: dict[str, Rule] = {
    "embedding_bag_forward": _forward,
    "embedding_bag_backward": _backward,
    "sharded_table_bytes": _sharded,
}
