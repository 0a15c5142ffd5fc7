"""The tolerance model: NaN/inf/-0.0 rules, and the sinusoid bound passes float32 truth but no wrong formula."""

from __future__ import annotations

import math

import numpy as np
import pytest

from embconf.judging.compare import compare_value

EXACT = {"kind": "exact"}
CLOSE = {"kind": "close", "atol": 1e-6, "rtol": 0.0}


@pytest.mark.parametrize(
    "want, got, tol, ok",
    [
        ([np.nan], [np.nan], EXACT, True),
        ([np.nan], [np.nan], CLOSE, True),
        ([1.0], [np.nan], CLOSE, False),
        ([np.nan], [1.0], CLOSE, False),
        ([np.inf], [np.inf], CLOSE, True),
        ([np.inf], [-np.inf], CLOSE, False),
        ([np.inf], [3e38], CLOSE, False),
        ([-0.0], [0.0], EXACT, False),
        ([-0.0], [0.0], CLOSE, True),
        ([1.0], [1.0 + 2e-6], CLOSE, False),
        ([1.0], [1.0 + 5e-7], CLOSE, True),
    ],
)
def test_special_values(want, got, tol, ok):
    result = compare_value("x", np.array(want, np.float32), np.array(got, np.float32), tol)
    assert (result is None) == ok


def test_dtype_and_shape_are_checked_before_values():
    want = np.zeros((2, 3), np.float32)
    assert compare_value("x", want, np.zeros((2, 3), np.float64), EXACT).kind == "dtype"
    assert compare_value("x", want, np.zeros((3, 2), np.float32), EXACT).kind == "shape"
    assert compare_value("x", want, [[0.0] * 3] * 2, EXACT).kind == "type"
    assert compare_value("x", None, np.zeros(2), EXACT).kind == "type"
    assert compare_value("x", 5, 5.5, EXACT).kind == "value"
    assert compare_value("x", 5, 5, EXACT) is None
    assert compare_value("x", 2.5, float("nan"), CLOSE).kind == "value"
    assert compare_value("x", 2.5, float("inf"), CLOSE).kind == "value"
    assert compare_value("x", 7, float("nan"), EXACT).kind == "value"


def _float32_tables(max_len: int, dim: int) -> dict[str, np.ndarray]:
    """A correct float32 computation of the canonical table, and the classic wrong ones."""
    pos = np.arange(max_len, dtype=np.float32)[:, None]
    k = np.arange((dim + 1) // 2, dtype=np.float32)
    freq = np.exp(k * np.float32(-2 * math.log(10000.0) / dim)).astype(np.float32)
    angles = pos * freq

    def interleave(first: np.ndarray, second: np.ndarray) -> np.ndarray:
        table = np.zeros((max_len, dim), np.float32)
        table[:, 0::2], table[:, 1::2] = first, second[:, : dim // 2]
        return table

    flipped = pos * np.exp(k * np.float32(2 * math.log(10000.0) / dim)).astype(np.float32)
    half = pos * np.exp(k * np.float32(-math.log(10000.0) / dim)).astype(np.float32)
    return {
        "correct": interleave(np.sin(angles), np.cos(angles)),
        "swapped": interleave(np.cos(angles), np.sin(angles)),
        "sign_flipped": interleave(np.sin(flipped), np.cos(flipped)),
        "k_over_d": interleave(np.sin(half), np.cos(half)),
        "concatenated": np.concatenate([np.sin(angles), np.cos(angles[:, : dim // 2])], axis=1),
    }


@pytest.mark.parametrize(
    "case_id",
    [
        "sin.canonical.l32768_d64",
        "sin.canonical.l32768_d16",
        "sin.canonical.l8192_d7",
        "sin.canonical.l1000_d512",
        "sin.canonical.l50_d7",
    ],
)
def test_sinusoid_tolerance_passes_float32_and_fails_every_wrong_formula(cases_by_id, case_id):
    case = cases_by_id[case_id]
    inputs = case.inputs()
    tables = _float32_tables(inputs["max_len"], inputs["embed_dim"])
    raw = case.raw_expected["outputs"]["table"]
    verdicts = {
        name: compare_value(
            "table",
            case.expected_outputs["table"],
            table,
            case.tolerance["table"],
            tuple(raw["shape"]),
            raw.get("rows"),
        )
        for name, table in tables.items()
    }
    assert verdicts.pop("correct") is None
    assert all(v is not None for v in verdicts.values()), [k for k, v in verdicts.items() if v is None]
