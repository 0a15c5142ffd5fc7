"""The tables of the quantized cases (spec section 17), made from their parts: stored bytes of a chosen kind (typical
values, a zero row, extreme integers and scales, negative scales) for the lookups and bags, and float tables of a
chosen kind (random, a zero row, a constant row, an outlier, exact rounding ties) for the quantizer. Both the input
domains (``domains_quantized``) and the named cases (``quantized``) build theirs here."""
from __future__ import annotations

from typing import Optional

import numpy as np

from embconf.model.dtypes import bfloat16_bits, round_once
from embconf.model.quantized import GGML_BLOCK, QuantFormat, parse_format
from embconf.reference.quantized_codec import pack_rows, split_rows

STORED = ("typical", "zero_row", "extreme", "negative_scale")  # kinds of stored table
FLOAT = ("random", "zero_row", "constant_row", "outlier", "ties")  # kinds of float table to quantize
HALF_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38}


def unit(fmt: QuantFormat) -> int:
    """The values sharing a scale (a block or group), or 2 for a row-wise format (a byte of two 4-bit values)."""
    return fmt.group if fmt.group is not None else 2


def scale_count(fmt: QuantFormat, embed_dim: int) -> int:
    return embed_dim // fmt.group if fmt.group is not None else 1


def _scales(values: np.ndarray, dtype: str) -> np.ndarray:
    """float64 scales as stored in ``dtype`` (bfloat16 as its bits)."""
    return bfloat16_bits(values) if dtype == "bfloat16" else round_once(values, dtype).astype(dtype)


def q_range(fmt: QuantFormat) -> tuple[int, int]:
    """The stored integers' range as the codec reads them: int8 for q8_0, Q4_0's nibble less 8, unsigned ``bits``."""
    if fmt.kind == "q4_0":
        return (-8, 7)
    return (-128, 127) if fmt.signed else (0, 2**fmt.bits - 1)


def stored_table(fmt: QuantFormat, rows: int, embed_dim: int, kind: str, rng: np.random.Generator) -> np.ndarray:
    """The bytes (int32 (rows, row_bytes)) of a table of ``kind`` (:data:`STORED`): typical integers with positive
    scales (and biases); ``zero_row``: row 0's scales and biases zero; ``extreme``: row 0 at the integers' two ends
    and the largest finite scale of its dtype (a half output overflows); ``negative_scale``: every scale negative."""
    low, high = q_range(fmt)
    q = rng.integers(low, high + 1, size=(rows, embed_dim))
    groups = scale_count(fmt, embed_dim)
    scale = np.abs(rng.standard_normal((rows, groups))) * 0.05 + 2.0**-10
    bias = rng.standard_normal((rows, groups)) * 0.5
    if kind == "zero_row":
        q[0], scale[0], bias[0] = 0, 0.0, 0.0
    elif kind == "extreme":
        q[0, ::2], q[0, 1::2] = low, high
        scale[0], bias[0] = HALF_MAX[fmt.scale_dtype] / 2**8, 0.0  # the largest scale times 255 stays finite
    elif kind == "negative_scale":
        scale = -scale
    return pack_rows(q, _scales(scale, fmt.scale_dtype), _scales(bias, fmt.scale_dtype), fmt).astype(np.int32)


def stored_kind(qweight: np.ndarray, fmt: QuantFormat, embed_dim: int) -> Optional[str]:
    """Which kind of :data:`STORED` a table is: a zero row first, then an extreme one, then negative scales."""
    if qweight.ndim != 2 or qweight.shape[0] == 0 or fmt.check_width(embed_dim) or qweight.shape[1] != fmt.row_bytes(embed_dim):
        return None
    q, scale, bias = split_rows(qweight.astype(np.uint8), fmt, embed_dim)
    if np.any(np.all((scale == 0) & (bias == 0), axis=1)):
        return "zero_row"
    low, high = q_range(fmt)
    if np.any((np.abs(scale) >= 2**7) & ((q == low) | (q == high))):
        return "extreme"
    return "negative_scale" if np.any(scale < 0) else "typical"


def float_table(fmt: QuantFormat, rows: int, embed_dim: int, kind: str, rng: np.random.Generator) -> np.ndarray:
    """A float32 table of ``kind`` (:data:`FLOAT`), its values representable in the format's scale dtype (MLX
    quantizes a float16 table as float16): ``ties`` holds in every block, group or row the two values that fix its
    scale at 1 (ggml: 127, or -8; FBGEMM and MLX: 0 and the largest integer) and the rest halfway between two
    integers, so the rounding rule decides them."""
    x = rng.standard_normal((rows, embed_dim))
    if kind == "zero_row":
        x[0] = 0.0
    elif kind == "constant_row":
        x[0] = 0.75
    elif kind == "outlier":
        x[0, 1] = 3000.0
    elif kind == "ties":
        x = _ties(fmt, rows, embed_dim, rng)
    dtype = fmt.scale_dtype if fmt.kind == "affine" else "float32"
    return round_once(x, dtype).astype(np.float32)


def _ties(fmt: QuantFormat, rows: int, embed_dim: int, rng: np.random.Generator) -> np.ndarray:
    size = fmt.group if fmt.group is not None else embed_dim
    anchors: tuple[float, ...]
    if fmt.kind == "q8_0":
        low, high, anchors = -100, 100, (127.0,)  # d = 127 / 127 = 1
    elif fmt.kind == "q4_0":
        low, high, anchors = -8, 7, (-8.0,)  # d = -8 / -8 = 1, every other |x| < 8
    else:
        low, high, anchors = 0, 2**fmt.bits - 2, (0.0, float(2**fmt.bits - 1))  # the scale 1 (MLX: -1)
    x = rng.integers(low, high + 1, size=(rows, embed_dim // size, size)) + 0.5
    for i, anchor in enumerate(anchors[:size]):
        x[..., i] = anchor
    return x.reshape(rows, embed_dim)


def float_kind(weight: np.ndarray, fmt: QuantFormat) -> Optional[str]:
    """Which kind of :data:`FLOAT` a table is (ties: where the other rounding rule gives other bytes)."""
    from embconf.reference.quantize import quantize_table

    if weight.ndim != 2 or weight.size == 0 or fmt.check_width(weight.shape[1]) or weight.dtype.kind != "f":
        return None
    rows = weight.astype(np.float64)
    if np.any(np.all(rows == 0, axis=1)):
        return "zero_row"
    if np.any(np.all(rows == rows[:, :1], axis=1)):
        return "constant_row"
    if np.max(np.abs(rows)) >= 1000:
        return "outlier"
    other = "round_half_even" if fmt.kind in ("q8_0", "q4_0") else "round_half_away"
    flipped = not np.array_equal(quantize_table(weight, fmt.name), quantize_table(weight, fmt.name, (other,)))
    return "ties" if flipped else "random"


def named(name: str) -> QuantFormat:
    fmt = parse_format(name)
    assert fmt is not None, name
    return fmt


def block_width(fmt: QuantFormat, blocks: int) -> int:
    """The width of ``blocks`` blocks (row-wise: ``blocks`` pairs of values)."""
    return blocks * (unit(fmt) if fmt.kind != "q8_0" else GGML_BLOCK)
