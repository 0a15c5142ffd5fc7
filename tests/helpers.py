"""The tests' one shared vocabulary: where things are, running the command line as a user would (in a fresh
interpreter or in this process), running cases through the pipeline (:mod:`embconf.session`) as every entry point
does, and the assertions every test makes of what came out: exit codes, one-line errors, outcomes by case id, causes.
A test file defines no runner of its own; tests/test_architecture.py holds every test file to that."""

from __future__ import annotations

import math
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

import pytest

from embconf.model.family import operations_of

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
# spec 1.3's operations (the rope family's, as the vocabulary places them), 2.0's (the layer's own parameters,
# EMB-LAY-12) and 2.3's (the quantized family's): not provided by the implementations written before them
LATER_OPERATIONS = frozenset(operations_of("rope") + operations_of("quantized")) | {"embedding_layer_own_backward"}


def declined_for_a_later_addition(case: dict) -> bool:
    """Whether a not_applicable case of a report is one of the additions after spec 1.0 that the example
    implementations do not claim: a spec 1.1 feature, a non-canonical sinusoid profile, a spec 1.3 operation
    or rope layer (feature ``rope-layer``, with its pairing), spec 2.0's layer of its own (EMB-LAY-12), or spec 2.0's
    fused rope operations (EMB-ROPE-16, 17) and calls on one instance (feature ``stateful``, which a protocol peer
    before minor 5 does not have), spec 2.1's bags (a ``bag-`` feature) or 2.3's quantized operations."""
    features = case["features"]
    return case["operation"] in LATER_OPERATIONS or any(
        f.startswith(("sinusoid-", "rope-", "bag-", "quant")) or f in (*SPEC_1_1_FEATURES, "stateful") for f in features
    )


def undeclared_by_the_reference(case: dict) -> bool:
    """Whether a not_applicable case of the reference's report is outside what it declares by design: another
    sinusoid profile or storage, a rope layer, or a case under a convention (it declares none)."""
    from embconf.model.convention import under_a_convention

    undeclared = ("sinusoid-", "sinusoid_computed", "rope-layer")
    return any(f.startswith(undeclared) for f in case["features"]) or under_a_convention(case["features"])


def embconf_argv(*args: str, python: Sequence[str] = ()) -> list[str]:
    """The argv of ``embconf ARGS`` in a fresh interpreter given the options ``python`` (for a test that starts
    it itself, to signal it or read its output as it comes)."""
    return [sys.executable, *python, "-m", "embconf", *args]


