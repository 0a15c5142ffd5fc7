"""Ending a child process the runner started (a worker or a protocol peer): killing its whole tree,
giving it a grace to exit before that, and saying in words how it ended."""

from __future__ import annotations

import os
import select
import signal
from typing import Callable, Optional

from embconf.processes.tree import end_descendants


def kill_tree(pid: int, kill_child: Callable[[], None], group: bool) -> None:
    """SIGKILL the child ``pid`` and everything it started: its descendants first (once the child is gone
    its orphans would leave its tree), then the child (``kill_child``: its own handle's kill, which knows
    whether it has been reaped), then, if ``group``, the process group it leads (its own session's)."""
    end_descendants(pid)
    kill_child()
    if group:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:  # the group is already gone
            pass


def await_exit(pid: int, timeout: Optional[float]) -> None:
    """Wait until the child ``pid`` exits or ``timeout`` seconds pass, woken the moment it exits where Linux
    offers a process descriptor (``pidfd_open``); elsewhere return at once (the caller's own wait polls).
    It does not reap the child."""
    if timeout is None or not hasattr(os, "pidfd_open"):
        return
    try:
        descriptor = os.pidfd_open(pid)
    except OSError:  # gone already, or no pidfd in this kernel
        return
    try:
        select.select([descriptor], [], [], max(timeout, 0.0))
    finally:
        os.close(descriptor)


def reap_within(
    grace: float, wait: Callable[[Optional[float]], Optional[int]], kill: Callable[[], None]
) -> Optional[int]:
    """The exit code of a child told to stop: ``wait`` (seconds, None: for ever; None while it runs) gives
    it ``grace`` seconds, then it is killed (``kill``) and reaped."""
    code = wait(grace)
    if code is None:
        kill()
        code = wait(None)
    return code


def describe_exit(code: Optional[int]) -> str:
    """'exited with code 3', 'was killed by SIGSEGV (Segmentation fault)', from a returncode-style code."""
    if code is None:
        return "did not exit"
    if code >= 0:
        return f"exited with code {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    meaning = signal.strsignal(-code) if hasattr(signal, "strsignal") else None
    return f"was killed by {name}" + (f" ({meaning})" if meaning else "")
