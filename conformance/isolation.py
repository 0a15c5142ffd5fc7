"""Running an implementation in a child worker process, so that a hang, a crash, a memory blow-up, an
output flood or a change of global state costs one case, never the run.

One worker serves the whole run and is replaced only after it dies, is killed or is spoilt. Where
the platform has ``fork`` the worker is forked from the runner after numpy and embconf are imported,
so it starts at once; elsewhere it is a fresh interpreter (multiprocessing ``spawn``). The worker:

- loads the implementation itself (``create_adapter``); a failure to load comes back as one
  :class:`~embconf.adapters.ImplementationError` line;
- runs every call through :class:`~embconf.guard.GuardedAdapter` (copies in, mutation and view checks);
- has its address space capped (``RLIMIT_AS``), stdin from /dev/null, and its stdout and stderr
  (the file descriptors, so C code too) captured; the runner keeps only the tail;
- checks after each call that the working directory, numpy's error handling and print options are
  as it found them (else the case is an ``error`` and the worker is replaced), and restores the
  legacy global random state (TinyTorch layers draw their initial weights from it, legitimately).

Messages are pickles over a socket pair, arrays out of band (no copies but the kernel's). When the
caller announces its next calls (``plan``; ``run_repeated`` does), they go to the worker in batches and
their replies stream back one by one: each call keeps its own timeout and outcome, and a worker lost
mid-batch costs only the call it was on (the rest are sent again). The runner sends operations and
inputs only, never expected values, and unpickles replies with an allow-list of classes, so a reply
cannot make the runner import the implementation's modules.
"""
from __future__ import annotations

import importlib
import io
import os
import pickle
import re
import selectors
import signal
import socket
import struct
import sys
import time
import warnings
from collections import deque
from dataclasses import dataclass, fields
from typing import Any, Callable, Iterable, Optional, Union

import numpy as np

from .adapters import BUILTIN, ImplementationError, create_adapter, parse_impl
from .adapters.base import CRASH, EXCEPTION, TIMEOUT, Adapter, Capabilities, Reply, _traceback_tail
from .adapters.loading import describe_exception
from .guard import GuardedAdapter
from .processes import DETAIL_LIMIT, describe_exit

DEFAULT_CASE_TIMEOUT = 10.0  # seconds per case
DEFAULT_RUN_TIMEOUT = 1800.0  # seconds for the whole run
DEFAULT_MEMORY_LIMIT_MB = 4096
START_TIMEOUT = 60.0  # loading an implementation (importing torch, say) may take a while
STOP_GRACE = 1.0  # seconds a worker gets to exit before it is killed
OUTPUT_KEEP = 64 * 1024  # bytes of a worker's output kept
DRAIN_CHUNKS = 16  # reads of 64 KiB per wake-up, so a flood cannot starve the reply
MAX_REPLY_BYTES = 512 * 2**20
OUT_OF_PROCESS = frozenset({"subprocess"})  # kinds that already run the implementation in a process of their own
MEMORY_ERROR = re.compile(r"^raised _?\w*MemoryError\b")
BATCH = 16  # announced calls sent to the worker at once (measured: lock-step costs ~0.6 ms a call more)

Planned = tuple[str, Callable[[], dict[str, Any]]]  # an announced call: operation, and a factory of its inputs

Output = Union[int, str]  # where a worker writes: a pipe's write end (fork) or a file path (spawn)


@dataclass(frozen=True)
class IsolationOptions:
    """How to run in-process implementations: in a worker (the default) and with which limits."""

    in_process: bool = False
    case_timeout: float = DEFAULT_CASE_TIMEOUT
    run_timeout: float = DEFAULT_RUN_TIMEOUT
    memory_limit_mb: int = DEFAULT_MEMORY_LIMIT_MB  # 0: no limit


def open_adapter(impl: str, options: IsolationOptions = IsolationOptions(), **adapter_options: Any) -> Adapter:
    """The adapter ``impl`` names, ready to run: in a worker process unless ``options.in_process`` or
    the kind already runs out of process (subprocess). ImplementationError when it cannot load."""
    kind, _ = parse_impl(impl)
    if kind in OUT_OF_PROCESS:
        return create_adapter(impl, **adapter_options)
    if options.in_process:
        return GuardedAdapter(create_adapter(impl, **adapter_options))
    adapter = IsolatedAdapter(impl, options.case_timeout, options.run_timeout, options.memory_limit_mb, adapter_options)
    adapter.start()
    return adapter


