"""Every number a reading prints is printed with the digits that make its sentence true: a measured ratio lies within
what was measured (0.9999995 on every pair is never "1"), a value the dtype holds is that value, a bound said "up to"
is not below what it bounds; and a sentence naming what the number equals (yarn's attention factor applied twice)
is said only when that value lies within what was measured. Each generated where it holds and where it does not."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from rope_cases import case

from embconf.corpus.fixtures import Case
from embconf.diagnosis.difference import exactly
from embconf.diagnosis.factors import rounded_up, shortest, within
from embconf.diagnosis.symptoms.rope_words import amplitude, attention_factor
from embconf.diagnosis.symptoms.values import sinusoid_table
from embconf.reference.generate import _encode_value
from embconf.reference.sinusoid import sinusoidal_table

SETTINGS = settings(max_examples=60, deadline=None)
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}


@SETTINGS
@given(k=st.floats(0.01, 100.0), spread=st.floats(0.0, 1e-3), offset=st.floats(-1e-3, 1e-3))
def test_a_measured_ratio_is_printed_inside_what_was_measured(k, spread, offset) -> None:
    low, high = k * (1 + offset), k * (1 + offset + spread)
    text = within(low, high, (low + high) / 2)
    assert low - 1e-12 * abs(low) <= float(text) <= high + 1e-12 * abs(high), text
    if not low <= float(f"{k:.6g}") <= high:  # k itself was not measured: it is not what is printed
        assert text != f"{k:.6g}", (text, low, high)


def test_a_ratio_of_0_9999995_is_never_printed_as_1() -> None:
    assert within(0.9999995, 0.9999995, 0.9999995) == "0.9999995"
    assert within(0.9999994, 1.0000003, 0.9999999) == "1"  # 1 lies within what was measured


@SETTINGS
@given(value=st.floats(1e-9, 1e6))
def test_a_bound_said_up_to_is_never_below_what_it_bounds(value) -> None:
    for digits in (2, 3):
        assert float(rounded_up(value, digits)) >= value


@SETTINGS
@given(value=st.floats(-1e30, 1e30, allow_nan=False))
def test_a_number_named_exactly_is_the_number_its_dtype_holds(value) -> None:
    for dtype in (np.float64, np.float32):
        held = np.asarray(value).astype(dtype)
        assert np.asarray(float(shortest(value, dtype))).astype(dtype) == held


def _yarn_case():
    return case("yarn.amplitude", "rope_forward", positions=np.arange(8), d=8, scaling=YARN)


@SETTINGS
@given(departure=st.floats(-2e-3, 2e-3))
def test_the_attention_factor_twice_is_said_only_when_it_lies_within_the_measured_ratios(departure) -> None:
    c = _yarn_case()
    inputs = c.inputs()
    expected = attention_factor(inputs)
    assert expected is not None and expected != 1.0
    factor = expected * (1 + departure)
    said = amplitude(c, inputs, {"factor": factor, "low": factor, "high": factor}).summary
    holds = abs(factor - expected) <= 8 * 2.0**-23 * factor * 1.01
    assert ("applied twice" in said) == holds or abs(abs(factor / expected - 1) - 8 * 2.0**-23) < 1e-9, said
    if holds:
        assert f"times the expected, the yarn attention factor {within(factor, factor, expected, 8 * 2.0**-23)}" in said
    shown = said.split("cos and sin are ")[1].split(" times")[0]
    assert abs(float(shown) / factor - 1) <= 8 * 2.0**-23 * 1.01, said


def test_a_missing_attention_factor_is_said_only_when_its_inverse_was_measured() -> None:
    c = _yarn_case()
    inputs = c.inputs()
    expected = attention_factor(inputs)
    assert expected is not None
    inverse = 1 / expected
    said = amplitude(c, inputs, {"factor": inverse, "low": inverse, "high": inverse}).summary
    assert "not applied" in said, said
    off = inverse * 1.0005  # within the old window of 1e-3, outside what was measured
    assert "not applied" not in amplitude(c, inputs, {"factor": off, "low": off, "high": off}).summary


@settings(max_examples=12, deadline=None)
@given(width=st.sampled_from([6, 8, 10, 12, 16, 20]))
def test_a_scaled_sinusoid_says_its_amplitude_as_the_table_holds_it(width) -> None:
    c = np.float32(math.sqrt(2.0 / width))  # MLX's scale, held in float32
    table = (sinusoidal_table(16, width, "float64") * np.float64(c)).astype(np.float32)
    want = sinusoidal_table(16, width, "float32")
    inputs = {"max_len": 16, "embed_dim": width, "dtype": "float32"}
    said = " ".join(s.summary for s in sinusoid_table(_table_case(width), inputs, "table", want, table))
    assert "every value multiplied by " in said, said
    shown = said.split("every value multiplied by ")[1].split(" ")[0]
    assert np.float32(float(shown)) == c, (shown, c)
    assert "sqrt(2/D)" in said, said


def _table_case(width: int) -> Case:
    table = sinusoidal_table(16, width, "float32")
    raw = {"max_len": 16, "embed_dim": width, "dtype": "float32"}
    return Case(
        "sinusoid.scaled",
        "built for the test",
        (),
        (),
        "sinusoidal_table",
        raw,
        {"outputs": {"table": _encode_value(table)}},
        {},
    )


@SETTINGS
@given(a=st.floats(-1e6, 1e6, width=32), b=st.floats(-1e6, 1e6, width=32))
def test_a_plain_readings_values_are_the_numbers_the_output_holds(a, b) -> None:
    expected, got = exactly(a, b, np.dtype(np.float32))
    assert np.float32(float(expected)) == np.float32(a) and np.float32(float(got)) == np.float32(b)
    assert (expected == got) == (np.float32(a).tobytes() == np.float32(b).tobytes())  # -0 is said as -0
