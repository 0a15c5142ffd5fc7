"""The worker's side: starting a worker (fork or spawn), confining it (session, memory limit, output capture,
death with the runner), loading the implementation, serving calls, and checking after each call that the
process-wide state is as the worker found it (:class:`GlobalState`). Its entry point, :func:`worker_main`, is found
by this module's path under ``spawn``."""

from __future__ import annotations

import gc
import os
import pickle
import re
import signal
import socket
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

import numpy as np

from embconf.adapters import ImplementationError, create_adapter
from embconf.adapters.base import _traceback_tail
from embconf.adapters.guard import GuardedAdapter, ProcessState
from embconf.adapters.loading import describe_exception
from embconf.isolation.channel import _Captured, _Channel, sendable
from embconf.isolation.handle import WorkerHandle
from embconf.isolation.shared import Arena
from embconf.model.contract import Adapter, Reply, Status, contradictory_features
from embconf.model.dtypes import prepare as prepare_dtypes
from embconf.model.encoding import rows_only
from embconf.model.impl import Impl
from embconf.processes.lifetime import Terminated
from embconf.processes.tree import forking, keep_descendants, orphaned

RECURSION_LIMIT = sys.getrecursionlimit()  # the runner's: an implementation may raise it, never lower it
FAILURE_PREFIX = "embconf worker: it could not go on: "  # its last line when its own machinery failed
WORKER_FAILED = 70  # the worker's own exit status when its machinery failed (os.EX_SOFTWARE)
MEMORY_ERROR = re.compile(r"^raised _?\w*MemoryError\b")
BACKSTOP_MB = 8192  # address space allowed beyond --memory-limit: JAX and TensorFlow reserve gigabytes they never use

Output = Union[int, str]  # where a worker writes: a pipe's write end (fork) or a file path (spawn)


def _fork_worker(impl: Impl, adapter_options: dict[str, Any], memory_limit_mb: int) -> WorkerHandle:
    forking()
    parent_end, child_end = socket.socketpair()
    arena = Arena()
    read_fd, write_fd = os.pipe()
    _flush_std()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # Python 3.12+ warns about BLAS threads; they survive fork
        pid = os.fork()
    if pid == 0:
        # The runner's objects are the runner's: a collection in the worker never finalizes them. A finalizer may
        # wait on a lock or condition some thread of the runner held at the fork, forever (onnxruntime's session
        # destroys a condition variable whose waiters were the runner's threads).
        gc.freeze()
        parent_end.close()
        os.close(read_fd)
        worker_main(child_end, impl, adapter_options, memory_limit_mb, write_fd, arena)
    child_end.close()
    os.close(write_fd)
    return WorkerHandle(pid, _Channel(parent_end), _Captured(read_fd), memory_limit_mb=memory_limit_mb, arena=arena)


def _spawn_worker(impl: Impl, adapter_options: dict[str, Any], memory_limit_mb: int) -> WorkerHandle:
    import multiprocessing
    import tempfile

    context = multiprocessing.get_context("spawn")
    parent_end, child_end = socket.socketpair()
    fd, path = tempfile.mkstemp(prefix="embconf-worker-", suffix=".out")
    process = context.Process(
        target=worker_main, args=(child_end, impl, adapter_options, memory_limit_mb, path), daemon=True
    )
    process.start()
    child_end.close()
    assert process.pid is not None  # started
    return WorkerHandle(process.pid, _Channel(parent_end), _Captured(fd, path), process, memory_limit_mb)


def worker_main(
    sock: socket.socket,
    impl: Impl,
    adapter_options: dict[str, Any],
    memory_limit_mb: int,
    output: Output,
    arena: Optional[Arena] = None,
) -> None:
    """The worker process from start to exit (never returns): confine, load, serve."""
    code = 0
    try:
        _confine(output, memory_limit_mb)
        channel = _Channel(sock)
        adapter = _load(channel, impl, adapter_options)
        if adapter is not None:
            _serve(channel, adapter, memory_limit_mb, arena)
    except BaseException as exc:  # the worker's own failure: reported as a crash, its reason in the capture
        code = WORKER_FAILED
        _last_words(exc)
    finally:
        _flush_std()
        os._exit(code)


def _last_words(exc: BaseException) -> None:
    """Why the worker itself failed, printed into the capture even when the implementation left the
    interpreter unable to print a traceback (a recursion limit it lowered, streams it closed)."""
    try:
        sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
        import traceback

        traceback.print_exception(exc)
    except BaseException:
        pass
    try:
        os.write(2, f"{FAILURE_PREFIX}{describe_exception(exc)}\n".encode(errors="replace"))
    except BaseException:
        pass