def default_start_method() -> str:
    return "fork" if hasattr(os, "fork") else "spawn"


class IsolatedAdapter(Adapter):
    """An adapter whose implementation runs in one reused child worker process.

    A caller that announces its next calls (:meth:`plan`) lets the worker run them in batches: each
    call still gets its own reply, timeout and outcome, but the processes switch far less often."""

    def __init__(self, impl_spec: str, case_timeout: float = DEFAULT_CASE_TIMEOUT, run_timeout: float = DEFAULT_RUN_TIMEOUT,
                 memory_limit_mb: int = DEFAULT_MEMORY_LIMIT_MB, adapter_options: Optional[dict[str, Any]] = None,
                 start_method: Optional[str] = None) -> None:
        self.kind, self.target = parse_impl(impl_spec)
        self.impl = impl_spec
        self.case_timeout, self.run_timeout, self.memory_limit_mb = case_timeout, run_timeout, memory_limit_mb
        self.adapter_options = dict(adapter_options or {})
        self.start_method = start_method or default_start_method()
        self._run_deadline = time.monotonic() + run_timeout
        self._worker: Optional[_Worker] = None
        self._loaded: Optional[tuple[Capabilities, dict[str, Any]]] = None  # from the first worker
        self._broken = ""  # why no worker can be started any more
        self._planned: deque[Planned] = deque()  # calls announced and not yet sent
        self._sent: deque[Planned] = deque()  # calls sent to the worker and not yet answered, in order
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
        """Announce the calls about to be made, in order, as (operation, inputs factory) pairs."""
        self._planned.extend(calls)

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply:
        if time.monotonic() >= self._run_deadline:
            self._discard()
            return self._run_timeout()
        if self._sent and self._sent[0][0] != operation:  # the caller left its plan: what ran ahead is void
            self._discard()
            self._planned.clear()
        worker = self._ready_worker()
        if isinstance(worker, Reply):
            return worker
        try:
            if not self._sent:
                self._dispatch(worker, operation, inputs)
            reply, fatal = _checked_reply(worker.receive(min(self._clock + self.case_timeout, self._run_deadline)))
        except _Failure as failure:
            return self._lost(failure)
        self._sent.popleft()
        self._clock = time.monotonic()
        if fatal:  # it spoilt its process (global state, memory): the next call gets a fresh one
            self._discard()
        return reply

    def close(self) -> None:
        self._discard()
        self._planned.clear()

    # ----- workers

    def _dispatch(self, worker: "_Worker", operation: str, inputs: dict[str, Any]) -> None:
        """Send this call, and up to BATCH - 1 announced calls after it."""
        if self._planned and self._planned[0][0] == operation:
            self._planned.popleft()
        else:
            self._planned.clear()  # an unannounced call: the plan no longer tells what comes next
        batch: list[Planned] = [(operation, lambda: inputs)]
        while self._planned and len(batch) < BATCH:
            batch.append(self._planned.popleft())
        payload = [(name, make_inputs()) for name, make_inputs in batch]
        worker.output.reset()
        self._sent.extend(batch)
        worker.send(("call", payload))
        self._clock = time.monotonic()

    def _hello(self) -> tuple[Capabilities, dict[str, Any]]:
        if self._loaded is None:
            self.start()
        assert self._loaded is not None
        return self._loaded

    def _launch(self) -> "_Worker":
        _preimport(self.kind)
        start = _fork_worker if self.start_method == "fork" else _spawn_worker
        worker = start(self.impl, self.adapter_options, self.memory_limit_mb)
        try:
            hello = worker.receive(min(time.monotonic() + max(self.case_timeout, START_TIMEOUT), self._run_deadline))
        except _Failure as failure:
            how = worker.end(kill=not isinstance(failure, _Gone))
            reason = f"cannot load {self.impl!r}: {failure.while_loading(how)}{_last_words(worker)}"
            worker.close()
            raise ImplementationError(reason) from None
        if not (isinstance(hello, tuple) and hello and hello[0] == "ready"):
            worker.stop()
            raise ImplementationError(str(hello[1]) if isinstance(hello, tuple) and len(hello) == 2 else "the worker failed to start")
        if self._loaded is None:
            self._loaded = (hello[1], hello[2])
        return worker

    def _ready_worker(self) -> Union["_Worker", Reply]:
        """The live worker, started anew if the last one died; a CRASH reply when none can be started."""
        if self._worker is None and not self._broken:
            try:
                self._worker = self._launch()
            except ImplementationError as exc:
                self._broken = f"a new worker could not be started: {exc}"
        return self._worker if self._worker is not None else Reply(CRASH, message=self._broken)

    def _lost(self, failure: "_Failure") -> Reply:
        """The reply for the call whose worker hung, died or garbled its answer; the worker is discarded."""
        worker = self._worker
        assert worker is not None
        if self._sent:
            self._sent.popleft()  # the call that failed; the ones sent after it are sent again
        how = worker.end(kill=not isinstance(failure, _Gone))  # a dying worker's own exit status tells why
        detail = worker.output.text()
        self._discard()
        if isinstance(failure, _Late):
            if time.monotonic() >= self._run_deadline:
                return self._run_timeout(detail)
            return Reply(TIMEOUT, message=f"no reply within {self.case_timeout:g} s (the worker was killed)", detail=detail)
        if isinstance(failure, _Garbled):
            return Reply(EXCEPTION, message=f"the worker sent an unreadable reply ({failure})", detail=detail)
        return Reply(CRASH, message=f"the worker process {how}", detail=detail)

    def _run_timeout(self, detail: str = "") -> Reply:
        return Reply(TIMEOUT, message=f"run timeout: the whole run exceeded {self.run_timeout:g} s", detail=detail)

    def _discard(self) -> None:
        """Stop the worker; the calls it had not answered go back to the front of the plan."""
        self._planned.extendleft(reversed(self._sent))
        self._sent.clear()
        if self._worker is not None:
            self._worker.stop()
            self._worker = None


