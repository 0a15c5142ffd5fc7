"""The rope layer (spec 1.3.0, EMB-LAY-10/11, feature ``rope-layer``): its goldens against an independent
complex rotation, the implied ``rope-layer-refused`` that keeps 'rope' invalid_config for every other
implementation, and TinyTorch students: one with the extension passes, one that forgets start_pos fails
exactly where it shows, and the example student (no rope) keeps answering invalid_config."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import EXAMPLE_STUDENT, IMPLS, ROOT, assert_exit, outcomes, run_report

from embconf.model.contract import Capabilities, contradictory_features
from embconf.reference.tolerance import unit_roundoff

REFUSED = ("layer.error.unknown_pos_encoding", "mem.error.parameters_unknown_pos")


def rotated(x: np.ndarray, positions: np.ndarray, pairing: str) -> np.ndarray:
    """Each pair as a complex number times exp(i p theta_k), theta_k = 10000^(-2k/D): no shared code."""
    dim = x.shape[-1]
    theta = 10000.0 ** (-np.arange(0, dim, 2) / dim)
    turn = np.exp(1j * positions[:, None] * theta[None, :])
    first, second = (
        (x[..., : dim // 2], x[..., dim // 2 :]) if pairing == "half_split" else (x[..., 0::2], x[..., 1::2])
    )
    z = (first + 1j * second) * turn
    out = np.empty_like(x)
    if pairing == "half_split":
        out[..., : dim // 2], out[..., dim // 2 :] = z.real, z.imag
    else:
        out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


def _inputs(case):
    inputs = case.inputs()
    config = inputs["config"]
    c = math.sqrt(config["embed_dim"]) if config.get("scale_embeddings") else 1.0
    tokens = np.asarray(inputs["tokens"]).astype(np.int64)
    positions = np.arange(inputs["start_pos"], inputs["start_pos"] + tokens.shape[-1], dtype=np.float64)
    return inputs, config, c, tokens, positions


def rounded_once(got: np.ndarray, want: np.ndarray) -> bool:
    """The golden is the float64 truth rounded once to its dtype: within its unit roundoff (float32's 1e-6 at
    least, the truth's own float64 angle aside)."""
    bound = max(1e-6, unit_roundoff(got.dtype.name))
    return got.shape == want.shape and np.allclose(got.astype(np.float64), want, rtol=bound, atol=1e-6)


def rope_layer_cases(corpus, operation):
    found = [
        c for c in corpus.cases if c.operation == operation and "rope-layer" in c.features and not c.expected_error
    ]
    assert found
    return found


def test_every_rope_layer_forward_golden_is_the_complex_rotation_of_the_scaled_tokens(corpus):
    for case in rope_layer_cases(corpus, "embedding_layer_forward"):
        inputs, config, c, tokens, positions = _inputs(case)
        x = inputs["token_weight"].astype(np.float64)[tokens] * c
        want = rotated(x, positions, config.get("rope_pairing", "half_split"))
        got = case.expected_outputs["output"]
        assert rounded_once(got, want), case.id


def test_every_rope_layer_backward_golden_is_c_times_the_scatter_add_of_g_rotated_back(corpus):
    for case in rope_layer_cases(corpus, "embedding_layer_backward"):
        inputs, config, c, tokens, positions = _inputs(case)
        g = inputs["grad_output"].astype(np.float64)
        back = rotated(g, -positions, config.get("rope_pairing", "half_split")).reshape(-1, config["embed_dim"])
        want = np.zeros(inputs["token_weight"].shape)
        np.add.at(want, tokens.reshape(-1), back * c)
        if config.get("padding_idx") is not None:
            want[config["padding_idx"]] = 0.0
        got = case.expected_outputs["grad_token_weight"]
        assert rounded_once(got, want), case.id
        assert case.expected_outputs["grad_position_table"] is None


def test_rope_layer_cases_cover_both_pairings_scaling_start_pos_and_2d_tokens(corpus):
    cases = [c for c in corpus.cases if "rope-layer" in c.features]
    for pairing in ("half_split", "interleaved"):
        mine = [c for c in cases if f"rope-{pairing}" in c.features]
        assert {c.operation for c in mine} >= {"embedding_layer_forward", "embedding_layer_backward"}
        assert {c.operation for c in mine} <= {
            "embedding_layer_forward",
            "embedding_layer_backward",
            "embedding_layer_own_backward",
        }
        assert any(c.raw_inputs["config"]["scale_embeddings"] for c in mine)
        assert any(c.raw_inputs["start_pos"] > 0 for c in mine)
        assert any(len(c.raw_inputs["tokens"]["shape"]) == 2 for c in mine)
        assert all(c.raw_inputs["config"].get("rope_pairing", "half_split") == pairing for c in mine)
    assert {"layer.error.rope_odd_dim", "mem.parameters.rope"} <= {c.id for c in cases}


def test_the_refused_answer_applies_to_every_implementation_that_does_not_declare_a_rope_layer(cases_by_id):
    plain = Capabilities(frozenset({"embedding_layer_forward", "parameter_count"}))
    with_rope = Capabilities(plain.operations, frozenset({"rope-layer", "rope-half_split"}))
    for case_id in REFUSED:
        case = cases_by_id[case_id]
        assert case.features == ("rope-layer-refused",) and case.expected_error == "invalid_config"
        assert plain.applies(case.operation, case.features) is None
        assert "rope-layer" in with_rope.applies(case.operation, case.features)
    rope_case = cases_by_id["layer.forward.rope.half_split.start_pos"]
    assert plain.applies(rope_case.operation, rope_case.features) is not None
    assert with_rope.applies(rope_case.operation, rope_case.features) is None
    assert "exclude each other" in contradictory_features(["rope-layer", "rope-layer-refused"])


def _impl(name: str) -> str:
    return f"tinytorch:{(IMPLS / name).relative_to(ROOT)}"


@pytest.fixture(scope="module")
def rope_reports(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rope_layer")
    return {
        name: run_report(tmp, impl, "-k", "layer.*", "-k", "mem.*", "-q", name=f"{name}.json")
        for name, impl in (
            ("rope", _impl("tinytorch_rope.py")),
            ("no_offset", _impl("tinytorch_rope_no_offset.py")),
            ("example", f"tinytorch:{EXAMPLE_STUDENT.relative_to(ROOT)}"),
        )
    }


def test_a_tinytorch_student_with_the_rope_extension_passes_its_pairing_and_is_spared_the_refusal(rope_reports):
    result, report = rope_reports["rope"]
    assert result.returncode == 0, result.stdout[-2000:]
    seen = outcomes(report)
    assert seen["layer.forward.rope.half_split.start_pos"] == "pass"
    assert seen["layer.backward.rope.half_split.start_pos_repeated"] == "pass"
    assert seen["mem.parameters.rope"] == "pass"
    assert seen["layer.forward.rope.interleaved.start_pos"] == "not_applicable"
    assert all(seen[case_id] == "not_applicable" for case_id in REFUSED)
    assert "rope-layer" in report["capabilities"]["features"]


def test_a_student_whose_rope_forgets_start_pos_fails_exactly_the_cases_past_position_0(rope_reports):
    result, report = rope_reports["no_offset"]
    assert result.returncode == 1
    failed = {case_id for case_id, outcome in outcomes(report).items() if outcome == "fail"}
    assert "layer.forward.rope.half_split.start_pos" in failed
    assert "layer.backward.rope.half_split.start_pos_repeated" in failed
    assert all(".rope." in case_id and case_id.split(".")[-1] != "tokens_1d" for case_id in failed)
    assert outcomes(report)["layer.forward.rope.half_split.unscaled.tokens_1d"] == "pass"


def test_the_example_student_without_rope_keeps_answering_invalid_config(rope_reports):
    result, report = rope_reports["example"]
    assert result.returncode == 0, result.stdout[-2000:]
    seen = outcomes(report)
    assert all(seen[case_id] == "pass" for case_id in REFUSED)
    assert all(outcome == "not_applicable" for case_id, outcome in seen.items() if ".rope" in case_id)
    assert "rope-layer" not in report["capabilities"]["features"]


INTERLEAVED_STUDENT = """
import numpy as np
from tinytorch_rope import Embedding, PositionalEncoding, Tensor, _compute_sinusoidal_table
import tinytorch_rope


def rotate(x, angles):
    cos, sin = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
    out[..., 1::2] = x[..., 1::2] * cos + x[..., 0::2] * sin
    return out


tinytorch_rope.rotate = rotate
EmbeddingLayer = tinytorch_rope.EmbeddingLayer
"""


def test_the_adapter_claims_the_pairing_the_student_computes(tmp_path):
    student = tmp_path / "interleaved_student.py"
    student.write_text(INTERLEAVED_STUDENT)
    env = {"PYTHONPATH": str(IMPLS)}
    result, report = run_report(tmp_path, f"tinytorch:{student}", "-k", "layer.*.rope.*", "-q", env=env)
    assert_exit(result, 0)
    assert {"rope-layer", "rope-interleaved"} <= set(report["capabilities"]["features"])
    seen = outcomes(report)
    assert seen["layer.backward.rope.interleaved.start_pos_repeated"] == "pass"
    assert seen["layer.forward.rope.half_split.start_pos"] == "not_applicable"
