"""The tolerance of quantized tables (spec section 8.10, since 2.3.0): bytes and sizes are exact integers; a Q8_0 or
Q4_0 element ``d * q`` is exact in float32; a row-wise or affine element ``q * scale + bias`` may be computed with the
product rounded and then the sum (two roundings) or fused (one), so ``atol = u * P`` (``P`` the largest ``|q *
scale|``) and ``rtol = 2u``; a bag adds section 8.3's summation over its terms."""

from __future__ import annotations

from typing import Any

import numpy as np

from embconf.model.quantized import parse_format
from embconf.reference.quantized_codec import as_bytes, split_rows
from embconf.reference.tolerance import EXACT, Rule, close, unit_roundoff
from embconf.reference.tolerance import _all_exact as all_exact


def _parts(inputs: dict[str, Any]) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
    """(the format, and q, scale, bias of every row of the table), (R, D) each, for a case with outputs."""
    fmt = parse_format(inputs["format"])
    assert fmt is not None
    q, scale, bias = split_rows(as_bytes(inputs["qweight"]), fmt, int(inputs["embed_dim"]))
    return fmt, q.astype(np.float64), scale, bias


def _finite_max(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(finite.max()) if finite.size else 0.0


def _lookup(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    fmt, q, scale, _ = _parts(inputs)
    if fmt.kind in ("q8_0", "q4_0"):
        return {"output": EXACT}
    u = unit_roundoff(inputs.get("out_dtype", "float32"))
    ids = np.asarray(inputs["ids"]).reshape(-1)
    product = _finite_max(np.abs(q[ids] * scale[ids])) if ids.size else 0.0
    rule = f"q*scale+bias rounded twice or fused: u*P with P={product:.6g}, rtol 2u"
    return {"output": close(u * product, 2 * u, rule)}


def _bag(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    _, q, scale, bias = _parts(inputs)
    u = unit_roundoff("float32")
    ids, offsets = np.asarray(inputs["ids"]).reshape(-1), [int(v) for v in np.asarray(inputs["offsets"])]
    weights = inputs.get("per_sample_weights")
    w = np.ones(ids.size) if weights is None else np.abs(np.asarray(weights, dtype=np.float64))
    terms = np.abs(q * scale) + np.abs(bias)
    largest, magnitude = 0, 0.0
    for start, end in zip(offsets, offsets[1:] + [ids.size]):
        if end <= start:
            continue
        divisor = 1.0
        if inputs["mode"] == "mean":
            divisor = float(end - start) if weights is None else abs(float(np.sum(np.asarray(weights)[start:end])))
        if divisor == 0:
            continue
        total = (w[start:end, None] * terms[ids[start:end]]).sum(axis=0) / divisor
        largest, magnitude = max(largest, end - start), max(magnitude, _finite_max(total))
    rtol = (4 if inputs["mode"] == "mean" else 2) * u
    rule = f"each term dequantized (u per term) and summed: k*u*S with k={largest}, S={magnitude:.6g}"
    return {"output": close(largest * u * magnitude, rtol, rule)}


RULES: dict[str, Rule] = {
    "quantized_lookup": _lookup,
    "quantize_table": all_exact,
    "quantized_table_bytes": all_exact,
    "quantized_bag_forward": _bag,
}
