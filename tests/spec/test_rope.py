"""Rotary position embeddings (spec section 14): the goldens agree with an independent statement of the
formulas (complex numbers, Python's math, Hugging Face's own frequency code), the cases carry the features
their inputs need, and the precision ruling holds both ways (EMB-ROPE-11): float32 angles pass every case,
angles computed in bfloat16 fail wherever positions are long."""

from __future__ import annotations

import cmath
import math
import shlex
import shutil
import sys

import numpy as np
import pytest
from helpers import IMPLS, assert_exit, assert_outcomes, problems, run_cli, run_named

from embconf.adapters import create_adapter
from embconf.corpus.fixtures import load_corpus
from embconf.corpus.validate import validate_directory
from embconf.model.convention import under_a_convention
from embconf.model.dtypes import bfloat16_bits, have_bfloat16, numpy_dtype
from embconf.model.rope import APPLY_OPERATIONS, TABLE_OPERATIONS, Pairing, RopeScaling, RopeType, rope_features
from embconf.model.vocabulary import FIXTURES_DIR
from embconf.reference import OPERATIONS
from embconf.reference.errors import EmbeddingError
from embconf.reference.rope import inverse_frequencies, pair_columns, position_grid
from embconf.reference.tolerance import unit_roundoff

WIDE = ("float32", "float64")  # outputs whose tolerance no bfloat16 angle error hides
pytestmark = pytest.mark.skipif(not have_bfloat16(), reason="ml_dtypes (the bfloat16 extra) is not installed")


@pytest.fixture(scope="module")
def rope_cases():
    """The canonical rope cases: a case under a declared convention (its feature rope-<name>, whether a
    rope.convention.* or a covering rope.pairs.* case) answers otherwise: tests/run/test_rope_conventions.py."""
    return [
        case for case in load_corpus().cases if case.id.startswith("rope.") and not under_a_convention(case.features)
    ]


def _valued(cases):
    return [case for case in cases if case.expected_error is None]


def _configured(cases):
    """The cases whose tables come from a configuration (not rope_apply's, whose tables are inputs)."""
    return [case for case in cases if case.operation in TABLE_OPERATIONS]


def _one_row(cases):
    """The configured cases of one row of positions (T,), shared by every leading axis (1.3.0's form)."""
    return [case for case in _configured(cases) if case.inputs()["position_ids"].ndim == 1]


def _complex_rotation(
    x: np.ndarray, ids: np.ndarray, rotary_dim: int, base: float, pairing: str, sign: int
) -> np.ndarray:
    """The rotation as a complex product (x_i + i x_j) * e^(i sign p theta_k), theta_k from Python's math."""
    out = x.astype(np.float64).copy()
    h = rotary_dim // 2
    for t, p in enumerate(ids.tolist()):
        for k in range(h):
            i, j = (k, k + h) if pairing == "half_split" else (2 * k, 2 * k + 1)
            turn = cmath.exp(1j * sign * p * math.pow(base, -2.0 * k / rotary_dim))
            z = (x[..., t, i].astype(np.float64) + 1j * x[..., t, j].astype(np.float64)) * turn
            out[..., t, i], out[..., t, j] = z.real, z.imag
    return out


def _ulp_distance(a: np.ndarray, b: np.ndarray, dtype: str) -> float:
    scale = np.maximum(np.abs(b.astype(np.float64)), 2.0**-14)
    distance = np.abs(a.astype(np.float64) - b.astype(np.float64)) / (scale * unit_roundoff(dtype))
    return float(np.max(distance, initial=0.0))  # no position (T = 0): nothing to be off


def test_the_rope_corpus_covers_widths_long_positions_bases_scalings_and_dtypes(rope_cases):
    valued = _configured(_valued(rope_cases))
    widths = {case.inputs()["x"].shape[-1] for case in valued if "x" in case.raw_inputs}
    positions = max(int(case.inputs()["position_ids"].max(initial=0)) for case in valued)
    rope_types = {case.inputs()["scaling"]["rope_type"] for case in valued}
    dtypes = {case.inputs().get("dtype") or case.inputs()["x"].dtype.name for case in valued}
    assert len(rope_cases) >= 40
    assert {2, 4, 6, 64, 128, 130} <= widths and positions >= 131072
    assert {case.inputs()["base"] for case in valued} >= {10000.0, 500000.0}
    assert rope_types == {t.value for t in RopeType}
    assert {"float32", "float16", "bfloat16"} <= dtypes
    assert {case.operation for case in _valued(rope_cases)} == {*TABLE_OPERATIONS, *APPLY_OPERATIONS}


