"""Peak resident memory of reading a saved report back (``embconf report FILE``, ``embconf matrix --merge FILE``)
against the report's size: a report is read a line at a time, bounded (conformance/reports/saved.py).

    python benchmarks/bench_report_memory.py [--size MB] [--message BYTES] [--rewritten]

It runs the reference once for a real report, then writes a report of about ``--size`` MB: the run's header, copies
of its case lines under new ids (each message padded to ``--message`` bytes; with ``--rewritten`` the same cases
written again and again instead, as a run writes a case again when its entry changes) and its footer. It prints
each command's exit status, first line of stderr and peak resident memory (VmHWM, read by the process as it ends).

Measured (2 cores, loaded; before: the suite at d629f07): the 480 MB report of the default (2,027,936 cases) is
refused by the size limit at once in 17 MB (`embconf report` took 4.7 GB to read it before); a report at the limits
(60 MB, 94,491 cases with 400-byte messages) 148 MB for `embconf report` and 169 MB for `matrix --merge` (350 MB
and 428 MB before); 60 MB of the corpus's 615 cases written again and again 18 MB and 39 MB. The worst kind of
line, a symptom's measurement of 65,000 numbers (457 such lines in 60 MB), costs 246 MB: about 4 times the file.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def reference_report(folder: Path) -> list[dict]:
    path = folder / "reference.jsonl"
    argv = [sys.executable, "-m", "embconf", "run", "--impl", "reference", "-q", "--report-json", str(path)]
    subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_report(lines: list[dict], path: Path, megabytes: float, message: int, rewritten: bool) -> int:
    """A report of about ``megabytes`` MB made of ``lines``; the number of case lines written."""
    header, cases, footer = lines[0], lines[1:-1], lines[-1]
    written, target = 0, int(megabytes * 1e6)
    with path.open("w") as out:
        out.write(json.dumps(header, separators=(",", ":")) + "\n")
        while out.tell() < target:
            case = cases[written % len(cases)]
            if not rewritten:
                case = {**case, "id": f"{case['id']}.copy{written}", "message": "x" * message}
            out.write(json.dumps(case, separators=(",", ":")) + "\n")
            written += 1
        out.write(json.dumps(footer, separators=(",", ":")) + "\n")
    return written


PROBE = """import sys
from embconf.cli import main
code = main(sys.argv[2:])
with open("/proc/self/status") as status, open(sys.argv[1], "w") as out:
    out.write(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
sys.exit(code)
"""


def peak(args: list[str], folder: Path, python: tuple[str, ...] = ("-c", PROBE)) -> tuple[int, str, float]:
    """(exit status, first line of stderr, peak resident MB) of ``embconf ARGS``, the peak read by the process
    itself as it ends (VmHWM; a child's rusage would count the parent it was forked from)."""
    where = folder / "peak.kb"
    done = subprocess.run([sys.executable, *python, str(where), *args], cwd=ROOT, capture_output=True, text=True)
    first = (done.stderr.splitlines() or [""])[0][:160]
    return done.returncode, first, int(where.read_text()) / 1024 if where.exists() else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=float, default=480, help="MB of the report (default 480)")
    parser.add_argument("--message", type=int, default=0, help="bytes of each copied case's message")
    parser.add_argument("--rewritten", action="store_true", help="write the same cases again, not new ones")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "big.jsonl"
        count = write_report(reference_report(Path(folder)), report, args.size, args.message, args.rewritten)
        print(f"report: {report.stat().st_size / 1e6:.0f} MB, {count} case lines")
        commands = {
            "embconf report": ["report", str(report)],
            "embconf matrix --merge": ["matrix", "--merge", str(report), "--json", str(Path(folder) / "m.json")],
        }
        for name, args_ in commands.items():
            code, line, megabytes = peak(args_, Path(folder))
            print(f"{name}: exit {code}, peak {megabytes:.0f} MB  {line}")


if __name__ == "__main__":
    main()
