"""The limits on what a peer's reply may hold: everything a correct peer sends for the corpus is within them, and a
reply over them is refused before it is parsed, as that case's error, the peer kept in step for the rest."""

from __future__ import annotations

from helpers import assert_clean_pass, assert_judged, peer, run_cases, run_reported

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
    result, report = run_reported(tmp_path, peer("inline_data"), timeout=240)
    assert_clean_pass(result, report)
    assert report["summary"]["pass"] >= 370 and report["implementation"]["name"] == "inline data, minor 3"


def test_a_reply_over_the_value_limit_is_one_error_per_case_never_a_restart_storm(tmp_path):
    """Five replies over the limit (more than the 3 restarts a run allows): each is its own case's error, and
    the peer, in step after a line read to its end, answers the rest."""
    select = [*BACKWARD, FORWARD]
    result, cases = run_cases(tmp_path, peer("huge_line", "numbers", "10"), select=select)
    assert_judged(result, cases, select, dict.fromkeys(BACKWARD, ("error", "reply refused", "(at most 4194304")))


def test_a_long_line_of_json_numbers_is_refused_before_it_is_parsed(tmp_path):
    """Read as Python objects it would cost many times its size (benchmarks/bench_reply_memory.py measures it)."""
    select = (FORWARD, "lookup.backward.module_example_020")
    result, cases = run_cases(tmp_path, peer("huge_line", "numbers", "10"), select=select)
    words = "reply refused: a line of 10485799 bytes holding about 5242885 JSON values (at most 4194304"
    assert_judged(result, cases, select, {"lookup.backward.module_example_020": ("error", words)})
    assert "\n" not in cases["lookup.backward.module_example_020"]["message"].split("\ninputs:")[0]
