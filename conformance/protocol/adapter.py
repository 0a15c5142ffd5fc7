"""Any program that speaks the wire protocol (spec/PROTOCOL.md) on stdin/stdout.

One long-lived process serves a whole run. Each request waits at most
``timeout`` seconds; a process that hangs, exits or writes something that is
not a valid reply costs only the case at hand (timeout, crash or error, with
the tail of its stderr) and is restarted; the requests written ahead of the lost one are
sent again to the new process. Restarts after a crash or a protocol error are bounded by
``max_restarts``; timeouts by the hang policy (:mod:`embconf.isolation.hangs`). The run as a
whole is held to ``run_timeout``, and the process tree's resident memory to ``memory_limit_mb``.
"""

from __future__ import annotations

import os
import shlex
import time
from collections import deque
from collections.abc import Mapping
from typing import Any, Iterable, Optional

from embconf.adapters import ImplementationError
from embconf.adapters.base import AdapterBase, CallPlan
from embconf.model.budget import case_budget
from embconf.model.contract import ALL_ROWS, NO_INSTANCE, NOT_ENCODED, Capabilities, Planned, Reason, Reply, Status
from embconf.model.encoding import decode_value, is_array
from embconf.processes.failures import ChildFailure, Late
from embconf.processes.limits import (
    DEFAULT_RUN_TIMEOUT,
    LimitError,
    checked_memory_mb,
    checked_seconds,
    run_timeout_reply,
)
from embconf.protocol.codec import INSTANCES_MINOR, ROWS_MINOR
from embconf.protocol.early import adopt
from embconf.protocol.lines import ProtocolError, TooManyValues
from embconf.protocol.messages import (
    BadReply,
    Error,
    Raised,
    RunRequest,
    Skipped,
    StartReply,
    StartRequest,
    parse_run_reply,
    parse_start_reply,
)
from embconf.protocol.peer import Peer

DEFAULT_TIMEOUT = 10.0  # seconds per request (EMBCONF_TIMEOUT, --timeout)
DEFAULT_MAX_LINE = 256 * 2**20  # bytes per reply line (EMBCONF_MAX_LINE)
DEFAULT_MAX_RESTARTS = 3
START_TIMEOUT = 10.0  # the handshake waits at least this long: interpreters and JITs start slowly
AHEAD = 64  # announced requests written before their turn, so the implementation never waits for the runner
GIVE_UP = "implementation restarted too often; giving up"


