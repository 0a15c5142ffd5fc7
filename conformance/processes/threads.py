"""One BLAS thread a process: what the command sets before NumPy loads, unless the environment says otherwise.

NumPy's bundled OpenBLAS starts a thread per core when it loads, and those threads busy-wait for work for a
while after it (about 70 ms of CPU each, measured on a 2-core machine). A run holds two or three processes
that load NumPy (the runner, its worker or a protocol peer, and graders run several), so on a small machine
they spin on the cores the others need: the protocol path ran about 10% slower for it (benchmarks/bench_startup.py).
Nothing the suite runs needs a parallel BLAS: an embedding's gather, scatter-add and tables make no BLAS call.
Processes the runner starts inherit the setting through the environment; a count the user set (for OpenBLAS,
or through OMP_NUM_THREADS, which OpenBLAS also reads) is left as it is.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

# What OpenBLAS reads for its thread count, in its own order of preference.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def one_blas_thread(environment: MutableMapping[str, str] = os.environ) -> None:
    """Set OPENBLAS_NUM_THREADS=1 in ``environment`` unless a thread count for OpenBLAS is set there already;
    call it before NumPy is imported (it is read once, when NumPy loads)."""
    if not any(environment.get(name) for name in BLAS_THREAD_VARIABLES):
        environment["OPENBLAS_NUM_THREADS"] = "1"
