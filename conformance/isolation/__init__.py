"""Running an implementation in a child worker process, so that a hang, a crash, a memory blow-up, an
output flood or a change of global state costs one case, never the run.

One worker serves the whole run and is replaced only after it dies, is killed or is spoilt. Where
the platform has ``fork`` the worker is forked from the runner after numpy and embconf are imported,
so it starts at once; elsewhere it is a fresh interpreter (multiprocessing ``spawn``). The worker:

- loads the implementation itself (``create_adapter``); a failure to load comes back as one
  :class:`~embconf.adapters.ImplementationError` line;
- runs every call through :class:`~embconf.adapters.guard.GuardedAdapter` (copies in, mutation and view checks);
  a forked worker gets its input arrays on memory it shares with the runner, which compares them with
  its own originals after each reply, and the runner reads the worker's working directory from
  ``/proc``: code that switches the worker's own checks off cannot hide a changed input or directory;
- is held to a memory limit on what it really uses: the runner sums the resident memory of the worker
  and everything below it (:mod:`embconf.processes.tree`) while it waits, and kills the tree over the limit;
  its address space is capped far higher (``RLIMIT_AS`` at the limit + 8 GiB), a backstop against an
  allocation too fast to measure, so JAX's and TensorFlow's unused reservations do not count;
- is a child subreaper that dies with the runner, so what it starts (daemons too) ends with it;
- has stdin from /dev/null, and its stdout and stderr (the file descriptors, so C code too)
  captured; the runner keeps only the tail;
- checks after each call that the working directory, Python's recursion limit, numpy's error handling and print options are
  as it found them once the implementation was loaded (what its import set is the baseline; else the case is an
  ``error`` and the worker is replaced), and restores the legacy global random state (TinyTorch layers draw their initial weights from it, legitimately).

Messages are pickles over a socket pair, arrays out of band (no copies but the kernel's). When the
caller announces its next calls (``plan``; :func:`embconf.session.plan` does), they go to the worker in batches and
their replies stream back one by one: each call keeps its own timeout and outcome, and a worker lost
mid-batch costs only the call it was on (the rest are sent again). The runner reads replies as they arrive
and makes the next batch ready while the worker computes, and sends it the moment the last reply of a batch
is read, so the worker never waits for the runner's judging. The runner sends operations and
inputs only, never expected values, with the rows of each output it judges where a golden pins some rows of a
larger result (a sinusoid table of 32768 positions): the worker sends back those rows alone
(:class:`~embconf.model.encoding.PinnedRows`), checked on arrival to be exactly the rows asked for, and a
case that fails is run again for its whole output (:func:`embconf.session.plan`). Replies are unpickled with an
allow-list of classes, so a reply cannot make the runner import the implementation's modules.

When the planned cases need a dtype whose library is slow to import (bfloat16: ml_dtypes), the runner first
sends ``prepare`` (:meth:`IsolatedAdapter.prepare`): the worker imports it before the first call, and the
runner when it first makes such an array, while it waits for the worker; only a run that has such cases does.

One more request, ``apply`` (:meth:`IsolatedAdapter.apply`), runs one of the runner's own functions
(pickled by name) on the worker's unguarded adapter: ``embconf bench`` times calls there, so that moving
the arrays to the worker is not timed; the worker's memory limit and the timeout still hold.

The package, one job a module:

- :mod:`.options`: :class:`IsolationOptions`, and reading them from the command line's limit options;
- :mod:`.adapter`: the runner's side: :func:`open_adapter` and
  :class:`IsolatedAdapter` (plan and batches, timeouts, replacing a lost worker);
- :mod:`.answers`: what the runner makes of a worker's messages and last output (a reply's rows checked, a
  directory that moved, why a worker failed, in words);
- :mod:`.hangs`: the hang policy (:func:`with_hang_policy`: the wrapper implementing the Protocols of what it
  wraps), which wraps the worker and protocol peers alike;
- :mod:`.handle`: :class:`WorkerHandle`, the runner's handle on one running worker (send, receive by a deadline,
  stop, kill, reap);
- :mod:`.shared`: the input arrays on memory shared with a forked worker, compared by the runner;
- :mod:`.channel`: what crosses between the two: the socket channel, the captured output, and the
  allow-list that replies are unpickled with (:func:`load_reply`, :func:`sendable`, :class:`Unsendable`);
- :mod:`.worker`: the worker's side: starting it (fork or spawn), confining it, loading the
  implementation, serving calls and checking the global state (:class:`GlobalState`).
"""

from __future__ import annotations

from embconf.isolation.adapter import (
    BATCH,
    DEFAULT_CASE_TIMEOUT,
    DEFAULT_MEMORY_LIMIT_MB,
    DEFAULT_RUN_TIMEOUT,
    OUT_OF_PROCESS,
    START_TIMEOUT,
    IsolatedAdapter,
    Planned,
    default_start_method,
    open_adapter,
)
from embconf.isolation.channel import Unsendable, load_reply, sendable
from embconf.isolation.hangs import HangPolicy
from embconf.isolation.options import IsolationOptions, isolation_options
from embconf.isolation.worker import GlobalState, Output, worker_main

__all__ = [
    "BATCH",
    "DEFAULT_CASE_TIMEOUT",
    "DEFAULT_MEMORY_LIMIT_MB",
    "DEFAULT_RUN_TIMEOUT",
    "OUT_OF_PROCESS",
    "START_TIMEOUT",
    "GlobalState",
    "HangPolicy",
    "IsolatedAdapter",
    "IsolationOptions",
    "Output",
    "Planned",
    "Unsendable",
    "default_start_method",
    "load_reply",
    "isolation_options",
    "open_adapter",
    "sendable",
    "worker_main",
]
