"""The input domains of the quantized tables (spec section 17): the format (each kind, an unknown name), the width
against its block (one block, many, a partial one), the stored table (typical, a zero row, extreme integers and
scales, negative scales) and its width, the float table a quantizer reads (random, a zero row, a constant row, an
outlier, rounding ties), the ids, the output dtype, a bag's mode, offsets and weights, a table's rows, and each
declared quantize convention."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

import numpy as np

from embconf.model.quantize_conventions import QuantizeConvention
from embconf.model.quantized import parse_format
from embconf.reference.cases.domain_ids import ids_domains, rows_of
from embconf.reference.cases.domain_kinds import ABSENT, Base, Boundary, Domain, Excluded, Inputs, array, value_of
from embconf.reference.cases.domain_shapes import choice, convention, following
from embconf.reference.cases.domains_bags import OFFSET_ERRORS, OFFSETS, _offsets, _put_offsets, _put_weights, _weights
from embconf.reference.cases.quantized_tables import (
    FLOAT,
    STORED,
    float_kind,
    float_table,
    named,
    stored_kind,
    stored_table,
    unit,
)

FORMATS = {"q8_0": "q8_0", "q4_0": "q4_0", "fused8_rowwise": "fused8_rowwise", "fused4_rowwise": "fused4_rowwise",
           "affine": "affine4_g32", "affine_float16": "affine3_g64_float16", "affine_bfloat16": "affine2_g128_bfloat16",
           "unknown": "q5_1"}
FORMAT_NOTES = {"q8_0": "ggml Q8_0", "q4_0": "ggml Q4_0", "fused8_rowwise": "FBGEMM fused 8-bit row-wise",
                "fused4_rowwise": "FBGEMM fused 4-bit row-wise", "affine": "MLX affine, 4 bits, groups of 32, float32",
                "affine_float16": "MLX affine, 3 bits, groups of 64, float16 scales",
                "affine_bfloat16": "MLX affine, 2 bits, groups of 128, bfloat16 scales",
                "unknown": "a format the spec does not name (ggml's Q5_1)"}
GROUPED = ("q8_0", "q4_0", "affine", "affine_float16", "affine_bfloat16")
WIDTHS = {"one_block": "one block or group (row-wise: two values)", "many_blocks": "several blocks",
          "partial": "not a multiple of the block (row-wise: an odd width)", "zero": "no value"}
ROWS = 4  # of every generated table
PLACEHOLDER = np.zeros((ROWS, 1), np.int32)  # the rows the ids are set against; the finish makes the table


def _format(quantizer: bool) -> Domain:
    """The format: each kind; the quantizer's without bfloat16 scales (no case quantizes into them)."""
    kept = {b: v for b, v in FORMATS.items() if not (quantizer and b == "affine_bfloat16")}
    domain = choice("format", kept, FORMAT_NOTES, {"unknown": "invalid_config"}, other="unknown")
    return following(domain, _format_set)


def _format_set(inputs: Inputs, boundary: str) -> None:
    """A format set at a boundary takes a width that fits it (the width's boundary, when set, comes next)."""
    inputs["_format_set"] = True
    _put_width(inputs, "many_blocks", None)


def _fmt(inputs: Mapping[str, Any]) -> Any:
    return parse_format(value_of(inputs, "format"))


def _width_of(inputs: Mapping[str, Any]) -> Optional[int]:
    given = value_of(inputs, "embed_dim")
    if given is ABSENT:
        weight = array(inputs, "weight")
        return None if weight is None or weight.ndim != 2 else int(weight.shape[1])
    return int(given) if isinstance(given, (int, np.integer)) and not isinstance(given, bool) else None


