"""Start-up and full-run cost of `embconf run --impl reference` against a bare import of its dependencies.

Run: python benchmarks/bench_run.py [--reps N]. Prints the median wall times, measured side by
side in this one run as fresh processes (start-up included), and their ratio; the target is <= 3x.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

TARGET = 3.0


def wall(command: list[str], reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    bare = [sys.executable, "-c", "import numpy, yaml, jsonschema"]
    run = [sys.executable, "-m", "embconf", "run", "--impl", "reference", "-q"]
    wall(run, 1)  # warm the file cache
    t_bare, t_run = wall(bare, args.reps), wall(run, args.reps)
    ratio = t_run / t_bare
    print(f"bare import numpy+yaml+jsonschema: {t_bare:.3f} s (median of {args.reps})")
    print(f"embconf run --impl reference:      {t_run:.3f} s")
    print(f"ratio: {ratio:.2f}x (target <= {TARGET:g}x) {'OK' if ratio <= TARGET else 'OVER TARGET'}")


if __name__ == "__main__":
    main()
