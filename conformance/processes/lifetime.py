"""No process outlives the run: SIGTERM ends a run as Ctrl-C does, and whatever is left below the
runner at its end is killed.

Within :func:`ending_descendants` the runner is a child subreaper (Linux), so a process that escapes
its worker or peer (a daemon whose parent died) is re-parented to the runner instead of init; on the
way out every process still below the runner is killed and reaped. SIGTERM (what ``timeout`` and CI
cancellation send) and SIGHUP raise :class:`Terminated` in the main thread, so the same clean-up runs
as for Ctrl-C; the exit status is 128 + the signal number (143 for SIGTERM).
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Any, Iterator, NoReturn

from embconf.model.exits import signalled
from embconf.processes.tree import end_descendants, keep_descendants, reap_orphans

ENDING_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class Terminated(KeyboardInterrupt):
    """The runner was told to end by a signal; ``code`` is the exit status to end with."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.code = signalled(signum)


def _raise(signum: int, frame: Any) -> None:
    for ending in ENDING_SIGNALS:  # once is enough: the clean-up that follows must not be cut short
        signal.signal(ending, signal.SIG_IGN)
    raise Terminated(signum)


@contextmanager
def terminating_cleanly() -> Iterator[None]:
    """Within: SIGTERM and SIGHUP raise Terminated (only in the main thread; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _raise) for sig in ENDING_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def ending_descendants() -> Iterator[None]:
    """Within: SIGTERM ends cleanly (:func:`terminating_cleanly`) and orphans come to this process; on
    leaving, every process below this one is killed and reaped."""
    keep_descendants(die_with_parent=False)
    try:
        with terminating_cleanly():
            yield
    finally:
        end_descendants(os.getpid())
        reap_orphans()


def exit_now(code: int) -> NoReturn:
    """End the command-line process with ``code``: what ``atexit`` registered runs and the standard streams
    are flushed, but the interpreter's teardown is skipped (freeing every module of a process about to end
    costs tens of milliseconds once NumPy is loaded: a quarter of a short run's own work)."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # the reader went away, or the stream is closed: nothing more to say
            pass
    os._exit(code)
