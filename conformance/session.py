"""The run pipeline, the one every entry point uses: a :class:`Session` opens an implementation, plans every
case (those computed for its declared conventions included), runs them, repeats, diagnoses, and finishes into one
frozen :class:`~embconf.model.record.RunRecord`.

``embconf run``, ``embconf matrix``, grading (``grade``, ``gradescope``, ``embconf.check``), ``embconf
bench``'s conformance pass, ``embconf mutants`` and the pytest plugin all run cases through a session, so the
same implementation gets the same outcomes and the same causes whichever of them ran it. The session is the
only code that writes the record (diagnosis returns the causes and the verdict, and the session writes them in
as it finishes); once finished the record is frozen, and reports are derived from it.

An outcome comes from the implementation's first answer to the case. A later answer (the whole output asked
for again so that a failure judged on pinned rows is diagnosed whole, a run of ``--repeat``, or a failing case run
again alone on a fresh instance before the diagnosis, :mod:`embconf.judging.alone`, so that state carried across
calls is measured, not inferred) can add a finding, but never turns a failure into a pass or a not_applicable
(spec/PROTOCOL.md section 3, "Rows the runner judges"; EMB-GEN-2). A case of calls on one instance starts on a
fresh worker when the implementation's module is its state (``functions:``, ``tinytorch:``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Optional, Sequence

from embconf.corpus.conventions import computed_cases
from embconf.corpus.expectations import Expectations
from embconf.corpus.fixtures import Case
from embconf.isolation import IsolationOptions, isolation_options, open_adapter
from embconf.judging.alone import NOT_MEASURED, Alone, fresh_start, rerun_alone
from embconf.judging.cases import Progress, run_case
from embconf.judging.repeat import cut_off, difference, fingerprint, mark_nondeterministic, whole_difference
from embconf.judging.sequence import new_instance, sequence_inapplicable
from embconf.model.contract import ALL_ROWS, NO_INSTANCE, Adapter, Planned, Planning, Preparing
from embconf.model.encoding import PinnedRows
from embconf.model.errors import UserError
from embconf.model.impl import Impl, ImplLike
from embconf.model.outcomes import DIAGNOSED, PROBLEMS, TIMEOUT, CaseResult
from embconf.model.record import Diagnosis, RunRecord
from embconf.processes.options import Limits
from embconf.untrusted.text import bounded_description

__all__ = ["RunOptions", "Session", "diagnose", "open_implementation", "plan", "run", "run_case", "run_implementation"]


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

    @classmethod
    def of(
        cls,
        limits: Limits,
        repeat: int = 1,
        strict: bool = False,
        validate_protocol: bool = False,
        expectations: Optional[Expectations] = None,
    ) -> RunOptions:
        """The options a command's typed values give (its :class:`~embconf.processes.options.Limits`, ``--repeat``,
        ``--strict``, ``--validate-protocol``); UserError, one line, for unusable values."""
        if repeat < 1:
            raise UserError("--repeat must be at least 1")
        return cls(isolation_options(limits), limits.case_timeout, validate_protocol, repeat, strict, expectations)


def open_implementation(impl: ImplLike, options: RunOptions = RunOptions()) -> Adapter:
    """The implementation ``impl`` names (``KIND:TARGET``), started as ``options`` say; ImplementationError
    (one line) when it cannot be loaded."""
    return open_adapter(
        impl, options.isolation, timeout=options.case_timeout, validate_protocol=options.validate_protocol
    )


class Session:
    """One run of one implementation over a selection of cases: iterate it for each case's first result as it
    is judged, then :meth:`finish` it for the frozen record.

    ``cases`` are the selection; the session adds the cases computed for the conventions it declares
    (:mod:`embconf.corpus.conventions`), so :attr:`cases` is everything it will run. With ``owns_adapter`` the
    session closes the adapter when it finishes (or on :meth:`close`)."""

    def __init__(
        self,
        adapter: Adapter,
        cases: Sequence[Case],
        options: RunOptions = RunOptions(),
        impl: ImplLike = "",
        fixtures: Optional[dict[str, Any]] = None,
        owns_adapter: bool = False,
    ) -> None:
        self.adapter, self.options, self.impl = adapter, options, Impl.of(impl)
        self.fixtures = dict(fixtures or {})
        self.capabilities = adapter.capabilities()
        selection = list(cases)
        self.cases: list[Case] = selection + computed_cases(self.capabilities.conventions, selection)
        self._owns = owns_adapter
        self._results: list[CaseResult] = []
        self._started: Optional[float] = None
        self._record: Optional[RunRecord] = None
        self._instances: dict[str, int] = {}  # a case of calls on one instance -> the instance of this pass

    @classmethod
    def open(
        cls,
        impl: ImplLike,
        cases: Sequence[Case],
        options: RunOptions = RunOptions(),
        fixtures: Optional[dict[str, Any]] = None,
    ) -> Session:
        """A session on the implementation ``impl`` names, opened here and closed when it finishes
        (ImplementationError, one line, when it cannot load)."""
        adapter = open_implementation(impl, options)
        try:
            return cls(adapter, cases, options, impl, fixtures, owns_adapter=True)
        except BaseException:
            adapter.close()
            raise

    def header(self) -> RunRecord:
        """The record as it stands before any case: what a report says first (no results; ``planned`` cases)."""
        description = bounded_description(self.adapter.describe())
        return RunRecord(
            [], self.capabilities, description, impl=self.impl, fixtures=self.fixtures, planned=len(self.cases)
        )

    def keep(self, case_ids: Iterable[str]) -> None:
        """Run only these of the planned cases (the pytest plugin's deselection); before the run starts."""
        if self._started is not None:
            raise RuntimeError("a session's cases are fixed once it has started")
        wanted = set(case_ids)
        self.cases = [case for case in self.cases if case.id in wanted]

    def __iter__(self) -> Iterator[CaseResult]:
        """Each case's result as its first answer is judged, in order (the run's first pass)."""
        if self._started is not None:
            raise RuntimeError("a session is run once")
        return self._first_pass()

    def run(self, progress: Optional[Progress] = None) -> RunRecord:
        """Every case run, then :meth:`finish`: the frozen record (``progress`` told of each first result)."""
        for number, result in enumerate(self, 1):
            if progress:
                progress(number, len(self.cases), result)
        return self.finish()

    def finish(self) -> RunRecord:
        """The frozen record: what the first pass left unrun is run, each failure judged on pinned rows asked
        for again whole, ``options.repeat`` runs, the diagnosis. Finishing twice gives the same record."""
        if self._record is not None:
            return self._record
        try:
            if self._started is None or len(self._results) < len(self.cases):
                for _ in self._first_pass():
                    pass
            assert self._started is not None
            notes: dict[str, str] = {}
            results = self._whole_outputs(self._results, notes)
            record = RunRecord(
                results,
                self.capabilities,
                bounded_description(self.adapter.describe()),
                self.options.expectations.unmatched() if self.options.expectations is not None else [],
                time.perf_counter() - self._started,
                self.impl,
                fixtures=self.fixtures,
                planned=len(self.cases),
            )
            self._repeat(record, notes)
            for result in record.results:
                if result.id in notes:
                    mark_nondeterministic(result, notes[result.id], self.options.strict)
            record.nondeterministic = notes
            if self.options.diagnose:
                found = diagnose(record, self.cases, rerun_alone(self.adapter, self.cases, results, self.capabilities))
                for result in record.results:
                    result.causes = list(found.causes.get(result.id, ()))
                record.verdict = found.verdict
            record.freeze()
            self._record = record
            return record
        finally:
            self.close()

    def close(self) -> None:
        """Close the adapter if the session opened it (harmless twice)."""
        if self._owns:
            self.adapter.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _first_pass(self) -> Iterator[CaseResult]:
        """The first pass, from the first case not yet run: every case planned ahead when it starts."""
        if self._started is None:
            self._started = time.perf_counter()
            self._instances = plan(self.adapter, self.cases)
        for case in self.cases[len(self._results) :]:
            result = self._judged(case)
            self._results.append(result)
            yield result

    def _judged(self, case: Case) -> CaseResult:
        """``case`` run and judged (every pass runs a case so): a case of calls on the instance its plan gave it, on a
        fresh worker when the implementation's module is its state (``judging.alone``)."""
        instance = self._instances.get(case.id, NO_INSTANCE)
        if case.is_sequence and sequence_inapplicable(case, self.capabilities) is None:
            fresh_start(self.adapter)
        return run_case(self.adapter, case, self.options.expectations, self.capabilities, instance)

    def _pass(self) -> list[CaseResult]:
        """One more pass over every case (a run of ``--repeat``), planned ahead."""
        self._instances = plan(self.adapter, self.cases)
        results = [self._judged(case) for case in self.cases]
        return self._whole_outputs(results, {})

    def _whole_outputs(self, results: list[CaseResult], notes: dict[str, str]) -> list[CaseResult]:
        """Each failure that got only the pinned rows of an output (from the worker or a protocol peer) asked for
        again whole, so that it is diagnosed as the same output run in-process would be. The whole answer
        replaces the first only when it is the same answer (the same outcome, the same pinned rows): else the
        first stands and ``notes`` says the two answers differ."""
        rows_only = {
            result.id
            for result in results
            if result.outcome in DIAGNOSED and any(isinstance(v, PinnedRows) for v in (result.actual or {}).values())
        }
        if not rows_only:
            return results
        again = [case for case in self.cases if case.id in rows_only]
        self._instances = plan(self.adapter, again, pinned=False)
        whole = {case.id: self._judged(case) for case in again}
        kept = []
        for result in results:
            second = whole.get(result.id)
            change = whole_difference(result, second) if second is not None else ""
            if change:
                notes[result.id] = (
                    f"nondeterministic: {change} between the answer judged and the whole output asked again"
                )
            kept.append(second if second is not None and not change else result)
        return kept

    def _repeat(self, record: RunRecord, notes: dict[str, str]) -> None:
        """Runs 2..N of ``--repeat``: a case whose outcome or outputs change is noted (failed under strict). The
        run timeout holds across the repetitions: a case it cuts off in a later one is a ``timeout`` (not a
        change), and no further repetition starts."""
        times = self.options.repeat
        if times < 2:
            return
        seen = {result.id: fingerprint(result) for result in record.results}
        for number in range(2, times + 1):
            started = time.perf_counter()
            again = self._pass()
            record.duration += time.perf_counter() - started
            cut = {result.id: result for result in again if cut_off(result)}
            for result in again:
                change = (
                    "" if result.id in notes or result.id in cut else difference(seen[result.id], fingerprint(result))
                )
                if change:
                    notes[result.id] = f"nondeterministic: {change} between run 1 and run {number} of {times}"
            for result in record.results:
                if result.id in cut and result.outcome not in PROBLEMS:
                    result.outcome, result.reason = TIMEOUT, cut[result.id].reason
                    result.message = f"{cut[result.id].message}\n(in run {number} of {times} of --repeat)"
            if cut:
                break


def run(
    adapter: Adapter,
    cases: Sequence[Case],
    options: RunOptions = RunOptions(),
    impl: ImplLike = "",
    progress: Optional[Progress] = None,
    fixtures: Optional[dict[str, Any]] = None,
) -> RunRecord:
    """A :class:`Session` on an open adapter (which stays open), run and finished: the frozen record."""
    return Session(adapter, cases, options, impl, fixtures).run(progress)


def run_implementation(
    impl: ImplLike,
    cases: Sequence[Case],
    options: RunOptions = RunOptions(),
    progress: Optional[Progress] = None,
    fixtures: Optional[dict[str, Any]] = None,
) -> RunRecord:
    """A :class:`Session` that opens ``impl``, runs the cases and closes it (ImplementationError when it
    cannot load)."""
    return Session.open(impl, cases, options, fixtures).run(progress)


def diagnose(record: RunRecord, cases: Iterable[Case], alone: Alone = NOT_MEASURED) -> Diagnosis:
    """The causes of every failure and the run's verdict, for the session to write into ``record`` (the diagnosis
    is loaded only when something failed); ``alone``: what running failing cases alone measured."""
    if any(result.outcome in DIAGNOSED for result in record.results):
        from embconf.diagnosis.run import diagnose_run

        return diagnose_run(record, cases, alone=alone)
    from embconf.diagnosis.verdict import run_verdict

    return Diagnosis({}, run_verdict(record))


def plan(adapter: Adapter, cases: Sequence[Case], pinned: bool = True) -> dict[str, int]:
    """Tell an adapter that runs calls ahead (:class:`~embconf.model.contract.Planning`) which calls come
    next: the applicable cases, in order, with the rows of each output their goldens pin (``pinned``: an
    implementation elsewhere may then send those rows only). Each case of calls on one instance gets a new
    instance, returned by case id (its calls are announced on it, whole)."""
    instances = {case.id: new_instance() for case in cases if case.is_sequence}
    if isinstance(adapter, Planning):
        caps = adapter.capabilities()
        applicable = [
            case
            for case in cases
            if (sequence_inapplicable(case, caps) if case.is_sequence else caps.applies(case.operation, case.features))
            is None
        ]
        if isinstance(adapter, Preparing):
            adapter.prepare({dtype for case in applicable for call in case.calls or (case,) for dtype in call.dtypes})
        adapter.plan(
            [
                Planned(call.operation, call.inputs, ALL_ROWS, call.raw_inputs, instances[case.id])
                if case.is_sequence
                else Planned(case.operation, case.inputs, case.pinned_rows if pinned else ALL_ROWS, case.raw_inputs)
                for case in applicable
                for call in case.calls or (case,)
            ]
        )
    return instances
