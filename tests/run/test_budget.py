"""Timeouts that fit the work (issue 18 item 7): a call may take the floor (``--case-timeout``) plus an allowance
for the work its case holds, so a correct implementation that is slow in proportion to the work passes the large
cases, while a hang on a small case still costs the floor. Timings here are sleeps, chosen to be decisive."""

from __future__ import annotations

import textwrap

from helpers import assert_exit, assert_judged, assert_outcomes, peer, run_report

from embconf.model.budget import case_budget, case_work

LARGE = "lookup.backward.large_table"  # V*N*D = 1000 * 1024 * 32
SMALL = "lookup.backward.module_example_020"

SLOW = """
import time
from embconf.reference import embedding_backward as _backward

def embedding_backward(weight, ids, grad_output):
    time.sleep(weight.size * ids.size * 1e-7)  # slow in proportion to V*N*D: 3.3 s for the large table
    return _backward(weight, ids, grad_output)
"""

HANGS_ON_SMALL = """
import time
from embconf.reference import embedding_backward as _backward

def embedding_backward(weight, ids, grad_output):
    if weight.shape[0] < 10:
        time.sleep(3600)
    return _backward(weight, ids, grad_output)
"""


def test_the_budget_is_the_floor_plus_whole_seconds_for_the_work(corpus):
    by_id = {case.id: case for case in corpus.cases}
    large, small = by_id[LARGE], by_id[SMALL]
    assert case_work(large.operation, large.inputs()) == 1000 * 32 * 16 * 64
    assert case_budget(10, large.operation, large.inputs()) == 26  # 10 + floor(32.8 M * 0.5 us)
    assert case_budget(2.5, small.operation, small.inputs()) == 2.5  # a small case: exactly the floor
    table = by_id["sin.canonical.l32768_d64"]
    assert case_work(table.operation, table.inputs()) == 32768 * 64


def test_the_work_of_a_case_is_the_same_counted_on_its_arrays_or_on_their_encoding(corpus):
    """A protocol request forwards the fixture's base64 arrays as they are: its budget is counted on them."""
    for case in corpus.cases:
        assert case_work(case.operation, case.raw_inputs) == case_work(case.operation, case.inputs()), case.id


def _module(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return f"functions:{path}"


def test_a_slow_but_correct_implementation_passes_the_large_case(tmp_path):
    # 3.3 s of work against a floor of 2 s: a fixed 2 s timeout would kill it; the budget allows 18 s
    done, report = run_report(tmp_path, _module(tmp_path, "slow", SLOW), "--case-timeout", "2", select=[LARGE])
    assert_exit(done, 0)
    assert_outcomes(report, {LARGE: "pass"})


def test_a_hang_on_a_small_case_still_costs_the_floor(tmp_path):
    done, report = run_report(
        tmp_path, _module(tmp_path, "hangs", HANGS_ON_SMALL), "--case-timeout", "1", select=[SMALL, LARGE]
    )
    assert_judged(done, report, [SMALL, LARGE], {SMALL: ("timeout", "no reply within 1 s")})


def test_a_slow_protocol_peer_passes_the_large_case(tmp_path):
    done, report = run_report(tmp_path, peer("slow"), "--timeout", "2", select=[SMALL, LARGE])
    assert_exit(done, 0)
    assert {case["outcome"] for case in report["cases"]} == {"pass"}
