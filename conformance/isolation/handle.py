"""The runner's handle on one running worker: its channel, its captured output, and how to end it."""

from __future__ import annotations

import os
import select
import selectors
import signal
import struct
import time
from typing import Any, Optional

from embconf.isolation.channel import _Captured, _Channel, load_reply
from embconf.processes.ending import await_exit, describe_exit, kill_tree, reap_within
from embconf.processes.failures import Garbled, Gone, Late, OutOfMemory
from embconf.processes.tree import MEMORY_POLL, MemoryWatch, end_descendants

STOP_GRACE = 1.0  # seconds a worker gets to exit before it is killed
MAX_REPLY_BYTES = 512 * 2**20


class WorkerHandle:
    """A running worker: its channel, its captured output, and how to end it."""

    def __init__(
        self,
        pid: int,
        channel: _Channel,
        output: _Captured,
        process: Any = None,
        memory_limit_mb: int = 0,
        arena: Any = None,  # the shared input memory of a forked worker (embconf.isolation.shared.Arena)
    ) -> None:
        self.pid, self.channel, self.output, self.process = pid, channel, output, process
        self.arena = arena
        self.start_cwd = os.getcwd()  # a worker starts where the runner is (until it has loaded: loaded())
        self.memory = MemoryWatch(pid, memory_limit_mb, "the worker")
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
            raise Gone() from None

    def receive(self, deadline: float) -> Any:
        """The worker's next message, draining its output meanwhile; Late after ``deadline``, Gone if it
        died, OutOfMemory when its process tree holds more resident memory than the limit, Garbled
        when its reply cannot be read."""
        while True:
            now = time.monotonic()
            over = self.memory.exceeded(now)
            if over:
                raise OutOfMemory(over)
            remaining = deadline - now
            if remaining <= 0:
                raise Late()
            for key, _ in self.selector.select(min(remaining, MEMORY_POLL) if self.memory.active else remaining):
                if key.fileobj is self.channel.sock:
                    return self._read(deadline)
                self.output.drain()
                if not self.output.open:
                    self.selector.unregister(key.fileobj)

    def has_message(self) -> bool:
        """Whether the worker's next message has begun to arrive (reading it waits only for the rest of it)."""
        return bool(select.select([self.channel.sock], [], [], 0)[0])

    def _read(self, deadline: float) -> Any:
        self.channel.sock.settimeout(max(deadline - time.monotonic(), 0.001))  # a half-sent reply cannot hang the run
        try:
            data, buffers = self.channel.receive(MAX_REPLY_BYTES)
        except TimeoutError:
            raise Late() from None
        except (EOFError, OSError):
            raise Gone() from None
        except (ValueError, struct.error) as exc:
            raise Garbled(str(exc)) from None
        return load_reply(data, buffers)

    def stop(self) -> None:
        """End what the worker started, ask it to exit, kill it if it does not, and release everything."""
        if self.exitcode is None:
            end_descendants(self.pid)
        try:
            self.send(("stop",))
        except Gone:
            pass
        self.end(kill=False)
        self.close()

    def end(self, kill: bool) -> str:
        """Reap the process (killed at once if ``kill``, else after STOP_GRACE); how it ended, in words."""
        if kill:
            self._kill()
        return describe_exit(reap_within(STOP_GRACE, self._wait, self._kill))

    def loaded(self) -> None:
        """The worker has loaded the implementation: its working directory now (where the import may have
        moved it, which no rule forbids) is the one its calls must leave as they found it."""
        self.start_cwd = self._kernel_cwd() or self.start_cwd

    def cwd_change(self) -> str:
        """How the worker's working directory differs from where it was once loaded, as the kernel tells the
        runner (``/proc/PID/cwd``, which no code in the worker can forge); '' when the same or unknown."""
        now = self._kernel_cwd()
        return "" if not now or now == self.start_cwd else f"from {self.start_cwd!r} to {now!r}"

    def _kernel_cwd(self) -> str:
        """The worker's working directory as the kernel tells it; '' where there is no /proc or no worker."""
        try:
            return os.readlink(f"/proc/{self.pid}/cwd")
        except OSError:
            return ""

    def close(self) -> None:
        self.selector.close()
        self.channel.close()
        self.output.close()
        if self.arena is not None:
            self.arena.close()

    def _kill(self) -> None:
        """Kill the worker's whole tree (not once it has been reaped: its pid may be another's by then)."""
        if self.exitcode is not None:
            return
        if self.process is not None:
            kill_tree(self.pid, self.process.kill, group=False)
        else:  # a forked worker leads its own session: its group holds its children too
            kill_tree(self.pid, self._signal_kill, group=True)

    def _signal_kill(self) -> None:
        """SIGKILL the forked worker itself (not yet reaped, so its pid is still its own)."""
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
        await_exit(self.pid, timeout)  # woken as it exits (Linux); the loop below then reaps it at once
        pause = 0.0002  # a worker told to stop is gone in well under a millisecond
        while True:
            pid, status = os.waitpid(self.pid, 0 if end is None else os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            if end is not None and time.monotonic() >= end:
                return None
            time.sleep(pause)
            pause = min(2 * pause, 0.01)
