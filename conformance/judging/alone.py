"""State measured, not inferred: a case that failed inside a run is run again alone, on a fresh instance, and a case
that then passes failed only after other calls ran (state carried across calls, EMB-STA-1).

A fresh instance is a fresh worker for an implementation whose module is its own state (``functions:``, the one
instance of its plain functions; ``tinytorch:``, whose package may keep module-level caches): the module is loaded
again, its caches empty. Any other implementation that keeps state between calls (it claims ``stateful``) gets a new
instance number. The re-runs go through the run's own adapter, so its timeouts, hang policy and crash containment
hold; only failing cases are re-run, at most :data:`MAX_ALONE` of them and for at most :data:`BUDGET_S` seconds, the
failing operations taking turns (those with a passing case first: a cache shows on some calls of an operation), and
none after the first :data:`FIRST_ALONE` all failed alone too (no state shows: a wrong module pays only those). A
case of calls on one instance is never re-run: it always starts on a fresh instance (:func:`fresh_start`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from itertools import chain, zip_longest
from typing import Sequence

from embconf.corpus.fixtures import Case
from embconf.judging.cases import judge
from embconf.judging.sequence import new_instance
from embconf.model.contract import STATEFUL, Adapter, Capabilities, Status, call_on_instance, renew
from embconf.model.outcomes import DIAGNOSED, NOT_APPLICABLE, PASS, CaseResult

log = logging.getLogger("embconf.judging")
FRESH_WORKER = frozenset({"functions", "tinytorch"})  # kinds whose module is their state: a fresh one is a new worker
MAX_ALONE = 48  # failing cases re-run alone, at most
FIRST_ALONE = 8  # failing cases re-run before giving up when none of them passes alone
BUDGET_S = 20.0  # seconds the re-runs may take, at most (a worker is started for each)


@dataclass(frozen=True)
class Alone:
    """What running failing cases alone measured: ``passed`` failed in the run and passed alone (state carried),
    ``rerun`` were run alone, ``crashed`` crashed or timed out alone, of ``failing`` cases that could be."""

    passed: tuple[str, ...] = ()
    rerun: tuple[str, ...] = ()
    crashed: tuple[str, ...] = ()
    failing: int = 0
    fresh: str = ""  # what a fresh instance was: "a fresh worker" or "a new instance"

    @property
    def capped(self) -> bool:
        """Whether some failing cases were not re-run (the cap or the time budget)."""
        return len(self.rerun) < self.failing

    def said(self) -> str:
        """How many cases were re-run alone, and why not all, in words."""
        how = f"{len(self.rerun)} of {self.failing} failing cases run again alone on {self.fresh}"
        return how + (f" (at most {MAX_ALONE}, within {BUDGET_S:g} s: the rest not measured)" if self.capped else "")


NOT_MEASURED = Alone()  # no case was run alone (a run without diagnosis, or a record diagnosed after the fact)


def fresh_start(adapter: Adapter) -> bool:
    """Make the next call start on a fresh worker when the implementation's module is its own state (whether it
    did): a case of calls starts so, and a failing case is run again so."""
    return adapter.kind in FRESH_WORKER and renew(adapter)


def rerun_alone(
    adapter: Adapter,
    cases: Sequence[Case],
    results: Sequence[CaseResult],
    caps: Capabilities,
    cap: int = MAX_ALONE,
    budget_s: float = BUDGET_S,
) -> Alone:
    """Each failing case of one call (after the run's first) run again alone on a fresh instance, as the module
    docstring says; nothing when the implementation keeps no state or cannot be given a fresh instance."""
    module = adapter.kind in FRESH_WORKER
    if not module and STATEFUL not in caps.features:
        return NOT_MEASURED
    by_id = {case.id: case for case in cases}
    ran = [r for r in results if r.id in by_id and r.outcome != NOT_APPLICABLE]
    failing = [r for r in ran[1:] if r.outcome in DIAGNOSED and not by_id[r.id].is_sequence]
    if not failing:
        return NOT_MEASURED
    passed: list[str] = []
    rerun: list[str] = []
    crashed: list[str] = []
    deadline = time.monotonic() + budget_s
    for result in _in_turns(failing, {r.operation for r in ran if r.outcome == PASS})[:cap]:
        if (
            time.monotonic() >= deadline
            or (len(rerun) >= FIRST_ALONE and not passed)
            or (module and not renew(adapter))
        ):
            break
        case = by_id[result.id]
        reply = call_on_instance(adapter, new_instance(), case.operation, case.inputs())
        rerun.append(case.id)
        if reply.status in (Status.DIED, Status.STOPPED):
            crashed.append(case.id)
        elif judge(case, reply, caps).outcome == PASS:
            passed.append(case.id)
    if crashed:  # one line, whatever their number: the run's outcomes stand, and nothing is said of state
        log.warning(
            "%d of %d failing cases run again alone crashed or timed out (%s%s): not said to carry state",
            len(crashed),
            len(rerun),
            ", ".join(crashed[:3]),
            ", ..." if len(crashed) > 3 else "",
        )
    if module:
        renew(adapter)  # what runs after (nothing, or a caller's own call) starts as fresh as the run did
    fresh = "a fresh worker" if module else "a new instance"
    return Alone(tuple(passed), tuple(rerun), tuple(crashed), len(failing), fresh)


def _in_turns(failing: list[CaseResult], passing_operations: set[str]) -> list[CaseResult]:
    """The failing results, their operations taking turns in run order: operations with a passing case first."""
    by_operation: dict[str, list[CaseResult]] = {}
    for result in failing:
        by_operation.setdefault(result.operation, []).append(result)
    groups = sorted(by_operation.values(), key=lambda group: group[0].operation not in passing_operations)
    return [r for r in chain.from_iterable(zip_longest(*groups)) if r is not None]


__all__ = ["Alone", "FRESH_WORKER", "NOT_MEASURED", "fresh_start", "rerun_alone"]
