"""The process tree below a child the runner started (a worker or a protocol peer): who is in it, how
much memory it holds, and ending all of it.

On Linux the tree is read from /proc by parent id. A worker and a peer are made child subreapers
(``PR_SET_CHILD_SUBREAPER``), so a grandchild that daemonises (double fork, ``setsid``) is re-parented
to them, not to init, and stays in the tree; they also die with the runner (``PR_SET_PDEATHSIG``).
Elsewhere the tree is the child alone (its process group is still killed). :class:`MemoryWatch`
holds a tree's resident memory to a limit.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Callable, Optional

PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
HAS_PROC = os.path.isdir("/proc/self")
END_ROUNDS = 50  # sweeps of SIGKILL over a tree that keeps forking


def _load_prctl() -> Optional[Callable[..., int]]:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()  # resolved before any fork: a child calls it without importing anything


def keep_descendants(die_with_parent: bool = True) -> None:
    """In a child: adopt orphaned descendants (subreaper) and, optionally, die when the parent dies."""
    if _PRCTL is None:
        return
    _PRCTL(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    if die_with_parent:
        dies_with_parent()


_FORKER: Optional[int] = None  # in a forked child: the process that forked it (set just before the fork)


def forking() -> None:
    """Just before ``os.fork``: remember who forks, so the child can tell it was orphaned (:func:`orphaned`)."""
    global _FORKER
    _FORKER = os.getpid()


def orphaned() -> bool:
    """In a forked child: whether the process that forked it died before the child could die with it (it was
    handed to an ancestor: the runner, which a submission must never reach)."""
    return _FORKER is not None and os.getppid() != _FORKER


def dies_with_parent() -> None:
    """In a child: SIGKILL when the parent (the thread that started it) ends (Linux; elsewhere nothing)."""
    if _PRCTL is not None:
        _PRCTL(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)


def _table() -> dict[int, tuple[int, str, int]]:
    """pid -> (parent pid, state letter, resident pages) of every process visible in /proc."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:  # os.open and one read, no file object: the runner reads every process's stat 10 times a second
            descriptor = os.open(f"/proc/{name}/stat", os.O_RDONLY)
        except OSError:
            continue
        try:
            stat = os.read(descriptor, 4096)  # its fields fit: a name of at most 64 bytes and 52 numbers
        except OSError:
            continue
        finally:
            os.close(descriptor)
        fields = stat[stat.rfind(b")") + 2 :].split()
        try:
            table[int(name)] = (int(fields[1]), fields[0].decode(), int(fields[21]))
        except (IndexError, ValueError):
            continue
    return table


def _below(root: int, table: dict[int, tuple[int, str, int]]) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def descendants(root: int) -> list[int]:
    """The living (not zombie) processes below ``root``."""
    if not HAS_PROC:
        return []
    table = _table()
    return [pid for pid in _below(root, table) if table[pid][1] not in "ZX"]


def resident_bytes(root: int) -> int:
    """Resident memory of ``root`` and every process below it, in bytes (0 where /proc is missing)."""
    if not HAS_PROC:
        return 0
    table = _table()
    return PAGE * sum(table[pid][2] for pid in [root, *_below(root, table)] if pid in table)


def end_descendants(root: int) -> None:
    """SIGKILL every process below ``root`` (not ``root`` itself), sweeping again while new ones appear."""
    for _ in range(END_ROUNDS):
        living = descendants(root)
        if not living:
            return
        for pid in living:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def reap_orphans() -> None:
    """Collect the exit status of any child re-parented to this process (a subreaper); never blocks."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except (ChildProcessError, OSError):
            return
        if pid == 0:
            return


MEMORY_POLL = 0.1  # seconds between two measurements of a tree's resident memory while the runner waits


class MemoryWatch:
    """The resident memory of a process tree held to a limit: :meth:`exceeded` measures (at most every
    MEMORY_POLL seconds) and says, in words, when the tree holds more than ``limit_mb``."""

    def __init__(self, root: int, limit_mb: int, who: str) -> None:
        self.root, self.limit_mb, self.who = root, limit_mb, who
        self._next = 0.0

    @property
    def active(self) -> bool:
        return self.limit_mb > 0 and HAS_PROC

    def exceeded(self, now: float) -> Optional[str]:
        if not self.active or now < self._next:
            return None
        self._next = now + MEMORY_POLL
        held = resident_bytes(self.root)
        if held <= self.limit_mb * 2**20:
            return None
        return (
            f"ran out of memory (the limit is {self.limit_mb} MB): {self.who} and its children held "
            f"{held / 2**20:.0f} MB resident (the process tree was killed)"
        )