def _checked_reply(message: Any) -> tuple[Reply, bool]:
    if isinstance(message, tuple) and len(message) == 3 and message[0] == "reply" and isinstance(message[1], Reply):
        return message[1], bool(message[2])
    raise _Garbled(f"expected a reply, got {type(message).__name__}")


def _preimport(kind: str) -> None:
    """Import a built-in adapter's own module (not the implementation) before forking, so new workers start warm."""
    if kind in BUILTIN:
        try:
            importlib.import_module(BUILTIN[kind][0])
        except ImportError:
            pass  # the worker reports it


def _last_words(worker: "_Worker") -> str:
    lines = [line.strip() for line in worker.output.text().splitlines() if line.strip()]
    return f"; its last output: {lines[-1][:300]}" if lines else ""


# ----- the parent's side of one worker ---------------------------------------------------------------

class _Failure(Exception):
    """Why no reply came."""

    def while_loading(self, how: str) -> str:
        return f"the worker process {how} while loading it"


class _Late(_Failure):
    def while_loading(self, how: str) -> str:
        return "it did not finish loading in time"


class _Gone(_Failure):
    pass


class _Garbled(_Failure):
    def while_loading(self, how: str) -> str:
        return f"the worker sent an unreadable reply ({self})"


class _Captured:
    """What a worker printed: drained from a pipe (fork) or read back from a file (spawn); the tail is kept."""

    def __init__(self, fd: int, path: Optional[str] = None) -> None:
        self.fd, self.path = fd, path
        self.tail, self.total, self.open = b"", 0, True
        if path is None:
            os.set_blocking(fd, False)

    def waitables(self) -> list[int]:
        return [self.fd] if self.path is None and self.open else []

    def drain(self) -> None:
        """Read what is there now (a bounded amount), keeping only the tail."""
        for _ in range(DRAIN_CHUNKS if self.waitables() else 0):
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            if not chunk:
                self.open = False
                return
            self.total += len(chunk)
            self.tail = (self.tail + chunk)[-OUTPUT_KEEP:]

    def reset(self) -> None:
        self.drain()
        if self.path is not None:
            os.ftruncate(self.fd, 0)
        self.tail, self.total = b"", 0

    def text(self) -> str:
        """The last DETAIL_LIMIT characters printed since the last reset, noting what was cut."""
        self.drain()
        data, total = (self.tail, self.total) if self.path is None else self._file_tail()
        shown = data[-DETAIL_LIMIT:]
        cut = f"[{total - len(shown)} earlier bytes of output not shown]\n" if total > len(shown) else ""
        return cut + shown.decode("utf-8", "replace")

    def _file_tail(self) -> tuple[bytes, int]:
        size = os.fstat(self.fd).st_size
        os.lseek(self.fd, max(size - OUTPUT_KEEP, 0), os.SEEK_SET)
        return os.read(self.fd, OUTPUT_KEEP), size

    def close(self) -> None:
        os.close(self.fd)
        if self.path is not None:
            try:
                os.unlink(self.path)
            except OSError:
                pass


