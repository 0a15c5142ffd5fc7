"""Half precision (spec section 13): exact encoding, correctly rounded goldens, and a tolerance that
admits correct float16/bfloat16 implementations (PyTorch in both accumulation modes) and rejects the
wrong ones (bfloat16 running sums over many repeats, half-precision positions past 2048 / 256)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import assert_outcome, run_undiagnosed

from embconf.adapters import create_adapter
from embconf.corpus.fixtures import load_corpus
from embconf.model.dtypes import have_bfloat16, numpy_dtype, round_once, shortest_decimal
from embconf.model.encoding import decode_array, encode_array
from embconf.model.outcomes import FAIL, PASS
from embconf.model.rope import LAYER_FEATURE
from embconf.mutants import get
from embconf.mutants.adapter import ImplementationAdapter
from embconf.mutants.compose import Implementation
from embconf.mutation.kills import killing, run_mutant
from embconf.reference import embedding_layer_forward
from embconf.reference.lookup import validate_ids
from embconf.reference.sinusoid import interleaved
from embconf.reference.tolerance import accumulation_roundoff, unit_roundoff

pytestmark = pytest.mark.skipif(not have_bfloat16(), reason="ml_dtypes (the bfloat16 extra) is not installed")
DTYPES = ("float16", "bfloat16")
MANY = {f"half.{d}.backward.many_repeats" for d in DTYPES}


@pytest.fixture(scope="module")
def half_cases():
    """The canonical half cases: not under a convention (not the canonical answer), nor of a rope layer (an
    extension the reference does not claim, EMB-LAY-10: its half goldens are tests/spec/test_rope_layer.py's)."""
    from embconf.model.convention import under_a_convention

    return [
        c
        for c in load_corpus().cases
        if {"float16", "bfloat16"} & set(c.features)
        and not under_a_convention(c.features)
        and LAYER_FEATURE not in c.features
    ]


@pytest.mark.parametrize("dtype", DTYPES)
def test_arrays_round_trip_bit_for_bit_inline_and_base64(dtype):
    bits = np.arange(0, 2**16, 7, dtype=np.uint16)
    array = bits.view(numpy_dtype(dtype)) if dtype == "bfloat16" else bits.view(np.float16)
    for limit in (10**6, 0):  # inline decimals, then base64
        back = decode_array(encode_array(array, inline_limit=limit))
        same = back.view(np.uint16) == bits
        nan = np.isnan(array.astype(np.float32))
        assert back.dtype == array.dtype and (same | (nan & np.isnan(back.astype(np.float32)))).all()


def test_bfloat16_base64_is_the_raw_bit_patterns():
    encoded = encode_array(np.array([1.0, -2.0, 55.5], dtype=numpy_dtype("bfloat16")), inline_limit=0)
    assert encoded["base64"] == "gD8AwF5C"  # 0x3f80, 0xc000, 0x425e little-endian: the top halves of the float32s


def test_goldens_round_once_from_float64_never_through_float32():
    just_above_a_tie = 1 + 2**-8 + 2**-30  # float32 rounds it to 1.0 first, and then bfloat16 keeps 1.0
    assert float(round_once(np.array(just_above_a_tie), "bfloat16")) == 1 + 2**-7  # whatever ml_dtypes' cast does
    assert float(decode_array({"dtype": "bfloat16", "shape": [1], "data": [just_above_a_tie]})[0]) == 1 + 2**-7
    assert shortest_decimal(1 + 2**-7, "bfloat16") == "1.01"  # the shortest decimal that reads back as 1.0078125


def test_the_accumulation_rule_switches_to_float32_where_the_half_bound_says_nothing():
    assert accumulation_roundoff("bfloat16", 33) == unit_roundoff("bfloat16") == 2**-8
    assert accumulation_roundoff("bfloat16", 34) == 2**-24
    assert accumulation_roundoff("float16", 257) == 2**-11 and accumulation_roundoff("float16", 258) == 2**-24
    assert accumulation_roundoff("float32", 10**6) == 2**-24


def test_the_reference_passes_every_half_case(half_cases):
    assert len(half_cases) >= 20
    assert {r.outcome for r in run_undiagnosed(create_adapter("reference"), half_cases).results} == {PASS}


def test_torch_float32_master_passes_every_half_case(half_cases):
    pytest.importorskip("torch")
    run = run_undiagnosed(create_adapter("torch:float32-master"), half_cases)
    assert [f"{r.id}: {r.message}" for r in run.results if r.outcome not in (PASS, "not_applicable")] == []


def test_torch_native_fails_only_where_it_accumulates_many_repeats_in_the_half_dtype(half_cases):
    """PyTorch's CPU backward sums repeated ids in the table's dtype (index_add_): EMB-HLF-3 rules that out past (k-1)u > 1/8."""
    pytest.importorskip("torch")
    results = run_undiagnosed(create_adapter("torch"), half_cases).results
    failed = {r.id: r for r in results if r.outcome not in (PASS, "not_applicable")}
    assert set(failed) == MANY
    bf16 = failed["half.bfloat16.backward.many_repeats"].mismatches[0]
    assert bf16.actual == 512 and abs(float(bf16.expected) - 980) < 10  # the running sum stalled near 512


def test_sequential_half_accumulation_is_admitted_for_few_repeats_and_rejected_for_many(half_cases):
    killed = {r.id for r in killing(run_mutant(get("half.sequential_accumulation"), half_cases))}
    assert killed == MANY
    assert {f"half.{d}.backward.few_repeats" for d in DTYPES}.isdisjoint(killed)


LAST_EXACT_POSITION = {"float16": 2048, "bfloat16": 256}  # the dtype holds every integer up to it, not the next


def _tables_past_the_last_exact_position(cases) -> set[str]:
    """The half sinusoidal tables (with a column) holding a position their dtype cannot: max_len - 1 past the last exact one."""
    return {
        c.id
        for c in cases
        if c.operation == "sinusoidal_table"
        and c.raw_inputs["embed_dim"] > 0
        and c.raw_inputs["max_len"] - 1 > LAST_EXACT_POSITION[c.raw_inputs["dtype"]]
    }


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_last_exact_position_is_the_dtypes_own(dtype):
    last = LAST_EXACT_POSITION[dtype]
    assert float(round_once(np.array(last), dtype)) == last and float(round_once(np.array(last + 1), dtype)) != last + 1


def test_half_positions_that_stop_increasing_fail_past_2048_and_256(half_cases):
    past = _tables_past_the_last_exact_position(half_cases)
    assert {"half.float16.sin.l4096_d8", "half.bfloat16.sin.l1024_d8"} <= past
    killed = {r.id for r in killing(run_mutant(get("half.positions_in_dtype"), half_cases))}
    assert killed == past


def test_a_float32_sinusoid_rounded_once_passes_every_half_table(half_cases):
    def float32_table(max_len, embed_dim, dtype="float32"):
        pos = np.arange(max_len, dtype=np.float32)[:, None]
        freq = np.exp(np.arange(0, embed_dim, 2, dtype=np.float32) * np.float32(-math.log(10000.0) / embed_dim))
        table = np.zeros((max_len, embed_dim), np.float32)
        table[:, 0::2], table[:, 1::2] = np.sin(pos * freq), np.cos(pos * freq[: embed_dim // 2])
        return table.astype(numpy_dtype(dtype))

    chosen = [c for c in half_cases if c.operation == "sinusoidal_table"]
    run = run_undiagnosed(ImplementationAdapter(Implementation({"sinusoidal_table": float32_table})), chosen)
    long_ones = {c.raw_inputs["dtype"] for c in chosen if c.id in _tables_past_the_last_exact_position(chosen)}
    assert long_ones == set(DTYPES) and {r.outcome for r in run.results} == {PASS}
    assert np.abs(float32_table(4096, 8, "float32") - interleaved(4096, 8)).max() < 4e-4  # the float32 source itself


def _gemma_layer(config, token_weight, position_table, tokens, start_pos=0):
    """sqrt(D) computed in the activation dtype, as Gemma does: 55.5 for D = 3072 in bfloat16."""
    if config.get("pos_encoding") != "none" or not config.get("scale_embeddings"):
        return embedding_layer_forward(config, token_weight, position_table, tokens, start_pos)
    c = np.array(math.sqrt(config["embed_dim"])).astype(token_weight.dtype)
    rows = token_weight[validate_ids(tokens, config["vocab_size"])]
    return (rows.astype(np.float32) * np.float32(c)).astype(token_weight.dtype)


def test_a_sqrt_d_rounded_in_bfloat16_passes_a_bfloat16_layer_and_fails_a_float32_one():
    corpus = load_corpus().by_id()
    assert float(np.array(math.sqrt(3072)).astype(numpy_dtype("bfloat16"))) == 55.5
    adapter = ImplementationAdapter(Implementation({"embedding_layer_forward": _gemma_layer}))
    bf16 = run_undiagnosed(adapter, [corpus["half.bfloat16.layer.gemma_scale"]]).results[0]
    assert_outcome(bf16, PASS)

    def rounded_to_bfloat16(config, token_weight, position_table, tokens, start_pos=0):
        return _bfloat16_factor(config, token_weight, tokens)

    f32_cases = [
        c
        for c in corpus.values()
        if c.operation == "embedding_layer_forward"
        and c.raw_inputs["config"].get("pos_encoding") == "none"
        and c.raw_inputs["config"].get("scale_embeddings")
        and not c.features
        and not c.expected_error
    ]
    f32 = run_undiagnosed(
        ImplementationAdapter(Implementation({"embedding_layer_forward": rounded_to_bfloat16})), f32_cases
    ).results
    assert f32 and {r.outcome for r in f32} == {FAIL}


def _bfloat16_factor(config, token_weight, tokens):
    """A float32 layer that uses the bfloat16 factor: off by up to 1.3e-3 relative, far beyond 6u of float32."""
    c = float(np.array(math.sqrt(config["embed_dim"])).astype(numpy_dtype("bfloat16")))
    out = (token_weight[validate_ids(tokens, config["vocab_size"])].astype(np.float64) * c).astype(token_weight.dtype)
    return out


def test_without_ml_dtypes_bfloat16_cases_are_not_applicable_and_the_rest_runs():
    import subprocess
    import sys

    script = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "from embconf.cli import main\n"
        "sys.exit(main(['run', '--impl', 'reference', '--no-colour', '--select', 'half.*']))"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "bfloat16 arrays need ml_dtypes: pip install 'ml_dtypes<0.7' (the bfloat16 extra)" in result.stdout
    assert "fail" not in result.stdout.splitlines()[-1]
