"""Declared quantize conventions (EMB-QNT-V1..V4, spec 2.3.0), as bag conventions are declared: an unknown name is
refused; a canonical case carries a convention's marker exactly when the convention gives it other bytes; a declarer
skips those cases and passes its own; the same code undeclared fails them, named as the convention followed
undeclared; a start reply (protocol minor 7) declares them."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import IMPLS, outcomes, problems, run_named

from embconf.corpus.fixtures import load_corpus
from embconf.model.outcomes import FAIL, NOT_APPLICABLE, PASS
from embconf.model.quantize_conventions import QuantizeConvention, quantize_conventions
from embconf.reference.quantize import quantize_table

EVEN = QuantizeConvention.ROUND_HALF_EVEN
DECLARER = f"functions:{IMPLS / 'quantized_half_even.py'}"


@pytest.fixture(scope="module")
def quantize_cases():
    return [case for case in load_corpus().cases if case.operation == "quantize_table"]


def test_names_are_refused_unless_known():
    assert quantize_conventions(["bias_from_min"]) == frozenset({QuantizeConvention.BIAS_FROM_MIN})
    for wrong in (["round_half_up"], "round_half_even", 3):
        with pytest.raises(ValueError, match="quantize convention"):
            quantize_conventions(wrong)


def test_a_canonical_case_carries_a_marker_exactly_when_the_convention_gives_other_bytes(quantize_cases):
    canonical = [
        c
        for c in quantize_cases
        if c.expected_error is None and not {x.feature for x in QuantizeConvention} & set(c.features)
    ]
    assert canonical
    for case in canonical:
        inputs = case.inputs()
        for convention in QuantizeConvention:
            differs = not np.array_equal(
                quantize_table(inputs["weight"], inputs["format"]),
                quantize_table(inputs["weight"], inputs["format"], (convention.value,)),
            )
            assert (convention.canonical_marker in case.features) == differs, (case.id, convention.value)
    for convention in QuantizeConvention:
        assert any(convention.canonical_marker in c.features for c in canonical), convention.value


def test_a_declarer_skips_the_cases_it_changes_and_passes_its_own(quantize_cases):
    run = run_named(DECLARER, quantize_cases)
    result = outcomes(run)
    assert problems(run.results) == []
    for case in quantize_cases:
        if EVEN.canonical_marker in case.features:
            assert result[case.id] == NOT_APPLICABLE, case.id
        elif EVEN.feature in case.features:
            assert result[case.id] == PASS, case.id
    assert result["quant.convention.round_half_even.q4_0"] == PASS


def test_the_same_code_undeclared_fails_them_named_as_the_convention(tmp_path, quantize_cases):
    module = tmp_path / "half_even_undeclared.py"
    source = (IMPLS / "quantized_half_even.py").read_text().replace("EMBCONF_QUANTIZE_CONVENTIONS = ", "FOLLOWED = ")
    module.write_text(f"import sys\nsys.path.insert(0, {str(IMPLS)!r})\n" + source)
    run = run_named(f"functions:{module}", quantize_cases)
    failing = [r for r in run.results if r.outcome == FAIL]
    assert failing and {r.id for r in failing} == {c.id for c in quantize_cases if EVEN.canonical_marker in c.features}
    for result in failing:
        assert result.causes[0].id == "quant.quantize.round_half_even", result.id  # the catalogue's mistake


def test_the_symptom_names_the_convention_a_result_follows(quantize_cases):
    from embconf.diagnosis.symptoms.quantized import undeclared_quantize_convention, wrong_row_part

    case = next(c for c in quantize_cases if c.id == "quant.quantize.q8_0.ties")
    inputs = case.inputs()
    want = quantize_table(inputs["weight"], inputs["format"])
    got = quantize_table(inputs["weight"], inputs["format"], (EVEN.value,))
    said = undeclared_quantize_convention(case, inputs, "qweight", want, got)
    assert [s.id for s in said] == ["symptom:convention:quantize:round_half_even"]
    assert "EMBCONF_QUANTIZE_CONVENTIONS = ['round_half_even']" in said[0].hint
    assert undeclared_quantize_convention(case, inputs, "qweight", want, want + 0) == []
    (integers,) = wrong_row_part(case, inputs, "qweight", want, got)
    assert "stored integers differ by" in integers.summary and "every scale and bias is right" in integers.summary
    scales_wrong = want.copy()
    scales_wrong[:, 0] ^= 1  # a bit of the first block's float16 d
    assert wrong_row_part(case, inputs, "qweight", want, scales_wrong) == []


def test_a_start_reply_declares_quantize_conventions():
    from embconf.protocol.lines import ProtocolError
    from embconf.protocol.messages import parse_start_reply
    from embconf.protocol.reference_peer import hello

    message = hello()
    assert message["protocol_minor"] == 7
    message["implementation"]["capabilities"]["quantize_conventions"] = ["scale_as_stored"]
    for validate in (False, True):
        caps = parse_start_reply(message, validate).implementation.capabilities
        assert caps.declared("quantize") == frozenset({QuantizeConvention.SCALE_AS_STORED})
    message["implementation"]["capabilities"]["quantize_conventions"] = ["scale_as_computed"]
    for validate in (False, True):
        with pytest.raises(ProtocolError):
            parse_start_reply(message, validate)