def test_each_case_carries_exactly_the_features_its_inputs_need(rope_cases):
    for case in _one_row(rope_cases):
        inputs = case.inputs()
        pairing = inputs.get("pairing")
        pairings = {f for f in case.features if f in {p.feature for p in Pairing}}
        if case.operation == "rope_tables" or pairing not in {p.value for p in Pairing}:
            assert not pairings, case.id
        else:
            assert pairings == {Pairing(pairing).feature}, case.id
        ids = inputs["position_ids"]
        contiguous = np.array_equal(ids, np.arange(ids[0], ids[0] + ids.size)) if ids.size else True
        assert ("rope-positions" in case.features) == (not contiguous), case.id
        partial = case.expected_error is None and "x" in inputs and inputs["rotary_dim"] < inputs["x"].shape[-1]
        assert ("rope-partial" in case.features) == partial, case.id
        assert set(case.features) <= set(rope_features()) | {"float16", "bfloat16", "float64"}, case.id


def test_default_goldens_are_the_complex_rotation_rounded_once(rope_cases):
    checked = 0
    for case in _one_row(_valued(rope_cases)):
        inputs = case.inputs()
        if inputs["scaling"] != {"rope_type": "default"} or case.operation == "rope_tables":
            continue
        values = inputs["grad_output"] if case.operation == "rope_backward" else inputs["x"]
        sign = -1 if case.operation == "rope_backward" else 1
        truth = _complex_rotation(
            values, inputs["position_ids"], inputs["rotary_dim"], inputs["base"], inputs["pairing"], sign
        )
        (golden,) = case.expected_outputs.values()
        if golden.dtype != np.float64:  # rounded once: within an ulp of the float64 truth
            assert _ulp_distance(golden, truth, golden.dtype.name) <= 1.0, case.id
        else:  # the golden is exact (test_exact_goldens.py); this truth carries float64's error in the angle
            last, largest = float(inputs["position_ids"].max(initial=0)), np.abs(values).max(initial=0.0)
            bound = 4 * 2.0**-53 * (1 + last) * 2 * largest  # no position (T = 0): nothing to be off
            assert golden.shape == truth.shape and np.abs(golden - truth).max(initial=0.0) <= bound, case.id
        rest = slice(inputs["rotary_dim"], None)
        assert np.array_equal(golden[..., rest], values[..., rest]), case.id  # passed through bit for bit
        checked += 1
    assert checked >= 30


