"""Start-up: a heavy optional import (ml_dtypes, for bfloat16) happens only when a selected case needs it: the
worker is told before its first call, and the runner imports it only when it first makes such an array, not
before the first call goes out (the timings are benchmarks/bench_startup.py's)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("ml_dtypes")

PROBE = textwrap.dedent(
    """
    import sys
    from embconf import session
    from embconf.corpus.fixtures import load_corpus

    def worker_has_ml_dtypes(adapter):
        return "ml_dtypes" in sys.modules

    cases = [case for case in load_corpus().cases if case.id.startswith(sys.argv[1])]
    adapter = session.open_implementation("reference")
    try:
        before = adapter.inner.apply(worker_has_ml_dtypes, (), 60)
        session.plan(adapter, cases)
        after_plan = adapter.inner.apply(worker_has_ml_dtypes, (), 60)
        runner_after_plan = "ml_dtypes" in sys.modules
        [case.inputs() for case in cases]
    finally:
        adapter.close()
    print(before[1], after_plan[1], runner_after_plan, "ml_dtypes" in sys.modules)
    """
)


def _probe(prefix: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, prefix], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()


def test_bfloat16_cases_have_the_worker_import_ml_dtypes_before_its_first_call():
    # before the plan neither process has it; once planned, the worker does, though no case has been called
    # yet, and the runner once it has made the cases' inputs
    assert _probe("half.") == ["False", "True", "False", "True"]


def test_a_run_without_bfloat16_cases_imports_ml_dtypes_nowhere():
    assert _probe("lookup.forward.") == ["False", "False", "False", "False"]


HEAVY_FIRST = textwrap.dedent(
    """
    import sys
    from embconf import session
    from embconf.corpus.fixtures import load_corpus

    by_id = {case.id: case for case in load_corpus().cases}
    light = [case for case in by_id.values() if case.id.startswith("lookup.forward.")][:20]
    half = [case for case in by_id.values() if case.id.startswith("half.")]
    heavy = by_id["sin.canonical.l32768_d64"]  # a call whose budget exceeds the floor
    adapter = session.open_implementation("reference")
    try:
        session.plan(adapter, [heavy, *light, *half])
        before = "ml_dtypes" in sys.modules
        adapter.call(heavy.operation, heavy.inputs())
        print(before, "ml_dtypes" in sys.modules)
    finally:
        adapter.close()
    """
)


def test_the_runner_imports_ml_dtypes_while_it_waits_on_a_heavy_call():
    """Not before the first call goes out, and not later, when the worker would wait for it: while the worker
    computes a call of large work (the next batch, made ready meanwhile, holds no bfloat16 array)."""
    done = subprocess.run([sys.executable, "-c", HEAVY_FIRST], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "True"]
