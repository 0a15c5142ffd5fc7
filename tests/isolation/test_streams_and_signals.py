"""The runner's own streams and signals: closed standard streams lose no report, a signal ends a run at once with
every process it started, and a peer that dies is a crash whoever holds its stdout."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest
from helpers import (
    ROOT,
    assert_exit,
    assert_judged,
    assert_outcome,
    assert_outcomes,
    embconf_argv,
    hostile,
    peer,
    read_report,
    run_cases,
    run_with_closed_streams,
    selecting,
)

FORWARD = "lookup.forward.module_example"
BACKWARD = "lookup.backward.module_example_020"


def test_a_closed_stdout_loses_no_report_and_prints_no_traceback(tmp_path):
    result, report = run_with_closed_streams(tmp_path, ">&-", "--impl", "reference", "--select", FORWARD)
    assert_exit(result, 0)
    assert_outcomes(read_report(report), {FORWARD: "pass"})


def test_closed_stdout_and_stderr_still_judge_in_a_worker(tmp_path):
    """The worker, forked from a runner with no stdout, still captures what the implementation prints."""
    result, report = run_with_closed_streams(tmp_path, ">&- 2>&-", "--impl", hostile("segfault"), "--select", FORWARD)
    assert_exit(result, 1)
    assert_outcomes(read_report(report), {FORWARD: "crash"})
    case = read_report(report)["cases"][0]
    assert_outcome(case, "crash", "killed by SIGSEGV")
    assert "embedding_forward" in case["stderr"]


def test_a_peer_that_dies_while_its_child_holds_its_stdout_is_a_crash_not_a_timeout(tmp_path):
    select = (FORWARD, BACKWARD, "sin.canonical.l16_d8")
    result, cases = run_cases(tmp_path, peer("fork_holds_stdout"), "--timeout", "30", select=select)
    words = "exited with code 3; a process it started still held its stdout open"
    assert_judged(result, cases, select, {BACKWARD: ("crash", words)})
    assert "fork_holds_stdout: dying on request" in cases[BACKWARD]["stderr"]


@pytest.mark.skipif(os.name != "posix", reason="signals a running command (POSIX)")
@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_run_on_a_hung_peer_ends_within_2_s_of_a_signal(tmp_path, signum, code):
    """A peer busy on a request does not read the stop request: it is killed at once, not after a grace spent
    twice (a wait on its exit, then the same wait again: 4 s)."""
    marker = tmp_path / "hanging"
    argv = embconf_argv("run", "-q", "--case-timeout", "60", "--impl", peer("hang", str(marker)))
    argv += selecting((FORWARD, BACKWARD))
    process = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        signalled = time.monotonic()
        process.send_signal(signum)
        _, err = process.communicate(timeout=30)
        took = time.monotonic() - signalled
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert marker.exists() and process.returncode == code, err[-2000:]
    assert took < 2.0, f"the run took {took:.2f} s to end after {signum.name}"


@pytest.mark.skipif(os.name != "posix", reason="a POSIX command that ignores its stdin")
def test_a_peer_that_ignores_stop_is_killed_after_one_grace_not_two():
    from embconf.protocol.peer import STOP_GRACE, Peer

    process = Peer(["sleep", "60"], max_line=2**20)
    started = time.monotonic()
    process.stop()
    took = time.monotonic() - started
    assert process.popen.returncode is not None and STOP_GRACE <= took < STOP_GRACE + 0.5, took
