"""Lookups of quantized tables (spec section 17, EMB-QNT-1..7, 13..15): a row is read from its stored integers,
scales and biases (:mod:`embconf.reference.quantized_codec`) and each element's exact value ``q * scale + bias`` is
rounded once to the output dtype; a bag dequantizes its rows, weights them, reduces, and rounds each element once;
the bytes of a row and a table are exact integers. Quantizing a float table is :mod:`embconf.reference.quantize`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional

import numpy as np

from embconf.model.quantized import MODES, OUT_DTYPES, QuantFormat, parse_format
from embconf.reference.bag import bag_count, bag_ranges
from embconf.reference.errors import EmbeddingError
from embconf.reference.lookup import validate_ids
from embconf.reference.quantized_codec import as_bytes, round_fraction, split_rows


def checked_format(name: Any, out_dtype: str = "float32", mode: str = "sum") -> QuantFormat:
    """The format ``name`` names, after the checks of EMB-QNT-15 in its order: the format, the output dtype, the
    bag mode (each ``invalid_config``)."""
    fmt = parse_format(name)
    if fmt is None:
        raise EmbeddingError("invalid_config", f"unknown quantized format {str(name)[:80]!r}")
    if out_dtype not in OUT_DTYPES:
        raise EmbeddingError("invalid_config", f"out_dtype must be one of {', '.join(OUT_DTYPES)}, got {out_dtype!r}")
    if mode not in MODES:
        raise EmbeddingError("invalid_config", f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    return fmt


def checked_width(fmt: QuantFormat, embed_dim: Any) -> int:
    """``embed_dim`` as an int: at least 1 (else invalid_config), a multiple of the block (else shape_mismatch)."""
    if isinstance(embed_dim, bool) or not isinstance(embed_dim, (int, np.integer)) or embed_dim < 1:
        raise EmbeddingError("invalid_config", f"embed_dim must be an integer >= 1, got {embed_dim!r}")
    problem = fmt.check_width(int(embed_dim))
    if problem:
        raise EmbeddingError("shape_mismatch", problem)
    return int(embed_dim)


def checked_table(qweight: Any, fmt: QuantFormat, embed_dim: Any) -> np.ndarray:
    """``qweight`` as uint8 (R, row_bytes): 2-D and as wide as the format's row of ``embed_dim`` (shape_mismatch)."""
    width = checked_width(fmt, embed_dim)
    array = np.asarray(qweight)
    expected = fmt.row_bytes(width)
    if array.ndim != 2 or array.shape[1] != expected:
        raise EmbeddingError(
            "shape_mismatch",
            f"qweight must be (num_rows, {expected}) for {fmt.name} rows of {width}, got {array.shape}",
        )
    try:
        return as_bytes(array)
    except ValueError as exc:
        raise EmbeddingError("shape_mismatch", str(exc)) from None


def exact_values(q: np.ndarray, scale: np.ndarray, bias: np.ndarray) -> list[Fraction | float]:
    """Each element's ``q * scale + bias`` exactly: a float64 where that holds it (``q * scale`` is exact in float64,
    and the sum is where its rounding error is zero), else a Fraction; or the float64 value it gives where that is
    not finite or zero (IEEE's sign of zero: ggml's ``d * 0`` with a negative ``d`` and the bias ``-0.0`` is
    ``-0.0``)."""
    product = q.astype(np.float64) * scale.astype(np.float64)
    b = bias.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        total = product + b
        part = total - product
        error = (product - (total - part)) + (b - part)  # Knuth's TwoSum: the exact sum is total + error
    found: list[Fraction | float] = total.ravel().tolist()
    inexact = np.isfinite(total) & (error != 0)
    qs, ss, bs = q.ravel(), scale.ravel(), bias.ravel()
    for i in np.flatnonzero(inexact.ravel()).tolist():
        found[i] = int(qs[i]) * Fraction(float(ss[i])) + Fraction(float(bs[i]))
    return found


def exact_terms(q: np.ndarray, scale: np.ndarray, bias: np.ndarray) -> list[Fraction | float]:
    """:func:`exact_values` as terms of an exact sum: every finite value a Fraction (a float only where it is not
    finite), so that adding them never rounds."""
    return [Fraction(v) if isinstance(v, float) and math.isfinite(v) else v for v in exact_values(q, scale, bias)]