def run_cli(
    *args: str, cwd: Optional[Path] = None, timeout: float = 300, env: Optional[dict] = None
) -> subprocess.CompletedProcess:
    """``embconf ARGS`` in a fresh interpreter, capturing output."""
    return subprocess.run(
        embconf_argv(*args),
        cwd=cwd or ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


PEAK_PROBE = """import sys
from embconf.cli import main
code = main(sys.argv[2:])
with open("/proc/self/status") as status, open(sys.argv[1], "w") as out:
    out.write(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
sys.exit(code)
"""


def run_measured(*args: str, tmp_path: Path, timeout: float = 300) -> tuple[subprocess.CompletedProcess, float]:
    """``embconf ARGS`` in a fresh interpreter, capturing output: (completed process, its peak resident MB, read by
    the process itself as it ends: a child's rusage would count the parent it was forked from). Linux only."""
    peak = tmp_path / "peak.kb"
    done = subprocess.run(
        [sys.executable, "-c", PEAK_PROBE, str(peak), *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    return done, int(peak.read_text()) / 1024 if peak.exists() else math.inf


def run_selected(
    *args: str,
    impl: str = "reference",
    select: Iterable[str] = (),
    env: Optional[dict] = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess:
    """``embconf run --impl IMPL --no-colour [--select ...] ARGS`` in a fresh interpreter (no report of its own)."""
    return run_cli("run", "--impl", impl, "--no-colour", *selecting(select), *args, env=env, timeout=timeout)


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
    result = run_selected("--report-json", str(report), *args, impl=impl, select=select, env=env, timeout=timeout)
    return result, (validated(read_report(report)) if report.exists() else None)


def validated(document: Any) -> Any:
    """A report document, asserted to follow the report schema."""
    from embconf.model.schemas import validator

    errors = [error.message for error in validator("report").iter_errors(document)]
    assert not errors, errors[:3]
    return document


def read_report(path: Path) -> Any:
    """The report document of a file ``embconf run --report-json`` wrote (its JSON lines assembled)."""
    from embconf.reports.json_report import read

    return read(path)


def parse_report(text: str) -> Any:
    """The report document ``embconf run --report-json -`` wrote to stdout."""
    from embconf.reports.json_report import parse

    return parse(text.encode())


def report_cases(report: Any) -> dict[str, dict]:
    """The cases of a JSON report by id ({} without a report)."""
    return {case["id"]: case for case in report["cases"]} if report else {}


def peer(name: str, *args: str) -> str:
    """``subprocess:`` naming the protocol peer tests/peers/NAME.py (with arguments)."""
    return "subprocess:" + " ".join([PYTHON, shlex.quote(str(PEERS / f"{name}.py")), *map(shlex.quote, args)])


def outcomes(report: Any) -> dict[str, str]:
    """{case id: outcome} of a JSON report, of its cases by id (:func:`report_cases`) or of a run record."""
    if hasattr(report, "results"):
        return {result.id: str(result.outcome) for result in report.results}
    cases = report["cases"] if "cases" in report else report.values()
    return {case["id"]: case["outcome"] for case in cases}


def run_diagnosed(adapter: Any, cases: Sequence[Any], **options: Any) -> Any:
    """The run record of ``cases`` on an open adapter, through the pipeline (planned, run, diagnosed)."""
    from embconf.session import RunOptions, run

    return run(adapter, cases, RunOptions(**options))


def run_undiagnosed(adapter: Any, cases: Sequence[Any]) -> Any:
    """One plain pass over the cases (no diagnosis): for what diagnosis must not change."""
    return run_diagnosed(adapter, cases, diagnose=False)


def run_named(impl: str, cases: Sequence[Any], **options: Any) -> Any:
    """:func:`run_diagnosed` on the implementation ``impl`` (``KIND:TARGET``), opened and closed here."""
    from embconf.adapters import create_adapter

    adapter = create_adapter(impl)
    try:
        return run_diagnosed(adapter, cases, **options)
    finally:
        adapter.close()


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


def hostile(module: str) -> str:
    """``functions:`` naming the hostile module tests/hostile/MODULE.py."""
    return f"functions:{HOSTILE / module}.py"


def run_cases(
    tmp_path: Path,
    impl: str,
    *args: str,
    select: Iterable[str] = (),
    env: Optional[dict] = None,
    timeout: float = 120,
) -> tuple[subprocess.CompletedProcess, Any]:
    """(completed process, the report's cases by id, None when no report was written) of ``embconf run -q`` on
    IMPL (``select`` only, if given), as a user runs it."""
    result, report = run_report(tmp_path, impl, "-q", *args, select=select, env=env, timeout=timeout)
    return result, (report_cases(report) if report is not None else None)


def run_reported(
    tmp_path: Path, impl: str, *args: str, select: Iterable[str] = (), env: Optional[dict] = None, timeout: float = 120
) -> tuple[subprocess.CompletedProcess, Any]:
    """(completed process, JSON report) of ``embconf run -q`` on IMPL, whose report must have been written."""
    result, report = run_report(tmp_path, impl, "-q", *args, select=select, env=env, timeout=timeout)
    assert report is not None, f"no report (exit {result.returncode}): {result.stderr[-2000:]}"
    return result, report


def run_with_closed_streams(tmp_path: Path, closed: str, *args: str) -> tuple[subprocess.CompletedProcess, Path]:
    """(completed process, report path) of ``embconf run --no-colour --report-json FILE ARGS`` with the standard
    streams in ``closed`` (e.g. ``>&-``) closed by the shell before it starts; stderr captured unless closed too."""
    report = tmp_path / "closed.json"
    command = embconf_argv("run", "--no-colour", "--report-json", str(report), *args)
    script = f'exec "$@" {closed}'
    result = subprocess.run(["sh", "-c", script, "sh", *command], cwd=ROOT, capture_output=True, text=True, timeout=120)
    return result, report


def run_main(capsys: Any, *argv: str) -> tuple[int, str, str]:
    """``embconf ARGV`` in this process: (exit code, stdout, stderr)."""
    from embconf.cli import main

    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def pytest_argv(*args: str) -> list[str]:
    """The argv of ``pytest -q ARGS`` in a fresh interpreter (its cache off)."""
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]


def run_pytest(cwd: Path, *args: str, env: Optional[dict] = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """``pytest -q ARGS`` in a fresh interpreter in ``cwd`` (the embconf plugin as a user meets it)."""
    return subprocess.run(
        pytest_argv(*args), cwd=cwd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
    )


def case_ids(*patterns: str) -> list[str]:
    """The ids of the corpus's cases that ``patterns`` select (as ``--select`` does)."""
    from embconf.corpus.fixtures import load_corpus
    from embconf.corpus.select import select

    return [case.id for case in select(load_corpus().cases, patterns)]


# ---------------------------------------------------------------- processes a run leaves behind

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process trees are read from /proc")


def alive(pid: int) -> bool:
    """Whether ``pid`` is a living process (a zombie is dead)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def survivors(pidfile: Path, within: float = 5.0) -> list[int]:
    """The pids listed in ``pidfile`` still alive after ``within`` seconds (killed, so no test leaks them)."""
    pids = [int(line) for line in pidfile.read_text().split()] if pidfile.exists() else []
    deadline = time.monotonic() + within
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in pids if alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


# ---------------------------------------------------------------- assertions


def output_tail(result: subprocess.CompletedProcess, chars: int = 3000) -> str:
    """The end of what a process wrote (stdout, then stderr): an assertion's message."""
    return (result.stdout or "")[-chars:] + (result.stderr or "")[-chars:]


def assert_exit(result: subprocess.CompletedProcess, code: int) -> None:
    """The process exited with ``code`` and printed no traceback on stderr."""
    assert result.returncode == code, output_tail(result)
    assert "Traceback" not in result.stderr, output_tail(result)


def assert_one_line_error(result: Any, *words: str, code: int = 2, max_chars: Optional[int] = None) -> None:
    """Exit ``code`` (2: bad input), no traceback, exactly one line on stderr (at most ``max_chars``), holding each
    of ``words``. ``result`` is a completed process or the (exit code, stdout, stderr) of :func:`run_main`."""
    returncode, out, err = (
        (result.returncode, result.stdout, result.stderr) if hasattr(result, "returncode") else result
    )
    assert "Traceback" not in out + err, err[-3000:]
    assert returncode == code, (returncode, out[-2000:], err[-2000:])
    assert err.count("\n") == 1 and err.endswith("\n"), err[-3000:]
    assert max_chars is None or len(err) <= max_chars, len(err)
    for word in words:
        assert word in err, err


def assert_clean_pass(result: subprocess.CompletedProcess, report: Any) -> None:
    """Exit 0, at least one case passed and none failed or erred."""
    assert result.returncode == 0, output_tail(result)
    assert report["summary"]["fail"] == report["summary"]["error"] == 0, report["summary"]
    assert report["summary"]["pass"] > 0, report["summary"]


def cases_with(report: Any, outcome: str) -> list[dict]:
    """The cases of a JSON report (or of cases by id) whose outcome is ``outcome``."""
    cases = report["cases"] if "cases" in report else report.values()
    return [case for case in cases if case["outcome"] == outcome]


def assert_only(report: Any, *allowed: str) -> None:
    """The report (or cases by id) holds at least one case, and every case's outcome is one of ``allowed``."""
    got = outcomes(report)
    assert got and set(got.values()) <= set(allowed), {c: o for c, o in got.items() if o not in allowed} or "no case"


def assert_outcomes(report: Any, expected: Mapping[str, str]) -> None:
    """The report (or cases by id) holds exactly the cases of ``expected``, each with its outcome."""
    got = outcomes(report)
    assert got == dict(expected), {case: got.get(case) for case in set(got) | set(expected)}


def assert_outcome(case: Any, outcome: str, *words: str) -> None:
    """A case (a JSON report's, or a run record's result) has ``outcome`` and its message holds each of ``words``."""
    if isinstance(case, Mapping):
        ident, got, message = case["id"], case["outcome"], case["message"]
    else:
        ident, got, message = case.id, case.outcome, case.message
    assert got == outcome, (ident, got, message[:2000])
    for word in words:
        assert word in message, message[:3000]


def assert_judged(
    result: subprocess.CompletedProcess,
    cases: Mapping[str, Any],
    select: Iterable[str],
    expected: Mapping[str, tuple[str, ...]],
    rest: Iterable[str] = ("pass",),
) -> None:
    """Exit 1 without a traceback, every selected case reported (``cases`` by id, or a report), each case of
    ``expected`` with its (outcome, *words of its message), and every other case's outcome one of ``rest``."""
    assert_exit(result, 1)
    by_id = report_cases(cases) if "cases" in cases else cases
    select, rest = list(select), set(rest)
    assert sorted(by_id) == sorted(select)
    for case_id in select:
        if case_id in expected:
            assert_outcome(by_id[case_id], *expected[case_id])
        else:
            assert by_id[case_id]["outcome"] in rest, by_id[case_id]
