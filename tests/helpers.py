"""The tests' one shared vocabulary: where things are, running the command line as a user would, and running
cases through the pipeline (:mod:`embconf.session`) as every entry point does."""

from __future__ import annotations

import math
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
EXAMPLE_STUDENT = ROOT / "examples" / "tinytorch_student" / "tinytorch" / "core" / "embeddings.py"
IMPLS = TESTS / "impls"
STUDENTS = TESTS / "students"
HOSTILE = TESTS / "hostile"  # implementations that misbehave (hang, crash, flood, mutate, ...)
PEERS = TESTS / "peers"  # protocol peers that misbehave
PYTHON = shlex.quote(sys.executable)
# spec 1.1's optional features: declined by most examples
SPEC_1_1_FEATURES = frozenset(
    {"padding_idx", "max_norm", "scale_grad_by_freq", "float16", "bfloat16", "sinusoid_computed"}
)
# spec 1.3's operations (rotary position embeddings) and 2.0's (the layer's own parameters, EMB-LAY-12): not
# provided by the implementations written before them
LATER_OPERATIONS = frozenset({"rope_tables", "rope_forward", "rope_backward", "embedding_layer_own_backward"})


# A declared point of the sinusoid family no named profile is (EMB-SIN-6): MLX's cos-first table in turns.
MLX_OPTIONS = {
    "layout": "cos_sin",
    "spacing": "k/(h-1)",
    "amplitude": "sqrt(2/D)",
    "odd_d": "refused",
    "angle_unit": "turns",
}

MLX_COS_FIRST_FULL_TURNS = """
import numpy as np

EMBCONF_SINUSOID_PARAMETERS = {parameters!r}


class Refused(ValueError):
    kind = "invalid_config"


def sinusoidal_table(max_len, embed_dim, dtype):  # MLX SinusoidalPositionalEncoding(cos_first=True, full_turns=True)
    if embed_dim % 2:
        raise Refused("odd dims")
    half = embed_dim // 2
    one_zero = 1.0 - np.arange(half, dtype=np.float32) / max(half - 1, 1)
    freqs = np.exp(one_zero * np.log(1.0) + (1 - one_zero) * np.log(1e-4)).astype(np.float32)
    angles = np.arange(max_len, dtype=np.float32)[:, None] * freqs[None] * np.float32(2 * np.pi)
    table = np.concatenate([np.cos(angles), np.sin(angles)], axis=1) * np.float32(np.sqrt(2.0 / embed_dim))
    return table.astype(dtype)
"""


def declined_for_a_later_addition(case: dict) -> bool:
    """Whether a not_applicable case of a report is one of the additions after spec 1.0 that the example
    implementations do not claim: a spec 1.1 feature, a non-canonical sinusoid profile, a spec 1.3 operation
    or rope layer (feature ``rope-layer``, with its pairing), spec 2.0's layer of its own (EMB-LAY-12), or spec
    2.1's calls on one instance (feature ``stateful``, which a protocol peer before minor 5 does not have)."""
    features = case["features"]
    return case["operation"] in LATER_OPERATIONS or any(
        f.startswith(("sinusoid-", "rope-")) or f in SPEC_1_1_FEATURES or f == "stateful" for f in features
    )


def run_cli(
    *args: str, cwd: Optional[Path] = None, timeout: float = 300, env: Optional[dict] = None
) -> subprocess.CompletedProcess:
    """``embconf ARGS`` in a fresh interpreter, capturing output."""
    return subprocess.run(
        [sys.executable, "-m", "embconf", *args],
        cwd=cwd or ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def selecting(cases: Iterable[str]) -> list[str]:
    """``--select CASE`` for each case."""
    return [arg for case in cases for arg in ("--select", case)]


def run_report(
    tmp_path: Path,
    impl: str,
    *args: str,
    select: Iterable[str] = (),
    env: Optional[dict] = None,
    timeout: float = 300,
    name: str = "report.json",
) -> tuple[subprocess.CompletedProcess, Any]:
    """(completed process, JSON report or None) of ``embconf run --impl IMPL [--select ...] ARGS --report-json``,
    as a user runs it; a report that was written follows its schema."""
    report = tmp_path / name
    report.unlink(missing_ok=True)
    result = run_cli(
        "run",
        "--impl",
        impl,
        "--no-colour",
        "--report-json",
        str(report),
        *selecting(select),
        *args,
        env=env,
        timeout=timeout,
    )
    if not report.exists():
        return result, None
    document = read_report(report)
    from embconf.model.schemas import validator

    errors = [error.message for error in validator("report").iter_errors(document)]
    assert not errors, errors[:3]
    return result, document


def read_report(path: Path) -> Any:
    """The report document of a file ``embconf run --report-json`` wrote (its JSON lines assembled)."""
    from embconf.reports.json_report import read

    return read(path)


def report_cases(report: Any) -> dict[str, dict]:
    """The cases of a JSON report by id ({} without a report)."""
    return {case["id"]: case for case in report["cases"]} if report else {}


def peer(name: str, *args: str) -> str:
    """``subprocess:`` naming the protocol peer tests/peers/NAME.py (with arguments)."""
    return "subprocess:" + " ".join([PYTHON, shlex.quote(str(PEERS / f"{name}.py")), *map(shlex.quote, args)])


def outcomes(report: Any) -> dict[str, str]:
    """{case id: outcome} of a JSON report."""
    return {case["id"]: case["outcome"] for case in report["cases"]}


def run_diagnosed(adapter: Any, cases: Sequence[Any], **options: Any) -> Any:
    """The run record of ``cases`` on an open adapter, through the pipeline (planned, run, diagnosed)."""
    from embconf.session import RunOptions, run

    return run(adapter, cases, RunOptions(**options))


def run_undiagnosed(adapter: Any, cases: Sequence[Any]) -> Any:
    """One plain pass over the cases (no diagnosis): for what diagnosis must not change."""
    return run_diagnosed(adapter, cases, diagnose=False)


def cause_ids(result: Any) -> list[str]:
    """The ids of a result's causes, best first (``mutant-id`` or ``symptom:KEY``)."""
    return [cause.id for cause in result.causes]


def first_cause(result: Any) -> str:
    """The id of a result's best-ranked cause ('' when it has none)."""
    return result.causes[0].id if result.causes else ""


def problems(results: Iterable[Any]) -> list[str]:
    """The ids of the results that fail the run (fail, error, crash, timeout)."""
    from embconf.model.outcomes import PROBLEMS

    return [r.id for r in results if r.outcome in PROBLEMS]


def identical(a: Any, b: Any) -> bool:
    """Equal in value, type, key order and float bits (-0.0 is not 0.0; NaN is NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(identical(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return a.hex() == b.hex() or (math.isnan(a) and math.isnan(b))
    return a == b