def rounded(values: list[Fraction | float], shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """``values`` rounded once each to ``dtype``, in ``shape``.

    Each exact value goes to its nearest float64 first (``float`` of a Fraction rounds once), then to ``dtype``:
    two roundings that give the once-rounded answer except where the first lands exactly halfway between two
    neighbours of ``dtype`` (or past its largest finite value), and only those few are rounded from the Fraction
    itself (:func:`round_fraction`)."""
    near = np.array([float(v) for v in values], dtype=np.float64)
    with np.errstate(over="ignore"):
        out = near.astype(dtype)
    for i in np.flatnonzero(_double_rounding_unsafe(near, out)).tolist():
        value = values[i]
        if isinstance(value, Fraction):
            out[i] = round_fraction(value, dtype)
    return out.reshape(shape)


def _double_rounding_unsafe(near: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Where ``out`` (``near`` rounded to a narrower dtype) may differ from the exact value rounded once: ``near``
    exactly halfway between ``out`` and a neighbour of it, or a finite ``near`` that gave infinity."""
    with np.errstate(over="ignore", invalid="ignore"):
        other = np.nextafter(out, np.where(near > out.astype(np.float64), np.inf, -np.inf).astype(out.dtype))
        halfway = out.astype(np.float64) + other.astype(np.float64) == 2 * near
    return (halfway & (out.astype(np.float64) != near)) | (np.isfinite(near) & ~np.isfinite(out))


def dequantized(table: np.ndarray, fmt: QuantFormat, embed_dim: int) -> tuple[np.ndarray, ...]:
    """(q, scale, bias) of every element of the table (R, D) each."""
    return split_rows(table, fmt, embed_dim)


def quantized_lookup(qweight: Any, ids: Any, format: str, embed_dim: int, out_dtype: str = "float32") -> np.ndarray:
    """The rows ``ids`` select, each element ``q * scale + bias`` rounded once to ``out_dtype`` (EMB-QNT-2..7)."""
    fmt = checked_format(format, out_dtype=out_dtype)
    table = checked_table(qweight, fmt, embed_dim)
    ids = validate_ids(np.asarray(ids), table.shape[0])
    q, scale, bias = dequantized(table[ids.reshape(-1)], fmt, int(embed_dim))
    return rounded(exact_values(q, scale, bias), (*ids.shape, int(embed_dim)), out_dtype)


def quantized_table_bytes(num_rows: Any, embed_dim: Any, format: str) -> dict[str, int]:
    """The bytes of one row and of the table (EMB-QNT-13), exact integers."""
    fmt = checked_format(format)
    if isinstance(num_rows, bool) or not isinstance(num_rows, (int, np.integer)) or num_rows < 0:
        raise EmbeddingError("invalid_config", f"num_rows must be an integer >= 0, got {num_rows!r}")
    row = fmt.row_bytes(checked_width(fmt, embed_dim))
    return {"row_bytes": row, "table_bytes": int(num_rows) * row}


def quantized_bag_forward(
    qweight: Any,
    ids: Any,
    offsets: Any,
    mode: str,
    format: str,
    embed_dim: int,
    per_sample_weights: Optional[Any] = None,
) -> np.ndarray:
    """Each bag's rows dequantized exactly, multiplied by their weights, summed (mode sum) or divided by the count
    or the weights' sum (mode mean; a zero divisor or an empty bag a zero row), rounded once to float32
    (EMB-QNT-14)."""
    fmt = checked_format(format, mode=mode)
    table = checked_table(qweight, fmt, embed_dim)
    ids = np.asarray(ids)
    if ids.ndim != 1:
        raise EmbeddingError("shape_mismatch", f"ids of a quantized bag must be 1-D, got shape {ids.shape}")
    bag_count(ids, offsets, False)  # 1-D offsets
    weights = None if per_sample_weights is None else np.asarray(per_sample_weights, dtype=np.float64)
    if weights is not None and weights.shape != ids.shape:
        raise EmbeddingError("shape_mismatch", f"per_sample_weights has shape {weights.shape}, the ids {ids.shape}")
    ranges = bag_ranges(ids, offsets, False)
    ids = validate_ids(ids, table.shape[0])
    width = int(embed_dim)
    q, scale, bias = dequantized(table[ids], fmt, width)
    terms = exact_terms(q, scale, bias)  # id i's element j at i * width + j
    out: list[Fraction | float] = []
    for start, end in ranges:
        w = [Fraction(1) if weights is None else Fraction(float(weights[i])) for i in range(start, end)]
        divisor = (sum(w, Fraction(0)) if weights is not None else Fraction(end - start)) if mode == "mean" else 1
        for j in range(width):
            if end == start or divisor == 0:
                out.append(Fraction(0))
                continue
            total: Fraction | float = Fraction(0)
            for i, wi in zip(range(start, end), w):
                value = terms[i * width + j]
                total = total + wi * value if isinstance(value, Fraction) else float(total) + float(wi) * value
            out.append(total / divisor if isinstance(total, Fraction) else total / float(divisor))
    return rounded(out, (len(ranges), width), "float32")
