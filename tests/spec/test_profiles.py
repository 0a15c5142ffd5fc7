"""The sinusoid family (EMB-SIN-6) and its named profiles (EMB-SIN-V1..V4), spec 1.2.0: an implementation of
another convention that declares it is judged against it (its profile's cases pass, the canonical table's
are not_applicable, the run exits 0 and the claim names the profile); one that mislabels its convention
fails the profile it claims; one that declares nothing is told which convention it follows."""

from __future__ import annotations

import pytest
from helpers import (
    assert_exit,
    assert_one_line_error,
    assert_only,
    assert_outcome,
    cases_with,
    outcomes,
    run_cases,
)

TABLES = """
import numpy as np

EMBCONF_SINUSOID_CONVENTION = {convention!r}


class Refused(ValueError):
    kind = "invalid_config"


def _angles(max_len, freqs):
    return np.arange(max_len, dtype=np.float64)[:, None] * freqs[None, :]


def interleaved(max_len, dim):
    a = _angles(max_len, 10000.0 ** (-2.0 * np.arange((dim + 1) // 2) / dim))
    t = np.empty((max_len, dim))
    t[:, 0::2], t[:, 1::2] = np.sin(a), np.cos(a[:, : dim // 2])
    return t


def concatenated(max_len, dim):
    a = _angles(max_len, 10000.0 ** (-2.0 * np.arange((dim + 1) // 2) / dim))
    return np.concatenate([np.sin(a), np.cos(a[:, : dim // 2])], axis=1)


def tensor2tensor(max_len, dim):
    half = dim // 2
    a = _angles(max_len, 10000.0 ** (-np.arange(half) / max(half - 1, 1)))
    return np.concatenate([np.sin(a), np.cos(a), np.zeros((max_len, dim % 2))], axis=1)


def guided_diffusion(max_len, dim):  # OpenAI guided-diffusion timestep_embedding, positions as timesteps
    half = dim // 2
    a = _angles(max_len, np.exp(-np.log(10000.0) * np.arange(half) / max(half, 1)))
    return np.concatenate([np.cos(a), np.sin(a), np.zeros((max_len, dim % 2))], axis=1)


def mlx(max_len, dim):  # MLX nn.SinusoidalPositionalEncoding(dim) with its defaults
    if dim % 2:
        raise Refused(f"odd dims {{dim}}")
    half = dim // 2
    one_zero = 1.0 - np.arange(half) / max(half - 1, 1)
    a = _angles(max_len, np.exp(one_zero * np.log(1.0) + (1.0 - one_zero) * np.log(1e-4)))
    return np.concatenate([np.sin(a), np.cos(a)], axis=1) * np.sqrt(2.0 / dim)


def sinusoidal_table(max_len, embed_dim, dtype):
    return {computes}(max_len, embed_dim).astype(dtype)
"""

PROFILES = ["concatenated", "tensor2tensor", "guided-diffusion", "mlx"]
CLAIMS = {
    "concatenated": "[sin | cos] (EMB-SIN-V1)",
    "tensor2tensor": "(EMB-SIN-V2)",
    "guided-diffusion": "[cos | sin], k/h, zero column (EMB-SIN-V3)",
    "mlx": "amplitude sqrt(2/D), odd D refused (EMB-SIN-V4)",
}


def write_impl(tmp_path, convention: str, computes: str, extra: str = "") -> str:
    module = tmp_path / f"sin_{convention.replace('-', '_')}_{computes}.py"
    module.write_text(TABLES.format(convention=convention, computes=computes.replace("-", "_")) + extra)
    return f"functions:{module}"


@pytest.mark.parametrize("convention", PROFILES)
def test_a_declared_profile_that_matches_passes_and_the_run_exits_0(tmp_path, convention):
    result, cases = run_cases(tmp_path, write_impl(tmp_path, convention, convention), select=("sin.*",))
    assert_exit(result, 0)
    profile = {i: c for i, c in cases.items() if f"sinusoid-{convention}" in c["features"]}
    assert len(profile) >= 5
    assert_only(profile, "pass")
    canonical = [c for c in cases.values() if "sinusoid-interleaved" in c["features"]]
    assert_only({c["id"]: c for c in canonical}, "not_applicable")
    assert "a case of the canonical sinusoid table: it declares the sinusoid profile" in canonical[0]["message"]
    assert "Declared sinusoid convention: " in result.stdout and CLAIMS[convention] in result.stdout
    assert "declare sinusoid_convention" not in result.stdout


