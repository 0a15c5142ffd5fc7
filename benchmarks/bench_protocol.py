"""The whole suite against the reference adapter and against the reference over the wire protocol.

    python benchmarks/bench_protocol.py [--repeat N]

Times ``embconf run --impl reference`` (the Python adapter) and ``embconf run
--impl subprocess:'<python> -m embconf.protocol.reference_peer'`` (the same reference
behind the protocol: one more interpreter, JSON and base64 both ways) as a user
runs them, each a fresh process with start-up included, alternating, and prints
the median wall times and their ratio. The target is a ratio of at most 1.5.
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_RATIO = 1.5


def embconf_command() -> list[str]:
    """The ``embconf`` script beside this interpreter, else ``python -m embconf``."""
    script = Path(sys.executable).with_name("embconf")
    return [str(script)] if script.exists() else [sys.executable, "-m", "embconf"]


def wall_time(argv: list[str]) -> float:
    """Seconds one run takes; a run that does not pass is an error (the timing would mean nothing)."""
    started = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{shlex.join(argv)} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs of each (default 7)")
    args = parser.parse_args()
    serve = f"{shlex.quote(sys.executable)} -m embconf.protocol.reference_peer"
    runs = {
        "reference": embconf_command() + ["run", "--impl", "reference", "-q"],
        "protocol": embconf_command() + ["run", "--impl", f"subprocess:{serve}", "-q"],
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    for argv in runs.values():
        wall_time(argv)  # warm the file cache; not counted
    for _ in range(args.repeat):
        for name, argv in runs.items():
            times[name].append(wall_time(argv))
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, values in times.items():
        print(
            f"{name:<11} median {medians[name]:.3f} s  (min {min(values):.3f}, max {max(values):.3f}, {len(values)} runs)  {shlex.join(runs[name][1:])}"
        )
    ratio = medians["protocol"] / medians["reference"]
    print(
        f"ratio protocol / reference: {ratio:.2f} (target <= {TARGET_RATIO}: {'met' if ratio <= TARGET_RATIO else 'NOT met'})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