def _width(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
    fmt, d = _fmt(inputs), _width_of(inputs)
    if fmt is None or d is None:
        return None
    if d < 1:
        return "zero"
    step = unit(fmt)
    return "partial" if d % step else "one_block" if d == step else "many_blocks"


def _width_value(inputs: Mapping[str, Any], boundary: str) -> int:
    fmt = _fmt(inputs) or named("q8_0")
    step = unit(fmt)
    return {"one_block": step, "many_blocks": 2 * step, "partial": step + (1 if fmt.group is None else 16),
            "zero": 0}[boundary]


def _put_width(inputs: Inputs, boundary: str, rng: Optional[np.random.Generator]) -> None:
    if boundary == "partial" and rng is not None and not inputs.get("_format_set"):
        fmt = _fmt(inputs)
        if fmt is not None and fmt.group is not None:  # the starting format has blocks: a row-wise one has none
            inputs["format"] = "fused4_rowwise"
    if "weight" in inputs:  # the quantizer's width is its table's
        inputs["_width"] = _width_value(inputs, boundary)
    else:
        inputs["embed_dim"] = _width_value(inputs, boundary)


def _table_domain(name: str, kinds: tuple[str, ...], notes: Mapping[str, str], classify: Any) -> Domain:
    """The kind of table a case holds; the finish builds it (:func:`_finish`) from the format and width."""

    def put(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
        inputs["_kind"] = boundary

    return Domain(name, tuple(Boundary(k, notes[k]) for k in kinds), classify, put, "values")


STORED_NOTES = {"typical": "typical integers, positive scales", "zero_row": "a row of zero scale and bias",
                "extreme": "integers at both ends of their range, the largest scale / 256",
                "negative_scale": "every scale negative"}
FLOAT_NOTES = {"random": "standard normal values", "zero_row": "a row of zeros", "constant_row": "a constant row",
               "outlier": "one value 3000, the others standard normal",
               "ties": "values halfway between two integers of a scale-1 grid: the rounding rule decides"}


def _stored(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
    fmt, d, table = _fmt(inputs), _width_of(inputs), array(inputs, "qweight")
    return None if fmt is None or d is None or table is None else stored_kind(table, fmt, d)


def _float(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
    fmt, weight = _fmt(inputs), array(inputs, "weight")
    return None if fmt is None or weight is None else float_kind(weight, fmt)


def _finish(inputs: Inputs, rng: np.random.Generator) -> None:
    """The table of the chosen kind, for the format and width as they now are (a width that does not fit the format
    keeps a table of the block's width: the error is the width's)."""
    fmt = _fmt(inputs) or named("q8_0")
    kind = inputs.pop("_kind", None)
    inputs.pop("_format_set", None)
    if "weight" in inputs:
        d = inputs.pop("_width", inputs["weight"].shape[1])
        safe = d if d >= 1 and not fmt.check_width(d) else unit(fmt)
        table = float_table(fmt, ROWS, safe, kind or "random", rng)
        inputs["weight"] = table if safe == d else np.zeros((ROWS, max(d, 0)), np.float32) + table[:, :1]
        return
    d = int(inputs.get("embed_dim", 0))
    if "qweight" in inputs:
        fits = d >= 1 and not fmt.check_width(d)
        inputs["qweight"] = stored_table(fmt, ROWS, d if fits else unit(fmt), kind or "typical", rng)


def _qweight_width(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
    fmt, d, table = _fmt(inputs), _width_of(inputs), array(inputs, "qweight")
    if fmt is None or d is None or table is None or d < 1 or fmt.check_width(d) or table.ndim != 2:
        return None
    return "matching" if table.shape[1] == fmt.row_bytes(d) else "mismatched"


def _put_qweight_width(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
    table = array(inputs, "qweight")
    if boundary == "mismatched" and table is not None:
        inputs["qweight"] = table[:, :-1]


def _qweight_shape() -> Domain:
    return Domain("qweight", (Boundary("matching", "row_bytes(D) wide"),
                              Boundary("mismatched", "a byte short of row_bytes(D)", "shape_mismatch")),
                  _qweight_width, _put_qweight_width, "shape")


def _width_domain(errors: bool = True) -> Domain:
    kept = {b: n for b, n in WIDTHS.items() if errors or b != "zero"}
    return Domain("embed_dim", tuple(Boundary(b, n, "invalid_config" if b == "zero" else None) for b, n in kept.items()),
                  _width, _put_width, "block")


def _ids(ranks: tuple[str, ...]) -> tuple[Domain, ...]:
    rank, count, _, where = ids_domains("ids", rows_of("qweight"), ranks, ("int64",))
    return rank, count, where


def _lookup() -> tuple[Domain, ...]:
    out_dtype = choice("out_dtype", {"float32": "float32", "float16": "float16", "unknown": "bfloat16"},
                       {"float32": "float32 output", "float16": "half output, rounded once",
                        "unknown": "an output dtype the section does not name"}, {"unknown": "invalid_config"},
                       other="unknown")
    # in the order of EMB-QNT-15's checks: a case at two error boundaries expects the first
    return (_format(False), out_dtype, _width_domain(), _table_domain("qweight", STORED, STORED_NOTES, _stored),
            _qweight_shape(), *_ids(("0d", "1d", "2d")))


def _quantize() -> tuple[Domain, ...]:
    return (_format(True), _width_domain(False), _table_domain("weight", FLOAT, FLOAT_NOTES, _float),
            convention("quantized"))


def _rows(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
    given = value_of(inputs, "num_rows")
    if not isinstance(given, (int, np.integer)) or isinstance(given, bool):
        return None
    return "negative" if given < 0 else "zero" if given == 0 else "one" if given == 1 else \
        "past_2_53" if given * 40 > 2**53 else "many"


def _bytes() -> tuple[Domain, ...]:
    sizes = {"zero": 0, "one": 1, "many": 1000, "past_2_53": 2**50, "negative": -1}
    notes = {"zero": "an empty table", "one": "one row", "many": "a thousand rows",
             "past_2_53": "2^50 rows: bytes past 2^53", "negative": "a negative count"}
    rows = Domain("num_rows", tuple(Boundary(b, notes[b], "invalid_config" if b == "negative" else None) for b in sizes),
                  _rows, lambda inputs, boundary, rng: inputs.__setitem__("num_rows", sizes[boundary]))
    return (_format(False), _width_domain(), rows)


def _bag() -> tuple[Domain, ...]:
    (count, where) = _ids(("1d",))[1:]
    weights = Domain("per_sample_weights", (
        Boundary("absent", "no weights"), Boundary("positive", "every weight > 0"),
        Boundary("nonpositive", "a weight 0 and a negative one"),
        Boundary("wrong_shape", "not the shape of the ids", "shape_mismatch")), _weights, _put_weights)  # the bags'
    offsets = Domain("offsets", tuple(Boundary(b, n, OFFSET_ERRORS.get(b)) for b, n in OFFSETS.items()
                                      if b not in ("absent", "last_not_n")), _offsets, _put_offsets)
    mode = choice("mode", {"sum": "sum", "mean": "mean", "unknown": "max"},
                  {"sum": "mode sum", "mean": "mode mean", "unknown": "a mode the section does not name (max)"},
                  {"unknown": "invalid_config"}, other="unknown")
    # the checks' order (EMB-QNT-15), but the ids' count before what reads it (the weights, the offsets)
    return (_format(False), mode, _width_domain(), _table_domain("qweight", STORED, STORED_NOTES, _stored), count,
            weights, offsets, where)


def _lookup_base(rng: np.random.Generator) -> Inputs:
    return {"qweight": PLACEHOLDER, "ids": np.array([0, 3, 1], np.int64), "format": "q8_0", "embed_dim": 32,
            "out_dtype": "float32"}


def _bag_base(rng: np.random.Generator) -> Inputs:
    return {"qweight": PLACEHOLDER, "ids": np.array([0, 3, 1, 2, 2], np.int64), "offsets": np.array([0, 2], np.int64),
            "mode": "sum", "format": "q8_0", "embed_dim": 32}


def _bag_finish(inputs: Inputs, rng: np.random.Generator) -> None:
    _finish(inputs, rng)
    weights, ids = array(inputs, "per_sample_weights"), array(inputs, "ids")
    if weights is not None and ids is not None and weights.size == ids.size + 1 and ids.size:
        return  # wrong_shape stays one longer
    if weights is not None and ids is not None and weights.shape != ids.shape:
        inputs["per_sample_weights"] = np.resize(weights, ids.shape).astype(np.float32)


DOMAINS: dict[str, dict[str, tuple[Domain, ...]]] = {"quantized": {
    "quantized_lookup": _lookup(),
    "quantize_table": _quantize(),
    "quantized_table_bytes": _bytes(),
    "quantized_bag_forward": _bag(),
}}
BASES: dict[str, Base] = {
    "quantized_lookup": Base(_lookup_base, _finish),
    "quantize_table": Base(lambda rng: {"weight": np.zeros((ROWS, 32), np.float32), "format": "q8_0"}, _finish),
    "quantized_table_bytes": Base(lambda rng: {"num_rows": 10, "embed_dim": 64, "format": "q8_0"}, _finish),
    "quantized_bag_forward": Base(_bag_base, _bag_finish),
}

_PARTIAL = ("embed_dim.block", "partial")
EXCLUDED: dict[str, tuple[Excluded, ...]] = {"quantized": (
    *(Excluded(_PARTIAL, ("format", f), "a width not a multiple of the block (EMB-QNT-1)", "shape_mismatch")
      for f in GROUPED),
    *(Excluded(("convention", c.value), ("format", f), f"{c.value} applies to other formats")
      for c in QuantizeConvention for f, name in FORMATS.items() if f != "unknown" and named(name).kind not in c.formats),
    *(Excluded(("ids.count", n), ("ids.rank", "0d"), "a 0-D id is one id") for n in ("empty", "many")),
    Excluded(("ids.count", "empty"), ("offsets", "many_bags"), "no ids: every bag is empty"),
    Excluded(("ids.count", "empty"), ("offsets", "one_bag"), "no ids: the bag is empty"),
    Excluded(("ids.count", "one"), ("offsets", "many_bags"), "one id: all bags but one are empty"),
    Excluded(("ids.count", "empty"), ("per_sample_weights", "nonpositive"), "no ids: no weight to be <= 0"),
)}