def _confine(output: Output, memory_limit_mb: int) -> None:
    """A session of its own, no Ctrl-C (the runner handles it), its descendants kept in its tree (it
    dies with the runner), output captured, address space held to a backstop (the runner counts memory)."""
    if hasattr(os, "setsid"):
        try:
            os.setsid()
        except OSError:
            pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    keep_descendants()
    if orphaned():  # its forker died before it could die with it: it must never load the implementation
        os._exit(WORKER_FAILED)
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
    for fd, name in ((1, "stdout"), (2, "stderr")):  # the runner's may be closed (`embconf run >&-`)
        stream = getattr(sys, name)
        if _fileno(stream) != fd:
            setattr(sys, name, open(fd, "w", buffering=1, closefd=False))
    import faulthandler

    faulthandler.enable(file=sys.stderr)  # a segfault leaves its Python traceback in the captured output


def _fileno(stream: Any) -> Optional[int]:
    try:
        return int(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return None


def backstop_mb(memory_limit_mb: int) -> int:
    return memory_limit_mb + BACKSTOP_MB


def _limit_memory(memory_limit_mb: int) -> None:
    """Cap the address space at the backstop, far above the limit (the runner holds resident memory to
    the limit): it stops an allocation too fast to be measured. Best effort: not every platform has RLIMIT_AS."""
    try:
        import resource
    except ImportError:
        return
    if memory_limit_mb <= 0:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = backstop_mb(memory_limit_mb) * 2**20
    limit = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):
        pass


def load_guarded(impl: Impl, adapter_options: dict[str, Any]) -> GuardedAdapter:
    """The implementation ``impl`` names, loaded as the runner runs it (its calls guarded) and its
    capabilities (refused when they contradict each other) and description read once: in the worker and under ``--in-process`` alike. Any failure,
    whichever exception ended it (an adapter's own bug, SystemExit or KeyboardInterrupt at import), is one
    ImplementationError line; only the runner's own termination passes through."""
    try:
        adapter = GuardedAdapter(create_adapter(impl, **adapter_options))
        contradiction = contradictory_features(adapter.capabilities().features) or _lowered_recursion_limit()
        adapter.describe()
    except (ImplementationError, Terminated):
        raise
    except BaseException as exc:
        _lowered_recursion_limit()  # a RecursionError may come from a limit set too low
        raise ImplementationError(f"cannot load {str(impl)!r}: {describe_exception(exc)}") from None
    if contradiction:
        adapter.close()
        raise ImplementationError(f"cannot load {str(impl)!r}: {contradiction}")
    return adapter


def load_in_process(impl: Impl, adapter_options: dict[str, Any]) -> GuardedAdapter:
    """:func:`load_guarded` into the runner's own process (``--in-process``): what the import changed of the
    process's state (a working directory, np.seterr: no rule forbids either) is put back for the runner's own
    work, and set again around each call of the implementation."""
    runner = ProcessState.now()
    try:
        adapter = load_guarded(impl, adapter_options)
    finally:
        imported = ProcessState.now()
        runner.enter()
    if imported != runner:
        adapter.states = (runner, imported)
    return adapter


def _lowered_recursion_limit() -> Optional[str]:
    """Why the implementation left too little recursion depth for the runner's own work, or None."""
    limit = sys.getrecursionlimit()
    if limit >= RECURSION_LIMIT:
        return None
    sys.setrecursionlimit(RECURSION_LIMIT)  # so that the refusal itself can be sent
    return f"it lowered Python's recursion limit from {RECURSION_LIMIT} to {limit} while loading (leave it as found)"


def _load(channel: _Channel, impl: Impl, adapter_options: dict[str, Any]) -> Optional[GuardedAdapter]:
    """Create the guarded adapter and tell the runner its capabilities, or why it failed (then None)."""
    adapter: Optional[GuardedAdapter] = None
    try:
        adapter = load_guarded(impl, adapter_options)
        caps = adapter.capabilities()
        hello: tuple[Any, ...] = ("ready", sendable(caps.to_plain()), sendable(adapter.describe()))
    except BaseException as exc:  # the worker's own process ends it: it is never the runner's Terminated
        message = (
            str(exc)
            if isinstance(exc, ImplementationError)
            else f"cannot load {str(impl)!r}: {describe_exception(exc)}"
        )
        adapter, hello = None, ("failed", message)
    _send(channel, hello)
    return adapter


