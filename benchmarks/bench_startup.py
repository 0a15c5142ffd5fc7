"""Start-up cost of isolation: a full run against the reference, isolated and in-process, against a bare import.

Each command runs in a fresh interpreter (start-up included), the three in turn, several rounds, so
that a change of machine load affects them alike; the median wall time of each is reported with its
ratio to ``python -c "import numpy, yaml, jsonschema"``. Target (issue 6): the isolated full run takes
at most 3x the bare import.

    python benchmarks/bench_startup.py [--reps 9]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

TARGET = 3.0
BARE, ISOLATED, IN_PROCESS = (
    "bare import (numpy, yaml, jsonschema)",
    "embconf run --impl reference (isolated)",
    "embconf run --impl reference --in-process",
)
COMMANDS: dict[str, list[str]] = {
    BARE: ["-c", "import numpy, yaml, jsonschema"],
    ISOLATED: ["-m", "embconf", "run", "--impl", "reference", "-q"],
    IN_PROCESS: ["-m", "embconf", "run", "--impl", "reference", "-q", "--in-process"],
}


def wall_time(args: list[str]) -> float:
    """Seconds for one run of ``python ARGS``; a non-zero exit is an error."""
    started = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def median_times(reps: int) -> dict[str, float]:
    """The median wall time of each command over ``reps`` interleaved rounds (after one warm-up round)."""
    times: dict[str, list[float]] = {label: [] for label in COMMANDS}
    for round_number in range(reps + 1):
        for label, args in COMMANDS.items():
            seconds = wall_time(args)
            if round_number:
                times[label].append(seconds)
    return {label: statistics.median(values) for label, values in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9, help="rounds (default 9)")
    times = median_times(parser.parse_args().reps)
    for label, seconds in times.items():
        print(f"{label:<45} {seconds * 1000:8.0f} ms  {seconds / times[BARE]:5.2f}x")
    ratio = times[ISOLATED] / times[BARE]
    print(f"isolated / in-process: {times[ISOLATED] / times[IN_PROCESS]:.2f}x")
    print(
        f"target: isolated full run <= {TARGET:g}x the bare import: {'met' if ratio <= TARGET else 'MISSED'} ({ratio:.2f}x)"
    )
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
