"""The limits a run holds an implementation to: timeouts that cannot be waited for are refused in one line, the
run timeout holds for protocol peers and across --repeat, an operation that hangs costs two timeouts and is then
not run, and the memory a worker, its children or a peer hold is measured against the limit.

Every run goes through the CLI (or pytest) in a fresh process, as a user runs it, with hostile modules from
tests/hostile and broken peers from tests/peers."""

from __future__ import annotations

import time

import pytest
from helpers import (
    PYTHON,
    assert_exit,
    assert_judged,
    assert_one_line_error,
    assert_only,
    assert_outcomes,
    case_ids,
    cases_with,
    hostile,
    linux_only,
    peer,
    run_cases,
    run_pytest,
    survivors,
)

FORWARD, BACKWARD = "lookup.forward.module_example", "lookup.backward.module_example_020"
SINUSOID = "sin.canonical.l16_d8"


BAD_SECONDS = ["nan", "inf", "-inf", "1e308", "0", "-1"]


@pytest.mark.parametrize("flag", ["--case-timeout", "--timeout", "--run-timeout"])
@pytest.mark.parametrize("value", BAD_SECONDS)
def test_an_unusable_timeout_flag_is_refused_in_one_line(tmp_path, flag, value):
    result, cases = run_cases(tmp_path, "reference", f"{flag}={value}", select=(FORWARD,))
    assert_one_line_error(
        result, "--run-timeout" if flag == "--run-timeout" else "--case-timeout", "must be more than 0"
    )
    assert cases is None


@pytest.mark.parametrize("value", BAD_SECONDS + ["ten"])
def test_an_unusable_embconf_timeout_is_refused_in_one_line(tmp_path, value):
    result, cases = run_cases(
        tmp_path,
        f"subprocess:{PYTHON} -m embconf.protocol.reference_peer",
        select=(FORWARD,),
        env={"EMBCONF_TIMEOUT": value},
    )
    assert_one_line_error(result, "EMBCONF_TIMEOUT")


@pytest.mark.parametrize("option", ["--embconf-case-timeout", "--embconf-run-timeout"])
@pytest.mark.parametrize("value", ["nan", "inf", "1e308", "0"])
def test_an_unusable_pytest_timeout_is_a_usage_error(tmp_path, option, value):
    result = run_pytest(tmp_path, "--embconf-impl=reference", f"{option}={value}")
    assert result.returncode == 4 and "must be more than 0 and at most" in result.stderr, result.stderr[-2000:]


def test_a_memory_limit_too_low_to_start_python_is_refused_in_one_line(tmp_path):
    result, cases = run_cases(tmp_path, "reference", "--memory-limit", "10", select=(FORWARD,))
    assert_one_line_error(result, "--memory-limit 10 MB is too low to start a Python process")
    pytest_result = run_pytest(tmp_path, "--embconf-impl=reference", "--embconf-memory-limit=10")
    assert pytest_result.returncode == 4 and "too low to start a Python process" in pytest_result.stderr


def test_the_run_timeout_holds_for_a_protocol_peer(tmp_path):
    select = case_ids("lookup.backward.*")[:6] + [FORWARD]
    started = time.monotonic()
    result, cases = run_cases(tmp_path, peer("hang_all"), "--timeout", "60", "--run-timeout", "2", select=select)
    assert_exit(result, 1)
    assert time.monotonic() - started < 30
    assert_outcomes(cases, dict.fromkeys(select, "timeout"))
    assert all("run timeout: the whole run exceeded 2 s" in c["message"] for c in cases.values())


def test_the_run_timeout_holds_across_repeat(tmp_path):
    select = (FORWARD, "lookup.forward.ids_2d", SINUSOID)  # 0.6 s a repetition
    started = time.monotonic()
    result, cases = run_cases(tmp_path, hostile("slow"), "--repeat", "100", "--run-timeout", "3", select=select)
    assert_exit(result, 1)
    assert sorted(cases) == sorted(select) and time.monotonic() - started < 30
    cut = cases_with(cases, "timeout")
    assert cut
    assert_only(cases, "timeout", "pass")  # passed in every run before the cut
    for case in cut:
        assert "run timeout: the whole run exceeded 3 s" in case["message"] and "of 100 of --repeat" in case["message"]
    assert not any("nondeterministic" in case["message"] for case in cases.values())
    assert "nondeterministic" not in result.stdout


def hang_counts(cases: dict) -> tuple[int, int]:
    """(cases that timed out waiting, cases not run by the hang policy)."""
    waited = sum("no reply within" in c["message"] for c in cases_with(cases, "timeout"))
    not_run = sum("not run:" in c["message"] for c in cases_with(cases, "timeout"))
    return waited, not_run


