"""How and under which limits an implementation runs (:class:`IsolationOptions`), from the command line's
limit options as typed values (:func:`isolation_options`; they are registered and read by
:mod:`embconf.processes.options`)."""

from __future__ import annotations

from dataclasses import dataclass

from embconf.processes.limits import (
    DEFAULT_CASE_TIMEOUT,
    DEFAULT_MEMORY_LIMIT_MB,
    DEFAULT_RUN_TIMEOUT,
    checked_memory_mb,
    checked_seconds,
)
from embconf.processes.options import Limits


@dataclass(frozen=True)
class IsolationOptions:
    """How to run in-process implementations: in a worker (the default) and with which limits."""

    in_process: bool = False
    case_timeout: float = DEFAULT_CASE_TIMEOUT
    run_timeout: float = DEFAULT_RUN_TIMEOUT
    memory_limit_mb: int = DEFAULT_MEMORY_LIMIT_MB  # 0: no limit

    def __post_init__(self) -> None:
        """LimitError (one line) for a timeout or memory limit that cannot be used."""
        checked_seconds("--case-timeout", self.case_timeout)
        checked_seconds("--run-timeout", self.run_timeout)
        checked_memory_mb("--memory-limit", self.memory_limit_mb)


DEFAULTS = IsolationOptions()  # in a worker, at the default limits


def isolation_options(limits: Limits) -> IsolationOptions:
    """The options the limits give; LimitError (a UserError: one line, exit 2) for unusable values."""
    chosen = DEFAULT_CASE_TIMEOUT if limits.case_timeout is None else limits.case_timeout
    return IsolationOptions(limits.in_process, chosen, limits.run_timeout, limits.memory_limit)
