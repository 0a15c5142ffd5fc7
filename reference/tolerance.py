"""The tolerance model (EMB-TOL): each rule of spec section 8, resolved to numbers per case.

The generator stores the result in every fixture; the runner reads those numbers
and never invents its own. A tolerance is ``{"kind": "exact"}`` or
``{"kind": "close", "atol", "rtol"[, "position"]}`` whose bound per element is
atol + rtol*|expected| (+ ulps * spacing(pos) along ``position.axis``), with a
``rule`` string recording how the numbers were derived.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

SINUSOID_ULPS = 4.0  # a correct float32 table stays within ~1.5 ulp(pos); see spec 8.4
SCALE_ULPS = 2.0  # x * sqrt(D): the rounded sqrt and the rounded product


HALF_DTYPES = ("float16", "bfloat16")
UNIT_ROUNDOFF = {"float16": 2.0**-11, "bfloat16": 2.0**-8, "float32": 2.0**-24, "float64": 2.0**-53}
HALF_ACCUMULATION_LIMIT = (
    1 / 8
)  # (k-1)*u above this: the half dtype's own bound says nothing; float32 accumulation is required
ROPE_ANGLE_ULPS = 4.0  # float32 angles: a correct computation stays within 0.8 u32 * max angle (spec 8.8)
ROPE_ROTATION_ULPS = 4.0  # the tables rounded to x's dtype, two products and a sum in x's dtype
RENORM_ULPS = 4  # + D: the p-norm of D terms, the division, the product and the golden's rounding (EMB-NRM-5)


def unit_roundoff(dtype: str) -> float:
    """u of a float dtype: 2^-11 float16, 2^-8 bfloat16, 2^-24 float32, 2^-53 float64."""
    return UNIT_ROUNDOFF[str(dtype)]


def accumulation_roundoff(dtype: str, summands: int) -> float:
    """The u that bounds a sum of ``summands`` terms (EMB-HLF-3).

    float32 and float64 sums may run in their own dtype. A half-precision sum may run in its
    own dtype while (k-1)*u <= 1/8; beyond that its bound would admit almost anything
    (bfloat16: 1 + 1 + ... stops at 256), so the bound is float32's: accumulate in float32.
    """
    u = unit_roundoff(dtype)
    if dtype in HALF_DTYPES and (summands - 1) * u > HALF_ACCUMULATION_LIMIT:
        return unit_roundoff("float32")
    return u


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
    u, u_acc = unit_roundoff(dtype), accumulation_roundoff(dtype, summands)
    if summands <= 1 and not scale_ulps:
        return close(0.0, 0.0, "a single term: exact up to the sign of zero")
    rtol = 2 * u * (1 + scale_ulps)
    rule = f"summation: (k-1)*u*S with k={summands}, S={magnitude:.6g}, u={u_acc:.3g}"
    if u_acc != u:
        rule += f" (float32 accumulation: (k-1)*u({dtype}) > {HALF_ACCUMULATION_LIMIT:g})"
    rule += f"; rtol {rtol / u:g}u for the final rounding"
    if scale_ulps:
        rule += f" and {scale_ulps:g} ulps for the sqrt(D) scale"
    return close(max(summands - 1, 0) * u_acc * magnitude, rtol, rule)


def sinusoid(dtype: str, axis: int, offset: int, extra_atol: float = 0.0, rule_prefix: str = "") -> dict[str, Any]:
    """Position-dependent bound: 4 * spacing(pos) in ``dtype`` plus 2u, pos = offset + index on ``axis``."""
    u = unit_roundoff(dtype)
    angle_dtype = (
        "float32" if dtype in HALF_DTYPES else dtype
    )  # half tables: angles in float32, rounded once (EMB-HLF-4)
    rule = f"{rule_prefix}sinusoid: 2u + {SINUSOID_ULPS:g} * spacing(pos) in {angle_dtype}, pos = {offset} + index on axis {axis}"
    position: dict[str, Any] = {"axis": axis, "offset": offset, "ulps": SINUSOID_ULPS}
    if angle_dtype != dtype:
        position["dtype"] = angle_dtype
    return close(2 * u + extra_atol, 2 * u, rule, position)


def _row_counts(ids: np.ndarray, rows: int, padding_row: Optional[int]) -> np.ndarray:
    counts = np.bincount(np.asarray(ids).reshape(-1).astype(np.int64), minlength=rows)
    if padding_row is not None:
        counts[padding_row] = 0  # an exactly zero row: its terms meet nowhere (EMB-PAD-2)
    return counts


def max_duplicates(ids: np.ndarray, padding_row: Optional[int] = None) -> int:
    flat = np.asarray(ids).reshape(-1).astype(np.int64)
    return int(_row_counts(flat, max(int(flat.max()), padding_row or 0) + 1, padding_row).max()) if flat.size else 0


def max_row_abs_sum(
    ids: np.ndarray, grad: np.ndarray, rows: int, padding_row: Optional[int] = None, by_freq: bool = False
) -> float:
    """S: the largest sum of |g| that lands on one table row (divided by the row's count with ``by_freq``)."""
    flat_ids = np.asarray(ids).reshape(-1).astype(np.int64)
    if not flat_ids.size:
        return 0.0
    sums = np.zeros((rows, grad.shape[-1]))
    np.add.at(sums, flat_ids, np.abs(grad.reshape(flat_ids.size, -1).astype(np.float64)))
    counts = _row_counts(flat_ids, rows, padding_row)
    sums[counts == 0] = 0.0
    if by_freq:
        sums /= np.maximum(counts, 1)[:, None]
    return float(sums.max())


def _padding_row(padding_idx: Any, rows: int) -> Optional[int]:
    return None if padding_idx is None else int(padding_idx) % rows


def _lookup_backward(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    w, ids, g = inputs["weight"], inputs["ids"], inputs["grad_output"]
    pad = _padding_row(inputs.get("padding_idx"), w.shape[0])
    k = max_duplicates(ids, pad)
    if inputs.get("scale_grad_by_freq") and k > 1:
        tol = frequency_scaled(k, max_row_abs_sum(ids, g, w.shape[0], pad, by_freq=True), w.dtype.name)
    else:
        tol = summation(k, max_row_abs_sum(ids, g, w.shape[0], pad), w.dtype.name)
    return {name: (EXACT if name == "indices" else tol) for name in outputs}


def frequency_scaled(summands: int, magnitude: float, dtype: str) -> dict[str, Any]:
    """EMB-FRQ-3: k terms each divided by the count, in either order: (k+1)*u*S_f absolute, 2u relative."""
    u = accumulation_roundoff(dtype, summands)
    rule = f"frequency-scaled sum: (k+1)*u*S_f with k={summands}, S_f={magnitude:.6g} (sum of |g| / count), u={u:.3g}; rtol 2u"
    return close((summands + 1) * u * magnitude, 2 * unit_roundoff(dtype), rule)


def _renormalised(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    """EMB-NRM-5: (D + 4) u relative, for rows not within that distance of the threshold (the cases avoid it)."""
    from embconf.reference.options import row_norms

    w, ids, max_norm = inputs["weight"], np.asarray(inputs["ids"]).astype(np.int64), float(inputs["max_norm"])
    dtype, dim = w.dtype.name, w.shape[1]
    rtol = (dim + RENORM_ULPS) * unit_roundoff(dtype)
    norms = row_norms(w[np.unique(ids)], float(inputs["norm_type"])) if ids.size else np.zeros(0)
    near = (norms != max_norm) & (np.abs(norms - max_norm) <= 2 * rtol * max_norm)
    if near.any():
        raise AssertionError(
            f"a referenced row's norm is within 2*rtol of max_norm {max_norm}: the case cannot tell correct from wrong there"
        )
    tol = close(
        0.0,
        rtol,
        f"renormalised rows: (D + {RENORM_ULPS})u relative with D={dim}, u={unit_roundoff(dtype):.3g}; other rows are copies",
    )
    return {name: tol for name in outputs}


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
    if pos_kind == "rope":
        return {"output": _rope_layer_forward(inputs, c, scale_ulps)}
    if pos_kind == "sinusoidal":
        u = unit_roundoff(dtype)
        axis = -2
        return {
            "output": sinusoid(
                dtype,
                axis,
                int(inputs.get("start_pos", 0)),
                extra_atol=(2 + 2 * scale_ulps) * u * (token_mag + 1),
                rule_prefix=f"token part {scale_ulps:g} ulps + sum rounding; ",
            )
        }
    if pos_kind == "learned":
        pos_mag = float(np.abs(inputs["position_table"]).max(initial=0))
        return {"output": summation(2, token_mag + pos_mag, dtype, scale_ulps)}
    return {"output": summation(1, token_mag, dtype, scale_ulps)}


def _layer_backward(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    cfg, w, tokens, g = inputs["config"], inputs["token_weight"], inputs["tokens"], inputs["grad_output"]
    scaled = bool(cfg.get("scale_embeddings", False))
    c = float(np.sqrt(cfg["embed_dim"])) if scaled else 1.0
    batched_g = g if tokens.ndim == 2 else g[None]
    pad = _padding_row(cfg.get("padding_idx"), w.shape[0])
    token_tol = summation(
        max_duplicates(tokens, pad),
        c * max_row_abs_sum(tokens, g, w.shape[0], pad),
        w.dtype.name,
        SCALE_ULPS if scaled else 0.0,
    )
    if cfg.get("pos_encoding") == "rope":
        token_tol = _rope_layer_backward(inputs, c, pad)
    result = {"grad_token_weight": token_tol}
    if outputs.get("grad_position_table") is not None:
        batch_sum = float(np.abs(batched_g.astype(np.float64)).sum(axis=0).max(initial=0))
        result["grad_position_table"] = summation(batched_g.shape[0], batch_sum, w.dtype.name)
    else:
        result["grad_position_table"] = EXACT
    return result


def _own_backward(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    """EMB-LAY-12: the rule of the layer's backward, on tables of the layer's own shapes."""
    from embconf.reference.layer import own_tables

    token_weight, position_table = own_tables(
        inputs["config"], rope_layer=inputs["config"].get("pos_encoding") == "rope"
    )
    return _layer_backward({**inputs, "token_weight": token_weight, "position_table": position_table}, outputs)


def _sinusoid_table(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    return {"table": sinusoid(inputs.get("dtype", "float32"), 0, 0)}


def _all_exact(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    return {name: EXACT for name in outputs}


def _memory_units(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    u = unit_roundoff("float64")
    units = close(0.0, 4 * u, "a ratio of exact integers in float64: within 4u")
    return {name: (EXACT if name == "bytes" else units) for name in outputs}


def rope(attention: float, magnitude: float, max_angle: float, dtype: str) -> dict[str, Any]:
    """Spec 8.8 (EMB-ROPE-11): a*M*(4 u32 A + 4u) absolute, 2u relative; angles in float32 conform, u of ``dtype``.
    An attention factor other than 1 adds a*M*u32: tables computed in float32 hold the factor rounded to float32,
    the whole error of a case whose largest angle is 0 (since 2.3.0, looser)."""
    u, u32 = unit_roundoff(dtype), unit_roundoff("float32")
    factor = u32 if attention != 1.0 else 0.0
    atol = attention * magnitude * (ROPE_ANGLE_ULPS * u32 * max_angle + ROPE_ROTATION_ULPS * u + factor)
    rule = (
        f"rope: a*M*({ROPE_ANGLE_ULPS:g}*u32*A + {ROPE_ROTATION_ULPS:g}*u{' + u32' if factor else ''}) with "
        f"a={attention:.6g}, M={magnitude:.6g}, A={max_angle:.6g} (the largest angle), u={u:.3g}; rtol 2u"
    )
    return close(atol, 2 * u, rule)


def _rope_parts(inputs: dict[str, Any]) -> tuple[float, float]:
    """(a, A): the attention factor and the case's largest angle, max(position_ids) * max(theta_k)."""
    from embconf.reference.rope import inverse_frequencies, under_conventions

    ids = np.asarray(inputs["position_ids"])
    top = int(ids.max(initial=0))
    scaling = under_conventions(inputs["scaling"], inputs.get("conventions", ()))
    inv_freq, attention = inverse_frequencies(inputs["rotary_dim"], inputs["base"], scaling, top)
    return float(attention), top * float(inv_freq.max())


def _pair_magnitude(values: np.ndarray, inputs: dict[str, Any]) -> float:
    """M: the largest |v_i| + |v_j| over the rotated pairs."""
    from embconf.reference.rope import pair_columns

    i, j = pair_columns(int(inputs["rotary_dim"]), inputs["pairing"])
    wide = np.abs(values.astype(np.float64))
    return float((wide[..., i] + wide[..., j]).max(initial=0))


def _rope_tables(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    attention, angle = _rope_parts(inputs)
    return {name: rope(attention, 1.0, angle, inputs.get("dtype", "float32")) for name in outputs}


def _rope_rotation(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    from embconf.reference.rope import FLOAT32_TABLES

    if FLOAT32_TABLES in inputs.get("conventions", ()):
        return strict_rope_rotation(inputs, outputs)
    attention, angle = _rope_parts(inputs)
    values = inputs["grad_output"] if "grad_output" in inputs else inputs["x"]
    return {name: rope(attention, _pair_magnitude(values, inputs), angle, values.dtype.name) for name in outputs}


def _rope_apply(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    """Spec 8.8 for the fused rotation (EMB-ROPE-16, 17): two products and a sum of given numbers in the output
    dtype, atol 4u * P with P the largest |v_i c| + |v_j s| of an output element, rtol 2u (no angle term)."""
    from embconf.reference.rope import pair_columns, per_row

    values = inputs["grad_output"] if "grad_output" in inputs else inputs["x"]
    wide = np.abs(values.astype(np.float64))
    c, s = (per_row(np.abs(inputs[name].astype(np.float64)), wide) for name in ("cos", "sin"))
    i, j = pair_columns(int(inputs["cos"].shape[-1]), inputs["pairing"])
    backward = "grad_output" in inputs  # the transpose reads s_j for column i and s_i for column j
    si, sj = (s[..., j], s[..., i]) if backward else (s[..., i], s[..., j])
    both = np.concatenate(
        [wide[..., i] * c[..., i] + wide[..., j] * si, wide[..., j] * c[..., j] + wide[..., i] * sj], -1
    )
    products = float(both.max(initial=0))
    u = unit_roundoff(values.dtype.name)
    rule = f"rope_apply: {ROPE_ROTATION_ULPS:g}*u*P with P={products:.6g} (the largest |v_i c| + |v_j s|), u={u:.3g}; rtol 2u"
    return {name: close(ROPE_ROTATION_ULPS * u * products, 2 * u, rule) for name in outputs}


def strict_rope_rotation(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    """Section 8.8 for an implementation that declares float32 tables whatever x is (EMB-ROPE-V3, since 2.0.0): the
    rotation term in float32's unit roundoff, the relative term (the final rounding) in x's dtype."""
    attention, angle = _rope_parts(inputs)
    values = inputs["grad_output"] if "grad_output" in inputs else inputs["x"]
    strict = rope(attention, _pair_magnitude(values, inputs), angle, "float32")
    rtol = 2 * unit_roundoff(values.dtype.name)
    rule = f"{strict['rule']}; the rotation in float32 (EMB-ROPE-V3), rtol 2u of {values.dtype.name}"
    return {name: {**strict, "rtol": rtol, "rule": rule} for name in outputs}


def _rope_layer_parts(inputs: dict[str, Any], values: np.ndarray) -> tuple[dict[str, Any], float, float]:
    """(the layer's rope settings, M of ``values`` over its pairs, A = s + T - 1: the largest angle, theta_0 = 1)."""
    from embconf.reference.layer import resolve_config, rope_settings

    seq_len = inputs["tokens"].shape[-1]
    settings = rope_settings(resolve_config(inputs["config"], True), int(inputs.get("start_pos", 0)), seq_len)
    return settings, _pair_magnitude(values, settings), float(max(int(inputs.get("start_pos", 0)) + seq_len - 1, 0))


def _rope_layer_forward(inputs: dict[str, Any], c: float, scale_ulps: float) -> dict[str, Any]:
    """EMB-LAY-10: the rope rule (8.8) on x = W[tokens] * c, plus the scale's ulps on M."""
    w = inputs["token_weight"]
    x = w[np.asarray(inputs["tokens"]).astype(np.int64)].astype(np.float64) * c
    _, magnitude, angle = _rope_layer_parts(inputs, x)
    tol = rope(1.0, magnitude, angle, w.dtype.name)
    tol["atol"] += scale_ulps * unit_roundoff(w.dtype.name) * magnitude
    tol["rule"] = f"rope layer, x = W[tokens]*c with {scale_ulps:g} ulps for the scale; " + tol["rule"]
    return tol


def _rope_layer_backward(inputs: dict[str, Any], c: float, pad: Optional[int]) -> dict[str, Any]:
    """EMB-LAY-11: a summation (8.3) of the rotated G (k terms), plus k times the rope rule's atol on G's pairs."""
    from embconf.reference.rope import rope_backward

    w, tokens, g = inputs["token_weight"], inputs["tokens"], inputs["grad_output"]
    batched = (g if tokens.ndim == 2 else g[None]).astype(np.float64)
    settings, magnitude, angle = _rope_layer_parts(inputs, batched)
    rotated = rope_backward(batched, grad_output=batched, **settings)
    k = max_duplicates(tokens, pad)
    tol = summation(max(k, 2), c * max_row_abs_sum(tokens, rotated, w.shape[0], pad), w.dtype.name, SCALE_ULPS)
    tol["atol"] += c * k * rope(1.0, magnitude, angle, w.dtype.name)["atol"]
    tol["rule"] = f"rope layer backward: c * scatter-add of the rotated G; k * rope atol (A={angle:g}); " + tol["rule"]
    return tol


Rule = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]

# The rules of section 8, by area and operation (the bags' are section 8.9, :mod:`embconf.reference.bag_tolerance`;
# :mod:`embconf.reference.families` holds both, keyed by area).
RULES: dict[str, dict[str, Rule]] = {
    "token_lookup": {
        "embedding_forward": _all_exact,
        "embedding_backward": _lookup_backward,
        "embedding_backward_sparse": _lookup_backward,
        "embedding_forward_max_norm": _renormalised,
    },
    "sinusoidal": {"sinusoidal_table": _sinusoid_table},
    "learned_positions": {
        "learned_positions_forward": _positions_forward,
        "learned_positions_backward": _positions_backward,
    },
    "embedding_layer": {
        "embedding_layer_forward": _layer_forward,
        "embedding_layer_backward": _layer_backward,
        "embedding_layer_own_backward": _own_backward,
    },
    "memory": {
        "parameter_count": _all_exact,
        "table_bytes": _memory_units,
        "gradient_bytes": _all_exact,
        "adam_state_bytes": _all_exact,
    },
    "rope": {
        "rope_tables": _rope_tables,
        "rope_forward": _rope_rotation,
        "rope_backward": _rope_rotation,
        "rope_apply": _rope_apply,
        "rope_apply_backward": _rope_apply,
    },
}
