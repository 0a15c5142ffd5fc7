"""Running several implementations over the same cases, one after another, each isolated as
``embconf run`` runs it: the data of ``embconf matrix`` (rendered by :mod:`embconf.matrix`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from embconf.adapters.base import Adapter
from embconf.diagnosis import diagnose_run
from embconf.corpus.fixtures import Case
from embconf.run.guard import announce
from embconf.run.cases import RunResult, run_cases

Progress = Callable[[str, int, int], None]  # impl, case number, total


@dataclass
class MatrixRun:
    impl: str  # the --impl string
    run: RunResult


def run_matrix(impls: Sequence[str], cases: Sequence[Case], open_adapter: Callable[[str], Adapter],
               progress: Optional[Progress] = None) -> list[MatrixRun]:
    """Each implementation opened (``open_adapter``: the worker of ``embconf run``), run over every
    case, its failures diagnosed, and closed before the next starts."""
    runs = []
    for impl in impls:
        adapter = open_adapter(impl)
        try:
            announce(adapter, list(cases))
            step = (lambda number, total, _result, impl=impl: progress(impl, number, total)) if progress else None
            run = run_cases(adapter, cases, progress=step)
        finally:
            adapter.close()
        diagnose_run(run, cases)
        runs.append(MatrixRun(impl, run))
    return runs
