"""The runner's side: how to run an implementation (:func:`open_adapter`, by the :class:`IsolationOptions`) and
:class:`IsolatedAdapter`, which sends each call to the worker (in batches when the calls are announced),
holds every call to its timeout and the run to its own, and replaces a worker that is lost or spoilt."""

from __future__ import annotations

import importlib
import os
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Union

from embconf.adapters import BUILTIN, ImplementationError, create_adapter, parse_impl
from embconf.adapters.base import AdapterBase, CallPlan
from embconf.isolation.answers import checked_reply, last_words, moved, own_failure, while_loading
from embconf.isolation.handle import WorkerHandle
from embconf.isolation.hangs import with_hang_policy
from embconf.isolation.options import DEFAULTS, IsolationOptions
from embconf.isolation.shared import Placed
from embconf.isolation.worker import _fork_worker, _spawn_worker, load_in_process
from embconf.model.budget import case_budget
from embconf.model.contract import NO_INSTANCE, Adapter, Capabilities, Planned, Reason, Reply, Status
from embconf.model.dtypes import prepare as prepare_dtypes
from embconf.model.impl import Impl, ImplLike
from embconf.processes.failures import ChildFailure, Garbled, Gone, Late, OutOfMemory
from embconf.processes.limits import (
    DEFAULT_CASE_TIMEOUT,
    DEFAULT_MEMORY_LIMIT_MB,
    DEFAULT_RUN_TIMEOUT,
    run_timeout_reply,
)

START_TIMEOUT = 60.0  # loading an implementation (importing torch, say) may take a while
OUT_OF_PROCESS = frozenset({"subprocess"})  # kinds that already run the implementation in a process of their own
BATCH = 16  # announced calls sent to the worker at once (measured: lock-step costs ~0.6 ms a call more)
Answer = Union[tuple[Reply, bool], ChildFailure]  # a reply read (and whether it spoilt the worker), or why none came


@dataclass(frozen=True)
class Batch:
    """Announced calls made ready to send: the calls, their inputs, and the seconds each may take."""

    calls: list[Planned]
    payload: list[tuple[str, dict[str, Any]]]
    budgets: list[float]


def _final(answers: deque[Answer]) -> bool:
    """Whether the last answer read ends what can be read from this worker (a failure, a spoilt process)."""
    return bool(answers) and (isinstance(answers[-1], ChildFailure) or answers[-1][1])


def open_adapter(impl: ImplLike, options: IsolationOptions = DEFAULTS, **adapter_options: Any) -> Adapter:
    """The adapter ``impl`` names, ready to run: in a worker process unless ``options.in_process`` or
    the kind already runs out of process (subprocess), held to the options' limits and the hang policy.
    ImplementationError when it cannot load."""
    impl = parse_impl(impl)
    if impl.kind in OUT_OF_PROCESS:
        return with_hang_policy(
            create_adapter(
                impl, **adapter_options, run_timeout=options.run_timeout, memory_limit_mb=options.memory_limit_mb
            )
        )
    if options.in_process:
        return load_in_process(impl, adapter_options)
    adapter = IsolatedAdapter(impl, options.case_timeout, options.run_timeout, options.memory_limit_mb, adapter_options)
    try:
        adapter.start()
    except BaseException:
        adapter.close()
        raise
    return with_hang_policy(adapter)


def default_start_method() -> str:
    return "fork" if hasattr(os, "fork") else "spawn"


