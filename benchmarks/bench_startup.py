"""Start-up and protocol cost: a full run against the reference, isolated, in-process and over the wire
protocol, against a bare ``import numpy, yaml, jsonschema``, measured side by side.

Each command runs in a fresh interpreter (start-up included), all in turn, several rounds, so that a change
of machine load affects them alike; the median wall time of each is reported (with its fastest and slowest
round, to show how steady the machine was) with its ratio to the bare import. Targets (issue 20): the full
run (``embconf run --impl reference``, isolated as by default) takes at most 2x the bare import, and the same
run over the protocol at most 1.2x the in-process run.

The children run with Python's bytecode cache on, as an installed suite does (pip compiles a wheel's modules;
an editable install writes them on first import): ``PYTHONDONTWRITEBYTECODE`` is removed from their
environment, and an untimed first round writes the cache.

    python benchmarks/bench_startup.py [--reps 9]
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time

STARTUP_TARGET, PROTOCOL_TARGET = 2.0, 1.2
BARE, ISOLATED, IN_PROCESS, PROTOCOL = (
    "bare import (numpy, yaml, jsonschema)",
    "embconf run --impl reference (isolated)",
    "embconf run --impl reference --in-process",
    "embconf run --impl subprocess:reference_peer",
)
PEER = f"{shlex.quote(sys.executable)} -m embconf.protocol.reference_peer"
COMMANDS: dict[str, list[str]] = {
    BARE: ["-c", "import numpy, yaml, jsonschema"],
    ISOLATED: ["-m", "embconf", "run", "--impl", "reference", "-q"],
    IN_PROCESS: ["-m", "embconf", "run", "--impl", "reference", "-q", "--in-process"],
    PROTOCOL: ["-m", "embconf", "run", "--impl", f"subprocess:{PEER}", "-q"],
}
ENVIRONMENT = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def wall_time(args: list[str]) -> float:
    """Seconds for one run of ``python ARGS``; a non-zero exit is an error (the timing would mean nothing)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENVIRONMENT)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"python {shlex.join(args)} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return elapsed


def wall_times(reps: int) -> dict[str, list[float]]:
    """The wall times of each command over ``reps`` interleaved rounds (after one warm-up round)."""
    times: dict[str, list[float]] = {label: [] for label in COMMANDS}
    for round_number in range(reps + 1):
        for label, args in COMMANDS.items():
            seconds = wall_time(args)
            if round_number:
                times[label].append(seconds)
    return times


def verdict(name: str, ratio: float, target: float) -> str:
    return f"target: {name} <= {target:g}x: {'met' if ratio <= target else 'MISSED'} ({ratio:.2f}x)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9, help="rounds (default 9)")
    rounds = wall_times(parser.parse_args().reps)
    times = {label: statistics.median(values) for label, values in rounds.items()}
    for label, seconds in times.items():
        spread = f"(fastest {min(rounds[label]) * 1000:.0f}, slowest {max(rounds[label]) * 1000:.0f})"
        print(f"{label:<45} {seconds * 1000:6.0f} ms {spread:<24} {seconds / times[BARE]:5.2f}x the bare import")
    startup = times[ISOLATED] / times[BARE]
    protocol = times[PROTOCOL] / times[IN_PROCESS]
    print(f"isolated / in-process: {times[ISOLATED] / times[IN_PROCESS]:.2f}x")
    print(f"protocol / isolated: {times[PROTOCOL] / times[ISOLATED]:.2f}x")
    print(verdict("full run (isolated) / bare import", startup, STARTUP_TARGET))
    print(verdict("protocol / in-process", protocol, PROTOCOL_TARGET))
    return 0 if startup <= STARTUP_TARGET and protocol <= PROTOCOL_TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
