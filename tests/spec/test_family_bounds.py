"""Declared sinusoid points are bounded (EMB-SIN-6, issue 34): a base or an amplitude outside the stated range
is refused in one line, and within it the judge is never blind: an all-zero table fails every family case whose
golden is not all zero, while the golden itself passes."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run_report

from embconf.corpus.fixtures import load_corpus
from embconf.corpus.sinusoid_point import point_cases
from embconf.judging.cases import judge
from embconf.model.contract import Reply, Status
from embconf.model.dtypes import round_once
from embconf.model.outcomes import FAIL, PASS
from embconf.model.sinusoid import AMPLITUDE_RANGE, BASE_RANGE, SinusoidProfile
from embconf.reference.sinusoid import family_table

ZEROS = """
import numpy as np

EMBCONF_SINUSOID_PARAMETERS = {parameters!r}


def sinusoidal_table(max_len, embed_dim, dtype):
    return np.zeros((max_len, embed_dim), dtype=dtype)
"""


@pytest.mark.parametrize(
    "parameters, said",
    [
        ({"amplitude": 1e8}, "sinusoid parameter amplitude 100000000.0 is not a number from 0.001 to 1000"),
        ({"amplitude": 1e-300}, "sinusoid parameter amplitude 1e-300 is not a number from 0.001 to 1000"),
        ({"base": 1e300}, "sinusoid parameter base 1e+300 is not a number from 2 to 1e+07"),
        ({"base": 1.5}, "sinusoid parameter base 1.5 is not a number from 2 to 1e+07"),
    ],
)
def test_a_point_outside_the_stated_range_is_refused_in_one_line(tmp_path, parameters, said):
    """Once an all-zero table passed every family case under amplitude 1e8 or 1e-300 (exit 0)."""
    module = tmp_path / "zeros.py"
    module.write_text(ZEROS.format(parameters=parameters))
    result, report = run_report(tmp_path, f"functions:{module}", "--select", "sin.*", "-q")
    assert result.returncode == 2 and report is None
    assert said in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def profile_cases():
    return load_corpus().cases


POINTS = [
    {"amplitude": AMPLITUDE_RANGE[0]},
    {"amplitude": AMPLITUDE_RANGE[1], "angle_unit": "turns"},
    {"amplitude": "sqrt(2/D)", "layout": "cos_sin", "base": BASE_RANGE[1]},
    {"amplitude": AMPLITUDE_RANGE[1], "base": BASE_RANGE[0], "spacing": "k/h"},
]


@pytest.mark.parametrize("parameters", POINTS, ids=[str(p) for p in POINTS])
def test_within_the_range_an_all_zero_table_fails_and_the_golden_passes(profile_cases, parameters):
    profile = SinusoidProfile.from_json(parameters)
    cases = [case for case in point_cases({profile}, profile_cases) if case.expected_error is None]
    assert len(cases) >= 8
    judged = 0
    for case in cases:
        inputs = case.inputs()
        shape, dtype = (inputs["max_len"], inputs["embed_dim"]), inputs["dtype"]
        golden = round_once(family_table(*shape, profile), dtype)
        zeros = np.zeros(shape, dtype=golden.dtype)
        assert judge(case, Reply(Status.OUTPUTS, outputs={"table": golden}), None).outcome == PASS, case.id
        if np.abs(golden.astype(np.float64)).max() >= profile.amplitude_for(shape[1]) / 2:  # not a table of ~0
            judged += 1
            assert judge(case, Reply(Status.OUTPUTS, outputs={"table": zeros}), None).outcome == FAIL, case.id
        else:  # D = 1 is the one column sin(pos): 0 at the one position 0, and up to rounding in turns
            assert shape[1] == 1 and (shape[0] == 1 or profile.angle_unit.value == "turns"), case.id
    assert judged >= 8


def test_the_amplitude_scales_the_absolute_terms_of_the_tolerance_never_the_relative_one(profile_cases):
    """rtol times an amplitude of 4e6 once reached 1: every value was within tolerance of zero."""
    unit = {
        case.id: case.tolerance["table"]
        for case in point_cases({SinusoidProfile.from_json({"layout": "cos_sin"})}, profile_cases)
        if "table" in case.tolerance
    }
    for amplitude in AMPLITUDE_RANGE:
        point = SinusoidProfile.from_json({"layout": "cos_sin", "amplitude": amplitude})
        for case in point_cases({point}, profile_cases):
            if "table" in case.tolerance:
                rule = case.tolerance["table"]
                assert rule["rtol"] == unit[case.id]["rtol"] and rule["atol"] == unit[case.id]["atol"] * amplitude
