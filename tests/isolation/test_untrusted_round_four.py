"""Untrusted code and input, round four (issue 34): behaviours a trusted tool gets right that the runner once
did not. Each test reproduces one original misbehaviour through the command line, as a user meets it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from helpers import HOSTILE, PYTHON, ROOT, outcomes, peer, report_cases, run_report

BACKWARD = [
    "lookup.backward.module_example_020",
    "lookup.backward.module_example_202",
    "lookup.backward.no_duplicates",
    "lookup.backward.untouched_rows_zero",
    "lookup.backward.all_ids_equal",
]
FORWARD = "lookup.forward.module_example"


def test_a_correct_minor_3_peer_with_inline_data_passes_the_whole_corpus(tmp_path):
    """PROTOCOL.md section 2 lets a reply hold any array as a data list; the corpus's largest output (a
    32768 x 64 table, 2**21 values) is within the stated limit, so nothing a correct peer sends is refused."""
    result, report = run_report(tmp_path, peer("inline_data"), "-q", timeout=240)
    cases = report_cases(report)
    assert result.returncode == 0, [(c["id"], c["message"][:200]) for c in cases.values() if c["outcome"] != "pass"][:3]
    assert report["summary"]["pass"] >= 370 and report["implementation"]["name"] == "inline data, minor 3"


def test_a_reply_over_the_value_limit_is_one_error_per_case_never_a_restart_storm(tmp_path):
    """Five replies over the limit (more than the 3 restarts a run allows): each is its own case's error, and
    the peer, in step after a line read to its end, answers the rest."""
    result, report = run_report(tmp_path, peer("huge_line", "numbers", "10"), "-q", select=[*BACKWARD, FORWARD])
    cases = report_cases(report)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert {cases[case]["outcome"] for case in BACKWARD} == {"error"}
    assert all(
        "reply refused" in cases[case]["message"] and "(at most 4194304" in cases[case]["message"] for case in BACKWARD
    )
    assert cases[FORWARD]["outcome"] == "pass"


def test_the_old_reference_peer_command_says_in_one_line_where_it_went(tmp_path):
    """``python -m embconf.reference.serve``, documented by earlier releases, moved to embconf.protocol."""
    result, report = run_report(tmp_path, f"subprocess:{PYTHON} -m embconf.reference.serve", "-q")
    assert result.returncode == 2 and report is None and "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "failed the protocol handshake" in line and "python -m embconf.protocol.reference_peer" in line


@pytest.mark.skipif(os.name != "posix", reason="signals a running command (POSIX)")
@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_run_on_a_hung_peer_ends_within_2_s_of_a_signal(tmp_path, signum, code):
    """A peer busy on a request does not read the stop request: it is killed at once, not after a grace spent
    twice (a wait on its exit, then the same wait again: 4 s)."""
    marker = tmp_path / "hanging"
    argv = [sys.executable, "-m", "embconf", "run", "-q", "--case-timeout", "60", "--impl", peer("hang", str(marker))]
    argv += ["--select", FORWARD, "--select", BACKWARD[0]]
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


def test_control_sequences_an_implementation_writes_reach_no_console_or_report_raw(tmp_path):
    """An exception reply full of escape sequences (a clear-screen, a fake green "373 pass"), a skip reason, a
    name and a documented claim with them: shown escaped (``\\x1b[2J``) on the console, in JUnit and in JSON."""
    junit = tmp_path / "junit.xml"
    select = ["lookup.backward.module_example_020", "lookup.sparse.module_example", FORWARD]
    result, report = run_report(tmp_path, peer("escapes"), "--junit", str(junit), select=select)
    console = result.stdout + result.stderr
    assert result.returncode == 1 and "\x1b" not in console and "\x1b" not in junit.read_text()
    assert "\\x1b[2J\\x1b[H\\x1b[32m373 pass" in console and "\\u202e" in console
    texts = [case["message"] for case in report["cases"]] + [report["implementation"]["name"]]
    assert not any(ch in text for text in texts for ch in "\x1b\x9b\u202e\r\x07")
    assert report_cases(report)["lookup.sparse.module_example"]["outcome"] == "not_applicable"


@pytest.mark.parametrize("mode", [(), ("--in-process",)], ids=["worker", "in-process"])
def test_state_set_at_import_is_the_baseline_and_a_call_s_change_is_still_blamed(tmp_path, mode):
    """A module that moves to the temporary directory and sets np.seterr(all="raise") at import is innocent: its
    calls are held to the state after its import (and, in-process, the runner keeps its own); a call that moves
    the directory is still that call's error."""
    result, report = run_report(tmp_path, f"functions:{HOSTILE / 'import_state.py'}", *mode, "-k", "lookup.*")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stdout[-2000:] + result.stderr[-2000:]
    assert set(outcomes(report).values()) == {"pass", "not_applicable"} and report["summary"]["pass"] > 30
    result, report = run_report(tmp_path, f"functions:{HOSTILE / 'chdir.py'}", select=[FORWARD, BACKWARD[0]])
    moved = report_cases(report)[FORWARD]
    assert moved["outcome"] == "error" and "changed the working directory from" in moved["message"]
    assert report_cases(report)[BACKWARD[0]]["outcome"] == "pass"
