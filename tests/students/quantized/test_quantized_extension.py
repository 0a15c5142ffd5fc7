"""The TinyTorch quantized-embedding extension (spec section 17 on a student's own Tensor): the formats read from the
student's ``QuantizedEmbedding``, a correct layer passing every lookup case it claims, a module without the class
claiming nothing, and a wrong layer failing only where its mistake shows, named by the catalogue's mutant."""

from __future__ import annotations

import types

import pytest
from helpers import STUDENTS, first_cause, outcomes, run_diagnosed, run_undiagnosed

from embconf.adapters.tinytorch import TinyTorchAdapter
from embconf.adapters.tinytorch_quantized import quantized_claim
from embconf.model.outcomes import FAIL, NOT_APPLICABLE, PASS

QUANTIZED = STUDENTS / "quantized"
CLAIMED = {"quant-q8_0", "quant-q4_0", "quant-fused8_rowwise"}


@pytest.fixture(scope="module")
def lookups(corpus):
    return [case for case in corpus.cases if case.operation == "quantized_lookup"]


class Unlisted:
    def __init__(self, qweight, format, embed_dim): ...


class Listed:
    FORMATS = ["q4_0", "affine4_g64_float16", "q5_1"]  # a format the spec does not name is no claim


@pytest.mark.parametrize(
    ("cls", "claimed"), [(None, set()), (Unlisted, {"quant-q8_0"}), (Listed, {"quant-q4_0", "quant-affine"})]
)
def test_the_formats_are_what_the_class_lists(cls, claimed):
    module = types.ModuleType("submission")
    if cls is not None:
        module.QuantizedEmbedding = cls
    assert quantized_claim(module) == claimed


def test_a_correct_layer_passes_every_lookup_it_claims(lookups):
    adapter = TinyTorchAdapter(str(QUANTIZED / "solution.py"))
    assert CLAIMED <= adapter.capabilities().features and "quantized_lookup" in adapter.capabilities().operations
    record = run_undiagnosed(adapter, lookups)
    found = outcomes(record)
    assert set(found.values()) <= {PASS, NOT_APPLICABLE}, [
        (r.id, r.message[:200]) for r in record.results if r.outcome not in (PASS, NOT_APPLICABLE)
    ]
    passed = {r.id for r in record.results if r.outcome == PASS}
    assert len(passed) >= 15 and any(".q4_0." in case for case in passed)
    for result in record.results:  # not applicable only for a format it does not read, or a half output
        if result.outcome == NOT_APPLICABLE:
            assert not set(result.features) <= CLAIMED, result.id


def test_a_module_without_the_class_claims_nothing():
    adapter = TinyTorchAdapter(str(STUDENTS / "base_1000.py"))
    assert not {f for f in adapter.capabilities().features if f.startswith("quant-")}
    assert "quantized_lookup" not in adapter.capabilities().operations


def test_a_wrong_nibble_order_fails_only_q4_0_named_by_the_catalogue(lookups):
    record = run_diagnosed(TinyTorchAdapter(str(QUANTIZED / "nibbles_interleaved.py")), lookups)
    failing = [r for r in record.results if r.outcome not in (PASS, NOT_APPLICABLE)]
    assert failing and all(r.outcome == FAIL and "quant-q4_0" in r.features for r in failing)
    assert all(first_cause(r) == "quant.q4_0.nibbles_interleaved" for r in failing), [first_cause(r) for r in failing]