_FRAME = struct.Struct("<QQI")  # length of the body, of its pickle, number of out-of-band buffers
_ALIGN = 16  # out-of-band buffers start at multiples of this in the body, so arrays built on them are aligned
SMALL_MESSAGE = 64 * 1024  # below this a message goes out in one write


class _Channel:
    """Pickled messages over a stream socket; numpy arrays travel out of band, copied by the kernel only.

    A message is a frame header, then a body: the buffer sizes, the pickle, the buffers (aligned)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def send(self, message: Any) -> None:
        buffers: list[pickle.PickleBuffer] = []
        data = pickle.dumps(message, protocol=5, buffer_callback=buffers.append)
        raws = [buffer.raw() for buffer in buffers]
        head = struct.pack(f"<{len(raws)}Q", *(raw.nbytes for raw in raws)) + data
        parts = [head, *_aligned(len(head), raws)]
        body = sum(memoryview(part).nbytes for part in parts)
        frame = _FRAME.pack(body, len(data), len(raws))
        if body < SMALL_MESSAGE:
            self.sock.sendall(b"".join([frame, *parts]))
            return
        self.sock.sendall(frame)
        for part in parts:
            self.sock.sendall(part)

    def receive(self, limit: int) -> tuple[memoryview, list[memoryview]]:
        """(the pickle, its out-of-band buffers) of the next message; EOFError when the peer has gone."""
        body_size, data_size, count = _FRAME.unpack(self._exact(_FRAME.size))
        if body_size > limit:
            raise ValueError(f"a message of {body_size} bytes exceeds the limit of {limit}")
        body = memoryview(self._exact(body_size))
        sizes = struct.unpack_from(f"<{count}Q", body)
        offset = 8 * count + data_size
        data, buffers = body[8 * count:offset], []
        for size in sizes:
            offset += -offset % _ALIGN
            buffers.append(body[offset:offset + size])
            offset += size
        if offset > body_size:
            raise ValueError("a message's buffers overrun its body")
        return data, buffers

    def _exact(self, size: int) -> bytearray:
        buffer = bytearray(size)
        view, got = memoryview(buffer), 0
        while got < size:
            count = self.sock.recv_into(view[got:])
            if not count:
                raise EOFError("the peer closed the connection")
            got += count
        return buffer

    def close(self) -> None:
        self.sock.close()


def _aligned(start: int, raws: list[memoryview]) -> list[Any]:
    """``raws`` with zero padding before each, so each begins at a multiple of _ALIGN from the body's start."""
    parts: list[Any] = []
    position = start
    for raw in raws:
        pad = -position % _ALIGN
        parts += [bytes(pad), raw]
        position += pad + raw.nbytes
    return parts