def test_an_operation_that_hangs_costs_two_timeouts_then_is_not_run(tmp_path):
    started = time.monotonic()
    result, cases = run_cases(tmp_path, hostile("hang_duplicates"), "--case-timeout", "1")
    assert_exit(result, 1)
    assert len(cases) == len(case_ids("*"))
    backward = {
        i: c for i, c in cases.items() if c["operation"] == "embedding_backward" and c["outcome"] != "not_applicable"
    }
    assert hang_counts(backward) == (2, len(backward) - 2)
    assert all(
        "not run: embedding_backward timed out on 2 earlier cases" in c["message"]
        for c in backward.values()
        if "not run" in c["message"]
    )
    assert_only({i: c for i, c in cases.items() if c["operation"] != "embedding_backward"}, "pass", "not_applicable")
    assert time.monotonic() - started < 30


@pytest.mark.parametrize(
    "impl, timeout_flag", [(hostile("hang_always"), "--case-timeout"), ("peer:hang_all", "--timeout")]
)
def test_an_implementation_that_hangs_on_everything_costs_four_timeouts(tmp_path, impl, timeout_flag):
    impl = peer("hang_all") if impl == "peer:hang_all" else impl
    started = time.monotonic()
    result, cases = run_cases(tmp_path, impl, timeout_flag, "1")
    applicable = {i: c for i, c in cases.items() if c["outcome"] != "not_applicable"}
    assert_exit(result, 1)
    assert len(cases) == len(case_ids("*"))
    assert_only(applicable, "timeout")
    assert hang_counts(applicable) == (4, len(applicable) - 4)
    assert any(
        "not run: the implementation timed out on 4 earlier cases in a row" in c["message"] for c in applicable.values()
    )
    assert time.monotonic() - started < 40


def test_a_peer_whose_backward_hangs_costs_two_timeouts(tmp_path):
    result, cases = run_cases(tmp_path, peer("hang"), "--timeout", "1", select=("lookup.*",))
    backward = {
        i: c for i, c in cases.items() if c["operation"] == "embedding_backward" and c["outcome"] != "not_applicable"
    }
    assert_exit(result, 1)
    assert hang_counts(backward) == (2, len(backward) - 2)
    assert_only({i: c for i, c in cases.items() if c["operation"] != "embedding_backward"}, "pass", "not_applicable")


def test_reserved_but_untouched_address_space_passes_under_the_default_limit(tmp_path):
    result, cases = run_cases(tmp_path, hostile("reserve_address_space"), select=(FORWARD, BACKWARD, SINUSOID))
    assert_exit(result, 0)
    assert_outcomes(cases, {FORWARD: "pass", BACKWARD: "pass", SINUSOID: "pass"})


@linux_only
def test_memory_held_by_a_child_of_the_worker_counts_and_the_child_ends(tmp_path):
    pidfile = tmp_path / "pids"
    result, cases = run_cases(
        tmp_path,
        hostile("memory_child"),
        "--memory-limit",
        "600",
        select=(FORWARD, BACKWARD, SINUSOID),
        env={"EMBCONF_TEST_PIDFILE": str(pidfile)},
    )
    words = "ran out of memory (the limit is 600 MB): the worker and its children held"
    assert_judged(result, cases, (FORWARD, BACKWARD, SINUSOID), {BACKWARD: ("crash", words)})
    assert survivors(pidfile) == []


@linux_only
def test_a_protocol_peer_is_held_to_the_memory_limit(tmp_path):
    select = (FORWARD, BACKWARD, SINUSOID)
    result, cases = run_cases(tmp_path, peer("memory_hog"), "--memory-limit", "512", "--timeout", "60", select=select)
    words = "ran out of memory (the limit is 512 MB): the implementation's process and its children held"
    assert_judged(result, cases, select, {BACKWARD: ("crash", words)})


def test_a_jax_implementation_passes_under_the_default_limit(tmp_path):
    pytest.importorskip("jax")
    result, cases = run_cases(
        tmp_path, hostile("jax_functions"), select=("lookup.forward.*", "lookup.backward.*", "lookup.error.*")
    )
    assert_exit(result, 0)
    assert_only(cases, "pass", "not_applicable")
    assert len(cases_with(cases, "pass")) > 20


def test_a_jax_and_tensorflow_implementation_passes_under_the_default_limit(tmp_path):
    pytest.importorskip("jax")
    pytest.importorskip("tensorflow")
    result, cases = run_cases(tmp_path, hostile("jax_tf_functions"), select=("lookup.forward.*", "lookup.backward.*"))
    assert_exit(result, 0)
    assert_only(cases, "pass", "not_applicable")
    assert len(cases_with(cases, "pass")) > 20
