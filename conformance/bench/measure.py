"""Running the bench: open the implementation as ``run`` does, measure the memory-copy roof, check the
benchmarked operations against their golden cases, then time every workload and operation.

Where the timing loop runs: inside the worker for in-process kinds (:meth:`IsolatedAdapter.apply`),
in the runner itself under ``--in-process``, and in the runner over the protocol for ``subprocess:``
(the transfer is then estimated apart, :mod:`.wire`). A size whose inputs and output alone would not
fit the memory limit is skipped with the reason; an operation that fails, crashes or runs out of
memory gives a row saying so, and the bench goes on."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from embconf.adapters.guard import GuardedAdapter
from embconf.bench.timing import COPY_BYTES, copy_bandwidth, own_resident, time_operation
from embconf.bench.wire import transfer_cost
from embconf.bench.workloads import DEFAULT_SIZES, OPERATIONS, Workload, workloads
from embconf.isolation import OUT_OF_PROCESS, HangPolicy, IsolatedAdapter, IsolationOptions, open_adapter
from embconf.model.contract import Adapter
from embconf.model.impl import Impl
from embconf.model.outcomes import PROBLEMS

MEASURED, SKIPPED, FAILED, NOT_PROVIDED = "measured", "skipped", "failed", "not_provided"
DEFAULT_WARMUP, DEFAULT_REPEATS = 2, 7
BUDGET = 3.0  # seconds of timed calls per row before the repeats are cut short (at least 3 are kept)
DEFAULT_TIMEOUT = 120.0  # seconds one row's measurement may take


class BenchError(Exception):
    """The bench cannot run at all (one line)."""


@dataclass(frozen=True)
class BenchOptions:
    sizes: tuple[str, ...] = DEFAULT_SIZES
    warmup: int = DEFAULT_WARMUP
    repeats: int = DEFAULT_REPEATS
    timeout: float = DEFAULT_TIMEOUT
    isolation: IsolationOptions = IsolationOptions()


@dataclass
class Row:
    """One workload and operation: its times, bandwidth against the roof, and memory against its output."""

    workload: Workload
    operation: str
    status: str
    reason: str = ""
    times: list[float] = field(default_factory=list)
    roof: float = 0.0  # bytes per second of the memcpy roof
    traced_peak: Optional[int] = None
    resident_peak: Optional[int] = None
    transfer: Optional[dict[str, Any]] = None  # subprocess: estimated protocol share
    conformance: str = ""  # '' when the operation's cases pass, else why not

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def minimum_bytes(self) -> int:
        return self.workload.minimum_bytes(self.operation)

    @property
    def output_bytes(self) -> int:
        return self.workload.output_bytes(self.operation)

    @property
    def bandwidth(self) -> float:
        """Achieved bytes per second: the minimum bytes over the median time (over the protocol: end to end,
        the transfer included; its estimated share is reported apart)."""
        return self.minimum_bytes / max(self.median, 1e-9)

    @property
    def roof_ratio(self) -> float:
        return self.bandwidth / self.roof

    @property
    def peak_extra(self) -> Optional[int]:
        known = [v for v in (self.traced_peak, self.resident_peak) if v is not None]
        return max(known) if known else None

    @property
    def peak_method(self) -> str:
        if self.peak_extra is None:
            return "not measured"
        return "tracemalloc" if self.peak_extra == self.traced_peak else "peak resident memory"

    @property
    def peak_ratio(self) -> Optional[float]:
        return None if self.peak_extra is None else self.peak_extra / self.output_bytes


@dataclass
class BenchResult:
    impl: str
    roof: dict[str, Any]
    rows: list[Row]
    where: str  # where the timing loop ran

    @property
    def roof_bandwidth(self) -> float:
        return self.roof["bytes"] / statistics.median(self.roof["times"])


class _Measurer:
    """Runs a measurement function where the implementation runs: ``measure(function, args)`` -> (ok, result)."""

    def __init__(self, adapter: Adapter, timeout: float) -> None:
        inner = adapter.inner if isinstance(adapter, HangPolicy) else adapter
        self.adapter, self.timeout = adapter, timeout
        self.worker = inner if isinstance(inner, IsolatedAdapter) else None
        self.local = inner.inner if isinstance(inner, GuardedAdapter) else None
        self.where = (
            "the isolated worker"
            if self.worker
            else "the runner (--in-process)"
            if self.local
            else "the runner, over the protocol"
        )

    @property
    def over_protocol(self) -> bool:
        return self.worker is None and self.local is None

    def measure(self, function: Callable[..., Any], args: tuple[Any, ...]) -> tuple[bool, Any]:
        if self.worker is not None:
            return self.worker.apply(function, args, self.timeout)
        try:
            return True, function(self.local if self.local is not None else self.adapter, *args)
        except Exception as exc:  # an in-process implementation's own failure
            return False, f"raised {type(exc).__name__}: {exc}"[:300]


def run_bench(
    impl: Impl,
    options: BenchOptions = BenchOptions(),
    progress: Optional[Callable[[Row], None]] = None,
    check: Optional[Callable[[Adapter, list[str]], dict[str, str]]] = None,
) -> BenchResult:
    """Measure ``impl`` on every workload of ``options.sizes``; UnknownSize or ImplementationError (one
    line) before anything runs. ``check`` tells, per operation, why it does not conform ('' if it does)."""
    works = workloads(options.sizes)
    adapter = open_adapter(impl, options.isolation)
    try:
        measurer = _Measurer(adapter, options.timeout)
        headroom = _headroom(impl, options.isolation)
        ok, roof = measurer.measure(copy_bandwidth, (_copy_bytes(headroom),))
        if not ok:
            raise BenchError(f"the memory-copy roof could not be measured in {measurer.where}: {roof}")
        provided = [op for op in OPERATIONS if op in adapter.capabilities().operations]
        verdicts = (check or conformance)(adapter, provided)
        rows = []
        for work in works:
            for operation in OPERATIONS:
                row = _row(measurer, work, operation, options, headroom, provided)
                row.roof, row.conformance = (
                    roof["bytes"] / statistics.median(roof["times"]),
                    verdicts.get(operation, ""),
                )
                rows.append(row)
                if progress:
                    progress(row)
    finally:
        adapter.close()
    return BenchResult(str(impl), roof, rows, measurer.where)


def _row(
    measurer: _Measurer,
    work: Workload,
    operation: str,
    options: BenchOptions,
    headroom: Optional[int],
    provided: list[str],
) -> Row:
    if operation not in provided:
        return Row(work, operation, NOT_PROVIDED, "the implementation does not provide it")
    needed = work.needed_bytes(operation)
    if headroom is not None and needed > headroom:
        return Row(
            work,
            operation,
            SKIPPED,
            f"its inputs and output alone need {needed / 2**20:.0f} MB; "
            f"{headroom / 2**20:.0f} MB of the memory limit are left",
        )
    ok, result = measurer.measure(
        time_operation, (work.to_json(), operation, options.warmup, options.repeats, BUDGET, not measurer.over_protocol)
    )
    if not ok or "error" in result:
        return Row(work, operation, FAILED, str(result if not ok else result["error"]))
    row = Row(
        work,
        operation,
        MEASURED,
        times=list(result["times"]),
        traced_peak=result["traced_peak"],
        resident_peak=result["resident_peak"],
    )
    if measurer.over_protocol:
        row.transfer = transfer_cost(work, operation)
    return row


def _headroom(impl: Impl, isolation: IsolationOptions) -> Optional[int]:
    """Bytes of the memory limit left to a call's arrays: the limit less what the worker holds at its
    start (a forked worker starts at the runner's own size, its other children not included); None without a limit."""
    if isolation.memory_limit_mb <= 0 or impl.kind in OUT_OF_PROCESS:
        return None
    return isolation.memory_limit_mb * 2**20 - own_resident()


def _copy_bytes(headroom: Optional[int]) -> int:
    return COPY_BYTES if headroom is None else max(min(COPY_BYTES, headroom // 4), 2**20)


def conformance(adapter: Adapter, operations: list[str]) -> dict[str, str]:
    """Per benchmarked operation, '' when its token-lookup cases pass, else which failed (a short line).
    The cases run through the pipeline (:func:`embconf.session.run`) on the bench's own open adapter."""
    from embconf.corpus.fixtures import load_corpus
    from embconf.session import RunOptions, run

    cases = [c for c in load_corpus().cases if c.id.startswith("lookup.") and c.operation in operations]
    results = run(adapter, cases, RunOptions(diagnose=False)).results
    verdicts = {}
    for operation in operations:
        bad = [r.id for r in results if r.operation == operation and r.outcome in PROBLEMS]
        verdicts[operation] = (
            (
                f"does not conform: {len(bad)} of its lookup cases fail ({', '.join(bad[:3])}"
                f"{', ...' if len(bad) > 3 else ''})"
            )
            if bad
            else ""
        )
    return verdicts
