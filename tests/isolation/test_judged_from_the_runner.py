"""What an implementation does to its inputs, to the process's state and to the console is judged from the runner:
a change a call makes is that call's error or failure, the state a module sets at import is its baseline, correct
values in another byte order pass, and text it writes reaches no console or report raw."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import (
    HOSTILE,
    assert_exit,
    assert_outcome,
    assert_outcomes,
    hostile,
    outcomes,
    peer,
    report_cases,
    run_cases,
    run_report,
)

FORWARD = "lookup.forward.module_example"
BACKWARD = "lookup.backward.module_example_020"


def test_a_recursion_limit_lowered_by_a_call_is_that_case_s_error_and_the_rest_pass(tmp_path):
    select = (FORWARD, BACKWARD, "sin.canonical.l16_d8")
    result, cases = run_cases(tmp_path, hostile("recursion_limit_in_call"), select=select)
    assert_exit(result, 1)
    assert_outcomes(cases, {FORWARD: "error", BACKWARD: "pass", "sin.canonical.l16_d8": "pass"})
    assert_outcome(cases[FORWARD], "error", "changed Python's recursion limit (sys.setrecursionlimit) from")


def test_correct_values_in_big_endian_byte_order_pass(tmp_path):
    select = (FORWARD, BACKWARD, "sin.canonical.l16_d8", "lookup.forward.special_values")
    result, cases = run_cases(tmp_path, hostile("big_endian"), select=select)
    assert_exit(result, 0)
    assert_outcomes(cases, dict.fromkeys(select, "pass"))


def test_a_wrong_dtype_in_another_byte_order_is_named_exactly():
    from embconf.judging.compare import compare_value

    want = np.zeros((2, 3), np.float32)
    mismatch = compare_value("output", want, np.zeros((2, 3), ">f8"), {"kind": "exact"})
    assert mismatch is not None and mismatch.kind == "dtype"
    assert mismatch.summary == "'output' has dtype float64, big-endian, expected float32"
    assert compare_value("output", want, want.astype(">f4"), {"kind": "exact"}) is None
    assert compare_value("output", want, np.ones((2, 3), ">f4"), {"kind": "exact"}).kind == "value"


def test_a_tinytorch_module_that_zeroes_the_token_tensor_it_was_given_fails(tmp_path):
    select = (FORWARD, "lookup.forward.ids_0d", BACKWARD, "pos.forward.batch1")
    result, cases = run_cases(tmp_path, f"tinytorch:{HOSTILE / 'tinytorch_zeroes_ids.py'}", select=select)
    assert_exit(result, 1)
    assert_outcomes(
        cases, {FORWARD: "fail", "lookup.forward.ids_0d": "fail", BACKWARD: "fail", "pos.forward.batch1": "pass"}
    )
    assert_outcome(
        cases[FORWARD], "fail", "modified its input 'ids' (the Tensor it was given: 2 of 3 elements changed)"
    )


def test_checks_switched_off_inside_the_worker_still_judge_from_the_runner(tmp_path):
    """The implementation patches the input guard and the global-state check in its worker; the runner
    compares the shared input memory itself and reads the worker's working directory from the kernel."""
    select = (FORWARD, "lookup.forward.ids_0d", BACKWARD, "sin.canonical.l16_d8")
    result, cases = run_cases(tmp_path, hostile("patch_guard"), select=select)
    assert_exit(result, 1)
    assert_outcome(cases[FORWARD], "fail", "modified its input 'ids' (2 of 3 elements changed)")
    assert_outcome(cases["lookup.forward.ids_0d"], "pass")  # 0-D ids are not sorted
    if Path("/proc/self/cwd").exists():
        moved = [case for case in cases.values() if "working directory changed from" in case["message"]]
        assert [case["outcome"] for case in moved] == ["error"] and "seen by the runner" in moved[0]["message"]


def test_control_sequences_an_implementation_writes_reach_no_console_or_report_raw(tmp_path):
    """An exception reply full of escape sequences (a clear-screen, a fake green "373 pass"), a skip reason, a
    name and a documented claim with them: shown escaped (``\\x1b[2J``) on the console, in JUnit and in JSON."""
    junit = tmp_path / "junit.xml"
    select = [BACKWARD, "lookup.sparse.module_example", FORWARD]
    result, report = run_report(tmp_path, peer("escapes"), "--junit", str(junit), select=select)
    console = result.stdout + result.stderr
    assert_exit(result, 1)
    assert "\x1b" not in console and "\x1b" not in junit.read_text()
    assert "\\x1b[2J\\x1b[H\\x1b[32m373 pass" in console and "\\u202e" in console
    texts = [case["message"] for case in report["cases"]] + [report["implementation"]["name"]]
    assert not any(ch in text for text in texts for ch in "\x1b\x9b\u202e\r\x07")
    assert_outcome(report_cases(report)["lookup.sparse.module_example"], "not_applicable")


@pytest.mark.parametrize("mode", [(), ("--in-process",)], ids=["worker", "in-process"])
def test_state_set_at_import_is_the_baseline_and_a_call_s_change_is_still_blamed(tmp_path, mode):
    """A module that moves to the temporary directory and sets np.seterr(all="raise") at import is innocent: its
    calls are held to the state after its import (and, in-process, the runner keeps its own); a call that moves
    the directory is still that call's error."""
    result, report = run_report(tmp_path, hostile("import_state"), *mode, "-k", "lookup.*")
    assert_exit(result, 0)
    assert set(outcomes(report).values()) == {"pass", "not_applicable"} and report["summary"]["pass"] > 30
    result, report = run_report(tmp_path, hostile("chdir"), select=[FORWARD, BACKWARD])
    assert_outcome(report_cases(report)[FORWARD], "error", "changed the working directory from")
    assert_outcome(report_cases(report)[BACKWARD], "pass")
