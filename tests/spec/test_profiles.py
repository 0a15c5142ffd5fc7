"""The non-canonical sinusoid profiles (EMB-SIN-V1, EMB-SIN-V2): an implementation of another convention
passes its own profile, fails the canonical table with a diagnosis naming its convention, and an
implementation that mislabels its convention fails the profile it claims."""

from __future__ import annotations

import pytest
from helpers import run_report

TABLES = """
import numpy as np

EMBCONF_SINUSOID_CONVENTION = {convention!r}


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


def sinusoidal_table(max_len, embed_dim, dtype):
    return {computes}(max_len, embed_dim).astype(dtype)
"""


def run_sinusoid_impl(tmp_path, convention: str, computes: str) -> tuple[int, dict[str, dict]]:
    module = tmp_path / f"sin_{convention}_{computes}.py"
    module.write_text(TABLES.format(convention=convention, computes=computes))
    result, report = run_report(tmp_path, f"functions:{module}", "--select", "sin.*", "-q")
    return result.returncode, {c["id"]: c for c in report["cases"]}


@pytest.mark.parametrize("convention", ["concatenated", "tensor2tensor"])
def test_a_correct_profile_passes_its_cases_and_is_told_its_convention(tmp_path, convention):
    code, cases = run_sinusoid_impl(tmp_path, convention, convention)
    assert code == 1  # the canonical table is required
    profile = [c for c in cases.values() if f"sinusoid-{convention}" in c["features"]]
    assert profile and all(c["outcome"] == "pass" for c in profile)
    canonical = cases["sin.canonical.l16_d8"]
    assert canonical["outcome"] == "fail"
    assert f"follows the {convention} convention" in canonical["diagnosis"][0]["summary"]


@pytest.mark.parametrize("convention", ["concatenated", "tensor2tensor"])
def test_a_mislabelled_convention_fails_the_profile_it_claims(tmp_path, convention):
    code, cases = run_sinusoid_impl(tmp_path, convention, "interleaved")
    assert code == 1
    profile = [c for c in cases.values() if f"sinusoid-{convention}" in c["features"]]
    assert profile and all(
        c["outcome"] == "fail" for c in profile if "l16_d1" not in c["id"] and "l16_d2" not in c["id"]
    )
    assert cases["sin.canonical.l16_d8"]["outcome"] == "pass"
