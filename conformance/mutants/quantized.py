"""Mistakes of quantized tables (area quantized, SPEC section 17), each found in public code: a row read in another
layout (the nibble order ggml had before llama.cpp #1405, a nibble sign-extended, a float16 scale read as float32 or
the other way, the bias applied before the scale, a group boundary off by one), a quantizer rounding the other way,
a byte count that forgets a part of the row, and a bag that weights the stored integers instead of the values.

A reading mistake is a :class:`RowReading` of the stored (q, scale, bias): the lookup and the bag read through it, after
the reference's checks, and round each exact value once as the reference does.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Optional

import numpy as np

from embconf.adapters.quantized_ops import QuantCall, QuantizedOperations
from embconf.model.quantized import GGML_BLOCK, QuantFormat
from embconf.mutants.base import Mutant, Operation, register
from embconf.reference import quantized as ref
from embconf.reference.quantize import quantize_table
from embconf.reference.quantized_codec import pack_rows, read_scales, split_rows

LOOKUP, QUANTIZE, BYTES, BAG = "quantized_lookup", "quantize_table", "quantized_table_bytes", "quantized_bag_forward"
Parts = tuple[np.ndarray, np.ndarray, np.ndarray]


@dataclass(frozen=True)
class RowReading:
    """A wrong reading of a format's rows: ``kinds`` it applies to, and what it does to (q, scale, bias)."""

    kinds: tuple[str, ...]
    read: Callable[[np.ndarray, QuantFormat, int, Parts], Parts]  # (bytes, format, D, the spec's parts) -> parts
    bag_bias_unweighted: bool = False


def _parts(reading: RowReading, table: np.ndarray, fmt: QuantFormat, d: int) -> Parts:
    parts = split_rows(table, fmt, d)
    return reading.read(table, fmt, d, parts) if fmt.kind in reading.kinds else parts


class Misread(QuantizedOperations):
    """The lookup and the bag reading rows as ``reading`` says, over the operation set's glue (the format and the
    width), after the reference's checks of the rest (the ids, the offsets, the weights)."""

    def __init__(self, reading: RowReading) -> None:
        self.reading = reading

    def lookup(self, call: QuantCall) -> np.ndarray:
        ids = ref.validate_ids(call.ids, call.qweight.shape[0])
        q, scale, bias = _parts(self.reading, call.qweight[ids.reshape(-1)], call.fmt, call.embed_dim)
        return ref.rounded(ref.exact_values(q, scale, bias), (*ids.shape, call.embed_dim), call.out_dtype)

    def bag(self, call: QuantCall, offsets: np.ndarray, mode: str, weights: Optional[np.ndarray]) -> np.ndarray:
        d = call.embed_dim
        expected = ref.quantized_bag_forward(call.qweight, call.ids, offsets, mode, call.fmt.name, d, weights)
        q, scale, bias = _parts(self.reading, call.qweight, call.fmt, d)
        ids, points = call.ids, [int(v) for v in offsets]
        w = np.ones(ids.size) if weights is None else weights.astype(np.float64)
        out: list[Fraction | float] = []
        for start, end in zip(points, points[1:] + [ids.size]):
            total: list[Fraction | float] = [Fraction(0)] * d
            for i in range(start, end):
                unweighted = self.reading.bag_bias_unweighted
                terms = ref.exact_terms(
                    np.ones(d), w[i] * q[ids[i]] * scale[ids[i]], bias[ids[i]] * (1 if unweighted else w[i])
                )
                total = [a + b for a, b in zip(total, terms)]
            divisor = (end - start if weights is None else sum(w[start:end])) if mode == "mean" else 1
            out += [t / Fraction(divisor) if divisor and end > start else Fraction(0) for t in total]
        return ref.rounded(out, expected.shape, "float32")


