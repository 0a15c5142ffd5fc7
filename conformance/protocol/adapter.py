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

import json
import math
import os
import queue
import shlex
import signal
import subprocess
import threading
import time
from collections import deque
from typing import Any, Iterable, Mapping, Optional

import numpy as np

from embconf.model.encoding import NON_FINITE, EncodingError, non_finite_name, decode_array, encode_array
from embconf.model.vocabulary import error_kinds, features, operations, output_names, spec_version
from embconf.adapters import ImplementationError
from embconf.model.contract import Capabilities, Planned, Reason, Reply, Status
from embconf.adapters.base import AdapterBase, CallPlan
from embconf.processes.ending import describe_exit
from embconf.processes.limits import (DEFAULT_RUN_TIMEOUT, DETAIL_LIMIT, LimitError, checked_memory_mb, checked_seconds,
                         run_timeout_reply)
from embconf.processes.tree import MEMORY_POLL, MemoryWatch, end_descendants, keep_descendants

PROTOCOL_VERSION = 1
PROTOCOL_MINOR = 1  # 1: spec 1.1's optional inputs, embedding_forward_max_norm, float16 and bfloat16 (PROTOCOL.md)
DEFAULT_TIMEOUT = 10.0  # seconds per request (EMBCONF_TIMEOUT, --timeout)
DEFAULT_MAX_LINE = 256 * 2**20  # bytes per reply line (EMBCONF_MAX_LINE)
DEFAULT_MAX_RESTARTS = 3
START_TIMEOUT = 10.0  # the handshake waits at least this long: interpreters and JITs start slowly
AHEAD = 8  # announced requests written before their turn, so the implementation never waits for the runner
STOP_GRACE = 2.0  # seconds a stopped process gets to exit before it is killed
READ_SIZE = 2**20  # bytes per read of stdout, and the pipe size asked for
STDERR_KEEP = 64 * 1024  # bytes of stderr kept per process
GIVE_UP = "implementation restarted too often; giving up"


class _Failure(Exception):
    """Why no usable reply arrived; ``status`` is the Reply status it becomes."""

    status = Status.RAISED

    def reply(self, detail: str = "") -> Reply:
        return Reply(self.status, message=str(self), detail=detail)


class _ProtocolError(_Failure):
    def reply(self, detail: str = "") -> Reply:
        return Reply(Status.RAISED, message=f"protocol error: {self}", detail=detail)


class _Timeout(_Failure):
    status = Status.STOPPED

    def reply(self, detail: str = "") -> Reply:
        return Reply(self.status, reason=Reason.CASE_TIMEOUT, message=str(self), detail=detail)


class _Crash(_Failure):
    status = Status.DIED


class _OutOfMemory(_Crash):
    pass


def to_wire(value: Any) -> Any:
    """A value as the protocol writes it: arrays base64-encoded, non-finite floats as strings."""
    if isinstance(value, np.ndarray):
        return encode_array(value, inline_limit=-1)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return non_finite_name(value)
    if isinstance(value, Mapping):
        return {key: to_wire(item) for key, item in value.items()}
    return value


def start_message() -> dict[str, Any]:
    from embconf.model.encoding import ARRAY_DTYPES
    from embconf.model.vocabulary import features

    return {"cmd": "start", "protocol": PROTOCOL_VERSION, "protocol_minor": PROTOCOL_MINOR, "spec_version": spec_version(),
            "dtypes": list(ARRAY_DTYPES), "features": sorted(features())}