class _Worker:
    """A running worker: its channel, its captured output, and how to end it."""

    def __init__(self, pid: int, channel: _Channel, output: _Captured, process: Any = None) -> None:
        self.pid, self.channel, self.output, self.process = pid, channel, output, process
        self.exitcode: Optional[int] = None
        self.selector = selectors.DefaultSelector()
        self.selector.register(channel.sock, selectors.EVENT_READ)
        for fd in output.waitables():
            self.selector.register(fd, selectors.EVENT_READ)

    def send(self, message: Any) -> None:
        try:
            self.channel.sock.settimeout(None)
            self.channel.send(message)
        except OSError:
            raise _Gone() from None

    def receive(self, deadline: float) -> Any:
        """The worker's next message, draining its output meanwhile; _Late after ``deadline``, _Gone if it died."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Late()
            for key, _ in self.selector.select(remaining):
                if key.fileobj is self.channel.sock:
                    return self._read(deadline)
                self.output.drain()
                if not self.output.open:
                    self.selector.unregister(key.fileobj)

    def _read(self, deadline: float) -> Any:
        self.channel.sock.settimeout(max(deadline - time.monotonic(), 0.001))  # a half-sent reply cannot hang the run
        try:
            data, buffers = self.channel.receive(MAX_REPLY_BYTES)
        except TimeoutError:
            raise _Late() from None
        except (EOFError, OSError):
            raise _Gone() from None
        except (ValueError, struct.error) as exc:
            raise _Garbled(str(exc)) from None
        return load_reply(data, buffers)

    def stop(self) -> None:
        """Ask the worker to exit, kill it if it does not, and release everything."""
        try:
            self.send(("stop",))
        except _Gone:
            pass
        self.end(kill=False)
        self.close()

    def end(self, kill: bool) -> str:
        """Reap the process (killed at once if ``kill``, else after STOP_GRACE); how it ended, in words."""
        if kill:
            self._kill()
        code = self._wait(STOP_GRACE)
        if code is None:
            self._kill()
            code = self._wait(None)
        return describe_exit(code)

    def close(self) -> None:
        self.selector.close()
        self.channel.close()
        self.output.close()

    def _kill(self) -> None:
        if self.exitcode is not None:
            return
        if self.process is not None:
            self.process.kill()
            return
        try:
            os.killpg(self.pid, signal.SIGKILL)  # the worker leads its own session: this reaches its children too
        except OSError:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass

    def _wait(self, timeout: Optional[float]) -> Optional[int]:
        if self.exitcode is None:
            self.exitcode = self._poll(timeout)
        return self.exitcode

    def _poll(self, timeout: Optional[float]) -> Optional[int]:
        """The exit code (negative: killed by that signal), or None if still running after ``timeout``."""
        if self.process is not None:
            self.process.join(timeout)
            return self.process.exitcode
        end = None if timeout is None else time.monotonic() + timeout
        pause = 0.0002  # a worker told to stop is gone in well under a millisecond
        while True:
            pid, status = os.waitpid(self.pid, 0 if end is None else os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            if time.monotonic() >= end:
                return None
            time.sleep(pause)
            pause = min(2 * pause, 0.01)




# ----- what the runner accepts back --------------------------------------------------------------------

_NUMPY_MODULES = frozenset({"numpy", "numpy.core.multiarray", "numpy._core.multiarray", "numpy.core.numeric", "numpy._core.numeric"})
_NUMPY_NAMES = frozenset({"dtype", "ndarray", "scalar", "_reconstruct", "_frombuffer"})
_ALLOWED = frozenset({
    ("embconf.adapters.base", "Reply"), ("embconf.adapters.base", "Capabilities"), (__name__, "Unsendable"),
    ("builtins", "complex"), ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "slice"),
})


class _ReplyUnpickler(pickle.Unpickler):
    """Unpickles only replies: numpy arrays and scalars, plain Python values and embconf's own records."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED or (module in _NUMPY_MODULES and name in _NUMPY_NAMES):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"a reply may not contain {module}.{name}")


def load_reply(data: Any, buffers: tuple[Any, ...] = ()) -> Any:
    try:
        return _ReplyUnpickler(io.BytesIO(data), buffers=buffers).load()
    except Exception as exc:  # whatever a garbled pickle raises
        raise _Garbled(describe_exception(exc)) from None


class Unsendable:
    """Stands in for a returned value that cannot cross to the runner (a generator, a custom object)."""

    def __init__(self, value: Any) -> None:
        self.text = _safe_repr(value)[:200]

    def __repr__(self) -> str:
        return self.text


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception:
        return "(unprintable)"


def sendable(value: Any) -> Any:
    """``value`` made of plain types only: arrays as base ndarrays, Python scalars as the built-in types,
    containers rebuilt, and anything else replaced by an :class:`Unsendable`."""
    if isinstance(value, np.ndarray):
        return np.asarray(value) if value.dtype.kind in "biufcUS" else Unsendable(value)
    if isinstance(value, np.generic):
        return value if value.dtype.kind in "biufcUS" else Unsendable(value)
    for plain in (bool, int, float, complex, str, bytes):
        if isinstance(value, plain):
            return plain(value)
    if value is None:
        return None
    if type(value) in (list, tuple, set, frozenset):
        return type(value)(sendable(item) for item in value)
    if type(value) is dict:
        return {sendable(key): sendable(item) for key, item in value.items()}
    return Unsendable(value)


