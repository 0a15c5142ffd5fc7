"""The peer process: one running implementation that speaks the protocol on its stdin and stdout.

:class:`Peer` starts the program in a session of its own (a child subreaper that dies with the runner),
writes requests from a thread, splits its stdout into bounded lines on another and keeps the tail of
its stderr on a third. :meth:`Peer.receive` waits for the next message by a deadline while it holds
the process tree to its memory limit; a peer that gives no usable message raises a
:mod:`embconf.processes.failures` type: :class:`Late`, :class:`Gone`, :class:`OutOfMemory`, or
:class:`~embconf.protocol.lines.ProtocolError`. A peer that dies is a :class:`Gone` at once, even when a process it
started still holds its stdout open (no end of file ever comes).
"""

from __future__ import annotations

import io
import os
import queue
import subprocess
import threading
import time
from typing import TYPE_CHECKING, Any, Optional, cast

from embconf.processes.ending import await_exit, describe_exit, kill_tree, reap_within
from embconf.processes.failures import Gone, Late, OutOfMemory
from embconf.processes.output import OutputTail
from embconf.processes.tree import MEMORY_POLL, MemoryWatch, end_descendants, keep_descendants

if TYPE_CHECKING:
    from embconf.protocol.messages import Request

from embconf.protocol.lines import READ_SIZE, LineTooLong, ProtocolError, dump_line, parse_line, quote, read_lines

STOP_GRACE = 2.0  # seconds a stopped peer gets to exit before it is killed
EXIT_DRAIN = 0.2  # seconds the reader gets to deliver what a peer wrote before it exited
EXIT_WAIT = 1.0  # seconds a peer that closed its stdout gets to exit, and its stderr to drain


