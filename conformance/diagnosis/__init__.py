"""Why a case failed: known mistakes from the catalogue, measured symptoms, and the run's verdict.

Three parts, ranked together:

- ``replay``: the catalogue of mutants replayed on the case (a match names the
  mistake and its exact fix), including sinusoid mistakes computed in float32
  or float16;
- ``symptoms``: what the error looks like, measured (a constant factor and what
  it equals, which rows differ, which boundary is off, a missing gradient ...),
  for mistakes no catalogue lists;
- ``verdict``: the few mistakes that explain a run's failures, in one line.

A mutant that fails some failing case of the run differently from the
implementation, or fails a case the implementation passed, is contradicted and
is not named anywhere in that run; the rest
are ranked by how many of the run's failures they match. Diagnosis runs in the
runner's process on untrusted outputs: it is bounded in time (``BUDGET_S``) and
never raises into the run (a failure to diagnose is logged and leaves the case
undiagnosed).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Iterable, Optional

import numpy as np

from embconf.corpus.fixtures import Case
from embconf.diagnosis.replay import Replay, diagnose, fails_passed_case, replay
from embconf.diagnosis.symptoms import describe, history_symptom
from embconf.diagnosis.verdict import run_verdict
from embconf.model.outcomes import DIAGNOSED, FAIL, PASS, CaseResult
from embconf.model.record import Cause, RunRecord

if TYPE_CHECKING:
    from embconf.mutants.base import Mutant

log = logging.getLogger("embconf.diagnosis")
BUDGET_S = 120.0  # a run's diagnosis stops after this long; later failures stay undiagnosed


def diagnose_run(run: RunRecord, cases: Iterable[Case], budget_s: float = BUDGET_S) -> None:
    """Fill ``causes`` on every failing or erroring result of ``run`` and set its verdict (nothing is loaded
    when nothing failed)."""
    if not any(result.outcome in DIAGNOSED for result in run.results):
        run.verdict = run_verdict(run)
        return
    by_id = {case.id: case for case in cases}
    deadline = time.monotonic() + budget_s
    found: dict[str, tuple[Replay, list[Cause]]] = {}
    earlier: list[tuple[Case, CaseResult]] = []
    for result in run.results:
        case = by_id.get(result.id)
        if case is None:
            continue
        if result.outcome in DIAGNOSED:
            if time.monotonic() >= deadline:
                log.warning("no diagnosis for %s: the diagnosis time budget (%.0f s) is spent", result.id, budget_s)
            else:
                measured = _measure(case, result, earlier)
                if measured is not None:
                    found[result.id] = measured
        if result.actual is not None:
            earlier.append((case, result))
    _rank(run, found, by_id)
    try:
        _conditional_gradients(run, by_id)
    except Exception as exc:  # as above: never into the run
        log.warning("no option analysis: %s: %s", type(exc).__name__, exc)
    run.verdict = run_verdict(run)


def _conditional_gradients(run: RunRecord, by_id: dict[str, Case]) -> None:
    """A parameter that got no gradient on some cases: does it get one exactly when a config option differs?"""
    for result in run.results:
        for number, cause in enumerate(result.causes):
            if cause.is_mutant or not cause.key.startswith("no_gradient:"):
                continue
            _, operation, name = cause.key.split(":", 2)
            got, missed = _options_by_outcome(run, by_id, operation, name)
            for option in sorted({k for config in got + missed for k in config}):
                without, with_ = {repr(c.get(option)) for c in missed}, {repr(c.get(option)) for c in got}
                if got and missed and not without & with_:
                    when = f"; it gets one when {option} is {' or '.join(sorted(with_))}, never when it is {' or '.join(sorted(without))}"
                    result.causes[number] = replace(
                        cause,
                        summary=cause.summary + when,
                        title=cause.title + when,
                        measured={**cause.measured, "option": option},
                    )
                    break


def _options_by_outcome(
    run: RunRecord, by_id: dict[str, Case], operation: str, name: str
) -> tuple[list[dict], list[dict]]:
    """The configs of the cases of ``operation`` whose ``name`` got an array, and of those where it got None."""
    got: list[dict] = []
    missed: list[dict] = []
    for result in run.results:
        case = by_id.get(result.id)
        if (
            case is None
            or case.operation != operation
            or result.actual is None
            or not isinstance(case.expected_outputs.get(name), np.ndarray)
        ):
            continue
        config = case.inputs().get("config")
        if isinstance(config, dict):
            (missed if result.actual.get(name) is None else got).append(config)
    return got, missed


def diagnose_case(case: Case, result: CaseResult) -> list[Cause]:
    """One result's causes on its own (no run context): catalogue matches, then symptoms."""
    measured = _measure(case, result, [])
    if measured is None:
        return []
    matches, symptoms = measured
    return matches.causes() + symptoms


def _measure(
    case: Case, result: CaseResult, earlier: list[tuple[Case, CaseResult]]
) -> Optional[tuple[Replay, list[Cause]]]:
    """(catalogue replay, symptoms) of one result; None when diagnosing it failed (logged)."""
    try:
        inputs = case.inputs()
        matches = replay(case, result, inputs)
        symptoms = describe(case, inputs, result)
        if result.outcome == FAIL and not any(s.key.startswith("stale_buffer") for s in symptoms):
            symptoms = history_symptom(case, result, reversed(earlier)) + symptoms
        return matches, symptoms
    except Exception as exc:  # untrusted outputs must never break the run
        log.warning("no diagnosis for %s: %s: %s", result.id, type(exc).__name__, exc)
        return None


PASSED_CHECKS = 64  # passed cases a candidate mutant is replayed on, at most


def _rank(run: RunRecord, found: dict[str, tuple[Replay, list[Cause]]], by_id: dict[str, Case]) -> None:
    """Drop contradicted mutants (they fail a failing case differently, or fail a case the implementation
    passed), order the rest by the run's support, symptoms after them."""
    contradicted = set().union(*(replayed.contradicted for replayed, _ in found.values())) if found else set()
    support = Counter(m.id for replayed, _ in found.values() for m in replayed.matches)
    candidates = {m.id: m for replayed, _ in found.values() for m in replayed.matches if m.id not in contradicted}
    contradicted |= _contradicted_by_passes(run, by_id, list(candidates.values()))
    for result in run.results:
        if result.id not in found:
            continue
        replayed, symptoms = found[result.id]
        result.causes = replayed.causes(contradicted, _ranking(support, replayed)) + symptoms


def _ranking(support: Counter, replayed: Replay) -> Callable[[Mutant], tuple[int, int]]:
    """Most support in the run first, then the order they matched this case in."""
    order = {m.id: i for i, m in enumerate(replayed.matches)}
    return lambda m: (-support[m.id], order[m.id])


def _contradicted_by_passes(run: RunRecord, by_id: dict[str, Case], candidates: list) -> set[str]:
    """The candidate mutants that fail some case the implementation passed (bounded, never raising)."""
    passed = [by_id[r.id] for r in run.results if r.outcome == PASS and r.id in by_id]
    out: set[str] = set()
    for mutant in candidates:
        try:
            checked = [case for case in passed if mutant.covers(case.operation) and case.expected_error is None][
                :PASSED_CHECKS
            ]
            if any(fails_passed_case(mutant, case) for case in checked):
                out.add(mutant.id)
        except Exception as exc:  # untrusted context: never into the run
            log.warning("no pass check for %s: %s: %s", mutant.id, type(exc).__name__, exc)
    return out


__all__ = ["diagnose", "diagnose_case", "diagnose_run", "run_verdict"]
