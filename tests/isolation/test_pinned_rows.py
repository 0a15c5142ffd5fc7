"""The worker sends back only the rows the runner judges (an output whose golden pins some rows of a larger
result): the same outcomes and diagnoses as a run in-process, and a worker that sends rows it was not asked
for, or labels them falsely, is an error of that case, never a verdict on rows nobody judged."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import HOSTILE, assert_exit, outcomes, report_cases, run_report

from embconf.model.contract import Planned
from embconf.model.encoding import PinnedRows, pinned_rows_problem, rows_only

SINUSOIDS = ["sin.canonical.l32768_d64", "sin.canonical.l1000_d512", "sin.canonical.l512_d64", "sin.canonical.l1_d4"]
TABLE = {"max_len": 8, "embed_dim": 4, "dtype": "float32"}


@pytest.fixture
def worker():
    from embconf.isolation.adapter import IsolatedAdapter

    adapter = IsolatedAdapter("reference")
    adapter.start()
    yield adapter
    adapter.close()


def test_a_planned_call_gets_the_rows_asked_for_in_their_order_and_any_other_call_the_whole_output(worker):
    from embconf.reference import sinusoidal_table

    whole = sinusoidal_table(8, 4)
    worker.plan(
        [
            Planned("sinusoidal_table", lambda: dict(TABLE), {"table": (3, 0)}),
            Planned("sinusoidal_table", lambda: dict(TABLE)),
            Planned("sinusoidal_table", lambda: dict(TABLE), {"table": (9,)}),  # a row the table lacks: sent whole
        ]
    )
    first, second, third = (worker.call("sinusoidal_table", dict(TABLE)) for _ in range(3))
    pinned = first.outputs["table"]
    assert isinstance(pinned, PinnedRows) and pinned.rows == (3, 0) and pinned.shape == (8, 4)
    np.testing.assert_array_equal(pinned.values, whole[[3, 0]])
    for reply in (second, third, worker.call("sinusoidal_table", dict(TABLE))):  # the last one unannounced
        np.testing.assert_array_equal(reply.outputs["table"], whole)


def test_the_worker_s_rows_give_the_outcomes_and_diagnoses_of_a_run_in_process(tmp_path):
    """A mistake on big tables (computed in float16) fails on the rows judged; each failing case is run again
    for its whole output, so that its diagnosis names the mistake from the whole table, as in-process."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _, in_process = run_report(tmp_path / "a", "mutant:sin.float16", "-q", "--in-process", select=SINUSOIDS)
    result, isolated = run_report(tmp_path / "b", "mutant:sin.float16", "-q", select=SINUSOIDS)
    assert_exit(result, 1)
    assert outcomes(isolated) == outcomes(in_process)
    assert [outcomes(isolated)[case] for case in SINUSOIDS] == ["fail", "fail", "fail", "pass"]
    for case in SINUSOIDS[:3]:
        diagnosis = report_cases(isolated)[case]["diagnosis"]
        assert diagnosis == report_cases(in_process)[case]["diagnosis"] and diagnosis[0]["mutant"] == "sin.float16"


def test_rows_not_asked_for_or_labelled_falsely_make_that_case_an_error(tmp_path):
    """tests/hostile/pinned_rows_lie.py answers correctly but rewrites, inside the worker, how its outputs
    travel: an output asked for whole comes as one row, a table's rows come in reverse under other labels."""
    forward, table = "lookup.forward.module_example", "sin.canonical.l1000_d512"
    result, report = run_report(tmp_path, f"functions:{HOSTILE / 'pinned_rows_lie.py'}", "-q", select=[forward, table])
    cases = report_cases(report)
    assert result.returncode == 1 and {case["outcome"] for case in cases.values()} == {"error"}
    assert (
        "its output 'output': it holds only some rows, but the whole output was asked for" in cases[forward]["message"]
    )
    assert "its output 'table': it holds other rows than the ones asked for" in cases[table]["message"]


def test_what_makes_rows_unreadable():
    table = np.arange(20.0).reshape(5, 4)
    good = rows_only(table, (4, 1))
    assert isinstance(good, PinnedRows) and pinned_rows_problem(good, (4, 1)) == ""
    assert rows_only(table, (5,)) is table and rows_only(table, None) is table and rows_only(3.0, (0,)) == 3.0
    assert "whole output was asked for" in pinned_rows_problem(good, None)
    assert "other rows" in pinned_rows_problem(good, (1, 4))
    assert "other rows" in pinned_rows_problem(PinnedRows((5, 4), [4, 1], table[[4, 1]]), (4, 1))  # type: ignore[arg-type]
    for shape, values in [((5, 3), table[[4, 1]]), ((5, 4), table[[4]]), ((4, 4), table[[4, 1]]), ((), table[[4, 1]])]:
        assert "do not fit" in pinned_rows_problem(PinnedRows(shape, (4, 1), values), (4, 1)), shape
    assert "do not fit" in pinned_rows_problem(PinnedRows((5, 4), (4, 1), [[0.0] * 4] * 2), (4, 1))  # type: ignore[arg-type]
