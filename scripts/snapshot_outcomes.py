"""A behaviour snapshot for refactors: every case outcome (and the run's named causes) of a fixed set of
implementations, taken through the command line only, so it reads the same before and after a move.

    python scripts/snapshot_outcomes.py OUT.json [--jobs 2] [--only GLOB]
    python scripts/snapshot_outcomes.py --compare BEFORE.json AFTER.json

Outcomes must be identical on the cases both snapshots ran; the cases only the later one ran (a MINOR spec version
adds cases) are tallied by outcome; causes are compared and their differences listed (a deliberate fix may change
them).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from embconf.reports.json_report import read as read_report  # JSON lines since report format 2

ROOT = Path(__file__).resolve().parent.parent
FRAMEWORKS = ["torch", "flax", "keras", "tinygrad", "transformers:marian"]


def implementations() -> list[str]:
    impls = ["reference", f"tinytorch:{ROOT / 'examples/tinytorch_student/tinytorch/core/embeddings.py'}", *FRAMEWORKS]
    impls += [f"tinytorch:{p}" for p in sorted((ROOT / "tests/students").glob("[a-z]*.py"))]
    impls += [f"functions:{p}" for p in sorted((ROOT / "tests/impls").glob("[a-z]*.py")) if "tinytorch" not in p.name]
    impls += [f"tinytorch:{ROOT / 'tests/impls/tinytorch_older_api.py'}"]
    listing = subprocess.run(
        [sys.executable, "-m", "embconf", "mutants"], capture_output=True, text=True, cwd=ROOT
    ).stdout
    impls += [
        f"mutant:{line.split()[0]}" for line in listing.splitlines() if line[:1].islower() and "." in line.split()[0]
    ]
    return impls


def snapshot(impl: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "r.json"
        done = subprocess.run(
            [sys.executable, "-m", "embconf", "run", "--impl", impl, "-q", "--report-json", str(report)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=1200,
        )
        if not report.exists():
            return {"exit": done.returncode, "error": done.stderr.strip()[-300:]}
        data = read_report(report)
    return {
        "exit": done.returncode,
        "outcomes": {c["id"]: c["outcome"] for c in data["cases"]},
        "first_cause": {c["id"]: _cause(c["diagnosis"][0]) for c in data["cases"] if c.get("diagnosis")},
        "verdict": [m["id"] for m in data.get("verdict", {}).get("mistakes", [])],
    }


def _cause(entry: dict) -> str:
    return entry.get("mutant") or ("symptom:" + entry["symptom"] if "symptom" in entry else entry.get("id", "?"))


def _relative(found: dict) -> dict:
    """Keys without the checkout's own path, so two checkouts compare."""
    return {re.sub(r"^(\w+):/.*?/(tests|examples)/", r"\1\2/", impl): value for impl, value in found.items()}


def compare(before: dict, after: dict) -> int:
    before, after = _relative(before), _relative(after)
    bad, new = 0, {}
    for impl in sorted(set(before) | set(after)):
        a, b = before.get(impl), after.get(impl)
        if a is None or b is None:
            print(f"ONLY IN {'after' if a is None else 'before'}: {impl}")
            continue
        then, now = a.get("outcomes", {}), b.get("outcomes", {})
        added = {k: now[k] for k in set(now) - set(then)}  # cases a MINOR spec version added
        if added:
            new[impl] = added
        if (
            any(then[k] != now[k] for k in set(then) & set(now))
            or set(then) - set(now)
            or a.get("exit") != b.get("exit")
        ):
            bad += 1
            diff = {
                k: (then.get(k), now.get(k)) for k in set(then) | set(now) - set(added) if then.get(k) != now.get(k)
            }
            print(
                f"OUTCOMES DIFFER {impl}: exit {a.get('exit')} -> {b.get('exit')}; {sorted(diff.items())[:8]} {a.get('error', '')} {b.get('error', '')}"
            )
        elif a.get("first_cause") != b.get("first_cause") or a.get("verdict") != b.get("verdict"):
            print(f"causes differ {impl}: verdict {a.get('verdict')} -> {b.get('verdict')}")
    tally = Counter(outcome for found in new.values() for outcome in found.values())
    ids = sorted({k for found in new.values() for k in found})
    print(f"{len(ids)} cases only after, their outcomes over every implementation: {dict(tally)}")
    print(f"{len(before)} before, {len(after)} after, {bad} with different outcomes on the cases both ran")
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", nargs="?")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", default="*")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        return compare(*(json.loads(Path(p).read_text()) for p in args.compare))
    impls = [i for i in implementations() if fnmatch.fnmatch(i, args.only)]
    print(f"{len(impls)} implementations", file=sys.stderr)
    with ThreadPoolExecutor(args.jobs) as pool:
        found = dict(zip(impls, pool.map(snapshot, impls)))
    Path(args.out).write_text(json.dumps(found, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