class IsolatedAdapter(AdapterBase):
    """An adapter whose implementation runs in one reused child worker process.

    A caller that announces its next calls (:meth:`plan`) lets the worker run them in batches: each
    call still gets its own reply, timeout and outcome, but the processes switch far less often."""

    def __init__(
        self,
        impl_spec: ImplLike,
        case_timeout: float = DEFAULT_CASE_TIMEOUT,
        run_timeout: float = DEFAULT_RUN_TIMEOUT,
        memory_limit_mb: int = DEFAULT_MEMORY_LIMIT_MB,
        adapter_options: Optional[dict[str, Any]] = None,
        start_method: Optional[str] = None,
    ) -> None:
        name = parse_impl(impl_spec)
        self.kind, self.target = name
        self.impl: Impl = name  # what the worker process is told to load
        self.case_timeout, self.run_timeout, self.memory_limit_mb = case_timeout, run_timeout, memory_limit_mb
        self.adapter_options = dict(adapter_options or {})
        self.start_method = start_method or default_start_method()
        self._run_deadline = time.monotonic() + run_timeout
        self._worker: Optional[WorkerHandle] = None
        self._loaded: Optional[tuple[Capabilities, dict[str, Any]]] = None  # from the first worker
        self._broken = ""  # why no worker can be started any more
        self._planned = CallPlan()  # calls announced and not yet sent
        self._sent: deque[Planned] = deque()  # calls sent to the worker and not yet answered, in order
        self._placed: deque[Placed] = deque()  # their input arrays on the worker's arena, in the same order
        self._budgets: deque[float] = deque()  # the seconds each of them may take (embconf.model.budget)
        self._answers: deque[Answer] = deque()  # replies read for the first of them, not yet returned
        self._next: Optional[Batch] = None  # the next announced calls, made ready while the worker is busy
        self._dtypes: list[str] = []  # dtypes whose imports the runner makes while it waits on a heavy call
        self._clock = 0.0  # when the worker started on the first of them (about)

    # ----- the Adapter interface

    def start(self) -> None:
        """Start the worker now rather than on first use; ImplementationError when the implementation cannot load."""
        if self._worker is None:
            self._worker = self._launch()

    def capabilities(self) -> Capabilities:
        return self._hello()[0]

    def describe(self) -> dict[str, Any]:
        return self._hello()[1]

    def plan(self, calls: Iterable[Planned]) -> None:
        """Announce the calls about to be made, in order."""
        self._planned.extend(calls)

    def prepare(self, dtypes: Iterable[str]) -> None:
        """Have the worker import what ``dtypes`` need (ml_dtypes) before its first call needs it. The runner
        imports it while it waits on a heavy call (one whose budget exceeds the floor, embconf.model.budget), or
        when it first makes such an array: not before the first call goes out, nor while the worker waits for
        it; a worker forked after that inherits it."""
        self._dtypes = sorted(set(dtypes))
        if self._worker is not None:
            try:
                self._worker.send(("prepare", self._dtypes))
            except ChildFailure:
                pass  # the next call finds the worker gone and replaces it

    def forget(self, operation: str) -> None:
        """Drop the announced calls of ``operation`` not yet sent (the hang policy will not run them)."""
        self._unprepare()
        self._planned.drop(operation)

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply:
        return self.call_on(NO_INSTANCE, operation, inputs)

    def call_on(self, instance: int, operation: str, inputs: dict[str, Any]) -> Reply:
        """A call, on the worker's instance ``instance`` of the implementation (spec section 9.7)."""
        if time.monotonic() >= self._run_deadline:
            self._discard()
            return self._run_timeout()
        if self._sent and (self._sent[0].operation, self._sent[0].instance) != (operation, instance):
            self._discard()  # the caller left its plan: what ran ahead is void
            self._planned.clear()
        if not self._answers:
            worker = self._ready_worker()
            if isinstance(worker, Reply):
                return worker
            if not self._sent:
                head = self._planned.follow(operation, instance) or Planned(
                    operation, lambda: inputs, instance=instance
                )
                self._send(
                    worker, self._prepared([head._replace(inputs=lambda: inputs), *self._planned.take(BATCH - 1)])
                )
            self._collect(worker, wait=True)
        elif self._worker is not None:
            self._collect(self._worker, wait=False)
        answer = self._answers.popleft()
        if isinstance(answer, ChildFailure):
            return self._lost(answer)
        self._sent.popleft()
        self._budgets.popleft()
        self._placed.popleft()
        reply, fatal = answer
        if fatal:  # it spoilt its process (global state, memory, directory): the next call gets a fresh one
            self._discard()
        return reply

    def renew(self) -> bool:
        """The next call starts on a new worker (the implementation loaded again, its module state empty); what
        ran ahead on this one is sent again there."""
        self._discard()
        return not self._broken

    def close(self) -> None:
        self._discard()
        self._planned.clear()

    def apply(self, function: Callable[..., Any], args: tuple[Any, ...], timeout: float) -> tuple[bool, Any]:
        """Run ``function(adapter, *args)`` inside the worker, on the unguarded adapter, and return
        (True, its result) or (False, why, in one line). ``function`` is the runner's own (a module-level
        function, pickled by name: embconf.bench's timing loop); the worker keeps its memory limit, and
        one that hangs past ``timeout``, dies or spoils its process is replaced."""
        if self._sent:  # calls ran ahead of a plan the caller has left
            self._discard()
        self._planned.clear()
        worker = self._ready_worker()
        if isinstance(worker, Reply):
            return False, worker.message
        worker.output.reset()
        try:
            worker.send(("apply", function, tuple(args)))
            message = worker.receive(min(time.monotonic() + timeout, self._run_deadline))
        except ChildFailure as failure:
            lost = self._lost(failure).message
            late = isinstance(failure, Late) and time.monotonic() < self._run_deadline
            return False, f"no answer within {timeout:g} s (the worker was killed)" if late else lost
        if not (isinstance(message, tuple) and len(message) == 4 and message[0] == "applied"):
            self._discard()
            return False, "the worker sent an unreadable reply"
        if message[3]:
            self._discard()
        return bool(message[1]), message[2]

    # ----- workers

    def _prepared(self, batch: list[Planned]) -> Batch:
        """A batch of calls made ready to send: their inputs made, and the seconds each may take."""
        payload = [(call.operation, call.inputs()) for call in batch]
        return Batch(batch, payload, [case_budget(self.case_timeout, name, inputs) for name, inputs in payload])

    def _send(self, worker: "WorkerHandle", batch: Batch) -> None:
        """Send a batch of calls: each one's operation, inputs, and the rows of each output the runner judges
        (sent back alone). Nothing sent before is unanswered: the arena is free."""
        payload, placed = batch.payload, [Placed() for _ in batch.payload]
        if worker.arena is not None:
            payload, placed = worker.arena.place(payload)
        worker.output.reset()
        self._sent.extend(batch.calls)
        self._placed.extend(placed)
        self._budgets.extend(batch.budgets)
        calls = [(name, inputs, dict(call.rows), call.instance) for (name, inputs), call in zip(payload, batch.calls)]
        try:
            worker.send(("call", calls))
        except ChildFailure as failure:  # the worker is gone: its first call gets the failure (see call)
            self._answers.append(failure)
        self._clock = time.monotonic()

    def _collect(self, worker: "WorkerHandle", wait: bool) -> None:
        """Read into ``_answers`` the replies that have arrived (the first one waited for when ``wait``), each
        checked against the runner's own copy of its inputs, so that the worker is not kept waiting on a
        runner still judging earlier replies: while it waits, the runner makes the next announced batch
        ready; once a whole batch is in (the worker idle), it reads the worker's working directory and sends
        that batch at once. Nothing more is read after a failure or a reply that spoilt the worker's process."""
        while len(self._answers) < len(self._sent) and not _final(self._answers):
            index = len(self._answers)
            if not worker.has_message():
                if not (wait and index == 0):
                    return
                if self._next is None and (calls := self._planned.take(BATCH)):  # the worker is busy: make
                    self._next = self._prepared(calls)  # its next batch ready meanwhile
                if self._dtypes and self._budgets[index] > self.case_timeout:  # a heavy call: the runner's
                    prepare_dtypes(self._dtypes)  # own imports now, not while the worker waits on the runner
                    self._dtypes = []
            try:
                deadline = min(self._clock + self._budgets[index], self._run_deadline)
                reply, fatal = checked_reply(worker.receive(deadline), self._sent[index])
            except ChildFailure as failure:
                self._answers.append(failure)
                return
            reply.violations = [*reply.violations, *self._placed[index].changes()]  # the runner's own comparison
            self._clock = time.monotonic()
            self._answers.append((reply, fatal))
            if len(self._answers) == len(self._sent) and not fatal:  # the worker is idle
                change = worker.cwd_change()
                if change:
                    self._answers[-1] = (moved(reply, change), True)
                    return
                batch, self._next = self._next or self._prepared(self._planned.take(BATCH)), None
                if batch.calls:
                    self._send(worker, batch)

    def _unprepare(self) -> None:
        """Put the batch made ready ahead of its turn back at the front of the plan."""
        if self._next is not None:
            self._planned.restore(self._next.calls)
            self._next = None

    def _hello(self) -> tuple[Capabilities, dict[str, Any]]:
        if self._loaded is None:
            self.start()
        assert self._loaded is not None
        return self._loaded

    def _launch(self) -> "WorkerHandle":
        _preimport(self.kind)
        start = _fork_worker if self.start_method == "fork" else _spawn_worker
        worker = start(self.impl, self.adapter_options, self.memory_limit_mb)
        try:
            hello = worker.receive(min(time.monotonic() + max(self.case_timeout, START_TIMEOUT), self._run_deadline))
        except ChildFailure as failure:
            how = worker.end(kill=not isinstance(failure, Gone))
            reason = f"cannot load {str(self.impl)!r}: {while_loading(failure, how)}{last_words(worker)}"
            worker.close()
            raise ImplementationError(reason) from None
        if not (isinstance(hello, tuple) and len(hello) == 3 and hello[0] == "ready"):
            worker.stop()
            raise ImplementationError(
                str(hello[1]) if isinstance(hello, tuple) and len(hello) == 2 else "the worker failed to start"
            )
        worker.loaded()  # what the import did is the baseline its calls are held to
        if self._loaded is None:
            try:  # the capabilities arrive as plain values: rebuilt here, checked as they are
                caps = Capabilities.from_plain(hello[1])
            except (ValueError, TypeError) as exc:  # a hello the implementation's code garbled
                worker.stop()
                raise ImplementationError(f"cannot load {str(self.impl)!r}: {exc}") from None
            self._loaded = (caps, hello[2])
        return worker

    def _ready_worker(self) -> Union["WorkerHandle", Reply]:
        """The live worker, started anew if the last one died; a Status.DIED reply when none can be started."""
        if self._worker is None and not self._broken:
            try:
                self._worker = self._launch()
            except ImplementationError as exc:
                self._broken = f"a new worker could not be started: {exc}"
        return self._worker if self._worker is not None else Reply(Status.DIED, message=self._broken)

    def _lost(self, failure: ChildFailure) -> Reply:
        """The reply for the call whose worker hung, died or garbled its answer; the worker is discarded."""
        worker = self._worker
        assert worker is not None
        budget = self._budgets[0] if self._budgets else self.case_timeout
        if self._sent:
            self._sent.popleft()  # the call that failed; the ones sent after it are sent again
            self._placed.popleft()
            self._budgets.popleft()
        how = worker.end(kill=not isinstance(failure, Gone))  # a dying worker's own exit status tells why
        detail = worker.output.text()
        self._discard()
        if isinstance(failure, Late):
            if time.monotonic() >= self._run_deadline:
                return self._run_timeout(detail)
            return Reply(
                Status.STOPPED,
                reason=Reason.CASE_TIMEOUT,
                message=f"no reply within {budget:g} s (the worker was killed)",
                detail=detail,
            )
        if isinstance(failure, OutOfMemory):
            return Reply(Status.DIED, message=str(failure), detail=detail)
        if isinstance(failure, Garbled):
            return Reply(Status.RAISED, message=f"the worker sent an unreadable reply ({failure})", detail=detail)
        return Reply(Status.DIED, message=f"the worker process {how}{own_failure(detail)}", detail=detail)

    def _run_timeout(self, detail: str = "") -> Reply:
        return run_timeout_reply(self.run_timeout, detail)

    def _discard(self) -> None:
        """Stop the worker; the calls not yet answered to the caller go back to the front of the plan."""
        self._unprepare()  # it follows the calls sent: restored first, so they go in front of it
        self._planned.restore(self._sent)
        self._sent.clear()
        self._answers.clear()
        self._placed.clear()
        self._budgets.clear()
        if self._worker is not None:
            self._worker.stop()
            self._worker = None


def _preimport(kind: str) -> None:
    """Import a built-in adapter's own module (not the implementation) before forking, so new workers start warm."""
    if kind in BUILTIN:
        try:
            importlib.import_module(BUILTIN[kind][0])
        except ImportError:
            pass  # the worker reports it