# ----- the worker's side -------------------------------------------------------------------------------

def _fork_worker(impl: str, adapter_options: dict[str, Any], memory_limit_mb: int) -> _Worker:
    parent_end, child_end = socket.socketpair()
    read_fd, write_fd = os.pipe()
    _flush_std()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # Python 3.12+ warns about BLAS threads; they survive fork
        pid = os.fork()
    if pid == 0:
        parent_end.close()
        os.close(read_fd)
        worker_main(child_end, impl, adapter_options, memory_limit_mb, write_fd)
    child_end.close()
    os.close(write_fd)
    return _Worker(pid, _Channel(parent_end), _Captured(read_fd))


def _spawn_worker(impl: str, adapter_options: dict[str, Any], memory_limit_mb: int) -> _Worker:
    import multiprocessing
    import tempfile

    context = multiprocessing.get_context("spawn")
    parent_end, child_end = socket.socketpair()
    fd, path = tempfile.mkstemp(prefix="embconf-worker-", suffix=".out")
    process = context.Process(target=worker_main, args=(child_end, impl, adapter_options, memory_limit_mb, path), daemon=True)
    process.start()
    child_end.close()
    return _Worker(process.pid, _Channel(parent_end), _Captured(fd, path), process)


def worker_main(sock: socket.socket, impl: str, adapter_options: dict[str, Any], memory_limit_mb: int, output: Output) -> None:
    """The worker process from start to exit (never returns): confine, load, serve."""
    code = 0
    try:
        _confine(output, memory_limit_mb)
        channel = _Channel(sock)
        adapter = _load(channel, impl, adapter_options)
        if adapter is not None:
            _serve(channel, adapter, memory_limit_mb)
    except BaseException:  # the worker's own failure: printed into the capture, reported as a crash
        import traceback

        traceback.print_exc()
        code = 70
    finally:
        _flush_std()
        os._exit(code)


def _confine(output: Output, memory_limit_mb: int) -> None:
    """A session of its own, no Ctrl-C (the runner handles it), output captured, memory capped."""
    if hasattr(os, "setsid"):
        try:
            os.setsid()
        except OSError:
            pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    _redirect_output(output)
    _limit_memory(memory_limit_mb)


def _redirect_output(output: Output) -> None:
    """stdin from the null device; stdout and stderr, at the descriptor level, into the capture."""
    target = output if isinstance(output, int) else os.open(output, os.O_WRONLY | os.O_APPEND)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(target, 1)
    os.dup2(target, 2)
    for fd in {null, target} - {0, 1, 2}:
        os.close(fd)
    import faulthandler

    faulthandler.enable(file=sys.stderr)  # a segfault leaves its Python traceback in the captured output


def _limit_memory(memory_limit_mb: int) -> None:
    """Cap the address space (best effort: not every platform enforces RLIMIT_AS)."""
    try:
        import resource
    except ImportError:
        return
    if memory_limit_mb <= 0:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = memory_limit_mb * 2**20 if hard == resource.RLIM_INFINITY else min(memory_limit_mb * 2**20, hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):
        pass


