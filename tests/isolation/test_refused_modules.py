"""A module or peer that cannot be run is refused in one line (exit 2, no traceback), the same in process and in
a worker, before any case runs."""

from __future__ import annotations

from helpers import PYTHON, assert_one_line_error, hostile, peer, run_cases

FORWARD = "lookup.forward.module_example"


def test_a_load_failure_is_the_same_one_line_in_process_and_in_a_worker(tmp_path):
    worker, _ = run_cases(tmp_path, hostile("base_exception_at_import"), select=(FORWARD,))
    in_process, _ = run_cases(tmp_path, hostile("base_exception_at_import"), "--in-process", select=(FORWARD,))
    assert_one_line_error(worker, "cannot load", "Refusal: this module will not load")
    assert_one_line_error(in_process)
    assert in_process.stderr == worker.stderr


def test_contradictory_features_are_refused_in_one_line(tmp_path):
    words = ("sinusoid_stored and sinusoid_computed", "exclude each other")
    for args in ((), ("--in-process",)):
        result, cases = run_cases(tmp_path, hostile("contradictory_features"), *args, select=(FORWARD,))
        assert_one_line_error(result, *words)
        assert cases is None
    result, _ = run_cases(tmp_path, peer("contradictory_features"), select=(FORWARD,))
    assert_one_line_error(result, *words)


def test_a_recursion_limit_exhausted_at_import_is_refused_in_one_line(tmp_path):
    for args in ((), ("--in-process",)):
        result, cases = run_cases(tmp_path, hostile("recursion_limit"), *args, select=(FORWARD,))
        assert_one_line_error(result, "cannot load", "lowered Python's recursion limit from", "to 40 while loading")
        assert cases is None


def test_the_old_reference_peer_command_says_in_one_line_where_it_went(tmp_path):
    """``python -m embconf.reference.serve``, documented by earlier releases, moved to embconf.protocol."""
    result, cases = run_cases(tmp_path, f"subprocess:{PYTHON} -m embconf.reference.serve")
    assert_one_line_error(result, "failed the protocol handshake", "python -m embconf.protocol.reference_peer")
    assert cases is None