@pytest.mark.parametrize("convention", PROFILES)
def test_a_mislabelled_convention_fails_the_profile_it_claims(tmp_path, convention):
    """The canonical table declared as each profile (e.g. as [cos | sin]) fails that profile's cases."""
    result, cases = run_cases(tmp_path, write_impl(tmp_path, convention, "interleaved"), select=("sin.*",))
    assert_exit(result, 1)
    profile = {i: c for i, c in cases.items() if f"sinusoid-{convention}" in c["features"]}
    assert len(cases_with(profile, "fail")) >= 3, outcomes(profile)
    assert_only({i: c for i, c in cases.items() if "sinusoid-interleaved" in c["features"]}, "not_applicable")


@pytest.mark.parametrize("convention", ["concatenated", "tensor2tensor"])
def test_an_undeclared_convention_fails_the_canonical_table_and_is_told_which_it_follows(tmp_path, convention):
    result, cases = run_cases(tmp_path, write_impl(tmp_path, "interleaved", convention), select=("sin.*",))
    assert_exit(result, 1)
    canonical = cases["sin.canonical.l16_d8"]
    assert_outcome(canonical, "fail")
    assert f"follows the {convention} convention" in canonical["diagnosis"][0]["summary"]
    assert f"declare sinusoid_convention '{convention}'" in canonical["diagnosis"][0]["summary"]


def test_another_profile_is_not_told_to_declare_what_it_declares(tmp_path):
    """A [sin | cos] table with the wrong frequencies, declared as concatenated: never 'declare concatenated'."""
    result, cases = run_cases(tmp_path, write_impl(tmp_path, "concatenated", "tensor2tensor"), select=("sin.*",))
    assert_exit(result, 1)
    assert_outcome(cases["sin.concatenated.l16_d8"], "fail")
    assert "declare sinusoid_convention 'concatenated'" not in result.stdout


def test_the_parameters_of_a_named_profile_declare_it(tmp_path):
    extra = (
        "\ndel EMBCONF_SINUSOID_CONVENTION\n"
        "EMBCONF_SINUSOID_PARAMETERS = {'layout': 'cos_sin', 'spacing': 'k/h', 'odd_d': 'zero_column'}\n"
    )
    result, cases = run_cases(
        tmp_path, write_impl(tmp_path, "interleaved", "guided-diffusion", extra), select=("sin.*",)
    )
    assert_exit(result, 0)
    assert_outcome(cases["sin.guided_diffusion.l64_d7"], "pass")
    assert_outcome(cases["sin.canonical.l16_d8"], "not_applicable")


@pytest.mark.parametrize(
    "declaration, said",
    [
        ("EMBCONF_SINUSOID_CONVENTION = 'cos-sin'", "unknown sinusoid_convention 'cos-sin'"),
        (
            "EMBCONF_SINUSOID_PARAMETERS = {'layout': 'cos-first'}",
            "sinusoid parameter layout 'cos-first' is not one of",
        ),
        ("EMBCONF_SINUSOID_PARAMETERS = {'phase': 1}", "unknown sinusoid parameter(s) phase"),
        ("EMBCONF_SINUSOID_PARAMETERS = {'base': 1}", "sinusoid parameter base 1 is not a number from 2 to 1e+07"),
        ("EMBCONF_SINUSOID_PARAMETERS = {'amplitude': 'sqrt(D)'}", "sinusoid parameter amplitude 'sqrt(D)'"),
        ("EMBCONF_SINUSOID_PARAMETERS = {'layout': 'sin_cos'}", "name different tables"),
    ],
)
def test_an_unknown_profile_or_parameter_is_refused_in_one_line(tmp_path, declaration, said):
    extra = "\n" + declaration + "\n"
    convention = "mlx" if "different" in said else "interleaved"
    result, cases = run_cases(tmp_path, write_impl(tmp_path, convention, "interleaved", extra))
    assert_one_line_error(result, said)
    assert cases is None