def run_message(seq: int, operation: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    return {"cmd": "run", "seq": seq, "operation": operation, "inputs": to_wire(inputs)}


STOP_MESSAGE: dict[str, Any] = {"cmd": "stop"}


def dump_line(message: Mapping[str, Any]) -> bytes:
    """One protocol line: compact JSON (strictly JSON: no NaN tokens) and a newline.

    Long base64 payloads are spliced in after encoding: they need no escaping,
    and json would scan them character by character.
    """
    blobs: list[str] = []
    text = json.dumps(_stash_blobs(message, blobs), separators=(",", ":"), allow_nan=False)
    if blobs:
        parts = text.split(_BLOB)
        if len(parts) != len(blobs) + 1:  # the placeholder occurs in the message itself
            text = json.dumps(message, separators=(",", ":"), allow_nan=False)
        else:
            text = "".join(part + blob for part, blob in zip(parts, blobs)) + parts[-1]
    return text.encode() + b"\n"


_BLOB = "~embconf-base64~"


def _stash_blobs(value: Any, blobs: list[str]) -> Any:
    """``value`` with each long ``base64`` string replaced by a placeholder (appended to ``blobs``)."""
    if isinstance(value, Mapping):
        encoded = value.get("base64")
        if isinstance(encoded, str) and len(encoded) > 4096:
            blobs.append(encoded)
            return {**value, "base64": _BLOB}
        return {key: _stash_blobs(item, blobs) for key, item in value.items()}
    return value


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON; write non-finite numbers as the strings 'nan', 'inf', '-inf'")


def parse_line(line: bytes) -> Any:
    """A protocol line as JSON; _ProtocolError (quoting the line) when it is not."""
    try:
        return json.loads(line, parse_constant=_reject_constant)
    except ValueError as exc:
        raise _ProtocolError(f"not a JSON line ({exc}): {_quote(line)}") from None
    except RecursionError:
        raise _ProtocolError(f"a JSON line nested too deeply to read: {_quote(line, 80)}") from None


def _quote(line: bytes, limit: int = 200) -> str:
    text = line.decode("utf-8", "replace").rstrip("\n")
    return repr(text if len(text) <= limit else text[:limit] + "...")


class _StderrTail:
    """The last ``keep`` bytes a process wrote to stderr, and how many it wrote in all."""

    def __init__(self, keep: int = STDERR_KEEP) -> None:
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._keep = keep
        self._lock = threading.Lock()
        self.total = 0

    def append(self, chunk: bytes) -> None:
        with self._lock:
            self._chunks.append(chunk)
            self._size += len(chunk)
            self.total += len(chunk)
            while self._size - len(self._chunks[0]) >= self._keep:
                self._size -= len(self._chunks.popleft())

    def since(self, mark: int, limit: int = DETAIL_LIMIT) -> str:
        """What was written after byte ``mark``, at most its last ``limit`` bytes."""
        with self._lock:
            data = b"".join(self._chunks)
            start = self.total - len(data)
        data = data[max(mark - start, 0):]
        clipped = len(data) > limit
        text = data[-limit:].decode("utf-8", "replace")
        return ("...\n" + text.split("\n", 1)[-1] if clipped else text).rstrip("\n")


class _Process:
    """One running implementation: a writer, a stdout line reader with a size cap, a stderr drain."""

    def __init__(self, argv: list[str], max_line: int, memory_limit_mb: int = 0) -> None:
        # A session of its own, a subreaper for what it starts, dead with the runner: a kill reaches the
        # children of a wrapper script and the daemons it started too.
        self.popen = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      start_new_session=os.name == "posix",
                                      preexec_fn=keep_descendants if os.name == "posix" else None)
        self.max_line = max_line
        self.memory = MemoryWatch(self.popen.pid, memory_limit_mb, "the implementation's process")
        for pipe in (self.popen.stdin, self.popen.stdout):
            _widen(pipe.fileno())
        self.stderr = _StderrTail()
        self.events: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._outbox: queue.Queue[Optional[bytes]] = queue.Queue()
        self._threads = [threading.Thread(target=fn, daemon=True) for fn in (self._read, self._write, self._drain)]
        for thread in self._threads:
            thread.start()

    def _read(self) -> None:
        """Split stdout into lines; a line longer than max_line ends the reading ("oversized")."""
        try:
            self._split(self.popen.stdout.fileno())
        except (OSError, ValueError):  # the pipe was closed under the reader: the process is being killed
            self.events.put(("eof", None))

    def _split(self, fd: int) -> None:
        parts: list[bytes] = []  # the line read so far
        size = 0
        while chunk := os.read(fd, READ_SIZE):
            start = 0
            while (end := chunk.find(b"\n", start)) >= 0 and size + end - start <= self.max_line:
                self.events.put(("line", b"".join(parts + [chunk[start:end]])))
                parts, size, start = [], 0, end + 1
            parts.append(chunk[start:])
            size += len(chunk) - start
            if size > self.max_line:
                self.events.put(("oversized", parts[0][:200]))
                return
        if size:
            self.events.put(("line", b"".join(parts)))
        self.events.put(("eof", None))

    def _write(self) -> None:
        """Write queued lines until the None sentinel, then close stdin (EOF also means stop)."""
        try:
            for data in iter(self._outbox.get, None):
                self.popen.stdin.write(data)
                self.popen.stdin.flush()
            self.popen.stdin.close()
        except (OSError, ValueError):  # the process is gone: the reader reports it
            pass

    def _drain(self) -> None:
        try:
            while chunk := self.popen.stderr.read1(65536):
                self.stderr.append(chunk)
        except (OSError, ValueError):  # closed under the drain: the process is being killed
            pass

    def send(self, message: Mapping[str, Any]) -> None:
        self._outbox.put(dump_line(message))

    def receive(self, timeout: float, allowed: Optional[float] = None) -> Any:
        """The next message within ``timeout`` seconds (what is left of ``allowed``); _Timeout, _Crash or
        _ProtocolError when there is none to use."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                kind, payload = self.events.get(timeout=min(max(deadline - time.monotonic(), 0.0), MEMORY_POLL))
                break
            except queue.Empty:
                now = time.monotonic()
                over = self.memory.exceeded(now)
                if over:
                    raise _OutOfMemory(over) from None
                if now >= deadline:
                    raise _Timeout(f"no reply within {allowed or timeout:g} s") from None
        if kind == "eof":
            raise _Crash(self.exit_status())
        if kind == "oversized":
            raise _ProtocolError(f"reply too large: a line longer than {self.max_line} bytes, starting {_quote(payload, 80)}")
        return parse_line(payload)

    def exit_status(self) -> str:
        """How the process ended (waiting briefly; a process that closed stdout but lives on is killed)."""
        try:
            code = self.popen.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            self.kill()
            return "closed its stdout without exiting (killed)"
        self._threads[2].join(timeout=1.0)  # its last words on stderr
        return describe_exit(code)

    def stop(self) -> None:
        """Ask the process to stop; kill it if it has not exited after STOP_GRACE seconds."""
        end_descendants(self.popen.pid)
        if self.popen.poll() is None:
            self.send(STOP_MESSAGE)
            self._outbox.put(None)
            try:
                self.popen.wait(timeout=STOP_GRACE)
            except subprocess.TimeoutExpired:
                pass
        self.kill()

    def kill(self) -> None:
        """End the process, its process group and everything below it now, and release its pipes (idempotent)."""
        end_descendants(self.popen.pid)
        if self.popen.poll() is None:
            self.popen.kill()
        if os.name == "posix":
            try:
                os.killpg(self.popen.pid, signal.SIGKILL)
            except OSError:  # the group is already gone
                pass
        self.popen.wait()
        self._outbox.put(None)
        for thread in self._threads:
            thread.join(timeout=1.0)
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            try:
                stream.close()
            except OSError:
                pass


def _widen(fd: int) -> None:
    """Grow a pipe to READ_SIZE where the system allows it (Linux): fewer switches for large messages."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), READ_SIZE)
    except (ImportError, OSError):
        pass




