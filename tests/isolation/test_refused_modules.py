"""A module or peer that cannot be run is refused in one line (exit 2, no traceback), the same in process and in
a worker, before any case runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers import HOSTILE, PYTHON, peer, report_cases, run_report

FORWARD = "lookup.forward.module_example"


def hostile(tmp_path: Path, module: str, *args: str, select: tuple[str, ...] = (FORWARD,)):
    """``embconf run -q`` on tests/hostile/MODULE.py: (process result, report cases by id)."""
    result, report = run_report(
        tmp_path, f"functions:{HOSTILE / module}.py", "-q", *args, select=select, timeout=120, name=f"{module}.json"
    )
    return result, report_cases(report)


def one_line_exit_2(result: subprocess.CompletedProcess, *words: str) -> None:
    """Exit 2, one line on stderr naming ``words``, no traceback."""
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr[-2000:]
    for word in words:
        assert word in result.stderr, result.stderr


def test_a_load_failure_is_the_same_one_line_in_process_and_in_a_worker(tmp_path):
    worker, _ = hostile(tmp_path, "base_exception_at_import")
    in_process, _ = hostile(tmp_path, "base_exception_at_import", "--in-process")
    one_line_exit_2(worker, "cannot load", "Refusal: this module will not load")
    one_line_exit_2(in_process)
    assert in_process.stderr == worker.stderr


def test_contradictory_features_are_refused_in_one_line(tmp_path):
    words = ("sinusoid_stored and sinusoid_computed", "exclude each other")
    for args in ((), ("--in-process",)):
        result, cases = hostile(tmp_path, "contradictory_features", *args)
        one_line_exit_2(result, *words)
        assert cases == {}
    result, _ = run_report(tmp_path, peer("contradictory_features"), "-q", select=(FORWARD,))
    one_line_exit_2(result, *words)


def test_a_recursion_limit_exhausted_at_import_is_refused_in_one_line(tmp_path):
    for args in ((), ("--in-process",)):
        result, cases = hostile(tmp_path, "recursion_limit", *args)
        one_line_exit_2(result, "cannot load", "lowered Python's recursion limit from", "to 40 while loading")


def test_the_old_reference_peer_command_says_in_one_line_where_it_went(tmp_path):
    """``python -m embconf.reference.serve``, documented by earlier releases, moved to embconf.protocol."""
    result, report = run_report(tmp_path, f"subprocess:{PYTHON} -m embconf.reference.serve", "-q")
    assert result.returncode == 2 and report is None and "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "failed the protocol handshake" in line and "python -m embconf.protocol.reference_peer" in line
