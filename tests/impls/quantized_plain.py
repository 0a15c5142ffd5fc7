"""Quantized tables (spec section 17) as real code computes them, written apart from embconf: each row's bytes read
with struct, every value ``q * scale + bias`` computed in float32 (the product rounded, then the sum: two roundings,
what section 8.10 allows), a half output cast from that float32, bags summed in float32; the quantizers in float32
step by step as the formats' references write them. tests/spec/test_quantized.py runs it over every quantized case.
"""

from __future__ import annotations

import math
import re
import struct

import numpy as np

EMBCONF_FEATURES = [
    "quant-q8_0",
    "quant-q4_0",
    "quant-fused8_rowwise",
    "quant-fused4_rowwise",
    "quant-affine",
    "quant-bag-weights",
    "float16",
]
F = np.float32
HALF_EVEN = ()  # the formats whose ties this module rounds to even beyond the spec's (quantized_half_even.py sets it)


class Refused(ValueError):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _format(name):
    fixed = {
        "q8_0": ("q8_0", 8, 32, "e"),
        "q4_0": ("q4_0", 4, 32, "e"),
        "fused8_rowwise": ("fused8", 8, None, "f"),
        "fused4_rowwise": ("fused4", 4, None, "e"),
    }
    if name in fixed:
        return fixed[name]
    match = re.fullmatch(r"affine([1-6]|8)_g(32|64|128)(_float16|_bfloat16)?", str(name))
    if not match:
        raise Refused("invalid_config", f"no format {name!r}")
    code = {None: "f", "_float16": "e", "_bfloat16": "b"}[match.group(3)]
    return ("affine", int(match.group(1)), int(match.group(2)), code)


def _scale(raw, code):
    if code == "b":
        return struct.unpack("<f", b"\0\0" + raw)[0]
    return struct.unpack("<" + code, raw)[0]


def _size(code):
    return 4 if code == "f" else 2


def row_bytes(fmt, d):
    kind, bits, group, code = fmt
    if group and d % group:
        raise Refused("shape_mismatch", f"{d} is not a multiple of {group}")
    if kind in ("q8_0", "q4_0"):
        return d // 32 * (2 + 32 * bits // 8)
    if group is None:
        return (d * bits + 7) // 8 + 2 * _size(code)
    return d * bits // 8 + 2 * (d // group) * _size(code)


def _bits(data, bits, count):
    stream = int.from_bytes(bytes(data), "little")
    return [(stream >> (i * bits)) & ((1 << bits) - 1) for i in range(count)]


