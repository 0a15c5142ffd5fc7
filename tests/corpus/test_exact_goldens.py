"""Exact goldens (spec section 8.2): the same bytes under every NumPy dispatch setting this machine can switch
off, each transcendental golden equal to a 60-digit computation of the spec's formula rounded once, and the
one rounding correct at ties, subnormals and overflow."""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
import textwrap

import mpmath
import numpy as np
import pytest
from helpers import ROOT, assert_exit, run_cli
from hypothesis import given
from hypothesis import strategies as st

from embconf.corpus.fixtures import Case
from embconf.model.dtypes import bfloat16_bits, round_once
from embconf.model.encoding import decode_array
from embconf.model.vocabulary import FIXTURES_DIR
from embconf.reference.arithmetic import Exact

GENERATE = textwrap.dedent(
    """
    import hashlib, json, os, sys
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # NumPy 1.x
        from numpy.core._multiarray_umath import __cpu_features__ as features
    disabled = os.environ.get("NPY_DISABLE_CPU_FEATURES", "").split()
    still_on = [name for name in disabled if features.get(name)]
    from embconf.reference.generate import render_all
    hashes = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in render_all().items()}
    print(json.dumps({"still_on": still_on, "hashes": hashes}))
    """
)


def _dispatch_settings() -> list[str]:
    """NPY_DISABLE_CPU_FEATURES values: as found; the AVX-512 features off; every dispatched feature found off."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:  # NumPy 1.x
        from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    found = [name for name in __cpu_dispatch__ if __cpu_features__.get(name)]
    wide = [name for name in found if "512" in name or name == "X86_V4"]
    return list(dict.fromkeys(["", " ".join(wide), " ".join(found)]))


def test_the_corpus_regenerates_to_the_committed_bytes_under_every_dispatch_setting():
    committed = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in FIXTURES_DIR.glob("*.*")}
    settings = _dispatch_settings()
    runs = [
        (
            setting,
            subprocess.Popen(
                [sys.executable, "-c", GENERATE],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, "NPY_DISABLE_CPU_FEATURES": setting},
            ),
        )
        for setting in settings
    ]
    for setting, process in runs:
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0, f"NPY_DISABLE_CPU_FEATURES={setting!r}: {err[-2000:]}"
        result = json.loads(out)
        assert result["still_on"] == [], f"{setting!r} did not switch off {result['still_on']}"
        differing = sorted(n for n, digest in result["hashes"].items() if committed.get(n) != digest)
        assert differing == [], f"with NPY_DISABLE_CPU_FEATURES={setting!r} these files differ: {differing}"


# --- an independent statement of the formulas, at 60 digits ---------------------------------------------------

DIGITS = mpmath.MPContext()
DIGITS.dps = 60
BITS = {"float64": 53, "float32": 24}
NARROW = {name: mpmath.MPContext() for name in BITS}
for _name, _context in NARROW.items():
    _context.prec = BITS[_name]


def _rounded(value, dtype: str) -> float:
    """The 60-digit ``value`` rounded once to ``dtype`` (to nearest, ties to even; no value here is subnormal)."""
    return float(NARROW[dtype].mpf(value))


def _frequency(k: int, width: int, base: float):
    return DIGITS.power(DIGITS.mpf(base), DIGITS.mpf(-2 * k) / width)


def _canonical_row(position: int, dim: int) -> list:
    """Row ``position`` of the canonical table (EMB-SIN-2/3): sin in column 2k, cos in column 2k+1."""
    row = []
    for column in range(dim):
        angle = position * _frequency(column // 2, dim, 10000.0)
        row.append(DIGITS.sin(angle) if column % 2 == 0 else DIGITS.cos(angle))
    return row


def _golden(case: Case, name: str) -> tuple[np.ndarray, list[int]]:
    encoded = case.raw_expected["outputs"][name]
    rows = encoded.get("rows")
    return decode_array(encoded), (list(range(encoded["shape"][0])) if rows is None else rows)


def _canonical_tables(corpus) -> list[Case]:
    return [
        c
        for c in corpus.cases
        if c.operation == "sinusoidal_table"
        and "sinusoid-interleaved" in c.features
        and c.expected_error is None
        and c.raw_inputs["dtype"] in BITS
    ]


def _default_rope(corpus, operation: str) -> list[Case]:
    return [
        c
        for c in corpus.cases
        if c.operation == operation
        and c.expected_error is None
        and c.raw_inputs["scaling"] == {"rope_type": "default"}
        and len(c.raw_inputs["position_ids"]["shape"]) == 1  # one row of positions (T,)
        and (c.raw_inputs.get("dtype") or c.raw_expected["outputs"][next(iter(c.raw_expected["outputs"]))]["dtype"])
        in BITS
    ]


def test_sinusoid_tables_are_the_60_digit_value_rounded_once(corpus):
    checked = 0
    for case in _canonical_tables(corpus):
        dim, dtype = int(case.raw_inputs["embed_dim"]), case.raw_inputs["dtype"]
        golden, rows = _golden(case, "table")
        for index, position in enumerate(rows):
            want = [_rounded(v, dtype) for v in _canonical_row(position, dim)]
            got = golden[index].astype(np.float64).tolist()
            assert got == want, f"{case.id} row {position}: {got} != {want}"
            checked += dim
    assert checked > 50_000  # every canonical table (pinned rows), float32 and float64


def test_rope_tables_are_the_60_digit_value_rounded_once(corpus):
    cases = _default_rope(corpus, "rope_tables")
    assert any(c.raw_inputs["dtype"] == "float64" for c in cases)
    for case in cases:
        inputs, dtype = case.raw_inputs, case.raw_inputs["dtype"]
        r, base = int(inputs["rotary_dim"]), float(inputs["base"])
        positions = decode_array(inputs["position_ids"]).tolist()
        angles = [[p * _frequency(k, r, base) for k in range(r // 2)] for p in positions]
        for name, function in (("cos", DIGITS.cos), ("sin", DIGITS.sin)):
            want = [[_rounded(function(a), dtype) for a in row] for row in angles]
            assert decode_array(case.raw_expected["outputs"][name]).astype(np.float64).tolist() == want, case.id


@pytest.mark.parametrize("operation", ["rope_forward", "rope_backward"])
def test_rope_rotations_are_the_60_digit_value_rounded_once(corpus, operation):
    cases = _default_rope(corpus, operation)
    assert cases
    for case in cases:
        inputs = case.raw_inputs
        x = decode_array(inputs["grad_output" if operation == "rope_backward" else "x"])
        if x.dtype.name not in BITS:
            continue
        sign = -1 if operation == "rope_backward" else 1
        sign = -sign if "rope-negative_sense" in case.features else sign  # EMB-ROPE-V1: the other sense
        r, base, positions = int(inputs["rotary_dim"]), float(inputs["base"]), decode_array(inputs["position_ids"])
        h, split = r // 2, inputs["pairing"] == "half_split"
        pairs = [(k, k + h) if split else (2 * k, 2 * k + 1) for k in range(h)]
        flat = x.reshape(math.prod(x.shape[:-2]), *x.shape[-2:]).astype(np.float64)  # T = 0 too: no -1 to infer
        want = flat.copy()
        for t, p in enumerate(positions.tolist()):
            for k, (i, j) in enumerate(pairs):
                angle = p * _frequency(k, r, base)
                c, s = DIGITS.cos(angle), sign * DIGITS.sin(angle)
                for b in range(flat.shape[0]):
                    xi, xj = DIGITS.mpf(flat[b, t, i]), DIGITS.mpf(flat[b, t, j])
                    want[b, t, i] = _rounded(xi * c - xj * s, x.dtype.name)
                    want[b, t, j] = _rounded(xj * c + xi * s, x.dtype.name)
        got = decode_array(next(iter(case.raw_expected["outputs"].values())))
        assert np.array_equal(got.reshape(want.shape).astype(np.float64), want), case.id


# --- the one rounding ------------------------------------------------------------------------------------------

EXACT = Exact()


@given(st.floats(allow_nan=False, allow_infinity=False, width=64).filter(bool))
def test_rounding_an_exact_value_matches_the_correctly_rounded_casts(value):
    values = np.array([value, -value])
    assert EXACT.round(values, "float64").tolist() == values.tolist()
    with np.errstate(over="ignore"):
        assert EXACT.round(values, "float32").tobytes() == values.astype(np.float32).tobytes()
        assert EXACT.round(values, "float16").tobytes() == values.astype(np.float16).tobytes()
    assert EXACT.round(values, "bfloat16").view(np.uint16).tolist() == bfloat16_bits(values).tolist()


def test_rounding_ties_subnormals_overflow_and_zero():
    ctx = EXACT.context
    assert EXACT.round(np.array([-0.0, 0.0]), "float32").tobytes() == np.zeros(2, np.float32).tobytes()  # a real 0
    one_and_a_half_ulp = ctx.mpf(1) + ctx.mpf(3) * ctx.mpf(2) ** -24  # a float32 tie between 1+2u and 1+4u
    assert EXACT.round(np.array([one_and_a_half_ulp], dtype=object), "float32")[0] == np.float32(1 + 2.0**-22)
    tiny = ctx.mpf(2) ** -150 * 3  # 1.5 times float32's smallest subnormal: a tie, to even (2 * 2**-149)
    assert EXACT.round(np.array([tiny], dtype=object), "float32")[0] == np.float32(2.0**-148)
    assert np.isinf(EXACT.round(np.array([ctx.mpf(65520)], dtype=object), "float16")[0])  # rounds past 65504
    assert EXACT.round(np.array([ctx.mpf(65519)], dtype=object), "float16")[0] == 65504
    third = ctx.mpf(1) / 3  # irrational-like: filled to the working precision, rounded once
    assert EXACT.round(np.array([third], dtype=object), "float32")[0] == np.float32(1 / 3)
    assert EXACT.round(np.array([third], dtype=object), "bfloat16").view(np.uint16)[0] == bfloat16_bits(1 / 3)


def test_a_golden_is_not_the_double_rounded_float64_value():
    """1 + 2**-24 + 2**-60 rounds up in float32 when rounded once, but to 1 through float64 (a tie there)."""
    ctx = EXACT.context
    value = ctx.mpf(1) + ctx.mpf(2) ** -24 + ctx.mpf(2) ** -60 + ctx.mpf(2) ** -200
    assert EXACT.round(np.array([value], dtype=object), "float32")[0] == np.float32(1 + 2.0**-23)
    assert round_once(np.float64(float(value)), "float32") == np.float32(1.0)


def test_regenerate_without_mpmath_says_how_to_install_it_in_one_line(tmp_path):
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text(
        "import sys\n"
        "class _Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'mpmath' or name.startswith('mpmath.'):\n"
        "            raise ImportError('blocked')\n"
        "sys.meta_path.insert(0, _Block())\n"
    )
    result = run_cli("regenerate", "--check", env={"PYTHONPATH": str(tmp_path)})
    assert_exit(result, 2)
    assert len(result.stderr.strip().splitlines()) == 1
    assert "embedding-conformance[exact]" in result.stderr
