"""The run pipeline, the one every entry point uses: open an implementation, plan, run, repeat, diagnose,
close, and return one :class:`~embconf.model.record.RunRecord`.

``embconf run``, ``embconf matrix``, grading (``grade``, ``gradescope``, ``embconf.check``), ``embconf
bench``'s conformance pass and the pytest plugin all run cases through here, so the same implementation gets
the same outcomes and the same causes whichever of them ran it. Reports are derived from the record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Sequence

from embconf.corpus.expectations import Expectations
from embconf.corpus.family import family_cases
from embconf.corpus.fixtures import Case
from embconf.isolation import IsolationOptions, open_adapter
from embconf.model.contract import ALL_ROWS, Adapter, Planned, Planning, Preparing
from embconf.model.encoding import PinnedRows
from embconf.model.outcomes import DIAGNOSED, PROBLEMS, TIMEOUT
from embconf.model.record import RunRecord
from embconf.run.cases import Progress, run_case, run_cases
from embconf.run.repeat import cut_off, difference, fingerprint, mark_nondeterministic

__all__ = ["RunOptions", "diagnose", "open_implementation", "plan", "run", "run_case", "run_implementation"]


@dataclass(frozen=True)
class RunOptions:
    """How to run: where the implementation runs and under which limits, how often, and what is judged."""

    isolation: IsolationOptions = field(default_factory=IsolationOptions)
    case_timeout: Optional[float] = None  # given on the command line (protocol peers: else $EMBCONF_TIMEOUT)
    validate_protocol: bool = False
    repeat: int = 1
    strict: bool = False  # a result that changes under --repeat fails
    expectations: Optional[Expectations] = None
    diagnose: bool = True


def open_implementation(impl: str, options: RunOptions = RunOptions()) -> Adapter:
    """The implementation ``impl`` names (``KIND:TARGET``), started as ``options`` say; ImplementationError
    (one line) when it cannot be loaded."""
    return open_adapter(
        impl, options.isolation, timeout=options.case_timeout, validate_protocol=options.validate_protocol
    )


def run(
    adapter: Adapter,
    cases: Sequence[Case],
    options: RunOptions = RunOptions(),
    impl: str = "",
    progress: Optional[Progress] = None,
    fixtures: Optional[dict[str, Any]] = None,
) -> RunRecord:
    """Every case run on an open adapter (``options.repeat`` times), diagnosed, as one record. The run timeout
    holds across the repetitions: a case it cuts off in a later one is a ``timeout`` (not a change), and no
    further repetition starts. The adapter stays open. A declared point of the sinusoid family that no named
    profile is brings its own cases, computed for it (:mod:`embconf.corpus.family`)."""
    cases = list(cases)
    cases += family_cases(adapter.capabilities().sinusoid, cases)
    record = _run_once(adapter, cases, options, progress)
    record.impl, record.fixtures = impl, dict(fixtures or {})
    _repeat(adapter, cases, options, record)
    if options.diagnose:
        diagnose(record, cases)
    return record


def run_implementation(
    impl: str,
    cases: Sequence[Case],
    options: RunOptions = RunOptions(),
    progress: Optional[Progress] = None,
    fixtures: Optional[dict[str, Any]] = None,
) -> RunRecord:
    """Open ``impl``, run the cases, close it: the whole pipeline (ImplementationError when it cannot load)."""
    adapter = open_implementation(impl, options)
    try:
        return run(adapter, cases, options, impl, progress, fixtures)
    finally:
        adapter.close()


def diagnose(record: RunRecord, cases: Iterable[Case]) -> RunRecord:
    """The causes of every failure and the run's verdict, filled in (the diagnosis is loaded only when something
    failed)."""
    if any(result.outcome in DIAGNOSED for result in record.results):
        from embconf.diagnosis.run import diagnose_run

        diagnose_run(record, cases)
    else:
        from embconf.diagnosis.verdict import run_verdict

        record.verdict = run_verdict(record)
    return record


def plan(adapter: Adapter, cases: Sequence[Case], pinned: bool = True) -> None:
    """Tell an adapter that runs calls ahead (:class:`~embconf.model.contract.Planning`) which calls come
    next: the applicable cases, in order, with the rows of each output their goldens pin (``pinned``: an
    implementation elsewhere may then send those rows only)."""
    if isinstance(adapter, Planning):
        caps = adapter.capabilities()
        applicable = [case for case in cases if caps.applies(case.operation, case.features) is None]
        if isinstance(adapter, Preparing):
            adapter.prepare({dtype for case in applicable for dtype in case.dtypes})
        adapter.plan(
            [Planned(c.operation, c.inputs, c.pinned_rows if pinned else ALL_ROWS, c.raw_inputs) for c in applicable]
        )


def _run_once(
    adapter: Adapter, cases: list[Case], options: RunOptions, progress: Optional[Progress] = None
) -> RunRecord:
    """One pass over the cases, announced ahead, each failure on pinned rows only run again for its whole output."""
    plan(adapter, cases)
    record = run_cases(adapter, cases, options.expectations, progress)
    _whole_outputs(adapter, cases, options, record)
    return record


def _whole_outputs(adapter: Adapter, cases: list[Case], options: RunOptions, record: RunRecord) -> None:
    """A failing case that got only the pinned rows of an output (from the worker or a protocol peer) is run again
    for the whole output, so that it is diagnosed and reported as the same output run in-process would be."""
    rows_only = {
        result.id
        for result in record.results
        if result.outcome in DIAGNOSED and any(isinstance(v, PinnedRows) for v in (result.actual or {}).values())
    }
    if not rows_only:
        return
    again = [case for case in cases if case.id in rows_only]
    plan(adapter, again, pinned=False)
    whole = {result.id: result for result in run_cases(adapter, again, options.expectations).results}
    record.results = [whole.get(result.id, result) for result in record.results]


def _repeat(adapter: Adapter, cases: list[Case], options: RunOptions, record: RunRecord) -> None:
    """Runs 2..N of ``--repeat``: a case whose outcome or outputs change is noted (failed under strict)."""
    times = options.repeat
    if times < 2:
        return
    seen = {result.id: fingerprint(result) for result in record.results}
    notes: dict[str, str] = {}
    for number in range(2, times + 1):
        again = _run_once(adapter, cases, options)
        record.duration += again.duration
        cut = {result.id: result for result in again.results if cut_off(result)}
        for result in again.results:
            change = "" if result.id in notes or result.id in cut else difference(seen[result.id], fingerprint(result))
            if change:
                notes[result.id] = f"nondeterministic: {change} between run 1 and run {number} of {times}"
        for result in record.results:
            if result.id in cut and result.outcome not in PROBLEMS:
                result.outcome, result.reason = TIMEOUT, cut[result.id].reason
                result.message = f"{cut[result.id].message}\n(in run {number} of {times} of --repeat)"
        if cut:
            break
    for result in record.results:
        if result.id in notes:
            mark_nondeterministic(result, notes[result.id], options.strict)
    record.nondeterministic = notes