class SubprocessAdapter(AdapterBase):
    """``subprocess:'COMMAND ARGS'``: a program speaking the wire protocol, started once per run."""

    kind = "subprocess"
    options = ("timeout", "validate_protocol", "run_timeout", "memory_limit_mb")

    def __init__(
        self,
        command: str,
        timeout: Optional[float] = None,
        validate_protocol: bool = False,
        max_restarts: int = DEFAULT_MAX_RESTARTS,
        max_line: Optional[int] = None,
        run_timeout: float = DEFAULT_RUN_TIMEOUT,
        memory_limit_mb: int = 0,
    ) -> None:
        self.target = command
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise ImplementationError(f"cannot parse the command {command!r}: {exc}") from None
        if not self.argv:
            raise ImplementationError("subprocess: needs a command, as in subprocess:'node impl.js'")
        self.timeout, self.run_timeout, self.max_line, self.memory_limit_mb = _limits(
            timeout, run_timeout, max_line, memory_limit_mb
        )
        self._run_deadline = time.monotonic() + self.run_timeout
        self.validate_protocol = validate_protocol
        self.max_restarts = max_restarts
        self.restarts = 0
        self._charged = True  # whether the next restart counts against max_restarts
        self._seq = 0
        self._planned = CallPlan()  # announced, not yet sent
        self._inflight: deque[tuple[int, Planned, float]] = deque()  # (seq, call, budget) sent, unanswered
        self._clock = 0.0  # when the implementation started on the oldest unanswered request (about)
        self._mark = 0  # stderr bytes written before that request
        # The process starts now and answers the handshake while the runner loads the fixtures;
        # the first use of the adapter waits for that answer.
        self._process: Optional[Peer] = self._spawn()
        self._hello: Optional[StartReply] = None

    # --- the Adapter interface

    def describe(self) -> dict[str, Any]:
        return self._handshake().implementation.describe()

    def capabilities(self) -> Capabilities:
        return self._handshake().implementation.capabilities

    def _handshake(self) -> StartReply:
        """The first process's handshake reply, waited for once; ImplementationError (one line) otherwise."""
        if self._hello is None:
            if self._process is None:
                raise ImplementationError(
                    f"subprocess:{shlex.join(self.argv)}: the process ended before it answered the start request"
                )
            self._hello = self._await_hello(self._process)
        return self._hello

    def plan(self, calls: Iterable[Planned]) -> None:
        """Announce the calls about to be made, in order: up to AHEAD of them are written ahead of their turn."""
        self._planned.extend(calls)

    def forget(self, operation: str) -> None:
        """Drop the announced calls of ``operation`` not yet sent (the hang policy will not run them)."""
        self._planned.drop(operation)

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply:
        return self.call_on(NO_INSTANCE, operation, inputs)

    def call_on(self, instance: int, operation: str, inputs: dict[str, Any]) -> Reply:
        """A request, naming ``instance`` to a peer that keeps instances (protocol minor 5, PROTOCOL.md section 8)."""
        if self._inflight and (self._inflight[0][1].operation, self._inflight[0][1].instance) != (
            operation,
            instance,
        ):  # the caller left its plan: what ran ahead is void
            self._discard(restore=False)
            self._planned.clear()
        if time.monotonic() >= self._run_deadline:
            self._discard()
            return run_timeout_reply(self.run_timeout)
        process = self._running()
        if isinstance(process, Reply):
            return process
        try:
            if not self._inflight:
                head = self._planned.follow(operation, instance) or Planned(
                    operation, lambda: inputs, instance=instance
                )
                self._request(process, head._replace(inputs=lambda: inputs, encoded=NOT_ENCODED))
            for ahead in self._planned.take(AHEAD - len(self._inflight)):
                self._request(process, ahead)
            seq, head, budget = self._inflight[0]
            wait = min(self._clock + budget, self._run_deadline) - time.monotonic()
            message = process.receive(max(wait, 0.0), budget)
            reply = self._reply(message, operation, seq, self._rows(head))
        except TooManyValues as refused:  # read to its end: the peer is in step and goes on
            self._inflight.popleft()
            self._clock, self._mark = time.monotonic(), process.stderr.total
            return Reply(Status.RAISED, message=f"reply refused: {refused}")
        except ChildFailure as failure:
            # The tail of everything it wrote: with requests written ahead, stderr cannot be split per request exactly.
            detail = process.stderr.since(0)
            self._inflight.popleft()  # the request that failed; the ones written after it are sent again
            self._discard(charge=not isinstance(failure, Late))
            if isinstance(failure, Late) and time.monotonic() >= self._run_deadline:
                return run_timeout_reply(self.run_timeout, detail)
            return _failure_reply(failure, detail)
        self._inflight.popleft()
        if reply.status == Status.RAISED and not reply.detail:
            reply.detail = process.stderr.since(self._mark)
        self._clock, self._mark = time.monotonic(), process.stderr.total
        return reply

    def _request(self, process: Peer, planned: Planned) -> None:
        if not self._inflight:
            self._clock, self._mark = time.monotonic(), process.stderr.total
        self._seq += 1
        inputs = _request_inputs(planned)
        self._inflight.append((self._seq, planned, case_budget(self.timeout, planned.operation, inputs)))
        instance = planned.instance if self._handshake().minor >= INSTANCES_MINOR else NO_INSTANCE
        process.send(RunRequest(self._seq, planned.operation, inputs, self._rows(planned), instance))

    def close(self) -> None:
        """End the process: asked to stop when idle; killed at once while a request is outstanding (the run was
        interrupted mid-call: a peer busy on it would not read the stop request within its grace)."""
        busy = bool(self._inflight)
        self._planned.clear()
        self._inflight.clear()
        if self._process is not None:
            if busy:
                self._process.kill()
            else:
                self._process.stop()
            self._process = None

    # --- processes

    def _launch(self) -> tuple[Peer, StartReply]:
        """A started process and its handshake reply; ImplementationError (one line) otherwise."""
        process = self._spawn()
        return process, self._await_hello(process)

    def _spawn(self) -> Peer:
        """A started process that has been sent the start request (the first: the one started before the
        runner loaded itself, where there is one: :mod:`embconf.protocol.early`)."""
        try:
            process = Peer(self.argv, self.max_line, self.memory_limit_mb, adopt(self.argv))
        except OSError as exc:
            raise ImplementationError(f"cannot start {self.target!r}: {exc}") from None
        process.send(StartRequest.of_this_runner())
        return process

    def _await_hello(self, process: Peer) -> StartReply:
        """The handshake reply of ``process``; it is killed and ImplementationError raised otherwise."""
        try:
            wait = min(max(self.timeout, START_TIMEOUT), self._run_deadline - time.monotonic())
            return parse_start_reply(process.receive(max(wait, 0.0)), self.validate_protocol)
        except ChildFailure as failure:
            process.kill()
            printed = " | ".join(line.strip() for line in process.stderr.since(0, 600).splitlines() if line.strip())
            raise ImplementationError(
                f"{self.target!r} failed the protocol handshake: {failure}"
                + (f"; its stderr: {printed}" if printed else "")
            ) from None

    def _running(self) -> Peer | Reply:
        """The live process, restarted if need be; a Status.DIED reply once restarts are used up."""
        if self._process is not None:
            return self._process
        if self._charged:
            if self.restarts >= self.max_restarts:
                return Reply(Status.DIED, reason=Reason.RESTARTS_EXHAUSTED, message=GIVE_UP)
            self.restarts += 1
        try:
            self._process, _ = self._launch()
        except ImplementationError as exc:
            self._charged = True
            return Reply(Status.DIED, message=f"restart {self.restarts} failed: {exc}")
        return self._process

    def _discard(self, restore: bool = True, charge: bool = True) -> None:
        """Kill the current process (its state is unknown; the next call starts a new one). The requests it
        had not answered go back to the front of the plan (``restore``); ``charge``: the restart counts
        against max_restarts (a timeout's does not: the hang policy bounds those)."""
        if self._process is not None:
            self._process.kill()
            self._process = None
            self._charged = charge
        if restore:
            self._planned.restore(planned for _, planned, _ in self._inflight)
        self._inflight.clear()

    # --- replies

    def _rows(self, planned: Planned) -> Mapping[str, tuple[int, ...]]:
        """The rows of each output a request asks for: those the runner judges, from a peer that reads them."""
        return planned.rows if self._handshake().minor >= ROWS_MINOR else ALL_ROWS

    def _reply(self, message: Any, operation: str, seq: int, rows: Mapping[str, tuple[int, ...]] = ALL_ROWS) -> Reply:
        """The Reply a run reply stands for (an output asked for by ``rows`` may hold those rows only);
        ProtocolError when it is not a reply to request ``seq``."""
        try:
            parsed = parse_run_reply(message, seq, operation, self.validate_protocol, rows)
        except BadReply as bad:
            return Reply(Status.RAISED, message=str(bad))
        if isinstance(parsed, Skipped):
            return Reply(Status.SKIPPED, message=parsed.reason)
        if isinstance(parsed, Error):
            return Reply(Status.REJECTED, error_kind=parsed.kind, message=parsed.message)
        if isinstance(parsed, Raised):
            return Reply(Status.RAISED, message=parsed.describe(), detail=parsed.traceback)
        return Reply(Status.OUTPUTS, outputs=parsed.values)


