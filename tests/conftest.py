"""Shared helpers: run the CLI as a user would, and load the committed corpus once."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_STUDENT = ROOT / "examples" / "tinytorch_student" / "tinytorch" / "core" / "embeddings.py"
IMPLS = Path(__file__).resolve().parent / "impls"
SPEC_1_1_FEATURES = frozenset({"padding_idx", "max_norm", "scale_grad_by_freq", "float16", "bfloat16", "sinusoid_computed"})  # optional: declined by most examples


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    """``embconf ARGS`` in a fresh interpreter, capturing output."""
    return subprocess.run([sys.executable, "-m", "embconf", *args], cwd=cwd or ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


@pytest.fixture(scope="session")
def corpus():
    from embconf.corpus.fixtures import load_corpus

    return load_corpus()


@pytest.fixture(scope="session")
def cases_by_id(corpus):
    return corpus.by_id()
