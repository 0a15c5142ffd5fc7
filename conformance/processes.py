"""What the runner says about a child process it ran: shared by the worker and the protocol adapter."""
from __future__ import annotations

import signal
from typing import Optional

DETAIL_LIMIT = 4000  # characters of a process's output attached to a reply


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
