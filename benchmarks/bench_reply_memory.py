"""The runner's peak resident memory against the size of one long reply line from a protocol peer, side by
side (issue 21, item 4): a line under the line limit must cost the runner a small multiple of itself.

    python benchmarks/bench_reply_memory.py [MEGABYTES ...]     (default: 25 50 100 200)

For each size and each kind of line (a JSON list of numbers, a base64 array of the wrong shape) it runs
``embconf run`` on tests/peers/huge_line.py for one backward case and prints the runner's own peak
resident memory (VmHWM, read from /proc while it runs), and that peak over the line size.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASE = "lookup.backward.module_example_020"


def peak_rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def measure(flavour: str, megabytes: float) -> tuple[float, int, str]:
    peer = " ".join(shlex.quote(p) for p in (sys.executable, str(ROOT / "tests/peers/huge_line.py"), flavour))
    argv = [sys.executable, "-m", "embconf", "run", "-q", "--no-colour", "--select", CASE]
    argv += ["--impl", f"subprocess:{peer} {megabytes:g}", "--case-timeout", "120", "--memory-limit", "0"]
    process = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0.0
    while process.poll() is None:
        peak = max(peak, peak_rss_mb(process.pid))
        time.sleep(0.02)
    out, _ = process.communicate()
    verdict = next((line for line in out.splitlines() if line.startswith(("FAIL", "ERROR", "CRASH"))), out[-80:])
    return peak, process.returncode, verdict.split(": ", 1)[-1][:70]


def main() -> None:
    sizes = [float(arg) for arg in sys.argv[1:]] or [25.0, 50.0, 100.0, 200.0]
    print(f"{'line':>8} {'kind':>8} {'runner peak RSS':>16} {'peak / line':>12}  exit  the case")
    for megabytes in sizes:
        for flavour in ("numbers", "base64"):
            peak, code, verdict = measure(flavour, megabytes)
            print(f"{megabytes:>5g} MB {flavour:>8} {peak:>13.0f} MB {peak / megabytes:>11.1f}x  {code:>4}  {verdict}")


if __name__ == "__main__":
    main()
