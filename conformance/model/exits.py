"""The exit codes of every ``embconf`` command, named once (the CLI's docstring says what each means to a caller).

``OK``: every applicable case passed (xfails allowed), or the command did what it was asked. ``FAILED``: a case
failed, errored, crashed or timed out (an xpass under ``--strict``), or a check found a problem. ``USAGE``: bad
usage, a missing implementation or a fixture problem, said in one line (any
:class:`~embconf.model.errors.UserError`). ``INTERRUPTED``: Ctrl-C. A signal that ends the run ends it with
:func:`signalled` (143 for SIGTERM), as a shell reports a process a signal ended.
"""

from __future__ import annotations

OK = 0
FAILED = 1
USAGE = 2
SIGNALLED = 128  # plus the signal's number
INTERRUPTED = SIGNALLED + 2  # SIGINT: Ctrl-C


def signalled(signum: int) -> int:
    """The exit code of a run the signal ``signum`` ended (SIGTERM: 143)."""
    return SIGNALLED + signum


def failed_if(problem: object) -> int:
    """FAILED when there is a ``problem`` (a truthy value), else OK."""
    return FAILED if problem else OK
