"""Symptoms of quantized tables (spec section 17), measured, never guessed:

- a quantize convention followed undeclared (EMB-QNT-V1 .. V4): a canonical ``quantize_table`` case that a
  declarable convention answers otherwise (it carries the convention's canonical marker) answered byte for byte as
  the reference answers it under that convention;
- which part of the rows a quantizer got wrong: only the stored integers (the scales and biases right: a rounding or
  clamping rule), or the scales and biases too."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.diagnosis.symptoms.base import Symptom, symptom
from embconf.model.quantize_conventions import QuantizeConvention
from embconf.model.quantized import parse_format
from embconf.model.symptom import CONVENTION, QUANTIZED_INTEGERS, SymptomKey


def undeclared_quantize_convention(
    case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray
) -> list[Symptom]:
    """The quantize convention whose bytes the failing result is, among those that change the case."""
    from embconf.reference.quantize import quantize_table

    found = []
    for convention in QuantizeConvention:
        if not convention.changes(case.operation, case.features):
            continue
        under = quantize_table(inputs["weight"], inputs["format"], (convention.value,))
        if got.shape == under.shape and np.array_equal(got.astype(np.int64), under.astype(np.int64)):
            said = f"follows the quantize convention {convention.value} without declaring it: {convention.describe()}"
            found.append(
                symptom(
                    SymptomKey.of(CONVENTION, "quantize", convention.value),
                    said,
                    f"quantize as the format's reference does (spec section 17); or, if this is the behaviour meant, "
                    f"declare the convention (EMBCONF_QUANTIZE_CONVENTIONS = ['{convention.value}'] in a functions: "
                    f"module, quantize_conventions in an adapter's capabilities) ({convention.requirement})",
                    title=said,
                )
            )
    return found


def wrong_row_part(
    case: Case, inputs: Mapping[str, Any], name: str, want: np.ndarray, got: np.ndarray
) -> list[Symptom]:
    """Only the stored integers of the rows differ (every scale and bias byte right), said with how many."""
    from embconf.reference.quantized_codec import split_rows

    fmt = parse_format(inputs.get("format"))
    if fmt is None or got.shape != want.shape or want.ndim != 2 or not want.size:
        return []
    width = np.asarray(inputs["weight"]).shape[1]
    mine, theirs = split_rows(want.astype(np.uint8), fmt, width), split_rows(got.astype(np.uint8), fmt, width)
    scales_agree = all(np.array_equal(a, b, equal_nan=True) for a, b in zip(mine[1:], theirs[1:]))
    differ = int(np.sum(mine[0] != theirs[0]))
    if not scales_agree or not differ:
        return []
    steps = sorted({int(v) for v in (theirs[0] - mine[0])[mine[0] != theirs[0]]})[:4]
    said = (
        f"{differ} of {want.shape[0] * width} stored integers differ by {', '.join(map(str, steps))}; every "
        f"scale and bias is right: a rounding or clamping rule of {fmt.name}"
    )
    return [
        symptom(
            SymptomKey.of(QUANTIZED_INTEGERS, fmt.kind),
            said,
            f"round and clamp as {fmt.name}'s reference quantizer does (spec section 17)",
            complete=True,
        )
    ]
