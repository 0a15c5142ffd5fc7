"""Which golden cases kill which mutants: each mutant runs through the ordinary runner.

A mutant is run only on the cases whose operation it can change (``Mutant.covers``):
on every other case it is the reference, which passes by construction.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

from embconf.corpus.fixtures import Case
from embconf.model.outcomes import PROBLEMS, CaseResult
from embconf.model.record import RunRecord
from embconf.mutants import catalogue, get
from embconf.mutants.adapter import MutantAdapter
from embconf.mutants.base import Mutant


def covered_cases(mutant: Mutant, cases: Iterable[Case]) -> list[Case]:
    return [case for case in cases if mutant.covers(case.operation)]


def run_mutant(mutant: Mutant, cases: Iterable[Case], diagnose: bool = False) -> RunRecord:
    """The pipeline's record for ``mutant`` on the cases it covers (in process: a mutant is the suite's own code)."""
    from embconf.session import RunOptions, run

    return run(
        MutantAdapter(mutant.id), covered_cases(mutant, cases), RunOptions(diagnose=diagnose), f"mutant:{mutant.id}"
    )


def killing(run: RunRecord) -> list[CaseResult]:
    """The results that kill: any failure, error, crash or timeout."""
    return [result for result in run.results if result.outcome in PROBLEMS]


def kill_matrix(cases: Sequence[Case], mutants: Optional[Iterable[Mutant]] = None) -> dict[str, list[CaseResult]]:
    """{mutant id: the results of the cases that kill it}, in catalogue order."""
    return {m.id: killing(run_mutant(m, cases)) for m in (catalogue() if mutants is None else mutants)}


def evading(matrix: dict[str, list[CaseResult]]) -> list[str]:
    """The mutants evading by design (``Mutant.evades``) that no case of ``matrix`` kills: not survivors of the
    catalogue, and not counted in its kill rate (a golden at a combination one names kills it, and counts)."""
    return [mutant_id for mutant_id, kills in matrix.items() if not kills and get(mutant_id).evades]


def kill_rate(matrix: dict[str, list[CaseResult]]) -> float:
    """The fraction of mutants that at least one case kills, of those not evading by design."""
    counted = [kills for mutant_id, kills in matrix.items() if mutant_id not in evading(matrix)]
    return sum(1 for kills in counted if kills) / len(counted) if counted else 1.0