def _die_with_parent() -> None:
    """On Linux, have the kernel kill the worker if the runner dies (a worker stuck in a loop would outlive it)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _load(channel: _Channel, impl: str, adapter_options: dict[str, Any]) -> Optional[Adapter]:
    """Create the guarded adapter and tell the runner its capabilities, or why it failed (then None)."""
    adapter: Optional[Adapter] = None
    try:
        adapter = GuardedAdapter(create_adapter(impl, **adapter_options))
        caps = adapter.capabilities()
        plain_caps = Capabilities(**{f.name: sendable(getattr(caps, f.name)) for f in fields(Capabilities)})
        hello: tuple[Any, ...] = ("ready", plain_caps, sendable(adapter.describe()))
    except ImplementationError as exc:
        adapter, hello = None, ("failed", str(exc))
    except BaseException as exc:  # an adapter's own bug, or SystemExit/KeyboardInterrupt at import
        adapter, hello = None, ("failed", f"cannot load {impl!r}: {describe_exception(exc)}")
    _send(channel, hello)
    return adapter


def _serve(channel: _Channel, adapter: Adapter, memory_limit_mb: int) -> None:
    """Answer calls until told to stop, the runner goes away, or the implementation spoils the process."""
    state = GlobalState.capture()
    while True:
        try:
            data, buffers = channel.receive(2**62)  # the runner is trusted
        except (EOFError, OSError):
            return
        request = pickle.loads(data, buffers=buffers)
        if request[0] != "call":
            return
        for operation, inputs in request[1]:
            reply, fatal = _after_call(_call(adapter, operation, inputs), state, memory_limit_mb)
            reply.outputs = {name: sendable(value) for name, value in reply.outputs.items()}
            _flush_std()
            _send(channel, ("reply", reply, fatal))
            if fatal:
                return


def _call(adapter: Adapter, operation: str, inputs: dict[str, Any]) -> Reply:
    """The adapter's reply; SystemExit, KeyboardInterrupt and the like become an EXCEPTION reply."""
    try:
        return adapter.call(operation, inputs)
    except BaseException as exc:
        return Reply(EXCEPTION, message=f"raised {describe_exception(exc)}", detail=_traceback_tail(exc))


def _after_call(reply: Reply, state: "GlobalState", memory_limit_mb: int) -> tuple[Reply, bool]:
    """(the reply to send, whether the worker must be replaced): global state changed, or memory ran out."""
    changes = state.changes()
    if changes:
        said = reply.message if reply.status == EXCEPTION else "returned normally"
        return Reply(EXCEPTION, message=f"{said}, but it changed {'; '.join(changes)} (global state must be left as found)",
                     detail=reply.detail), True
    if reply.status == EXCEPTION and MEMORY_ERROR.match(reply.message):
        limit = f"the limit is {memory_limit_mb} MB" if memory_limit_mb > 0 else "no limit was set"
        return Reply(CRASH, message=f"ran out of memory ({limit}): {reply.message}", detail=reply.detail), True
    state.restore_random()
    return reply, False


def _send(channel: _Channel, message: tuple[Any, ...]) -> None:
    try:
        channel.send(message)
    except (pickle.PicklingError, TypeError, AttributeError, ValueError, RecursionError) as exc:  # it will not pickle
        channel.send(("failed", f"the worker cannot send its answer: {describe_exception(exc)}"))


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


@dataclass
class GlobalState:
    """Process-wide state an implementation must leave as it found it."""

    cwd: str
    errstate: dict[str, str]
    printoptions: dict[str, Any]
    random: Any  # np.random.get_state(): put back after a call that changed it
    random_fingerprint: Callable[[], bytes]
    random_seen: bytes

    @classmethod
    def capture(cls) -> "GlobalState":
        fingerprint = _random_fingerprint()
        return cls(_cwd(), np.geterr(), np.get_printoptions(), np.random.get_state(), fingerprint, fingerprint())

    def changes(self) -> list[str]:
        """What differs now, in words (the random state is restored, not reported)."""
        found = []
        cwd = _cwd()
        if cwd != self.cwd:
            found.append(f"the working directory from {self.cwd!r} to {cwd!r}")
        for label, before, after in (("numpy's error handling (np.seterr)", self.errstate, np.geterr()),
                                     ("numpy's print options (np.set_printoptions)", self.printoptions, np.get_printoptions())):
            if after != before:
                found.append(f"{label}: " + ", ".join(f"{k} {before.get(k)!r} -> {after.get(k)!r}"
                                                       for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)))
        return found

    def restore_random(self) -> None:
        if self.random_fingerprint() != self.random_seen:
            np.random.set_state(self.random)


def _random_fingerprint() -> Callable[[], bytes]:
    """A reader of the legacy generator's raw MT19937 state (key and position, through numpy's public
    ctypes interface: ~1 us); of its pickled full state (~50 us) where that is unavailable."""
    try:
        import ctypes

        address = np.random.mtrand._rand._bit_generator.ctypes.state_address
    except (ImportError, AttributeError):
        return lambda: pickle.dumps(np.random.get_state())
    return lambda: ctypes.string_at(address, 624 * 4 + 4)


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:  # the directory was removed
        return "(a removed directory)"
