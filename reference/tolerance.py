"""The tolerance model (EMB-TOL): each rule of spec section 8, resolved to numbers per case.

The generator stores the result in every fixture; the runner reads those numbers
and never invents its own. A tolerance is ``{"kind": "exact"}`` or
``{"kind": "close", "atol", "rtol"[, "position"]}`` whose bound per element is
atol + rtol*|expected| (+ ulps * spacing(pos) along ``position.axis``), with a
``rule`` string recording how the numbers were derived.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

SINUSOID_ULPS = 4.0  # a correct float32 table stays within ~1.5 ulp(pos); see spec 8.4
SCALE_ULPS = 2.0  # x * sqrt(D): the rounded sqrt and the rounded product


def unit_roundoff(dtype: str) -> float:
    return float(np.finfo(dtype).eps) / 2


EXACT: dict[str, Any] = {"kind": "exact"}


def close(atol: float, rtol: float, rule: str, position: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    tol: dict[str, Any] = {"kind": "close", "atol": float(atol), "rtol": float(rtol)}
    if position is not None:
        tol["position"] = position
    tol["rule"] = rule
    return tol


def summation(summands: int, magnitude: float, dtype: str, scale_ulps: float = 0.0) -> dict[str, Any]:
    """A sum of k terms whose absolute values add up to at most S: (k-1)*u*S absolute, plus the final rounding.

    A single unscaled term is a copy: exact, except that -0.0 + 0.0 may give +0.0.
    """
    u = unit_roundoff(dtype)
    if summands <= 1 and not scale_ulps:
        return close(0.0, 0.0, "a single term: exact up to the sign of zero")
    rtol = 2 * u * (1 + scale_ulps)
    rule = f"summation: (k-1)*u*S with k={summands}, S={magnitude:.6g}, u={u:.3g}; rtol {rtol / u:g}u for the final rounding"
    if scale_ulps:
        rule += f" and {scale_ulps:g} ulps for the sqrt(D) scale"
    return close(max(summands - 1, 0) * u * magnitude, rtol, rule)


def sinusoid(dtype: str, axis: int, offset: int, extra_atol: float = 0.0, rule_prefix: str = "") -> dict[str, Any]:
    """Position-dependent bound: 4 * spacing(pos) in ``dtype`` plus 2u, pos = offset + index on ``axis``."""
    u = unit_roundoff(dtype)
    rule = f"{rule_prefix}sinusoid: 2u + {SINUSOID_ULPS:g} * spacing(pos) in {dtype}, pos = {offset} + index on axis {axis}"
    return close(2 * u + extra_atol, 2 * u, rule, {"axis": axis, "offset": offset, "ulps": SINUSOID_ULPS})


def max_duplicates(ids: np.ndarray) -> int:
    flat = np.asarray(ids).reshape(-1).astype(np.int64)
    return int(np.bincount(flat).max()) if flat.size else 0


def max_row_abs_sum(ids: np.ndarray, grad: np.ndarray, rows: int) -> float:
    """S: the largest sum of |g| that lands on one table row."""
    flat_ids = np.asarray(ids).reshape(-1).astype(np.int64)
    if not flat_ids.size:
        return 0.0
    sums = np.zeros((rows, grad.shape[-1]))
    np.add.at(sums, flat_ids, np.abs(grad.reshape(flat_ids.size, -1).astype(np.float64)))
    return float(sums.max())


def for_case(operation: str, inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    """The tolerance of every output of a case, by the rule of its operation."""
    handler = _RULES[operation]
    return handler(inputs, outputs)


def _lookup_backward(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    w, ids, g = inputs["weight"], inputs["ids"], inputs["grad_output"]
    tol = summation(max_duplicates(ids), max_row_abs_sum(ids, g, w.shape[0]), w.dtype.name)
    return {name: (EXACT if name == "indices" else tol) for name in outputs}


def _positions_forward(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    x, table = inputs["x"], inputs["table"]
    return {"output": summation(2, float(np.abs(x).max(initial=0) + np.abs(table).max(initial=0)), x.dtype.name)}


def _positions_backward(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    g = inputs["grad_output"]
    batch_sum = float(np.abs(g.astype(np.float64)).sum(axis=0).max(initial=0))
    return {"grad_x": EXACT, "grad_table": summation(g.shape[0], batch_sum, inputs["table"].dtype.name)}


def _layer_forward(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    cfg, w = inputs["config"], inputs["token_weight"]
    dtype = w.dtype.name
    scaled = bool(cfg.get("scale_embeddings", False))
    scale_ulps = SCALE_ULPS if scaled else 0.0
    c = float(np.sqrt(cfg["embed_dim"])) if scaled else 1.0
    token_mag = float(np.abs(w.astype(np.float64)).max(initial=0)) * c
    pos_kind = cfg.get("pos_encoding", "learned")
    if pos_kind == "sinusoidal":
        u = unit_roundoff(dtype)
        axis = -2
        return {"output": sinusoid(dtype, axis, int(inputs.get("start_pos", 0)), extra_atol=(2 + 2 * scale_ulps) * u * (token_mag + 1), rule_prefix=f"token part {scale_ulps:g} ulps + sum rounding; ")}
    if pos_kind == "learned":
        pos_mag = float(np.abs(inputs["position_table"]).max(initial=0))
        return {"output": summation(2, token_mag + pos_mag, dtype, scale_ulps)}
    return {"output": summation(1, token_mag, dtype, scale_ulps)}


def _layer_backward(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    cfg, w, tokens, g = inputs["config"], inputs["token_weight"], inputs["tokens"], inputs["grad_output"]
    scaled = bool(cfg.get("scale_embeddings", False))
    c = float(np.sqrt(cfg["embed_dim"])) if scaled else 1.0
    batched_g = g if tokens.ndim == 2 else g[None]
    token_tol = summation(max_duplicates(tokens), c * max_row_abs_sum(tokens, g, w.shape[0]), w.dtype.name, SCALE_ULPS if scaled else 0.0)
    result = {"grad_token_weight": token_tol}
    if outputs.get("grad_position_table") is not None:
        batch_sum = float(np.abs(batched_g.astype(np.float64)).sum(axis=0).max(initial=0))
        result["grad_position_table"] = summation(batched_g.shape[0], batch_sum, w.dtype.name)
    else:
        result["grad_position_table"] = EXACT
    return result


def _sinusoid_table(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    return {"table": sinusoid(inputs.get("dtype", "float32"), 0, 0)}


def _all_exact(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    return {name: EXACT for name in outputs}


def _memory_units(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    u = unit_roundoff("float64")
    units = close(0.0, 4 * u, "a ratio of exact integers in float64: within 4u")
    return {name: (EXACT if name == "bytes" else units) for name in outputs}


_RULES = {
    "embedding_forward": _all_exact,
    "embedding_backward": _lookup_backward,
    "embedding_backward_sparse": _lookup_backward,
    "sinusoidal_table": _sinusoid_table,
    "learned_positions_forward": _positions_forward,
    "learned_positions_backward": _positions_backward,
    "embedding_layer_forward": _layer_forward,
    "embedding_layer_backward": _layer_backward,
    "parameter_count": _all_exact,
    "table_bytes": _memory_units,
    "gradient_bytes": _all_exact,
    "adam_state_bytes": _all_exact,
}
