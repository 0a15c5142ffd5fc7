"""The measurements themselves, run where the implementation runs (inside its worker, through
:meth:`embconf.isolation.IsolatedAdapter.apply`, so that moving the arrays there is not timed):
the timing loop, the peak extra memory of one call, and this machine's memory-copy bandwidth.

Each function takes the (unguarded) adapter first and returns plain values only."""

from __future__ import annotations

import gc
import os
import time
import tracemalloc
from typing import Any, Callable, Optional

import numpy as np

from embconf.bench.workloads import Workload
from embconf.model.contract import Adapter, Status

COPY_BYTES = 256 * 2**20  # the memcpy roof: far larger than any cache
COPY_REPEATS = 7


def time_operation(
    adapter: Adapter,
    workload: dict[str, Any],
    operation: str,
    warmup: int,
    repeats: int,
    budget: float,
    memory: bool = True,
) -> dict[str, Any]:
    """Seconds of each timed call (after ``warmup`` untimed ones; fewer than ``repeats`` once ``budget``
    seconds are spent, at least 3), then (``memory``) the peak extra memory of one more call."""
    inputs = Workload(**workload).inputs(operation)
    for _ in range(warmup):
        failed = _failure(adapter.call(operation, inputs))
        if failed:
            return {"error": failed}
    times: list[float] = []
    while len(times) < repeats and (len(times) < 3 or sum(times) < budget):
        start = time.perf_counter()
        reply = adapter.call(operation, inputs)
        times.append(time.perf_counter() - start)
        failed = _failure(reply)
        if failed:
            return {"error": failed}
        del reply
    unmeasured = {"traced_peak": None, "resident_peak": None}
    return {"times": times, **(peak_memory(adapter, operation, inputs) if memory else unmeasured)}


def peak_memory(adapter: Adapter, operation: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """The most memory one call holds beyond what was held before it (its output included), two ways:
    Python's and numpy's allocations (tracemalloc) and the process's peak resident memory (Linux: the
    high-water mark, reset first). Allocators that tracemalloc does not see (torch's) show in the second."""
    gc.collect()
    _TRIM()  # freed heap back to the system, so that an allocator reusing it still shows in the high-water mark
    before = _reset_peak_resident()
    tracemalloc.start()
    try:
        reply = adapter.call(operation, inputs)
        traced = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    resident = None if before is None else max(_peak_resident() - before, 0)
    del reply
    return {"traced_peak": traced, "resident_peak": resident}


def copy_bandwidth(adapter: Optional[Adapter], nbytes: int = COPY_BYTES, repeats: int = COPY_REPEATS) -> dict[str, Any]:
    """This machine's memory-copy bandwidth now (np.copyto of ``nbytes``): bytes read + written per second, median."""
    source = np.ones(nbytes // 4, dtype=np.float32)
    target = np.empty_like(source)
    np.copyto(target, source)  # pages touched before timing
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        np.copyto(target, source)
        times.append(time.perf_counter() - start)
    return {"bytes": 2 * source.nbytes, "times": times}


def _load_trim() -> Callable[[], Any]:
    """glibc's malloc_trim(0), or nothing where there is none."""
    try:
        import ctypes

        trim = ctypes.CDLL(None).malloc_trim
        return lambda: trim(0)
    except (OSError, AttributeError):
        return lambda: None


_TRIM = _load_trim()


def _failure(reply: Any) -> str:
    if reply.status != Status.OUTPUTS:
        return f"{reply.status}: {reply.message or reply.error_kind}"[:300]
    return ""


def _reset_peak_resident() -> Optional[int]:
    """The resident memory now, after resetting the kernel's high-water mark; None where that cannot be done."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        return _status_bytes("VmRSS")
    except (OSError, ValueError):
        return None


def own_resident() -> int:
    """This process's resident memory alone (not its children), in bytes; 0 where it cannot be read."""
    try:
        return _status_bytes("VmRSS")
    except (OSError, ValueError):
        return 0


def _peak_resident() -> int:
    return _status_bytes("VmHWM")


def _status_bytes(field: str) -> int:
    with open(f"/proc/{os.getpid()}/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise ValueError(f"no {field} in /proc/self/status")
