"""A factor reading is a predicate on the elements it cites: "exactly k times" only where every element is k times
the expected within one rounding of the output dtype, k printed with the digits that make it true (a ratio
0.9999995 is not "1"), and no factor at all where the elements are other multiples (a bfloat16 gradient 0.52 times
in one row and 0.995 times in the others)."""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
from helpers import run_diagnosed
from hypothesis import given, settings
from hypothesis import strategies as st

from embconf.corpus.fixtures import load_corpus
from embconf.diagnosis.difference import described, pattern
from embconf.diagnosis.factors import epsilon, factor_of
from embconf.diagnosis.symptoms.layer import layer_parts
from embconf.model.vocabulary import FIXTURES_DIR
from embconf.mutants.adapter import ImplementationAdapter
from embconf.mutants.compose import Implementation

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = (np.dtype(np.float32), np.dtype(np.float16), BFLOAT16, np.dtype(np.float64))
EXACTLY = re.compile(r"is exactly (-?[\d.e+-]+) times")


def _sequential_bfloat16(weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> np.ndarray:
    """PyTorch's CPU embedding backward in bfloat16: each repeated id's term added to a bfloat16 running sum."""
    grad = np.zeros(weight.shape, dtype=weight.dtype)
    terms = grad_output.reshape(-1, weight.shape[1])
    for position, row in enumerate(ids.reshape(-1)):
        grad[row] = (grad[row].astype(np.float32) + terms[position].astype(np.float32)).astype(weight.dtype)
    return grad


def test_a_bfloat16_running_sum_is_not_said_as_one_factor() -> None:
    case = load_corpus(FIXTURES_DIR).by_id()["half.bfloat16.backward.many_repeats"]
    adapter = ImplementationAdapter(Implementation({"embedding_backward": _sequential_bfloat16}), "bf16-running-sum")
    (result,) = run_diagnosed(adapter, [case]).results
    said = " ".join(c.summary for c in result.causes)
    assert said and "exactly" not in said, said  # 512 for 976, 972, 976 and 968: no one k rounds to 512 on all
    assert "'grad_weight' is" not in said, said  # 0.52 times in row 0, 0.995 in the others: no factor of the whole


def _rounded(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return values.astype(dtype).astype(np.float64)


def _true_of_every_element(text: str, want: np.ndarray, got: np.ndarray, dtype: np.dtype) -> bool:
    """Whether "exactly K times" said in ``text`` holds on each element: K * want rounded once to dtype is got."""
    found = EXACTLY.search(text)
    return found is None or bool(np.all((float(found.group(1)) * want).astype(dtype).astype(np.float64) == got))


VALUES = st.lists(st.floats(0.1, 100.0), min_size=2, max_size=12)


@settings(max_examples=60, deadline=None)
@given(
    values=VALUES,
    signs=st.lists(st.booleans(), min_size=12, max_size=12),
    k=st.sampled_from([0.5, 2.0, 0.9999995, 1.0000005, 1.5, 1 / 3, 2.8284271, 7.0]),
    dtype=st.sampled_from(DTYPES),
    off=st.integers(0, 11),
    ulps=st.integers(4, 64),
)
def test_exactly_k_times_is_said_only_where_each_element_is_k_times(values, signs, k, dtype, off, ulps) -> None:
    """Generated outputs k times the expected (one rounding) are said so, with a k that is true of each element;
    the same outputs with one element moved a few ulps further are never said "exactly"."""
    want = _rounded(np.array([v if s else -v for v, s in zip(values, signs)]), dtype)
    got = _rounded(k * want, dtype)
    if np.all(got == want):  # k rounds to 1 in this dtype: nothing differs, nothing to read
        return
    text = pattern(want, got, got != want, dtype)
    if np.unique(np.abs(want[want != 0])).size < 2:  # one magnitude: any value is a multiple of it, never said
        assert "times" not in text, text
        return
    assert "exactly" in text, text
    assert _true_of_every_element(text, want, got, dtype), text
    moved = got.copy()
    moved[off % got.size] *= 1 + ulps * epsilon(dtype)
    moved = _rounded(moved, dtype)
    factor = factor_of(want, moved, dtype)
    assert factor is None or not factor.exact or moved[off % got.size] == got[off % got.size]
    differs = moved != want
    text = pattern(want, moved, differs, dtype)
    assert _true_of_every_element(text, want[differs], moved[differs], dtype), text


def test_a_ratio_near_one_is_printed_with_the_digits_that_tell_it_from_one() -> None:
    want = np.linspace(0.5, 4.0, 16).astype(np.float32)
    got = (want.astype(np.float64) * 0.9999995).astype(np.float32)
    text = described("out", want, got, rule={"kind": "exact"})
    assert "0.9999995 times" in text and " 1 times" not in text, text


def test_a_factor_within_the_tolerance_is_not_said_exactly() -> None:
    """Every element k times within the case's tolerance but not within one rounding: k is said, "exactly" not."""
    rng = np.random.default_rng(3)
    want = rng.uniform(1.0, 2.0, 32)
    got = want * 0.5 * (1 + rng.uniform(-4e-7, 4e-7, 32))
    rule = {"kind": "close", "atol": 1e-6, "rtol": 1e-6}
    factor = factor_of(want.astype(np.float32), got.astype(np.float32), np.dtype(np.float32), rule)
    assert factor is not None and not factor.exact and factor.holds(0.5)
    assert factor_of(want.astype(np.float32), got.astype(np.float32), np.dtype(np.float32)) is None


def test_a_bfloat16_layer_output_off_by_noise_is_not_read_as_scaled_parts() -> None:
    """Every element 0.8 to 1.2 times the expected is no a * tokens + b * positions (a 64-ulp bfloat16 window, half
    the value, fitted two factors to it); the tokens multiplied by D instead of sqrt(D) still are."""
    case = load_corpus(FIXTURES_DIR).by_id()["half.bfloat16.layer.forward_learned_scaled"]
    inputs, want = case.inputs(), case.expected_outputs["output"]
    noisy = (want.astype(np.float64) * np.random.default_rng(0).uniform(0.8, 1.2, want.shape)).astype(want.dtype)
    assert layer_parts(case, inputs, "output", want, noisy) == []
    tokens = inputs["token_weight"].astype(np.float64)[inputs["tokens"]]
    d = tokens.shape[-1]
    scaled = (want.astype(np.float64) + (d - np.sqrt(d)) * tokens).astype(want.dtype)
    (found,) = layer_parts(case, inputs, "output", want, scaled)
    assert "the tokens are multiplied by" in found.summary and "(= D " in found.summary, found.summary
