"""How and under which limits an implementation runs (:class:`IsolationOptions`), from the command line's
limit options (:func:`isolation_options`; they are registered by :mod:`embconf.processes.options`)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Optional

from embconf.processes.limits import (
    DEFAULT_CASE_TIMEOUT,
    DEFAULT_MEMORY_LIMIT_MB,
    DEFAULT_RUN_TIMEOUT,
    checked_memory_mb,
    checked_seconds,
)


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


def isolation_options(args: argparse.Namespace, case_timeout: Optional[float] = None) -> IsolationOptions:
    """The options the flags give; LimitError (a UserError: one line, exit 2) for unusable values."""
    chosen = args.case_timeout if case_timeout is None else case_timeout
    return IsolationOptions(
        args.in_process, DEFAULT_CASE_TIMEOUT if chosen is None else chosen, args.run_timeout, args.memory_limit
    )