def _ids_wrapped(qweight: Any, ids: Any, format: str, embed_dim: int, out_dtype: str = "float32") -> np.ndarray:
    given = np.asarray(ids)
    rows = np.shape(qweight)[0] if np.ndim(qweight) == 2 else 0
    if given.dtype.kind in "iu" and rows:
        given = np.where(given < 0, given + rows, given)  # Python's and NumPy's indexing from the end
    return ref.quantized_lookup(qweight, given, format, embed_dim, out_dtype)


register(
    Mutant(
        "quant.ids_wrapped",
        "reads a negative id from the end of the table (table[ids] unchecked)",
        "an id < 0 is index_out_of_range (EMB-QNT-15)",
        {LOOKUP: _ids_wrapped},
        source="NumPy dequantize-then-index lookups (gguf-py readers) indexing rows with unchecked ids",
    )
)


def reading(name: str, description: str, hint: str, made: RowReading, source: str) -> Mutant:
    """Register ``quant.NAME``: the lookup and the bag reading the rows ``made`` says."""
    misread = Misread(made)
    operations: dict[str, Operation] = {LOOKUP: misread.quantized_lookup, BAG: misread.quantized_bag_forward}
    return register(Mutant(f"quant.{name}", description, hint, operations, source=source))


def _interleaved(table: np.ndarray, fmt: QuantFormat, d: int, parts: Parts) -> Parts:
    q, scale, bias = parts
    blocks = q.reshape(q.shape[0], -1, 2, 16)  # element j + 16 of a block is byte j's high nibble
    return np.stack([blocks[:, :, 0], blocks[:, :, 1]], axis=-1).reshape(q.shape), scale, bias


def _high_first(table: np.ndarray, fmt: QuantFormat, d: int, parts: Parts) -> Parts:
    q, scale, bias = parts
    blocks = q.reshape(q.shape[0], -1, 2, 16)
    return blocks[:, :, ::-1].reshape(q.shape), scale, bias


def _sign_extended(table: np.ndarray, fmt: QuantFormat, d: int, parts: Parts) -> Parts:
    q, scale, bias = parts
    nibble = q + 8
    return np.where(nibble >= 8, nibble - 16, nibble), scale, bias  # a signed nibble, no offset 8