def _serve(channel: _Channel, adapter: GuardedAdapter, memory_limit_mb: int, arena: Optional[Arena]) -> None:
    """Answer calls until told to stop, the runner goes away, or the implementation spoils the process."""
    state = GlobalState.capture()
    while True:
        try:
            data, buffers = channel.receive(2**62)  # the runner is trusted
        except (EOFError, OSError):
            return
        request = pickle.loads(data, buffers=buffers)
        if request[0] == "apply":  # a measurement of the runner's own (embconf.bench) run in here
            ok, result = _apply(adapter, request[1], request[2])
            fatal = bool(state.changes())
            state.restore_random()
            _send(channel, ("applied", ok, result, fatal))
            if fatal:
                return
            continue
        if request[0] == "prepare":  # the run's dtypes need an import (ml_dtypes): now, while the runner does it too
            prepare_dtypes(request[1])
            continue
        if request[0] != "call":
            return
        for operation, inputs, rows, instance in request[1]:  # rows: of each output, the ones the runner judges
            plain, shared = arena.views(inputs) if arena is not None else (inputs, {})
            reply, fatal = _after_call(_call(adapter, operation, plain, shared, instance), state, memory_limit_mb)
            reply.outputs = {name: rows_only(sendable(value), rows.get(name)) for name, value in reply.outputs.items()}
            _flush_std()
            _send(channel, ("reply", reply, fatal))
            if fatal:
                return


def _call(
    adapter: GuardedAdapter, operation: str, inputs: dict[str, Any], shared: dict[str, np.ndarray], instance: int
) -> Reply:
    """The adapter's reply on ``instance`` (``shared``: input arrays on the runner's arena, handed as they are);
    SystemExit, KeyboardInterrupt and the like become an Status.RAISED reply."""
    try:
        return adapter.call_sharing(operation, inputs, shared, instance)
    except BaseException as exc:
        return Reply(Status.RAISED, message=f"raised {describe_exception(exc)}", detail=_traceback_tail(exc))


def _apply(adapter: Adapter, function: Callable[..., Any], args: tuple[Any, ...]) -> tuple[bool, Any]:
    """(True, ``function(adapter, *args)``) made sendable, or (False, why): the function is the runner's
    (trusted, pickled by name) and gets the unguarded adapter, so that the guard's copies are not measured."""
    inner = adapter.inner if isinstance(adapter, GuardedAdapter) else adapter
    try:
        return True, sendable(function(inner, *args))
    except BaseException as exc:
        return False, f"raised {describe_exception(exc)}"


def _after_call(reply: Reply, state: "GlobalState", memory_limit_mb: int) -> tuple[Reply, bool]:
    """(the reply to send, whether the worker must be replaced): global state changed, or memory ran out."""
    changes = state.changes()
    if changes:
        said = reply.message if reply.status == Status.RAISED else "returned normally"
        return Reply(
            Status.RAISED,
            message=f"{said}, but it changed {'; '.join(changes)} (global state must be left as found)",
            detail=reply.detail,
        ), True
    if reply.status == Status.RAISED and MEMORY_ERROR.match(reply.message):
        limit = (
            f"the limit is {memory_limit_mb} MB; the allocation would have passed the address-space backstop of "
            f"{backstop_mb(memory_limit_mb)} MB"
            if memory_limit_mb > 0
            else "no limit was set"
        )
        return Reply(Status.DIED, message=f"ran out of memory ({limit}): {reply.message}", detail=reply.detail), True
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
    errstate: Mapping[str, Any]  # np.geterr()
    printoptions: Mapping[str, Any]
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
        limit = sys.getrecursionlimit()
        if limit < RECURSION_LIMIT:
            sys.setrecursionlimit(RECURSION_LIMIT)
            found.append(f"Python's recursion limit (sys.setrecursionlimit) from {RECURSION_LIMIT} to {limit}")
        cwd = _cwd()
        if cwd != self.cwd:
            found.append(f"the working directory from {self.cwd!r} to {cwd!r}")
        for label, before, after in (
            ("numpy's error handling (np.seterr)", self.errstate, np.geterr()),
            ("numpy's print options (np.set_printoptions)", self.printoptions, np.get_printoptions()),
        ):
            if after != before:
                found.append(
                    f"{label}: "
                    + ", ".join(
                        f"{k} {before.get(k)!r} -> {after.get(k)!r}"
                        for k in sorted(set(before) | set(after))
                        if before.get(k) != after.get(k)
                    )
                )
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
