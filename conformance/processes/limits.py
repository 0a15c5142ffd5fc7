"""The limits the runner runs a child process under (timeouts, memory), checked, and the reply once the
run timeout has passed: shared by the worker and the protocol adapter."""

from __future__ import annotations

import math

from embconf.model.contract import Reason, Reply, Status
from embconf.model.errors import UserError

DETAIL_LIMIT = 4000  # characters of a process's output attached to a reply
RUN_TIMEOUT_MESSAGE = "run timeout: the whole run exceeded"  # how every reply after the run timeout begins
DEFAULT_RUN_TIMEOUT = 1800.0  # seconds for the whole run (--run-timeout), all --repeat runs included
DEFAULT_CASE_TIMEOUT = 10.0  # seconds per case (--case-timeout)
DEFAULT_MEMORY_LIMIT_MB = 4096  # resident memory of the implementation's processes (--memory-limit)
MAX_SECONDS = 7 * 24 * 3600.0  # the longest timeout accepted: a week
MIN_MEMORY_LIMIT_MB = 64  # below this no Python process starts (a forked worker begins at the runner's size)


class LimitError(UserError, ValueError):
    """A timeout or memory limit that cannot be used; the message is one line naming the option."""


def checked_seconds(name: str, value: float) -> float:
    """``value`` as a timeout in seconds: finite, positive and at most MAX_SECONDS; LimitError otherwise."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise LimitError(f"{name} must be a number of seconds, got {value!r}") from None
    if not (math.isfinite(seconds) and 0 < seconds <= MAX_SECONDS):
        raise LimitError(f"{name} must be more than 0 and at most {MAX_SECONDS:g} seconds (a week), got {value!r}")
    return seconds


def checked_memory_mb(name: str, value: int) -> int:
    """``value`` as a memory limit in MB: 0 (none) or at least MIN_MEMORY_LIMIT_MB; LimitError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise LimitError(f"{name} must be a whole number of MB (0 for no limit), got {value!r}")
    if 0 < value < MIN_MEMORY_LIMIT_MB:
        raise LimitError(
            f"{name} {value} MB is too low to start a Python process (at least {MIN_MEMORY_LIMIT_MB} MB; 0 for no limit)"
        )
    return value


def run_timeout_reply(run_timeout: float, detail: str = "") -> Reply:
    """The reply to every call once the run timeout has passed (worker and protocol peers alike)."""
    return Reply(
        Status.STOPPED, reason=Reason.RUN_TIMEOUT, message=f"{RUN_TIMEOUT_MESSAGE} {run_timeout:g} s", detail=detail
    )