class Peer:
    """One running implementation: a writer, a stdout line reader with a size cap, a stderr drain."""

    def __init__(
        self, argv: list[str], max_line: int, memory_limit_mb: int = 0, started: Optional[Popen] = None
    ) -> None:
        """Start ``argv`` (or take over ``started``, a process :func:`launch` started for it earlier)."""
        self.popen = started or launch(argv)
        stdin, stdout, stderr = self.popen.stdin, self.popen.stdout, self.popen.stderr
        assert stdin is not None and stdout is not None and stderr is not None  # all three are pipes
        self.stdin, self.stdout, self.stderr_pipe = stdin, stdout, cast(io.BufferedReader, stderr)
        self.max_line = max_line
        self.memory = MemoryWatch(self.popen.pid, memory_limit_mb, "the implementation's process")
        self.stderr = OutputTail()
        self.events: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._outbox: queue.Queue[Optional[bytes]] = queue.Queue()
        self._threads = [threading.Thread(target=fn, daemon=True) for fn in (self._read, self._write, self._drain)]
        for thread in self._threads:
            thread.start()

    # ----- the three threads

    def _read(self) -> None:
        """Split stdout into events: ("line", bytes) each, then ("eof", None), or ("oversized", its start)
        for a line longer than max_line, which ends the reading."""
        try:
            for line in read_lines(self.stdout.fileno(), self.max_line):
                self.events.put(("line", line))
                del line  # a long line is not held here while the reader waits for the next
        except LineTooLong as long:
            self.events.put(("oversized", long.head))
            return
        except (OSError, ValueError):  # the pipe was closed under the reader: the process is being killed
            pass
        self.events.put(("eof", None))

    def _write(self) -> None:
        """Write queued lines until the None sentinel, then close stdin (EOF also means stop)."""
        try:
            for data in iter(self._outbox.get, None):
                self.stdin.write(data)
                self.stdin.flush()
            self.stdin.close()
        except (OSError, ValueError):  # the process is gone: the reader reports it
            pass

    def _drain(self) -> None:
        """Keep the tail of stderr until it closes."""
        try:
            while chunk := self.stderr_pipe.read1(65536):
                self.stderr.append(chunk)
        except (OSError, ValueError):  # closed under the drain: the process is being killed
            pass

    # ----- the runner's side

    def send(self, request: "Request") -> None:
        """Queue ``request`` for writing (in order, by the writer thread)."""
        self._outbox.put(dump_line(request.wire()))

    def receive(self, timeout: float, allowed: Optional[float] = None) -> Any:
        """The next message within ``timeout`` seconds (what is left of ``allowed``); Late, Gone,
        OutOfMemory or ProtocolError when there is none to use."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                kind, payload = self.events.get(timeout=min(max(deadline - time.monotonic(), 0.0), MEMORY_POLL))
                break
            except queue.Empty:
                now = time.monotonic()
                over = self.memory.exceeded(now)
                if over:
                    raise OutOfMemory(over) from None
                if self.popen.poll() is not None:  # it died, though its stdout may be held open by a child
                    kind, payload = self._last_event()
                    break
                if now >= deadline:
                    raise Late(f"no reply within {allowed or timeout:g} s") from None
        if kind == "eof":
            raise Gone(self.exit_status())
        if kind == "exited":
            raise Gone(f"{self.exit_status()}; a process it started still held its stdout open")
        if kind == "oversized":
            raise ProtocolError(
                f"reply too large: a line longer than {self.max_line} bytes, starting {quote(payload, 80)}"
            )
        return parse_line(payload)

    def _last_event(self) -> tuple[str, Any]:
        """What a process that has exited still wrote (its reader gets it at once), else ("exited", None)."""
        try:
            return self.events.get(timeout=EXIT_DRAIN)
        except queue.Empty:
            return "exited", None

    def exit_status(self) -> str:
        """How the process ended (waiting briefly; a process that closed stdout but lives on is killed)."""
        code = self._wait(EXIT_WAIT)
        if code is None:
            self.kill()
            return "closed its stdout without exiting (killed)"
        self._threads[2].join(timeout=EXIT_WAIT)  # its last words on stderr
        return describe_exit(code)

    def stop(self) -> None:
        """Ask the process to stop; kill it if it has not exited after STOP_GRACE seconds; release it."""
        end_descendants(self.popen.pid)
        if self.popen.poll() is None:
            from embconf.protocol.messages import StopRequest  # the run's end: the runner has it loaded

            self.send(StopRequest())
            self._outbox.put(None)
            reap_within(STOP_GRACE, self._wait, self._kill_tree)
        self.kill()  # what is left of its process group, and its pipes and threads

    def kill(self) -> None:
        """End the process, its process group and everything below it now, and release its pipes (idempotent)."""
        self._kill_tree()
        self.popen.wait()
        self._outbox.put(None)
        for thread in self._threads:
            thread.join(timeout=1.0)
        for stream in (self.stdin, self.stdout, self.stderr_pipe):
            try:
                stream.close()
            except OSError:
                pass

    def _kill_tree(self) -> None:
        """SIGKILL everything below the process, the process, and its process group (POSIX)."""
        kill_tree(self.popen.pid, self._kill_child, group=os.name == "posix")

    def _kill_child(self) -> None:
        """SIGKILL the process itself, unless it has been reaped."""
        if self.popen.poll() is None:
            self.popen.kill()

    def _wait(self, timeout: Optional[float]) -> Optional[int]:
        """The exit code, or None if the process still runs after ``timeout`` seconds (None: for ever)."""
        end = None if timeout is None else time.monotonic() + timeout
        if self.popen.returncode is None:
            await_exit(self.popen.pid, timeout)  # woken as it exits (Linux), not at Popen.wait's next poll
        try:  # what is left of ``timeout``: once spent waiting above, it must not be spent again
            return self.popen.wait(timeout=None if end is None else max(end - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            return None


Popen = subprocess.Popen  # of bytes: stdin, stdout and stderr are pipes


def launch(argv: list[str]) -> Popen:
    """The process of ``argv`` with its three pipes (stdin and stdout widened), in a session of its own, a
    subreaper for what it starts, dead with the runner: a kill reaches the children of a wrapper script and
    the daemons it started too. OSError when it cannot be started."""
    popen = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=os.name == "posix",
        preexec_fn=keep_descendants if os.name == "posix" else None,
    )
    for pipe in (popen.stdin, popen.stdout):
        if pipe is not None:
            _widen(pipe.fileno())
    return popen


def _widen(fd: int) -> None:
    """Grow a pipe to READ_SIZE where the system allows it (Linux): fewer switches for large messages."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), READ_SIZE)
    except (ImportError, OSError):
        pass