def _request_inputs(planned: Planned) -> Mapping[str, Any]:
    """The inputs a request carries: an array the fixture holds base64-encoded goes as it is (the wire's own
    encoding, spec/PROTOCOL.md section 2: not decoded to be encoded again), the rest as the runner makes them."""
    if not planned.encoded:
        return planned.inputs()
    return {
        name: value if is_array(value) and "base64" in value else decode_value(value)
        for name, value in planned.encoded.items()
    }


def _failure_reply(failure: ChildFailure, detail: str) -> Reply:
    """The reply for a request that got no usable answer (the process is discarded)."""
    if isinstance(failure, ProtocolError):
        return Reply(Status.RAISED, message=f"protocol error: {failure}", detail=detail)
    if isinstance(failure, Late):
        return Reply(Status.STOPPED, reason=Reason.CASE_TIMEOUT, message=str(failure), detail=detail)
    return Reply(Status.DIED, message=str(failure), detail=detail)  # Gone, OutOfMemory


def _env_number(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        return float(raw)
    except ValueError:
        raise ImplementationError(f"{name}={raw!r} is not a number") from None


def _limits(
    timeout: Optional[float], run_timeout: float, max_line: Optional[int], memory_limit_mb: int
) -> tuple[float, float, int, int]:
    """The adapter's limits, checked: ImplementationError (one line) for any that cannot be used."""
    try:
        if timeout is None:
            timeout = checked_seconds("EMBCONF_TIMEOUT", _env_number("EMBCONF_TIMEOUT", DEFAULT_TIMEOUT))
        line = max_line or _env_number("EMBCONF_MAX_LINE", DEFAULT_MAX_LINE)
        if not (isinstance(line, int) or float(line).is_integer()) or not 0 < line <= 2**40:
            raise LimitError(f"EMBCONF_MAX_LINE must be a whole number of bytes, more than 0, got {line!r}")
        return (
            checked_seconds("the timeout", timeout),
            checked_seconds("the run timeout", run_timeout),
            int(line),
            checked_memory_mb("the memory limit", memory_limit_mb),
        )
    except LimitError as exc:
        raise ImplementationError(str(exc)) from None