def _row(row, fmt, d):
    """[(q, scale, bias)] of one row."""
    kind, bits, group, code = fmt
    out = []
    if kind in ("q8_0", "q4_0"):
        for b in range(d // 32):
            block = row[b * (2 + 16 * (bits // 4)) : (b + 1) * (2 + 16 * (bits // 4))]
            scale = _scale(block[:2], "e")
            if kind == "q8_0":
                out += [(q, scale, -0.0) for q in struct.unpack("32b", block[2:])]  # d * q, a product
            else:
                body = block[2:]
                out += [((v & 15) - 8, scale, -0.0) for v in body] + [((v >> 4) - 8, scale, -0.0) for v in body]
        return out
    size = _size(code)
    if group is None:
        width = (d * bits + 7) // 8
        scale, bias = _scale(row[width : width + size], code), _scale(row[width + size : width + 2 * size], code)
        return [(q, scale, bias) for q in _bits(row[:width], bits, d)]
    width, groups = d * bits // 8, d // group
    scales = [_scale(row[width + g * size : width + (g + 1) * size], code) for g in range(groups)]
    biases = [_scale(row[width + (groups + g) * size : width + (groups + g + 1) * size], code) for g in range(groups)]
    return [(q, scales[i // group], biases[i // group]) for i, q in enumerate(_bits(row[:width], bits, d))]


def _table(qweight, format, embed_dim):
    fmt = _format(format)
    if embed_dim < 1:
        raise Refused("invalid_config", "embed_dim < 1")
    table = np.asarray(qweight)
    if table.ndim != 2 or table.shape[1] != row_bytes(fmt, embed_dim):
        raise Refused("shape_mismatch", f"qweight {table.shape}")
    return fmt, [bytes(r.astype(np.uint8).tolist()) for r in table]


def _value(q, scale, bias):
    with np.errstate(over="ignore", invalid="ignore"):
        return F(F(q) * F(scale)) + F(bias)


def _dequantized(rows, fmt, d, i):
    return np.array([_value(*e) for e in _row(rows[i], fmt, d)], F)


def _ids(ids, rows):
    ids = np.asarray(ids)
    if ids.size and (ids.min() < 0 or ids.max() >= rows):
        raise Refused("index_out_of_range", "id out of range")
    return ids


def quantized_lookup(qweight, ids, format, embed_dim, out_dtype):
    _format(format)
    if out_dtype not in ("float32", "float16"):
        raise Refused("invalid_config", out_dtype)
    fmt, rows = _table(qweight, format, embed_dim)
    ids = _ids(ids, len(rows))
    out = np.array([_dequantized(rows, fmt, embed_dim, i) for i in ids.reshape(-1)], F).reshape(*ids.shape, embed_dim)
    with np.errstate(over="ignore"):
        return out.astype(out_dtype)


def quantized_table_bytes(num_rows, embed_dim, format):
    fmt = _format(format)
    if num_rows < 0 or embed_dim < 1:
        raise Refused("invalid_config", "negative size")
    row = row_bytes(fmt, embed_dim)
    return {"row_bytes": row, "table_bytes": num_rows * row}


def quantized_bag_forward(qweight, ids, offsets, mode, format, embed_dim, per_sample_weights=None):
    _format(format)
    if mode not in ("sum", "mean"):
        raise Refused("invalid_config", mode)
    fmt, rows = _table(qweight, format, embed_dim)
    ids, points = np.asarray(ids), [int(v) for v in np.asarray(offsets)]
    if ids.ndim != 1 or np.ndim(offsets) != 1:
        raise Refused("shape_mismatch", "1-D ids and offsets")
    if per_sample_weights is not None and np.shape(per_sample_weights) != ids.shape:
        raise Refused("shape_mismatch", "weights")
    if points and (points[0] != 0 or any(b < a for a, b in zip(points, points[1:])) or points[-1] > ids.size):
        raise Refused("invalid_offsets", str(points))
    _ids(ids, len(rows))
    w = np.ones(ids.size, F) if per_sample_weights is None else np.asarray(per_sample_weights, F)
    out = np.zeros((len(points), embed_dim), F)
    for b, (start, end) in enumerate(zip(points, points[1:] + [ids.size])):
        for i in range(start, end):
            out[b] += w[i] * _dequantized(rows, fmt, embed_dim, ids[i])
        divisor = F(end - start) if per_sample_weights is None else F(w[start:end].sum(dtype=F))
        if mode == "mean":
            out[b] = out[b] / divisor if end > start and divisor != 0 else 0
    return out


def _round(v, even):
    """The nearest integer of float32 ``v``: a tie to even, or away from zero."""
    if even:
        return np.rint(v)
    return np.sign(v) * np.floor(np.abs(v.astype(np.float64)) + 0.5)


def _half(v):
    return np.asarray(v, F).astype(np.float16).astype(F)


def _pack_bits(values, bits):
    stream = sum(int(q) << (i * bits) for i, q in enumerate(values))
    return list(stream.to_bytes((len(values) * bits + 7) // 8, "little"))


def _scales(values, code):
    if code == "b":
        return [byte for v in values for byte in struct.pack("<f", float(v))[2:]]  # values already bfloat16
    return [byte for v in values for byte in struct.pack("<" + code, float(v))]


def quantize_table(weight, format):
    fmt = _format(format)
    x = np.asarray(weight, F)
    if x.ndim != 2:
        raise Refused("shape_mismatch", "weight not 2-D")
    kind, bits, group, code = fmt
    row_bytes(fmt, x.shape[1])
    out = []
    for row in x:
        if kind == "q8_0" or kind == "q4_0":
            data = []
            for block in row.reshape(-1, 32):
                if kind == "q8_0":
                    d = F(np.abs(block).max() / F(127))
                    inv = F(F(1) / d) if d else F(0)
                    q = _round(F(block * inv), kind in HALF_EVEN)
                    data += _scales([_half(d)], "e") + list(q.astype(np.int8).view(np.uint8))
                else:
                    d = F(block[int(np.argmax(np.abs(block)))] / F(-8))
                    inv = F(F(1) / d) if d else F(0)
                    v = F(block * inv)
                    q = np.rint(v) + 8 if kind in HALF_EVEN else np.trunc(F(v + F(8.5)))
                    q = np.clip(q, 0, 15).astype(int)
                    data += _scales([_half(d)], "e") + [int(a) | (int(b) << 4) for a, b in zip(q[:16], q[16:])]
            out.append(data)
        elif kind == "fused8":
            low, span = row.min(), F(row.max() - row.min())
            inv = F(F(255) / F(span + F(1e-8)))
            q = np.clip(np.rint(F(F(row - low) * inv)), 0, 255).astype(int)
            out.append(list(q) + _scales([F(span / F(255)), low], "f"))
        elif kind == "fused4":
            low = _half(row.min())
            scale = _half(F(F(row.max() - low) / F(15)))
            scale = F(1) if scale == 0 or math.isinf(F(1) / scale) else scale
            q = np.clip(np.rint(F(F(row - low) * F(F(1) / scale))), 0, 15).astype(int)
            out.append(_pack_bits(q, 4) + _scales([scale, low], "e"))
        else:
            scales, biases, qs = [], [], []
            for g in row.reshape(-1, group):
                low, high, n = g.min(), g.max(), F(2**bits - 1)
                s = max(F(F(high - low) / n), F(1e-7))
                edge, s = (low, s) if abs(low) > abs(high) else (high, -s)
                q0 = np.rint(F(edge / s))
                s, bias = (F(edge / F(q0)), edge) if q0 != 0 else (s, F(0))
                qs += list(np.clip(np.rint(F(F(g - bias) / s)), 0, n).astype(int))
                scales.append(s)
                biases.append(bias)
            stored = [np.asarray(v, F).astype(np.float16) if code == "e" else v for v in (scales, biases)]
            out.append(_pack_bits(qs, bits) + _scales(stored[0], code) + _scales(stored[1], code))
    return np.array(out, np.int32).reshape(x.shape[0], -1)