def _scale_float32(table: np.ndarray, fmt: QuantFormat, d: int, parts: Parts) -> Parts:
    q, _, bias = parts
    blocks = table.reshape(table.shape[0], d // GGML_BLOCK, 2 + GGML_BLOCK)
    wide = read_scales(blocks[..., :4], "float32")  # d and the first two q read as one float32
    return q, np.repeat(wide.reshape(table.shape[0], -1), GGML_BLOCK, axis=1), bias


def _half_for_float(table: np.ndarray, fmt: QuantFormat, d: int, parts: Parts) -> Parts:
    q, _, _ = parts
    scale, bias = read_scales(table[:, d : d + 2], "float16"), read_scales(table[:, d + 2 : d + 4], "float16")
    return q, np.broadcast_to(scale, q.shape).copy(), np.broadcast_to(bias, q.shape).copy()


def _bias_first(table: np.ndarray, fmt: QuantFormat, d: int, parts: Parts) -> Parts:
    q, scale, bias = parts
    return q, scale, bias * scale  # (q + bias) * scale


def _group_off_by_one(table: np.ndarray, fmt: QuantFormat, d: int, parts: Parts) -> Parts:
    q, scale, bias = parts
    assert fmt.group is not None
    index = np.minimum(np.arange(d) + 1, d - 1) // fmt.group * fmt.group  # element i read with group (i + 1) // G
    return q, scale[:, index], bias[:, index]


reading(
    "q4_0.nibbles_interleaved",
    "reads Q4_0 byte j as elements 2j (low) and 2j+1 (high)",
    "byte j of a Q4_0 block holds element j in its low nibble and j + 16 in its high nibble (EMB-QNT-3)",
    RowReading(("q4_0",), _interleaved),
    "llama.cpp #1405 (Q4_0 held elements 2j, 2j+1 in byte j before it); 1bit-MONSTER #572 packed them so",
)
reading(
    "q4_0.high_nibble_first",
    "reads element j of a Q4_0 block from the high nibble and j + 16 from the low",
    "the low nibble is element j, the high nibble j + 16 (EMB-QNT-3)",
    RowReading(("q4_0",), _high_first),
    "hand-written Q4_0 dequantizers swapping q & 0xF and q >> 4 (the layout of llama.cpp #1241 read backwards)",
)
reading(
    "q4_0.sign_extended",
    "sign-extends a Q4_0 nibble instead of subtracting 8",
    "a Q4_0 nibble is unsigned: value d * (q - 8) (EMB-QNT-3)",
    RowReading(("q4_0",), _sign_extended),
    "1bit-MONSTER #572: Q4_0 nibbles written as two's complement (signed & 0x0F), not excess-8",
)
reading(
    "q8_0.scale_as_float32",
    "reads a Q8_0 block's float16 d as a float32 (its first four bytes)",
    "d is a float16 (2 bytes) followed by 32 int8 (EMB-QNT-2)",
    RowReading(("q8_0",), _scale_float32),
    "llama.cpp #1508: block_q8_0 kept a float32 d before it; code still declaring float d reads it so",
)
reading(
    "fused8.scale_as_float16",
    "reads the fused 8-bit row's float32 scale and bias as float16",
    "fused8_rowwise stores a float32 scale and a float32 bias (EMB-QNT-4); float16 is the 4-bit row's",
    RowReading(("fused8_rowwise",), _half_for_float),
    "FBGEMM's two row-wise layouts confused: Fused8BitRowwise (float32), FusedNBitRowwiseSBHalf (float16)",
)
reading(
    "fused.bias_before_scale",
    "applies the bias before the scale: (q + bias) * scale",
    "q * scale + bias (EMB-QNT-4, 5, 6)",
    RowReading(("fused8_rowwise", "fused4_rowwise", "affine"), _bias_first),
    "the zero-point form (q - zero_point) * scale of torch.ao quantization applied to a bias",
)
reading(
    "affine.group_off_by_one",
    "reads element i with the scale of group (i + 1) // G",
    "element i belongs to group i // G (EMB-QNT-6)",
    RowReading(("affine", "q8_0", "q4_0"), _group_off_by_one),
    "off-by-one group indices in hand-written group-quantized kernels",
)
register(
    Mutant(
        "quant.bag.bias_unweighted",
        "weights the scaled integers of a row but adds its bias unweighted",
        "a row is dequantized first, then weighted: w * (q * scale + bias) (EMB-QNT-14)",
        {
            BAG: Misread(
                RowReading(("fused8_rowwise", "fused4_rowwise", "affine"), lambda t, f, d, p: p, True)
            ).quantized_bag_forward
        },
        source="fused bag kernels folding the per-sample weight into the scale only",
    )
)


def _quantizer(convention: str) -> Callable[..., np.ndarray]:
    def quantize(weight: Any, format: str) -> np.ndarray:
        return quantize_table(weight, format, (convention,))

    return quantize


for _name, _said, _hint, _convention, _source in (
    (
        "quantize.round_half_even",
        "rounds a ggml tie to even (numpy.round, torch.round)",
        "Q8_0 rounds a tie away from zero (roundf), Q4_0 up (EMB-QNT-8, 9), or declare round_half_even",
        "round_half_even",
        "AiDotNet.Tensors #277 review: .NET Math.Round (to even) in a Q8_0 quantizer; ggml and gguf-py use roundf",
    ),
    (
        "quantize.round_half_away",
        "rounds an FBGEMM or MLX tie away from zero (C round())",
        "lrintf and MLX's round take a tie to even (EMB-QNT-10 .. 12), or declare round_half_away",
        "round_half_away",
        "std::round or Python's round-half-up in re-implementations of FBGEMM's lrintf",
    ),
    (
        "quantize.scale_as_stored",
        "divides by the float16 scale as stored, not ggml's float32 one",
        "id = 1 / d with d in float32 (EMB-QNT-8, 9), or declare scale_as_stored",
        "scale_as_stored",
        "ports that divide by the stored GGML_FP16_TO_FP32(y.d) instead of the float32 d",
    ),
    (
        "quantize.bias_from_min",
        "takes an affine group's minimum as its bias, MLX takes the edge it can represent",
        "MLX's affine_quantize snaps the larger edge (EMB-QNT-12), or declare bias_from_min",
        "bias_from_min",
        "the textbook min-max affine scheme (scale = max - min over the levels, bias = min; mlx #3161 states it so)",
    ),
):
    register(Mutant(f"quant.{_name}", _said, _hint, {QUANTIZE: _quantizer(_convention)}, source=_source))


def _q4_0_truncated(weight: Any, format: str) -> np.ndarray:
    """Q4_0 with q = trunc(x / d + 8): the half left out (any other format as the reference quantizes it)."""
    fmt = ref.checked_format(format)
    if fmt.kind != "q4_0":
        return quantize_table(weight, format)
    quantize_table(weight, format)  # the reference's checks
    x = np.asarray(weight, np.float32)
    blocks = x.reshape(x.shape[0], -1, GGML_BLOCK)
    first = np.abs(blocks).argmax(axis=-1)[..., None]
    d = (np.take_along_axis(blocks, first, axis=-1) / np.float32(-8)).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(d != 0, (blocks * (np.float32(1) / np.where(d != 0, d, 1))).astype(np.float32), 0)
    q = np.clip(np.trunc((v + np.float32(8)).astype(np.float32)), 0, 15).astype(np.int64).reshape(x.shape)
    return pack_rows(q - 8, d[..., 0].astype(np.float16), d[..., 0], fmt).astype(np.int32)


register(
    Mutant(
        "quant.quantize.q4_0_truncated",
        "truncates x / d + 8 without the half (ggml adds 8.5)",
        "q = min(15, trunc(x * id + 8.5)) (EMB-QNT-9)",
        {QUANTIZE: _q4_0_truncated},
        source="ports of ggml's (int8_t)(x0 + 8.5f) that drop the .5 (a truncation, not a rounding)",
    )
)


def _one_scale_per_row(fmt: QuantFormat, d: int, row: int) -> Optional[int]:
    """A grouped row counted with one scale (and bias) for the whole row."""
    if fmt.group is None:
        return None
    values, groups = d * fmt.bits // 8, d // fmt.group
    return values + (row - values) // groups


def _row_bytes(change: Callable[[QuantFormat, int, int], Optional[int]]) -> Callable[..., dict[str, int]]:
    def quantized_table_bytes(num_rows: Any, embed_dim: Any, format: str) -> dict[str, int]:
        right = ref.quantized_table_bytes(num_rows, embed_dim, format)
        fmt = ref.checked_format(format)
        row = change(fmt, int(embed_dim), right["row_bytes"])
        return right if row is None else {"row_bytes": row, "table_bytes": int(num_rows) * row}

    return quantized_table_bytes


for _name, _said, _hint, _change in (
    (
        "bytes.values_only",
        "counts only the packed values of a row, not its scales and biases",
        "a row holds its values and its scales and biases (EMB-QNT-13)",
        lambda f, d, row: -(-d * f.bits // 8),
    ),
    (
        "bytes.nibbles_floored",
        "counts D // 2 bytes of 4-bit values: an odd width loses its last value",
        "ceil(D / 2) bytes of 4-bit values (EMB-QNT-13)",
        lambda f, d, row: row - (d % 2) if f.kind == "fused4_rowwise" else None,
    ),
    (
        "bytes.one_scale_per_row",
        "counts one scale and bias per row for a group format",
        "one scale (and bias) per block or group (EMB-QNT-13)",
        _one_scale_per_row,
    ),
):
    register(
        Mutant(
            f"quant.{_name}",
            _said,
            _hint,
            {BYTES: _row_bytes(_change)},
            source="hand-written memory estimates of quantized tables (model-size calculators)",
        )
    )
