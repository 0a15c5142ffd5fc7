"""A protocol peer started first thing, before the runner imports NumPy and its run pipeline, so that the
peer's own start (an interpreter, a framework) runs beside the runner's instead of after it.

``embconf run --impl subprocess:...`` calls :func:`start_early`; the
:class:`~embconf.protocol.adapter.SubprocessAdapter` of the same command line takes the process over as its
first (:func:`adopt`) and sends it the start request then. A process never taken over ends with the runner
(:func:`embconf.processes.lifetime.ending_descendants`). Nothing here imports more than the standard library
and the process helpers, and those only for a protocol peer.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Optional

from embconf.model.impl import Impl

if TYPE_CHECKING:
    from embconf.protocol.peer import Popen

_started: dict[tuple[str, ...], Popen] = {}


def start_early(impl: Impl) -> None:
    """Start the program ``impl`` names when it is ``subprocess:COMMAND``; a command that cannot be split or
    started is left to the adapter, which reports why."""
    kind, command = impl
    if kind != "subprocess":
        return  # nothing to start, nor to import (subprocess and the process helpers: 4 ms of a run's start)
    from embconf.protocol.peer import launch

    try:
        argv = tuple(shlex.split(command))
        if argv and argv not in _started:
            _started[argv] = launch(list(argv))
    except (ValueError, OSError):
        return


def adopt(argv: list[str]) -> Optional[Popen]:
    """The process started early for ``argv``, still running, for its adapter to take over (once), or None."""
    popen = _started.pop(tuple(argv), None)
    if popen is not None and popen.poll() is not None:  # it has ended already: the adapter starts it anew
        popen.wait()
        return None
    return popen
