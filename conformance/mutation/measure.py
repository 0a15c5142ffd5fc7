"""How good the diagnosis is, measured: ``embconf mutants --diagnosis``.

- the catalogue: each mutant run through the ordinary runner and diagnosed; the
  share of its failing cases whose first-ranked diagnosis names it;
- a corpus of wrong student modules whose mistakes the catalogue does not list
  (each module's ``SYMPTOM`` is a phrase a correct description contains): a
  description is correct when the run's verdict leads with a symptom saying it,
  confidently wrong when the verdict names a catalogue mutant;
- correct implementations: no failure and no diagnosis.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Optional, Sequence, TextIO

from embconf.corpus.fixtures import Case
from embconf.model.impl import Impl
from embconf.model.outcomes import PROBLEMS
from embconf.model.record import RunRecord

if TYPE_CHECKING:
    from embconf.mutants.base import Mutant

FIRST_RANK_TARGET = 0.95
DEFAULT_CORRECT = (Impl("reference"), Impl("torch"))  # always at hand; name others with --correct KIND:TARGET


@dataclass
class Ranking:
    mutant: str
    first: int
    failing: int

    @property
    def rate(self) -> float:
        return self.first / self.failing if self.failing else 1.0


@dataclass
class StudentResult:
    path: str
    expected: str
    verdict: str
    correct: bool
    wrong_cause: bool


def rank_catalogue(cases: Sequence[Case], mutant_ids: Optional[Iterable[str]] = None) -> list[Ranking]:
    """For each mutant: on how many of its failing cases the diagnosis ranks it (or an equivalent) first."""
    from embconf.mutants import catalogue
    from embconf.mutation.kills import run_mutant

    found = []
    for mutant in catalogue():
        if mutant_ids is not None and mutant.id not in mutant_ids:
            continue
        run = run_mutant(mutant, cases, diagnose=True)
        failing = [r for r in run.results if r.outcome in PROBLEMS]
        first = sum(1 for r in failing if r.causes and r.causes[0].is_mutant and mutant.names(r.causes[0].key))
        found.append(Ranking(mutant.id, first, len(failing)))
    return found


def judge_student(path: Path, cases: Sequence[Case]) -> StudentResult:
    """Run one corpus module through the TinyTorch adapter (in process) and judge the verdict's first mistake."""
    from embconf.adapters.tinytorch import TinyTorchAdapter
    from embconf.session import run

    adapter = TinyTorchAdapter(str(path))
    expected = str(getattr(adapter.module, "SYMPTOM", ""))
    record = run(adapter, cases, impl=Impl("tinytorch", str(path)))
    verdict = record.verdict
    first = verdict.causes[0] if verdict.causes else None
    wrong = any(cause.is_mutant for cause in verdict.causes)
    correct = (
        first is not None
        and not first.is_mutant
        and bool(expected)
        and expected in first.title + " " + _summaries(record, first.cases)
    )
    return StudentResult(path.name, expected, verdict.summary, correct, wrong)


def _summaries(run: RunRecord, case_ids: Sequence[str]) -> str:
    """The symptom texts of the first case a mistake explains (the measured numbers behind its title)."""
    result = next((r for r in run.results if r.id in case_ids), None)
    return " ".join(cause.summary for cause in result.causes if not cause.is_mutant) if result else ""


def correct_problems(adapter_specs: Sequence[Impl], cases: Sequence[Case]) -> dict[str, tuple[int, int]]:
    """{impl: (failures, diagnosed results)} for implementations that are correct."""
    from embconf.adapters import ImplementationError
    from embconf.isolation import IsolationOptions
    from embconf.session import RunOptions, run_implementation

    found = {}
    for spec in adapter_specs:
        try:
            record = run_implementation(spec, cases, RunOptions(IsolationOptions(in_process=True)))
        except ImplementationError:
            continue  # an optional framework that is not installed
        found[str(spec)] = (len(record.problems), sum(1 for r in record.results if r.causes))
    return found


def print_figures(
    cases: Sequence[Case],
    students: Optional[Path],
    correct: Sequence[Impl],
    out: TextIO = sys.stdout,
    mutants: Optional[Sequence[Mutant]] = None,
) -> bool:
    """Print the three figures (the catalogue's for ``mutants`` only, when given); True when every target is met."""
    from embconf.mutants import catalogue
    from embconf.mutation.kills import evading, kill_matrix, kill_rate

    matrix = kill_matrix(cases, mutants)
    rate = kill_rate(matrix)  # a mutant evading by design is neither killed nor ranked until a golden kills it
    rankings = rank_catalogue(
        cases, {m.id for m in (catalogue() if mutants is None else mutants)} - set(evading(matrix))
    )
    below = [r for r in rankings if r.rate < FIRST_RANK_TARGET]
    out.write(f"catalogue: kill rate {100 * rate:.1f}% of {len(rankings)} mutants\n")
    out.write(
        f"catalogue: the right mutant ranked first on >= {100 * FIRST_RANK_TARGET:.0f}% of its failing cases for "
        f"{len(rankings) - len(below)} of {len(rankings)} mutants; "
        f"overall {sum(r.first for r in rankings)} of {sum(r.failing for r in rankings)} failing cases\n"
    )
    for r in below:
        out.write(f"  below target: {r.mutant} first on {r.first} of {r.failing}\n")
    ok = rate == 1.0 and not below
    if students is not None:
        judged = [judge_student(path, cases) for path in sorted(students.glob("[a-z]*.py"))]
        right, wrong = sum(s.correct for s in judged), sum(s.wrong_cause for s in judged)
        out.write(
            f"students ({students}): correct description for {right} of {len(judged)}; confidently wrong cause for {wrong}\n"
        )
        for s in judged:
            mark = "ok   " if s.correct else ("WRONG" if s.wrong_cause else "miss ")
            out.write(f"  {mark} {s.path:<26} {s.verdict[:160]}\n")
        ok = ok and right >= min(8, len(judged)) and wrong == 0
    for spec, (failures, diagnosed) in correct_problems(correct, cases).items():
        out.write(f"correct implementation {spec}: {failures} failures, {diagnosed} diagnoses\n")
        ok = ok and failures == 0 and diagnosed == 0
    return ok