def test_table_goldens_are_cos_and_sin_of_the_angles_from_math(rope_cases):
    for case in _one_row(_valued(rope_cases)):
        if case.operation != "rope_tables" or case.inputs()["scaling"] != {"rope_type": "default"}:
            continue
        inputs = case.inputs()
        if inputs["dtype"] == "float64":  # exact, closer than this float64 truth: tests/corpus/test_exact_goldens.py
            continue
        r, base = inputs["rotary_dim"], inputs["base"]
        angles = [[p * math.pow(base, -2.0 * k / r) for k in range(r // 2)] for p in inputs["position_ids"].tolist()]
        cos, sin = case.expected_outputs["cos"], case.expected_outputs["sin"]
        assert cos.shape == sin.shape == (len(angles), r // 2)
        assert _ulp_distance(cos, np.cos(np.array(angles)), inputs["dtype"]) <= 1.0, case.id
        assert _ulp_distance(sin, np.sin(np.array(angles)), inputs["dtype"]) <= 1.0, case.id


def test_the_backward_is_the_adjoint_of_the_forward():
    rng = np.random.default_rng(5)
    x, g = rng.standard_normal((2, 3, 7, 10)), rng.standard_normal((2, 3, 7, 10))
    ids = np.array([3, 0, 9, 131072, 5, 5, 40000])
    for pairing in ("half_split", "interleaved"):
        for scaling in (
            {"rope_type": "default"},
            {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64},
        ):
            forward = OPERATIONS["rope_forward"](x, ids, 8, 10000.0, scaling, pairing)
            backward = OPERATIONS["rope_backward"](x, ids, 8, 10000.0, scaling, pairing, g)
            assert math.isclose(float(np.sum(forward * g)), float(np.sum(x * backward)), rel_tol=1e-12)


HF_SCALINGS = [
    {"rope_type": "linear", "factor": 4.0},
    {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 4096},
    {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096},
    {"rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096, "truncate": False},
    {
        "rope_type": "yarn",
        "factor": 40.0,
        "original_max_position_embeddings": 4096,
        "mscale": 1.0,
        "mscale_all_dim": 0.5,
    },
    {
        "rope_type": "yarn",
        "factor": 8.0,
        "original_max_position_embeddings": 4096,
        "beta_fast": 16.0,
        "beta_slow": 2.0,
        "attention_factor": 1.0,
    },
    {
        "rope_type": "llama3",
        "factor": 8.0,
        "original_max_position_embeddings": 8192,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
    },
]


@pytest.mark.parametrize("scaling", HF_SCALINGS, ids=lambda s: "-".join(f"{k}={v}" for k, v in s.items()))
def test_scaled_frequencies_are_hugging_faces(scaling):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    utils = pytest.importorskip("transformers.modeling_rope_utils", reason="transformers is not installed")
    from transformers import LlamaConfig

    r, base, top = 128, 500000.0, 8191
    params = {**scaling, "rope_theta": base}
    if scaling["rope_type"] == "dynamic":  # Hugging Face's dynamic reads the original length as max_position_embeddings
        params.pop("original_max_position_embeddings")
    config = LlamaConfig(
        hidden_size=4 * r, num_attention_heads=4, head_dim=r, max_position_embeddings=4096, rope_parameters=params
    )
    hf_freq, hf_attention = utils.ROPE_INIT_FUNCTIONS[scaling["rope_type"]](
        config, "cpu", seq_len=torch.tensor(top + 1)
    )
    ours, attention = inverse_frequencies(r, base, scaling, top)
    assert np.allclose(hf_freq.double().numpy(), ours, rtol=2e-6, atol=0)  # Hugging Face computes in float32
    assert math.isclose(hf_attention, attention, rel_tol=1e-12)


def test_float32_angles_pass_every_case_up_to_131072(rope_cases):
    record = run_named(f"functions:{IMPLS / 'rope_float32.py'}", rope_cases, diagnose=False)
    assert problems(record.results) == []
    assert_outcomes(record, {case.id: "pass" for case in rope_cases})


def _bfloat16_angles_inexact(inputs) -> bool:
    """Whether an angle p * theta computed in bfloat16 (p, theta and their product rounded there) is not the
    angle: never at no position or at position 0 alone, nor where positions and frequencies are small dyadics."""
    ids, r, scaling = np.asarray(inputs["position_ids"]), inputs["rotary_dim"], inputs["scaling"]
    theta, _ = inverse_frequencies(r, inputs["base"], scaling, int(ids.max(initial=0)))
    grid = position_grid(ids.astype(np.int64), r, scaling).astype(np.float64)
    bf16 = numpy_dtype("bfloat16")
    rounded = (grid.astype(bf16) * np.asarray(theta).astype(bf16)).astype(np.float64)
    return not np.array_equal(rounded, grid * np.asarray(theta))


def test_bfloat16_angles_fail_wherever_a_position_or_a_frequency_is_not_exact_in_bfloat16(rope_cases):
    record = run_named(f"functions:{IMPLS / 'rope_bfloat16_angles.py'}", rope_cases, diagnose=False)
    failed = set(problems(record.results))
    configured = _configured(_valued(rope_cases))
    long = [case.id for case in configured if int(case.inputs()["position_ids"].max(initial=0)) >= 4096]
    assert len(long) >= 20 and [case_id for case_id in long if case_id not in failed] == []
    inexact = [case for case in configured if _bfloat16_angles_inexact(case.inputs())]
    wide = [case.id for case in inexact if (case.inputs().get("dtype") or case.inputs()["x"].dtype.name) in WIDE]
    assert len(wide) >= 40 and [case_id for case_id in wide if case_id not in failed] == []  # every wide output
    assert len(failed) >= 0.75 * len(inexact)  # most half ones too: a half's own rounding hides only short angles
    assert failed <= {case.id for case in inexact}  # exact angles are the float32 angles: nothing else to fail


def test_swapped_pairings_fail_each_other(rope_cases):
    """Neither pairing is the other: each case of d >= 4 fails when computed with the other pairing (at rotary_dim
    2 both pair columns 0 and 1, and at no position or only position 0 both are the identity)."""
    checked = 0
    for case in _configured(_valued(rope_cases)):
        inputs = case.inputs()
        if case.operation != "rope_forward" or inputs["x"].shape[-1] < 4 or inputs["rotary_dim"] < 4:
            continue
        if not np.any(inputs["position_ids"] != 0):
            continue
        checked += 1
        other = "interleaved" if inputs["pairing"] == "half_split" else "half_split"
        wrong = OPERATIONS["rope_forward"](**{**inputs, "pairing": other}).astype(np.float64)
        golden = case.expected_outputs["output"].astype(np.float64)
        tol = case.tolerance["output"]
        assert np.any(np.abs(wrong - golden) > tol["atol"] + tol["rtol"] * np.abs(golden)), case.id
    assert checked >= 20


@pytest.mark.parametrize(
    "scaling",
    [
        {"rope_type": "ntk"},
        {"rope_type": "linear"},
        {"rope_type": "linear", "factor": 0.0},
        {"rope_type": "linear", "factor": 2.0, "beta_fast": 3.0},
        {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 0},
        {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 64, "truncate": "yes"},
        {
            "rope_type": "llama3",
            "factor": 8.0,
            "original_max_position_embeddings": 64,
            "low_freq_factor": 2.0,
            "high_freq_factor": 2.0,
        },
        "linear",
    ],
)
def test_a_bad_scaling_is_invalid_config(scaling):
    with pytest.raises(EmbeddingError) as raised:
        OPERATIONS["rope_tables"](np.arange(4), 8, 10000.0, scaling, "float32")
    assert raised.value.kind == "invalid_config"


def test_a_scaling_mapping_reads_and_writes_back():
    mapping = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096, "truncate": False}
    typed = RopeScaling.of(mapping)
    assert typed.rope_type is RopeType.YARN and typed.feature == "rope-yarn" and typed.mapping() == mapping
    assert RopeScaling.of(None).mapping() == {"rope_type": "default"} and RopeScaling.of(None).feature is None


def test_pairs_are_formed_within_the_rotary_block():
    assert [list(a) for a in pair_columns(6, "half_split")] == [[0, 1, 2], [3, 4, 5]]
    assert [list(a) for a in pair_columns(6, "interleaved")] == [[0, 2, 4], [1, 3, 5]]


def test_half_tables_are_rounded_once_from_float64():
    cos, _ = OPERATIONS["rope_tables"](np.array([131072]), 4, 10000.0, None, "bfloat16")
    exact = np.cos(131072 * np.array([[1.0, 0.01]]))
    assert cos.dtype == numpy_dtype("bfloat16") and np.array_equal(cos.view(np.uint16), bfloat16_bits(exact))


@pytest.mark.parametrize("impl", ["reference", "subprocess:{python} -m embconf.protocol.reference_peer"])
def test_the_reference_and_its_peer_provide_the_rope_operations_and_claim_every_rope_feature(impl):
    adapter = create_adapter(impl.format(python=shlex.quote(sys.executable)))
    try:
        caps = adapter.capabilities()
        assert {"rope_tables", "rope_forward", "rope_backward"} <= set(caps.operations)
        assert set(rope_features()) <= set(caps.features)
    finally:
        adapter.close()


def test_list_requirements_shows_every_rope_requirement_with_its_cases():
    listed = run_cli("list", "requirements")
    assert_exit(listed, 0)
    counts = {
        line.split()[0]: int(line.split()[1]) for line in listed.stdout.splitlines() if line.startswith("EMB-ROPE-")
    }
    numbered = sorted(f"EMB-ROPE-{n}" for n in range(1, 18))
    conventions = ["EMB-ROPE-V1", "EMB-ROPE-V2", "EMB-ROPE-V3"]  # pinned by frozen goldens since 2.2.0
    assert sorted(counts) == sorted(numbered + conventions) and min(counts[req] for req in numbered) >= 3
    assert min(counts[req] for req in conventions) >= 2


@pytest.mark.parametrize(
    "before, after, message",
    [
        ('features: ["rope-half_split"]', 'features: ["rope-interleaved"]', "needs feature 'rope-half_split'"),
        ('features: ["rope-half_split", "rope-yarn"]', 'features: ["rope-half_split"]', "needs feature 'rope-yarn'"),
        (
            'features: ["rope-half_split"]',
            'features: ["rope-half_split", "rope-partial"]',
            "'rope-partial' does not match",
        ),
        ('"rope-mrope", "rope-batch-positions"]', '"rope-mrope"]', "needs feature 'rope-batch-positions'"),
        (
            'features: ["rope-half_split", "rope-longrope"]',
            'features: ["rope-half_split"]',
            "needs feature 'rope-longrope'",
        ),
    ],
)
def test_validate_names_a_rope_case_whose_features_do_not_match_its_inputs(tmp_path, before, after, message):
    copy = tmp_path / "fixtures"
    shutil.copytree(FIXTURES_DIR, copy)
    path = copy / "rope.yaml"
    path.write_text(path.read_text().replace(before, after, 1))
    problems, _ = validate_directory(copy)
    assert any("rope.yaml" in p and message in p for p in problems), problems[:3]
