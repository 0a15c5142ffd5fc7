"""Quantized cases (spec section 17, since 2.3.0): a lookup of every format and every affine width, quantizing into
each format, the bytes of every format, bags over a quantized table, the errors, and the declared quantize
conventions; then the pairwise cases of the input domains (:mod:`embconf.reference.cases.quantized_cover`).

Each case's features are its format's (``quant-<kind>``), ``float16`` for a half output and ``quant-bag-weights``
with weights (:func:`embconf.model.quantized.case_features`); a canonical quantize case whose answer a declared
convention changes carries that convention's canonical marker, found by quantizing under it.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

import numpy as np

from embconf.model.quantize_conventions import QuantizeConvention
from embconf.model.quantized import case_features, parse_format
from embconf.reference.cases import CaseSpec, rng_for
from embconf.reference.cases.quantized_cover import pairwise
from embconf.reference.cases.quantized_tables import float_table, named, stored_table
from embconf.reference.errors import EmbeddingError
from embconf.reference.quantize import quantize_table

LOOKUP_REQUIREMENT = {"q8_0": "EMB-QNT-2", "q4_0": "EMB-QNT-3", "fused8_rowwise": "EMB-QNT-4",
                      "fused4_rowwise": "EMB-QNT-5", "affine": "EMB-QNT-6"}
QUANTIZE_REQUIREMENT = {"q8_0": "EMB-QNT-8", "q4_0": "EMB-QNT-9", "fused8_rowwise": "EMB-QNT-10",
                        "fused4_rowwise": "EMB-QNT-11", "affine": "EMB-QNT-12"}
ROWS = 6
CONVENTION_FORMATS = {"round_half_even": ("q8_0", "q4_0"), "round_half_away": ("fused8_rowwise", "fused4_rowwise",
                      "affine4_g32"), "scale_as_stored": ("q8_0", "q4_0"), "bias_from_min": ("affine4_g32",
                      "affine2_g64_float16")}


def _requirements(spec: CaseSpec) -> tuple[str, ...]:
    fmt = parse_format(spec.inputs.get("format"))
    kind = fmt.kind if fmt is not None else None
    found: tuple[str, ...] = {
        "quantized_lookup": ("EMB-QNT-1", LOOKUP_REQUIREMENT.get(kind or "", ""), "EMB-QNT-7"),
        "quantize_table": (QUANTIZE_REQUIREMENT.get(kind or "", ""),),
        "quantized_table_bytes": ("EMB-QNT-13",),
        "quantized_bag_forward": ("EMB-QNT-14",),
    }[spec.operation]
    found += tuple(c.requirement for c in QuantizeConvention if c.feature in spec.features)
    found += ("EMB-QNT-15", "EMB-ERR-1") if spec.error else ()
    return tuple(dict.fromkeys(r for r in (*spec.requirements, *found) if r))


def markers(operation: str, inputs: dict[str, Any], features: tuple[str, ...]) -> tuple[str, ...]:
    """The canonical markers of a canonical quantize case: those of the conventions that answer it otherwise."""
    fmt = parse_format(inputs.get("format"))
    if operation != "quantize_table" or fmt is None or any(c.feature in features for c in QuantizeConvention):
        return ()
    try:
        canonical = quantize_table(inputs["weight"], fmt.name)
    except EmbeddingError:
        return ()
    return tuple(c.canonical_marker for c in QuantizeConvention if fmt.kind in c.formats
                 and not np.array_equal(quantize_table(inputs["weight"], fmt.name, (c.value,)), canonical))


def implied_features(operation: str, inputs: dict[str, Any], features: tuple[str, ...]) -> tuple[str, ...]:
    """The features a quantized case's inputs imply (its format's, a half output's, weights') and its canonical
    markers: what every builder of quantized cases gives a case (named, pairwise, covering rows, explore's draws)."""
    return (*case_features(inputs), *markers(operation, inputs, features))


def described(spec: CaseSpec) -> CaseSpec:
    """``spec`` with its requirements and the features its inputs imply (and its canonical markers)."""
    features = tuple(dict.fromkeys((*spec.features, *implied_features(spec.operation, spec.inputs, spec.features))))
    return replace(spec, requirements=_requirements(replace(spec, features=features)), features=features)


def _case(case_id: str, description: str, operation: str, inputs: dict[str, Any], reqs: tuple[str, ...] = (),
          error: Optional[str] = None, convention: str = "") -> CaseSpec:
    features = (f"quantize-{convention}",) if convention else ()
    return described(CaseSpec(case_id, description, reqs, operation, inputs, features, error))


def _lookup(case_id: str, name: str, width: int, kind: str = "typical", out_dtype: str = "float32",
            ids: Any = (0, 5, 2, 2), **given: Any) -> CaseSpec:
    fmt = named(name)
    inputs = {"qweight": stored_table(fmt, ROWS, width, kind, rng_for(case_id)), "ids": np.array(ids, np.int64),
              "format": name, "embed_dim": width, "out_dtype": out_dtype, **given}
    return _case(case_id, f"{name} rows of {width} ({kind} stored values), {out_dtype} out", "quantized_lookup", inputs)


def lookup_cases() -> list[CaseSpec]:
    cases = [_lookup(f"quant.lookup.{name}.basic", name, width) for name, width in (
        ("q8_0", 64), ("q4_0", 64), ("fused8_rowwise", 8), ("fused4_rowwise", 7), ("affine4_g32", 64))]
    cases += [_lookup(f"quant.lookup.{name}.bits", name, width) for name, width in (
        ("affine1_g32", 32), ("affine2_g64_float16", 128), ("affine3_g32", 64), ("affine5_g128", 128),
        ("affine6_g64_bfloat16", 64), ("affine8_g32_float16", 32))]
    cases += [
        _lookup("quant.lookup.fused8_rowwise.float16_out", "fused8_rowwise", 9, out_dtype="float16"),
        _lookup("quant.lookup.q4_0.negative_scale", "q4_0", 32, "negative_scale"),
        _lookup("quant.lookup.affine4_g64_float16.negative_scale", "affine4_g64_float16", 64, "negative_scale"),
        _lookup("quant.lookup.fused4_rowwise.extreme", "fused4_rowwise", 5, "extreme", ids=(0, 0, 1)),
        _lookup("quant.lookup.q8_0.extreme_float16_out", "q8_0", 32, "extreme", "float16", ids=(0, 1)),
        _lookup("quant.lookup.q8_0.zero_row", "q8_0", 32, "zero_row", ids=(0, 1, 0)),
        _lookup("quant.lookup.q4_0.block_boundary", "q4_0", 96, ids=(3,)),
    ]
    return cases


def _quantize(case_id: str, name: str, width: int, kind: str = "random", convention: str = "") -> CaseSpec:
    fmt = named(name)
    inputs = {"weight": float_table(fmt, ROWS, width, kind, rng_for(case_id)), "format": name}
    return _case(case_id, f"quantize a {kind} table of width {width} into {name}", "quantize_table", inputs,
                 convention=convention)


def quantize_cases() -> list[CaseSpec]:
    cases = [_quantize(f"quant.quantize.{name}.basic", name, width) for name, width in (
        ("q8_0", 64), ("q4_0", 64), ("fused8_rowwise", 12), ("fused4_rowwise", 9), ("affine4_g32", 64),
        ("affine3_g64_float16", 128), ("affine8_g128", 128))]
    cases += [_quantize(f"quant.quantize.{name}.ties", name, width, "ties") for name, width in (
        ("q8_0", 32), ("q4_0", 32), ("fused8_rowwise", 16), ("fused4_rowwise", 16), ("affine4_g32", 64))]
    for convention in QuantizeConvention:
        for name in CONVENTION_FORMATS[convention.value]:
            kind = "ties" if convention.value.startswith("round") else "random"
            cases.append(_quantize(f"quant.convention.{convention.value}.{name}", name, 64, kind, convention.value))
    return cases


def bytes_cases() -> list[CaseSpec]:
    sizes = (("q8_0", 4096), ("q4_0", 4096), ("fused8_rowwise", 127), ("fused4_rowwise", 127), ("affine4_g64", 4096),
             ("affine3_g128_float16", 384), ("affine6_g32_bfloat16", 96), ("affine1_g32", 32))
    return [_case(f"quant.bytes.{name}.basic" if i < 5 else f"quant.bytes.{name}.width", f"bytes of {name} rows of {d}",
                  "quantized_table_bytes", {"num_rows": 32000, "embed_dim": d, "format": name})
            for i, (name, d) in enumerate(sizes)]


def _bag(case_id: str, name: str, width: int, mode: str, ids: list[int], offsets: list[int],
         weights: Optional[list[float]] = None) -> CaseSpec:
    fmt = named(name)
    inputs: dict[str, Any] = {"qweight": stored_table(fmt, ROWS, width, "typical", rng_for(case_id)),
                              "ids": np.array(ids, np.int64), "offsets": np.array(offsets, np.int64), "mode": mode,
                              "format": name, "embed_dim": width}
    if weights is not None:
        inputs["per_sample_weights"] = np.array(weights, np.float32)
    return _case(case_id, f"bags over a {name} table, mode {mode}", "quantized_bag_forward", inputs)


def bag_cases() -> list[CaseSpec]:
    return [
        _bag("quant.bag.q8_0.sum", "q8_0", 32, "sum", [0, 3, 3, 5, 1], [0, 2, 2]),
        _bag("quant.bag.fused8_rowwise.mean_weights", "fused8_rowwise", 6, "mean", [1, 4, 0, 2], [0, 3],
             [0.5, 2.0, 1.25, -0.75]),
        _bag("quant.bag.q4_0.sum_weights", "q4_0", 32, "sum", [2, 2, 5], [0], [1.5, -0.5, 3.0]),
        _bag("quant.bag.affine4_g32.mean", "affine4_g32", 32, "mean", [0, 1, 2, 3, 4, 5], [0, 1, 6]),
    ]


def error_cases() -> list[CaseSpec]:
    base = _lookup("quant.error.base", "q8_0", 32)
    table = base.inputs["qweight"]
    lookup = {"qweight": table, "ids": np.array([0, 1], np.int64), "format": "q8_0", "embed_dim": 32,
              "out_dtype": "float32"}
    said = [
        ("quant.error.lookup.unknown_format", "quantized_lookup", {**lookup, "format": "Q8_0"}, "invalid_config"),
        ("quant.error.lookup.width_not_block", "quantized_lookup", {**lookup, "embed_dim": 48}, "shape_mismatch"),
        ("quant.error.lookup.id_past_rows", "quantized_lookup", {**lookup, "ids": np.array([ROWS], np.int64)},
         "index_out_of_range"),
        ("quant.error.lookup.order_format_before_id", "quantized_lookup",
         {**lookup, "format": "q4_k", "ids": np.array([-1], np.int64)}, "invalid_config"),
        ("quant.error.quantize.width_not_group", "quantize_table",
         {"weight": np.zeros((2, 48), np.float32), "format": "affine4_g32"}, "shape_mismatch"),
        ("quant.error.bytes.negative_rows", "quantized_table_bytes",
         {"num_rows": -1, "embed_dim": 32, "format": "q8_0"}, "invalid_config"),
    ]
    return [_case(case_id, f"{error}: {case_id.rsplit('.', 1)[1].replace('_', ' ')}", op, inputs, error=error)
            for case_id, op, inputs, error in said]


def cases() -> list[CaseSpec]:
    named_cases = lookup_cases() + quantize_cases() + bytes_cases() + bag_cases() + error_cases()
    covering = [case for operation, prefix in (("quantized_lookup", "quant.lookup.pairwise"),
                                               ("quantize_table", "quant.quantize.pairwise"),
                                               ("quantized_table_bytes", "quant.bytes.pairwise"),
                                               ("quantized_bag_forward", "quant.bag.pairwise"))
                for case in pairwise(operation, prefix, described)]
    return named_cases + covering
