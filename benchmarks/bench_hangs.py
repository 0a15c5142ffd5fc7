"""What a hang costs at the default settings, for the worker and for a protocol peer.

    python benchmarks/bench_hangs.py

Runs the whole suite (``embconf run``, default timeouts, a fresh process each, as a user runs it) on:
a clean implementation; one whose embedding_backward hangs on repeated ids (TinyTorch-style: every
case of one operation that has a repeated id); one that hangs on every case; and a correct one that
is slow (3 s on its largest case). The example TinyTorch student module, and the same module with a
backward that hangs on repeated ids (issue 9's 13.2-minute case). The same through the protocol: the
reference, a peer hanging on every embedding_backward, one hanging on everything. Prints seconds, the ratio to the clean run of
its kind, the outcomes, and whether the targets hold: every hanging run done in at most 60 s with
every case reported, and the slow correct run passing.
"""

from __future__ import annotations

import collections
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from embconf.reports.json_report import read as read_report  # JSON lines since report format 2

ROOT = Path(__file__).resolve().parent.parent
IMPLS, HOSTILE, PEERS = ROOT / "benchmarks" / "impls", ROOT / "tests" / "hostile", ROOT / "tests" / "peers"
TARGET_SECONDS = 60.0
PYTHON = shlex.quote(sys.executable)

RUNS = [  # (kind, label, --impl, the exit status a correct runner gives)
    ("worker", "clean", f"functions:{IMPLS / 'clean.py'}", 0),
    ("worker", "hangs on one operation", f"functions:{HOSTILE / 'hang_duplicates.py'}", 1),
    ("worker", "hangs on every case", f"functions:{HOSTILE / 'hang_always.py'}", 1),
    ("worker", "slow but correct", f"functions:{IMPLS / 'slow_correct.py'}", 0),
    (
        "tinytorch",
        "clean",
        f"tinytorch:{ROOT / 'examples' / 'tinytorch_student' / 'tinytorch' / 'core' / 'embeddings.py'}",
        0,
    ),
    ("tinytorch", "hangs on repeated ids", f"tinytorch:{IMPLS / 'tinytorch_hangs_on_repeats.py'}", 1),
    ("protocol", "clean", f"subprocess:{PYTHON} -m embconf.protocol.reference_peer", 0),
    ("protocol", "hangs on one operation", f"subprocess:{PYTHON} {shlex.quote(str(PEERS / 'hang.py'))}", 1),
    ("protocol", "hangs on every case", f"subprocess:{PYTHON} {shlex.quote(str(PEERS / 'hang_all.py'))}", 1),
]


def timed_run(impl: str, report: Path) -> tuple[float, int, dict]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "embconf", "run", "--impl", impl, "-q", "--report-json", str(report)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    return time.perf_counter() - started, done.returncode, read_report(report) if report.exists() else {}


def main() -> int:
    from embconf.corpus.fixtures import load_corpus

    total = len(load_corpus().cases)
    clean: dict[str, float] = {}
    ok = True
    with tempfile.TemporaryDirectory() as scratch:
        for number, (kind, label, impl, wanted) in enumerate(RUNS):
            seconds, code, report = timed_run(impl, Path(scratch) / f"{number}.json")
            cases = report.get("cases", [])
            counts = collections.Counter(c["outcome"] for c in cases)
            not_run = sum("not run:" in c["message"] for c in cases)
            clean.setdefault(kind, seconds)
            complete = len(cases) == total
            target = (
                complete
                and code == wanted
                and (label == "clean" or label.startswith("slow") or seconds <= TARGET_SECONDS)
            )
            ok &= target
            outcomes = ", ".join(f"{n} {o}" for o, n in sorted(counts.items()))
            print(
                f"{kind:<9} {label:<22} {seconds:7.2f} s  x{seconds / clean[kind]:6.2f} of clean  exit {code}  "
                f"{len(cases)}/{total} cases ({outcomes}; {not_run} not run)  {'ok' if target else 'TARGET NOT MET'}"
            )
    print(
        f"targets (hanging runs <= {TARGET_SECONDS:g} s with every case reported; slow correct run passes): {'met' if ok else 'NOT met'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
