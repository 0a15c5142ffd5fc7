"""Grading a class: ``embconf grade`` over N generated submissions against N sequential ``embconf run``s.

The submissions are made from the example student: package folders, single modules, percent-format
and Jupyter notebooks, correct ones and ones with a realistic mistake (overwrite, sin/cos swapped,
exponent sign, start_pos ignored, a syntax error). Both sides run every case (a rubric whose one item
takes every case), on the same submissions, in one run of this script: first ``embconf grade --jobs J
--force`` (one command), then ``embconf run --impl tinytorch:...`` once per submission, one after the
other, on the same submissions staged as packages beforehand (staging is not timed). The load
average before and after is printed, since the machine may be shared. Target (issue 43): 1000
submissions graded in at most 3 minutes on 2 cores, extrapolated from the --count graded (default 200).

    python benchmarks/bench_grade.py [--count 200] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "grading"))
import grading_samples as samples  # noqa: E402

from embconf.grading.submissions import default_base, discover, stage  # noqa: E402

TARGET_SECONDS, TARGET_COUNT, DEFAULT_COUNT = 180.0, 1000, 200
FORMS = ("package", "module", "percent", "ipynb")
MISTAKES = (
    None,
    None,
    "overwrite",
    None,
    "sin_cos_swapped",
    "exponent_sign",
    None,
    "start_pos_ignored",
    "syntax_error",
)
EVERY_CASE = "rubric_format: 1\ntitle: every case\nitems:\n  - {id: all, points: 100, cases: ['*']}\n"


def make_class(folder: Path, count: int) -> None:
    for number in range(count):
        samples.write(folder, f"student{number:03d}", FORMS[number % len(FORMS)], MISTAKES[number % len(MISTAKES)])


def embconf(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "embconf", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--count", type=int, default=DEFAULT_COUNT, help=f"submissions (default {DEFAULT_COUNT}; fewer for a quick run)"
    )
    parser.add_argument(
        "--jobs", type=int, default=len(os.sched_getaffinity(0)), help="embconf grade --jobs (default: the cores)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-grade-") as tmp:
        root = Path(tmp)
        folder, out, staged = root / "submissions", root / "out", root / "staged"
        folder.mkdir()
        make_class(folder, args.count)
        rubric = root / "rubric.yaml"
        rubric.write_text(EVERY_CASE, encoding="utf-8")
        modules = []
        for sub in discover(folder):
            try:
                modules.append(stage(sub, staged / sub.name, default_base())[0])
            except Exception:  # a notebook that cannot be staged is graded 0 by both sides' rules
                pass
        print(
            f"{args.count} submissions ({', '.join(FORMS)}; {sum(m is not None for m in MISTAKES)} of {len(MISTAKES)} with a mistake), "
            f"{os.cpu_count()} cores, load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
        )

        started = time.perf_counter()
        done = embconf(
            "grade", str(folder), "--out", str(out), "--rubric", str(rubric), "--jobs", str(args.jobs), "--force"
        )
        grade_seconds = time.perf_counter() - started
        if done.returncode != 0:
            print(f"embconf grade failed: {done.stderr.strip()}")
            return 2
        graded = len((out / "gradebook.csv").read_text(encoding="utf-8").splitlines()) - 1

        started = time.perf_counter()
        for module in modules:
            embconf("run", "-q", "--impl", f"tinytorch:{module}")  # exit 1 for a wrong module is expected
        run_seconds = time.perf_counter() - started
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    per_minute = graded / grade_seconds * 60
    print(
        f"embconf grade --jobs {args.jobs}: {graded} submissions in {grade_seconds:6.1f} s  ({per_minute:6.1f} submissions/minute)"
    )
    print(
        f"{len(modules)} sequential embconf run: {run_seconds:6.1f} s  ({len(modules) / run_seconds * 60:6.1f} submissions/minute)"
    )
    print(
        f"ratio (sequential runs / grade, per submission): {(run_seconds / max(len(modules), 1)) / (grade_seconds / graded):.2f}x"
    )
    scaled = grade_seconds * TARGET_COUNT / graded
    met = scaled <= TARGET_SECONDS
    print(
        f"target: {TARGET_COUNT} submissions in <= {TARGET_SECONDS:g} s: {'met' if met else 'MISSED'} ({scaled:.0f} s for {TARGET_COUNT}"
        + (", extrapolated" if graded != TARGET_COUNT else "")
        + ")"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
