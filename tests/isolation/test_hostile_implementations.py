"""Hostile implementations (tests/hostile/) and malformed input: the runner goes on, loses no result,
and is never fooled.

Each hostile module misbehaves in one way on one or two operations and is correct elsewhere. It runs
through the CLI in a fresh process, as a user runs it: the affected cases get the expected outcome,
every other selected case is still reported and passes, and the runner exits 1 (2 when the module
cannot even be imported, in one line).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import (
    assert_exit,
    assert_judged,
    assert_one_line_error,
    assert_outcome,
    assert_outcomes,
    hostile,
    run_cases,
)

from embconf.adapters.guard import aliased_outputs, describe_change, modified_inputs
from embconf.model.contract import Planned, Reply, Status

FORWARD, FORWARD_0D = "lookup.forward.module_example", "lookup.forward.ids_0d"
BACKWARD, BACKWARD_2 = "lookup.backward.module_example_020", "lookup.backward.no_duplicates"
SINUSOID = "sin.canonical.l16_d8"
SELECTION = (FORWARD, FORWARD_0D, BACKWARD, SINUSOID)


BEHAVIOURS = [
    ("hang", ["--case-timeout", "1"], {BACKWARD: ("timeout", "no reply within 1 s")}),
    ("segfault", [], {FORWARD: ("crash", "killed by SIGSEGV"), FORWARD_0D: ("crash", "killed by SIGSEGV")}),
    ("os_exit", [], {BACKWARD: ("crash", "exited with code 3")}),
    ("system_exit", [], {FORWARD: ("error", "SystemExit: 4"), FORWARD_0D: ("error", "SystemExit: 4")}),
    ("keyboard_interrupt", [], {FORWARD: ("error", "KeyboardInterrupt"), FORWARD_0D: ("error", "KeyboardInterrupt")}),
    ("memory_hog", ["--memory-limit", "512"], {BACKWARD: ("crash", "ran out of memory (the limit is 512 MB)")}),
    (
        "chdir",
        [],
        {FORWARD: ("error", "changed the working directory"), FORWARD_0D: ("error", "changed the working directory")},
    ),
    (
        "numpy_state",
        [],
        {
            FORWARD: ("error", "np.seterr"),
            FORWARD_0D: ("error", "np.seterr"),
            SINUSOID: ("error", "np.set_printoptions"),
        },
    ),
    (
        "mutate_weight",
        [],
        {FORWARD: ("fail", "modified its input 'weight'"), FORWARD_0D: ("fail", "modified its input 'weight'")},
    ),
    ("mutate_ids", [], {FORWARD: ("fail", "modified its input 'ids'")}),  # 0-D ids are not sorted
    ("mutate_grad", [], {BACKWARD: ("fail", "modified its input 'grad_output'")}),
    ("view", [], {FORWARD_0D: ("fail", "output 'output' is a view of input 'weight'; the spec requires a new array")}),
]


def test_returning_the_table_itself_for_identity_ids_fails(tmp_path):
    identity = "lookup.forward.identity_ids"
    result, cases = run_cases(tmp_path, hostile("view"), select=(identity, FORWARD))
    assert_judged(
        result, cases, (identity, FORWARD), {identity: ("fail", "output 'output' is a view of input 'weight'")}
    )


@pytest.mark.parametrize("module, args, expected", BEHAVIOURS, ids=[b[0] for b in BEHAVIOURS])
def test_hostile_behaviour_costs_only_its_cases(tmp_path, module, args, expected):
    result, cases = run_cases(tmp_path, hostile(module), *args, select=SELECTION)
    assert_judged(result, cases, SELECTION, expected)


def test_the_guard_also_works_in_process(tmp_path):
    result, cases = run_cases(tmp_path, hostile("mutate_weight"), "--in-process", select=SELECTION)
    assert_judged(
        result,
        cases,
        SELECTION,
        {FORWARD: ("fail", "modified its input 'weight'"), FORWARD_0D: ("fail", "modified its input 'weight'")},
    )


def test_a_crash_report_carries_the_tail_of_what_the_worker_printed(tmp_path):
    result, cases = run_cases(tmp_path, hostile("segfault"), select=SELECTION)
    assert "embedding_forward" in cases[FORWARD]["stderr"]  # faulthandler's traceback, from the worker's stderr


def test_an_output_flood_neither_blocks_nor_floods_the_runner(tmp_path):
    result, cases = run_cases(tmp_path, hostile("flood"), select=SELECTION)
    assert_judged(result, cases, SELECTION, {BACKWARD: ("crash", "exited with code 1")})
    tail = cases[BACKWARD]["stderr"]
    assert "LAST WORDS" in tail and "earlier bytes of output not shown" in tail and len(tail) < 5000
    assert len(result.stdout) < 20_000 and len(result.stderr) < 20_000


def test_garbage_results_are_judged_not_trusted(tmp_path):
    select = (FORWARD, BACKWARD, SINUSOID, "pos.forward.batch1", "pos.backward.batch1", "lookup.sparse.module_example")
    result, cases = run_cases(tmp_path, hostile("garbage"), select=select)
    assert_judged(
        result,
        cases,
        select,
        {
            FORWARD: ("fail", "got str 'the output'"),
            BACKWARD: ("fail", "got list"),
            SINUSOID: ("fail", "'table' is None"),
            "pos.forward.batch1": ("fail", "<generator object"),
            "pos.backward.batch1": ("error", "returns 2 outputs"),
        },
    )


def test_the_run_timeout_times_out_every_remaining_case(tmp_path):
    select = (SINUSOID, FORWARD, BACKWARD, BACKWARD_2)
    result, cases = run_cases(tmp_path, hostile("hang"), "--run-timeout", "2", "--case-timeout", "30", select=select)
    order = list(cases)  # the report lists cases in the order they ran
    hung = min(order.index(BACKWARD), order.index(BACKWARD_2))
    expected = {case_id: ("timeout", "run timeout") for case_id in order[hung:]}
    assert_judged(result, cases, select, expected)


def test_repeat_reports_nondeterminism_and_strict_fails_it(tmp_path):
    result, cases = run_cases(tmp_path, hostile("nondeterministic"), "--repeat", "3", select=SELECTION)
    assert_exit(result, 0)
    assert_outcomes(cases, dict.fromkeys(SELECTION, "pass"))
    assert "nondeterministic" in cases[SINUSOID]["message"] and f"note: {SINUSOID}: nondeterministic" in result.stdout
    assert not any("nondeterministic" in c["message"] for case_id, c in cases.items() if case_id != SINUSOID)
    strict, cases = run_cases(tmp_path, hostile("nondeterministic"), "--repeat", "3", "--strict", select=SELECTION)
    assert_judged(strict, cases, SELECTION, {SINUSOID: ("fail", "nondeterministic")})


@pytest.mark.parametrize(
    "module, words", [("import_error", "RuntimeError: no GPU found"), ("syntax_error", "SyntaxError")]
)
def test_a_module_that_cannot_be_imported_is_one_line_and_exit_2(tmp_path, module, words):
    result, cases = run_cases(tmp_path, hostile(module), select=SELECTION)
    assert_one_line_error(result, words)
    assert cases is None and result.stdout == "" and result.stderr.startswith("embconf: cannot import")


# ----- the guard and the comparison, directly ------------------------------------------------------------


def test_mutation_checks_are_bitwise_and_nan_aware():
    nan = np.array([np.nan, 0.0, 1.0], dtype=np.float32)
    assert describe_change(nan, nan.copy()) == ""
    assert describe_change(nan, np.array([np.nan, -0.0, 1.0], dtype=np.float32)) == "1 of 3 elements changed"
    assert "shape changed" in describe_change(np.zeros((2, 3)), np.zeros(6))
    assert describe_change({"pos_encoding": "learned"}, {"pos_encoding": None}) != ""
    assert modified_inputs({"start_pos": 0, "x": np.ones(2)}, {"start_pos": 0, "x": np.ones(2)}) == []


def test_views_are_caught_except_the_identity_gradient():
    grad, table = np.ones((1, 2, 3), np.float32), np.zeros((4, 3), np.float32)
    handed = {"grad_output": grad, "table": table}
    assert aliased_outputs("learned_positions_backward", {"grad_x": grad, "grad_table": table.copy()}, handed) == []
    found = aliased_outputs("learned_positions_backward", {"grad_x": grad.copy(), "grad_table": table[:]}, handed)
    assert found == ["output 'grad_table' is a view of input 'table'; the spec requires a new array"]


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_outputs_where_none_is_expected_fail_in_compare(cases_by_id, bad):
    """compare.py already rejects NaN/Inf where the golden is finite (the guard need not)."""
    from embconf.judging.cases import judge

    case = cases_by_id[FORWARD]
    output = case.expected_outputs["output"].copy()
    output[1, 2] = bad
    result = judge(case, Reply(Status.OUTPUTS, outputs={"output": output}), None)
    assert_outcome(result, "fail", "differs at index [1, 2]")


def test_the_worker_is_sent_inputs_only(cases_by_id, monkeypatch):
    from embconf import isolation
    from embconf.isolation.handle import WorkerHandle

    sent: list[Any] = []
    original = WorkerHandle.send
    monkeypatch.setattr(WorkerHandle, "send", lambda self, message: (sent.append(message), original(self, message))[1])
    adapter = isolation.open_adapter("reference")
    try:
        case = cases_by_id[BACKWARD]
        assert adapter.call(case.operation, case.inputs()).status == Status.OUTPUTS
    finally:
        adapter.close()
    [(operation, inputs, rows, instance)] = sent[0][1]  # one call, not announced: a batch of one, outputs whole
    assert sent[0][0] == "call" and operation == case.operation and sorted(inputs) == sorted(case.raw_inputs)
    assert rows == {} and instance == 0  # made on no instance of its own (spec section 9.7)


def test_a_worker_gone_between_batches_costs_the_next_call_only(cases_by_id):
    """The worker dies after answering a whole batch: sending it the next call fails, which is that call's
    crash (never an exception out of the adapter), and the call after it gets a fresh worker."""
    import os
    import signal
    import time

    from embconf.isolation import BATCH, IsolatedAdapter
    from embconf.model.contract import Status

    forward = cases_by_id[FORWARD]
    adapter = IsolatedAdapter("reference")
    try:
        adapter.plan([Planned(forward.operation, forward.inputs)] * BATCH)
        assert {adapter.call(forward.operation, forward.inputs()).status for _ in range(BATCH)} == {Status.OUTPUTS}
        worker = adapter._worker
        assert worker is not None
        os.kill(worker.pid, signal.SIGKILL)
        time.sleep(0.5)  # dead (a zombie until the adapter reaps it) before the next batch is sent
        lost = adapter.call(forward.operation, forward.inputs())
        after = adapter.call(forward.operation, forward.inputs())
    finally:
        adapter.close()
    assert lost.status == Status.DIED and after.status == Status.OUTPUTS


def test_batched_calls_survive_a_worker_lost_mid_batch_and_a_caller_leaving_its_plan(cases_by_id):
    from embconf.isolation import IsolatedAdapter
    from embconf.model.contract import Status

    order = [FORWARD, BACKWARD, SINUSOID, FORWARD_0D, BACKWARD]
    adapter = IsolatedAdapter(hostile("segfault"))
    try:
        adapter.plan([Planned(cases_by_id[c].operation, cases_by_id[c].inputs) for c in order])
        statuses = [adapter.call(cases_by_id[c].operation, cases_by_id[c].inputs()).status for c in order]
        adapter.plan([Planned(cases_by_id[c].operation, cases_by_id[c].inputs) for c in (BACKWARD, SINUSOID, BACKWARD)])
        off_plan = [
            adapter.call(cases_by_id[c].operation, cases_by_id[c].inputs()) for c in (BACKWARD, FORWARD, SINUSOID)
        ]
    finally:
        adapter.close()
    assert statuses == [Status.DIED, Status.OUTPUTS, Status.OUTPUTS, Status.DIED, Status.OUTPUTS]
    assert [reply.status for reply in off_plan] == [Status.OUTPUTS, Status.DIED, Status.OUTPUTS] and off_plan[
        2
    ].outputs["table"].shape == (16, 8)


def test_calls_run_ahead_go_back_to_the_plan_in_their_order():
    """A lost worker's unanswered calls, then the batch made ready ahead, then the rest: the plan keeps its
    order (out of order, every later call would leave the plan and run in lock-step); a forgotten operation's
    calls leave the batch made ready too."""
    from embconf.isolation import IsolatedAdapter
    from embconf.isolation.adapter import Batch

    def calls(numbers):
        return [Planned(f"op{n}", dict) for n in numbers]

    adapter = IsolatedAdapter("reference")  # never started: only its plan is looked at
    adapter._planned.extend(calls(range(10, 13)))
    adapter._sent.extend(calls(range(0, 5)))
    adapter._next = Batch(calls(range(5, 10)), [], [])
    adapter._discard()
    assert [call.operation for call in adapter._planned.take(99)] == [f"op{n}" for n in range(13)]
    adapter._planned.extend(calls(range(10, 13)))
    adapter._next = Batch(calls(range(5, 10)), [], [])
    adapter.forget("op7")
    assert [call.operation for call in adapter._planned.take(99)] == [f"op{n}" for n in (5, 6, 8, 9, 10, 11, 12)]
