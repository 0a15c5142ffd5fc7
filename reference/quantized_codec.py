"""The bytes of a quantized table (spec section 17, EMB-QNT-1): a row read into its stored integers, scales and biases,
and written back, for every format of :mod:`embconf.model.quantized`; and one exact rounding of a rational value
to an output dtype. Adapters use it to hand a framework the arrays it stores (:func:`affine_arrays`).

Every format reads as ``value = q * scale + bias`` element by element. ggml's formats are products ``d * q`` with
a signed ``q`` (Q8_0's int8, Q4_0's nibble less 8) and the bias ``-0.0``, which adds nothing, not even to the sign of
a zero: ``d * 0`` with a negative ``d`` is ``-0.0``, as ggml computes it.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from embconf.model.quantized import GGML_BLOCK, QuantFormat

LITTLE = {"float32": "<f4", "float16": "<f2", "bfloat16": "<u2"}  # a stored scale's bytes (bfloat16: raw bits)


def as_bytes(qweight: Any) -> np.ndarray:
    """``qweight`` as uint8, every element an integer 0..255 (ValueError otherwise)."""
    array = np.asarray(qweight)
    if array.dtype.kind not in "iu" or (array.size and (array.min() < 0 or array.max() > 255)):
        raise ValueError("qweight must hold integers 0..255, one per byte")
    return array.astype(np.uint8)


def read_scales(raw: np.ndarray, dtype: str) -> np.ndarray:
    """Scales or biases stored as little-endian ``dtype`` in the last axis of ``raw`` (uint8), as float64."""
    values = np.ascontiguousarray(raw).view(LITTLE[dtype])
    if dtype == "bfloat16":
        values = (values.astype(np.uint32) << 16).view(np.float32)
    with np.errstate(invalid="ignore"):  # a stored NaN stays one
        return values.astype(np.float64)


def write_scales(values: np.ndarray, dtype: str) -> np.ndarray:
    """The little-endian bytes of ``values`` (already of ``dtype``: float32, float16, or bfloat16 held as its bits
    in a uint16 array), in the last axis."""
    stored = np.ascontiguousarray(values).astype(LITTLE[dtype])
    return stored.view(np.uint8).reshape(*stored.shape[:-1], stored.shape[-1] * stored.itemsize)


def unpack_bits(packed: np.ndarray, bits: int, count: int) -> np.ndarray:
    """``count`` unsigned ``bits``-wide values of each row of ``packed``, from the lowest bit of a little-endian
    bit stream (MLX's uint32 words; a nibble pair is the low nibble first)."""
    stream = np.unpackbits(packed, axis=-1, bitorder="little")[..., : count * bits]
    weights = (1 << np.arange(bits, dtype=np.int64)).astype(np.int64)
    return stream.reshape(*packed.shape[:-1], count, bits).astype(np.int64) @ weights


def pack_bits(q: np.ndarray, bits: int) -> np.ndarray:
    """The inverse of :func:`unpack_bits`: each row's values, ``bits`` wide, as bytes (the last one zero-filled)."""
    stream = ((q[..., None].astype(np.int64) >> np.arange(bits)) & 1).astype(np.uint8)
    return np.packbits(stream.reshape(*q.shape[:-1], q.shape[-1] * bits), axis=-1, bitorder="little")


def split_rows(qweight: np.ndarray, fmt: QuantFormat, embed_dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q int64, scale float64, bias float64), each of shape (R, D): every element's stored integer and the scale
    and bias it is read with. ``qweight`` is uint8 (R, row_bytes) of a width that fits (checked by the caller)."""
    rows, d = qweight.shape[0], embed_dim
    if fmt.kind in ("q8_0", "q4_0"):
        blocks = qweight.reshape(rows, d // GGML_BLOCK, 2 + GGML_BLOCK * fmt.bits // 8)
        scale = read_scales(blocks[..., :2], "float16")  # (R, blocks, 1)
        body = blocks[..., 2:]
        if fmt.kind == "q8_0":
            q = np.ascontiguousarray(body).view(np.int8).astype(np.int64)
        else:
            q = np.concatenate([body & 15, body >> 4], axis=-1).astype(np.int64) - 8  # element j low, j + 16 high
        bias = np.full_like(scale, -0.0)
        return (
            _expanded(q, rows, d),
            _expanded(np.broadcast_to(scale, q.shape), rows, d),
            _expanded(np.broadcast_to(bias, q.shape), rows, d),
        )
    if fmt.kind in ("fused8_rowwise", "fused4_rowwise"):
        width = -(-d * fmt.bits // 8)
        q = unpack_bits(qweight[:, :width], fmt.bits, d)
        size = 4 if fmt.scale_dtype == "float32" else 2
        scale = read_scales(qweight[:, width : width + size], fmt.scale_dtype)
        bias = read_scales(qweight[:, width + size : width + 2 * size], fmt.scale_dtype)
        return q, np.broadcast_to(scale, (rows, d)).copy(), np.broadcast_to(bias, (rows, d)).copy()
    words, scales, biases = affine_parts(qweight, fmt, d)
    q = unpack_bits(words, fmt.bits, d)
    assert fmt.group is not None
    return q, np.repeat(scales, fmt.group, axis=1), np.repeat(biases, fmt.group, axis=1)


def _expanded(blocked: np.ndarray, rows: int, embed_dim: int) -> np.ndarray:
    return np.ascontiguousarray(blocked).reshape(rows, embed_dim)


def affine_parts(qweight: np.ndarray, fmt: QuantFormat, embed_dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An affine row's (packed value bytes uint8, scales float64, biases float64), (R, .) each."""
    assert fmt.group is not None
    width, groups = embed_dim * fmt.bits // 8, embed_dim // fmt.group
    size = 4 if fmt.scale_dtype == "float32" else 2
    scales = read_scales(qweight[:, width : width + groups * size], fmt.scale_dtype)
    biases = read_scales(qweight[:, width + groups * size : width + 2 * groups * size], fmt.scale_dtype)
    return qweight[:, :width], scales, biases


def affine_arrays(qweight: np.ndarray, fmt: QuantFormat, embed_dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """MLX's three arrays of an affine table: ``w_q`` uint32 (R, D*bits/32), and the scales and biases (R, D/G) as
    stored (float32, float16, or bfloat16's raw bits as uint16)."""
    packed, _, _ = affine_parts(qweight, fmt, embed_dim)
    assert fmt.group is not None
    width, groups = packed.shape[1], embed_dim // fmt.group
    raw = qweight[:, width:]
    stored = np.ascontiguousarray(raw).view(LITTLE[fmt.scale_dtype])
    return np.ascontiguousarray(packed).view("<u4"), stored[:, :groups].copy(), stored[:, groups : 2 * groups].copy()


def pack_rows(q: np.ndarray, scales: np.ndarray, biases: np.ndarray, fmt: QuantFormat) -> np.ndarray:
    """The bytes (uint8 (R, row_bytes)) of rows of stored integers ``q`` (R, D) and their scales and biases (R, one
    per block or group, or (R, 1) for a row-wise format; of the format's scale dtype, bfloat16 as uint16 bits).
    ggml's formats take no bias (``biases`` ignored) and Q4_0's ``q`` is signed, as :func:`split_rows` reads it."""
    rows, d = q.shape
    if fmt.kind in ("q8_0", "q4_0"):
        blocks = q.reshape(rows, d // GGML_BLOCK, GGML_BLOCK)
        if fmt.kind == "q8_0":
            body = blocks.astype(np.int8).view(np.uint8)
        else:
            nibbles = blocks + 8
            body = (nibbles[..., :16] | (nibbles[..., 16:] << 4)).astype(np.uint8)
        head = write_scales(scales.reshape(rows, -1, 1), "float16")
        return np.concatenate([head, body], axis=-1).reshape(rows, fmt.row_bytes(d))
    parts = [pack_bits(q, fmt.bits), write_scales(scales, fmt.scale_dtype), write_scales(biases, fmt.scale_dtype)]
    return np.concatenate(parts, axis=-1)


def round_fraction(value: Fraction, dtype: str) -> float:
    """The value of ``dtype`` (float32 or float16) nearest ``value``, ties to even, overflow to infinity."""
    kind = np.dtype(dtype).type
    largest = np.finfo(kind).max
    beyond = Fraction(float(largest)) + Fraction(float(largest - np.nextafter(largest, kind(0)))) / 2
    if abs(value) >= beyond:  # past the largest finite value by half an ulp or more: overflow
        return float("inf") if value > 0 else float("-inf")
    with np.errstate(over="ignore"):
        guess = kind(float(value))  # within one ulp of the answer (float() is the nearest float64)
    if not np.isfinite(guess):
        guess = largest if value > 0 else -largest
    best = None
    with np.errstate(over="ignore"):
        neighbours = (np.nextafter(guess, kind(-np.inf)), guess, np.nextafter(guess, kind(np.inf)))
    for candidate in neighbours:
        if not np.isfinite(candidate):
            continue
        gap = abs(Fraction(float(candidate)) - value)
        key = (gap, int(np.array(candidate).view(f"u{np.dtype(dtype).itemsize}")) & 1)
        if best is None or key < best[0]:
            best = (key, float(candidate))
    assert best is not None
    return best[1]