def _env_number(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        return float(raw)
    except ValueError:
        raise ImplementationError(f"{name}={raw!r} is not a number") from None


def _limits(timeout: Optional[float], run_timeout: float, max_line: Optional[int], memory_limit_mb: int) -> tuple[float, float, int, int]:
    """The adapter's limits, checked: ImplementationError (one line) for any that cannot be used."""
    try:
        if timeout is None:
            timeout = checked_seconds("EMBCONF_TIMEOUT", _env_number("EMBCONF_TIMEOUT", DEFAULT_TIMEOUT))
        line = max_line or _env_number("EMBCONF_MAX_LINE", DEFAULT_MAX_LINE)
        if not (isinstance(line, int) or float(line).is_integer()) or not 0 < line <= 2**40:
            raise LimitError(f"EMBCONF_MAX_LINE must be a whole number of bytes, more than 0, got {line!r}")
        return (checked_seconds("the timeout", timeout), checked_seconds("the run timeout", run_timeout), int(line),
                checked_memory_mb("the memory limit", memory_limit_mb))
    except LimitError as exc:
        raise ImplementationError(str(exc)) from None


class SubprocessAdapter(AdapterBase):
    """``subprocess:'COMMAND ARGS'``: a program speaking the wire protocol, started once per run."""

    kind = "subprocess"
    options = ("timeout", "validate_protocol", "run_timeout", "memory_limit_mb")

    def __init__(self, command: str, timeout: Optional[float] = None, validate_protocol: bool = False,
                 max_restarts: int = DEFAULT_MAX_RESTARTS, max_line: Optional[int] = None,
                 run_timeout: float = DEFAULT_RUN_TIMEOUT, memory_limit_mb: int = 0) -> None:
        self.target = command
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise ImplementationError(f"cannot parse the command {command!r}: {exc}") from None
        if not self.argv:
            raise ImplementationError("subprocess: needs a command, as in subprocess:'node impl.js'")
        self.timeout, self.run_timeout, self.max_line, self.memory_limit_mb = _limits(timeout, run_timeout, max_line, memory_limit_mb)
        self._run_deadline = time.monotonic() + self.run_timeout
        self.validate_protocol = validate_protocol
        self.max_restarts = max_restarts
        self.restarts = 0
        self._charged = True  # whether the next restart counts against max_restarts
        self._seq = 0
        self._planned = CallPlan()  # announced, not yet sent
        self._inflight: deque[tuple[int, Planned]] = deque()  # (seq, call) sent to this process, unanswered
        self._clock = 0.0  # when the implementation started on the oldest unanswered request (about)
        self._mark = 0  # stderr bytes written before that request
        # The process starts now and answers the handshake while the runner loads the fixtures;
        # the first use of the adapter waits for that answer.
        self._process: Optional[_Process] = self._spawn()
        self._hello: Optional[dict[str, Any]] = None

    # --- the Adapter interface

    def describe(self) -> dict[str, Any]:
        implementation = self._handshake()["implementation"]
        return {key: str(implementation.get(key, "")) for key in ("name", "version", "language")}

    def capabilities(self) -> Capabilities:
        return capabilities_from(self._handshake())

    def _handshake(self) -> dict[str, Any]:
        """The first process's handshake reply, waited for once; ImplementationError (one line) otherwise."""
        if self._hello is None:
            self._hello = self._await_hello(self._process)
        return self._hello

    def plan(self, calls: Iterable[Planned]) -> None:
        """Announce the calls about to be made, in order: up to AHEAD of them are written ahead of their turn."""
        self._planned.extend(calls)

    def forget(self, operation: str) -> None:
        """Drop the announced calls of ``operation`` not yet sent (the hang policy will not run them)."""
        self._planned.drop(operation)

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply:
        if self._inflight and self._inflight[0][1][0] != operation:  # the caller left its plan: what ran ahead is void
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
                self._planned.follow(operation)
                self._request(process, (operation, lambda: inputs))
            for ahead in self._planned.take(AHEAD - len(self._inflight)):
                self._request(process, ahead)
            seq = self._inflight[0][0]
            wait = min(self._clock + self.timeout, self._run_deadline) - time.monotonic()
            message = process.receive(max(wait, 0.0), self.timeout)
            try:
                reply = self._reply(message, operation, seq)
            except RecursionError:
                raise _ProtocolError("a reply nested too deeply to read") from None
        except _Failure as failure:
            # The tail of everything it wrote: with requests written ahead, stderr cannot be split per request exactly.
            detail = process.stderr.since(0)
            self._inflight.popleft()  # the request that failed; the ones written after it are sent again
            self._discard(charge=not isinstance(failure, _Timeout))
            if isinstance(failure, _Timeout) and time.monotonic() >= self._run_deadline:
                return run_timeout_reply(self.run_timeout, detail)
            return failure.reply(detail)
        self._inflight.popleft()
        if reply.status == Status.RAISED:
            reply.detail = process.stderr.since(self._mark)
        self._clock, self._mark = time.monotonic(), process.stderr.total
        return reply

    def _request(self, process: _Process, planned: Planned) -> None:
        if not self._inflight:
            self._clock, self._mark = time.monotonic(), process.stderr.total
        self._seq += 1
        self._inflight.append((self._seq, planned))
        process.send(run_message(self._seq, planned[0], planned[1]()))

    def close(self) -> None:
        self._planned.clear()
        self._inflight.clear()
        if self._process is not None:
            self._process.stop()
            self._process = None

    # --- processes

    def _launch(self) -> tuple[_Process, dict[str, Any]]:
        """A started process and its handshake reply; ImplementationError (one line) otherwise."""
        process = self._spawn()
        return process, self._await_hello(process)

    def _spawn(self) -> _Process:
        """A started process that has been sent the start message."""
        try:
            process = _Process(self.argv, self.max_line, self.memory_limit_mb)
        except OSError as exc:
            raise ImplementationError(f"cannot start {self.target!r}: {exc}") from None
        process.send(start_message())
        return process

    def _await_hello(self, process: _Process) -> dict[str, Any]:
        """The handshake reply of ``process``; it is killed and ImplementationError raised otherwise."""
        try:
            wait = min(max(self.timeout, START_TIMEOUT), self._run_deadline - time.monotonic())
            hello = process.receive(max(wait, 0.0))
            try:
                check_hello(hello, self.validate_protocol)
            except RecursionError:
                raise _ProtocolError("a start reply nested too deeply to read") from None
        except _Failure as failure:
            process.kill()
            printed = " | ".join(line.strip() for line in process.stderr.since(0, 600).splitlines() if line.strip())
            raise ImplementationError(f"{self.target!r} failed the protocol handshake: {failure}"
                                      + (f"; its stderr: {printed}" if printed else "")) from None
        return hello

    def _running(self) -> _Process | Reply:
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
            self._planned.restore(planned for _, planned in self._inflight)
        self._inflight.clear()

    # --- replies

    def _reply(self, message: Any, operation: str, seq: int) -> Reply:
        """The Reply a run reply stands for; _ProtocolError when it is not a reply to request ``seq``."""
        kind = check_reply_frame(message, seq)
        if self.validate_protocol:
            problem = schema_problem("run-reply", message) or output_names_problem(message, operation)
            if problem:
                return Reply(Status.RAISED, message=f"protocol violation: {problem}")
        body = message[kind]
        if kind == "skipped":
            return Reply(Status.SKIPPED, message=str(body.get("reason", "")))
        if kind == "error":
            if body["kind"] not in error_kinds():
                return Reply(Status.RAISED, message=f"unknown error kind {body['kind']!r} (not in the spec's taxonomy): {body.get('message', '')}")
            return Reply(Status.REJECTED, error_kind=body["kind"], message=str(body.get("message", "")))
        outputs = {}
        for name, value in body.items():
            try:
                outputs[name] = from_wire(value)
            except EncodingError as exc:
                return Reply(Status.RAISED, message=f"malformed array in output '{name}': {exc}")
            except TypeError as exc:
                return Reply(Status.RAISED, message=f"output '{name}': {exc}")
        return Reply(Status.OUTPUTS, outputs=outputs)


def from_wire(value: Any) -> Any:
    """An output as the runner compares it: arrays decoded, non-finite strings as floats.

    EncodingError for a malformed array, TypeError for a value that is no output.
    """
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return value
    if isinstance(value, str) and value in NON_FINITE:
        return NON_FINITE[value]
    if isinstance(value, dict):
        if "rows" in value:
            raise EncodingError("'rows' belongs to fixtures, not to replies")
        return decode_array(value)
    raise TypeError(f"an output must be an array, a number or null, got {type(value).__name__} {value!r:.60}")


def check_reply_frame(message: Any, seq: int) -> str:
    """Which of outputs/error/skipped a run reply holds; _ProtocolError when it is not a reply to ``seq``."""
    if not isinstance(message, dict):
        raise _ProtocolError(f"a reply must be a JSON object, got {type(message).__name__}")
    got = message.get("seq")
    if not isinstance(got, int) or isinstance(got, bool) or got != seq:
        raise _ProtocolError(f"reply carries seq {message.get('seq')!r}, expected {seq}")
    kinds = [key for key in ("outputs", "error", "skipped") if key in message]
    if len(kinds) != 1:
        raise _ProtocolError(f"a reply holds exactly one of 'outputs', 'error', 'skipped'; got keys {sorted(message)}")
    body = message[kinds[0]]
    if not isinstance(body, dict):
        raise _ProtocolError(f"'{kinds[0]}' must be an object, got {type(body).__name__}")
    if kinds[0] == "error" and not isinstance(body.get("kind"), str):
        raise _ProtocolError("an error reply needs a string 'kind' from the spec's taxonomy")
    return kinds[0]


def check_hello(message: Any, validate: bool = False) -> None:
    """Raise _ProtocolError unless ``message`` is a usable start reply of this protocol version."""
    if not isinstance(message, dict) or "protocol" not in message:
        raise _ProtocolError(f"expected a start reply with 'protocol' and 'implementation', got {str(message)[:200]!r}")
    if message["protocol"] != PROTOCOL_VERSION:
        raise _ProtocolError(f"it speaks protocol {message['protocol']!r}; this runner speaks protocol {PROTOCOL_VERSION}")
    problem = schema_problem("start-reply", message) if validate else _hello_problem(message)
    if problem:
        raise _ProtocolError(f"bad start reply: {problem}")


def _hello_problem(message: dict[str, Any]) -> Optional[str]:
    impl = message.get("implementation")
    if not isinstance(impl, dict) or not isinstance(impl.get("name"), str):
        return "'implementation' must be an object with a 'name'"
    caps = impl.get("capabilities")
    if not isinstance(caps, dict) or not _strings(caps.get("operations")) or not _strings(caps.get("features", [])):
        return "'implementation.capabilities' must be an object with an 'operations' list (and a 'features' list) of names"
    unknown = [op for op in caps["operations"] if op not in operations()]
    unknown += [f for f in caps.get("features", []) if f not in _plain_features()]
    if unknown:
        return f"unknown operation or feature name(s) {unknown} (see spec/vocabulary.json; sinusoid profiles go in 'sinusoid_convention')"
    if str(caps.get("sinusoid_convention", "interleaved")) not in _conventions():
        return f"unknown sinusoid_convention {caps['sinusoid_convention']!r}; expected one of {sorted(_conventions())}"
    return None


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _plain_features() -> set[str]:
    return {f for f in features() if not f.startswith("sinusoid-")}


def _conventions() -> set[str]:
    return {"interleaved"} | {f.removeprefix("sinusoid-") for f in features() if f.startswith("sinusoid-")}


def capabilities_from(hello: dict[str, Any]) -> Capabilities:
    caps = hello["implementation"]["capabilities"]
    return Capabilities(frozenset(caps["operations"]), frozenset(caps.get("features", [])),
                        caps.get("sinusoid_convention", "interleaved"))


def schema_problem(name: str, message: Any) -> Optional[str]:
    """The first violation of ``spec/schemas/protocol-<name>.schema.json``, or None."""
    from embconf.model.schemas import validator

    error = next(iter(validator(f"protocol-{name}").iter_errors(message)), None)
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{error.message[:300]} at /{where}"


def output_names_problem(message: dict[str, Any], operation: str) -> Optional[str]:
    if "outputs" not in message or not isinstance(message["outputs"], dict):
        return None
    wanted, got = output_names(operation), sorted(message["outputs"])
    return None if sorted(wanted) == got else f"{operation} returns outputs {wanted}, the reply has {got}"
