"""The sinusoid family as parameters (EMB-SIN-6, spec 1.2.0): every named profile is a point of it, the
reference computes any point, a declared point no profile names brings its own cases (feature
sinusoid-family), the wire and the claim carry the declaration, and a bad declaration is one line."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import assert_exit, assert_only, report_cases, run_report
from mlx_family import MLX_COS_FIRST_FULL_TURNS, MLX_OPTIONS

from embconf.model.contract import Capabilities
from embconf.model.sinusoid import (
    Layout,
    SinusoidProfile,
    declared_profile,
    declaring,
    named_profiles,
    point_of,
    profile_named,
)
from embconf.model.vocabulary import features, spec_version, vocabulary
from embconf.protocol.lines import ProtocolError
from embconf.protocol.messages import parse_start_reply
from embconf.reference.errors import EmbeddingError
from embconf.reference.sinusoid import family_table, sinusoidal_table


def test_every_named_profile_is_a_point_with_its_feature_and_requirement():
    family = vocabulary()["sinusoid_family"]
    assert list(named_profiles()) == list(family["profiles"])
    for name, point in named_profiles().items():
        assert point.name == name and f"sinusoid-{name}" in features()
        assert point.requirement == family["profiles"][name]["requirement"]
    assert SinusoidProfile() == profile_named("interleaved") and SinusoidProfile().canonical


def test_declaring_the_parameters_of_a_named_profile_is_declaring_it():
    point = declared_profile(parameters={"layout": "sin_cos", "spacing": "k/(h-1)", "odd_d": "zero_column"})
    assert point.name == "tensor2tensor"
    caps = Capabilities(frozenset({"sinusoidal_table"}), conventions=frozenset({point}))
    assert caps.to_json()["sinusoid_convention"] == "tensor2tensor"
    unnamed = declared_profile(parameters=MLX_OPTIONS)
    caps = Capabilities(frozenset({"sinusoidal_table"}), conventions=frozenset({unnamed}))
    assert caps.to_json()["sinusoid_convention"] == "family" and "sinusoid-family" in caps.all_features
    assert "sinusoid-interleaved" not in caps.all_features


def test_the_reference_computes_any_point():
    pos = np.arange(3.0)
    diffusion = family_table(3, 3, profile_named("guided-diffusion"))  # h = 1: [cos(pos), sin(pos), 0]
    assert np.array_equal(diffusion, np.stack([np.cos(pos), np.sin(pos), np.zeros(3)], axis=1))
    mlx = family_table(3, 8, profile_named("mlx"))
    freqs = 10000.0 ** (-np.arange(4) / 3)
    assert np.allclose(mlx, 0.5 * np.concatenate([np.sin(pos[:, None] * freqs), np.cos(pos[:, None] * freqs)], 1))
    turns = family_table(2, 2, SinusoidProfile.from_json({"angle_unit": "turns", "base": 100}))
    assert np.allclose(turns, [[0, 1], [math.sin(2 * math.pi), 1]])
    odd_interleaved_zero = family_table(2, 3, SinusoidProfile.from_json({"odd_d": "zero_column"}))
    assert np.array_equal(odd_interleaved_zero, [[0, 1, 0], [math.sin(1), math.cos(1), 0]])
    with pytest.raises(EmbeddingError) as refused:
        sinusoidal_table(4, 5, "float32", "mlx")
    assert refused.value.kind == "invalid_config"


def test_the_named_profiles_keep_their_1_1_tables():
    """EMB-SIN-V1 and V2 as points give the tables 1.1.0 pinned (the goldens are byte-identical)."""
    for dim in (1, 2, 3, 7, 8):
        a = np.arange(16.0)[:, None] * 10000.0 ** (-2.0 * np.arange((dim + 1) // 2) / dim)
        assert np.array_equal(
            sinusoidal_table(16, dim, "float64", "concatenated"),
            np.concatenate([np.sin(a), np.cos(a[:, : dim // 2])], axis=1),
        )


def test_a_declared_point_no_profile_names_runs_its_own_cases_and_conforms(tmp_path):
    module = tmp_path / "mlx_cos_first.py"
    module.write_text(MLX_COS_FIRST_FULL_TURNS.format(parameters=MLX_OPTIONS))
    result, report = run_report(tmp_path, f"functions:{module}", "--select", "sin.*", "-q")
    assert_exit(result, 0)
    family = {i: c for i, c in report_cases(report).items() if i.startswith("sin.family.")}
    assert len(family) >= 8
    assert_only(family, "pass")
    assert set(family) >= {"sin.family.l16_d8", "sin.family.l64_d7", "sin.family.l512_d64"}
    assert report["capabilities"]["sinusoid_convention"] == "family"
    assert (
        "[cos | sin], spacing k/(h-1), amplitude sqrt(2/D), angle_unit turns, odd_d refused (EMB-SIN-6)"
        in result.stdout
    )


def test_a_declared_point_it_does_not_compute_fails_its_cases(tmp_path):
    module = tmp_path / "mlx_mislabelled.py"
    module.write_text(MLX_COS_FIRST_FULL_TURNS.format(parameters={**MLX_OPTIONS, "layout": "sin_cos"}))
    result, report = run_report(tmp_path, f"functions:{module}", "--select", "sin.*", "-q")
    assert_exit(result, 1)
    outcomes = {c["id"]: c["outcome"] for c in report["cases"] if c["id"].startswith("sin.family.")}
    assert outcomes["sin.family.l16_d8"] == "fail" and outcomes["sin.family.l64_d7"] == "pass"  # refused either way


def test_the_matrix_claim_names_a_declared_profile(tmp_path):
    from embconf.corpus.fixtures import load_corpus
    from embconf.matrix.model import build
    from embconf.session import run_implementation

    module = tmp_path / "marian_like.py"
    module.write_text(
        "import numpy as np\nEMBCONF_SINUSOID_CONVENTION = 'concatenated'\n"
        "def sinusoidal_table(max_len, embed_dim, dtype):\n"
        "    a = np.arange(max_len)[:, None] * 10000.0 ** (-2.0 * np.arange((embed_dim + 1) // 2) / embed_dim)\n"
        "    return np.concatenate([np.sin(a), np.cos(a[:, : embed_dim // 2])], axis=1).astype(dtype)\n"
    )
    cases = [c for c in load_corpus().cases if c.operation == "sinusoidal_table"]
    record = run_implementation(f"functions:{module}", cases)
    (column,) = build([record], {})["implementations"]
    assert column["claim"]["conforms"]
    assert column["claim"]["statement"].startswith(
        f"conforms to spec {spec_version()} for its declared capabilities, sinusoid profile: [sin | cos] (EMB-SIN-V1); "
        "canonical table not provided"
    )


def _start_reply(**capabilities):
    caps = {"operations": ["sinusoidal_table"], "features": [], **capabilities}
    return {"protocol": 1, "implementation": {"name": "p", "version": "1", "language": "js", "capabilities": caps}}


@pytest.mark.parametrize("validate", [False, True])
def test_the_wire_declares_a_point_by_its_parameters(validate):
    reply = parse_start_reply(
        _start_reply(sinusoid_parameters={"layout": "cos_sin", "spacing": "k/h", "odd_d": "zero_column"}), validate
    )
    assert point_of(reply.implementation.capabilities.conventions).name == "guided-diffusion"
    reply = parse_start_reply(_start_reply(sinusoid_convention="mlx"), validate)
    assert point_of(reply.implementation.capabilities.conventions).layout is Layout.SIN_COS


@pytest.mark.parametrize("validate", [False, True])
@pytest.mark.parametrize(
    "capabilities",
    [
        {"sinusoid_convention": "cos-sin"},
        {"sinusoid_parameters": {"layout": "cos-first"}},
        {"sinusoid_parameters": {"phase": 1}},
        {"sinusoid_parameters": {"amplitude": -1}},
        {"sinusoid_convention": "mlx", "sinusoid_parameters": {"layout": "cos_sin"}},
    ],
)
def test_a_bad_sinusoid_declaration_on_the_wire_is_a_one_line_protocol_error(capabilities, validate):
    with pytest.raises(ProtocolError) as refused:
        parse_start_reply(_start_reply(**capabilities), validate)
    assert "\n" not in str(refused.value) and "start reply" in str(refused.value)


def test_list_features_holds_every_declarable_convention():
    from helpers import run_cli

    result = run_cli("list", "features")
    assert_exit(result, 0)
    for text in ("sinusoid-guided-diffusion", "sinusoid-mlx", "cos_sin", "k/h", "sqrt(2/D)", "turns", "refused"):
        assert text in result.stdout, text


def test_the_matrix_tells_an_unnamed_point_by_its_parameters(tmp_path):
    from embconf.corpus.fixtures import load_corpus
    from embconf.matrix.model import build, capabilities_text
    from embconf.session import run_implementation

    module = tmp_path / "mlx_cos_first_matrix.py"
    module.write_text(MLX_COS_FIRST_FULL_TURNS.format(parameters=MLX_OPTIONS))
    cases = [c for c in load_corpus().cases if c.operation == "sinusoidal_table"]
    (column,) = build([run_implementation(f"functions:{module}", cases)], {})["implementations"]
    point = "[cos | sin], spacing k/(h-1), amplitude sqrt(2/D), angle_unit turns, odd_d refused (EMB-SIN-6)"
    assert (
        column["claim"]["conforms"]
        and f"sinusoid profile: {point}; canonical table not provided" in column["claim"]["statement"]
    )
    assert f"sinusoids {point}" in capabilities_text(column)


def test_a_profile_is_declared_by_name_as_a_convention_and_never_positionally():
    assert Capabilities(frozenset(), conventions=declaring("concatenated")).declared("sinusoid") == {
        profile_named("concatenated")
    }
    assert Capabilities(frozenset(), conventions=declaring("interleaved")).conventions == frozenset()  # canonical
    with pytest.raises(ValueError, match="unknown sinusoid_convention 'cosine'"):
        declaring("cosine")
    with pytest.raises(TypeError):  # 1.x took the profile's name third: a plugin doing so fails loudly
        Capabilities(frozenset(), frozenset(), "concatenated")  # type: ignore[misc]
    with pytest.raises(ValueError, match="more than one sinusoid convention"):
        Capabilities(frozenset(), conventions=declaring("mlx") | declaring("concatenated"))
