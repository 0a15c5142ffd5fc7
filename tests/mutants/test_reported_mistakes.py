"""The mistakes found in public trackers and pull requests (conformance/mutants/rope_reports.py, bag_reports.py):
each cites its report, is killed by the goldens, named first on every case it fails and one entry of the verdict;
its reading (a rope frequency candidate, a bag symptom of diagnosis/symptoms/bags.py) is said under its identity,
and each reading is said where its predicate holds and not where it does not."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from helpers import cause_ids, first_cause, problems, run_diagnosed
from hypothesis import given, settings
from hypothesis import strategies as st

from embconf.adapters.bags import BagCall
from embconf.adapters.base import call_python
from embconf.diagnosis.symptoms import describe
from embconf.model.outcomes import FAIL, CaseResult
from embconf.mutants import bag_reports, get, implementation, rope_reports
from embconf.mutants.adapter import MutantAdapter
from embconf.mutants.bag_reduce import BagSlip, bag_forward

REPORTED = rope_reports.REPORTED + bag_reports.REPORTED
# the reading each one's failing cases get besides the mutant (the rest: an existing reading, "accepts", "None")
READING = {
    "rope.scaling_ignored": "rope:frequencies:rope_forward:scaling_ignored",
    "rope.linear_factor_multiplied": "rope:frequencies:rope_forward:factor_multiplied",
    "rope.yarn_always_truncates": "rope:frequencies:rope_forward:yarn_truncated",
    "rope.yarn_never_truncates": "rope:frequencies:rope_forward:yarn_untruncated",
    "rope.yarn_factor_in_power": "rope:frequencies:rope_forward:yarn_factor_in_power",
    "rope.dynamic_static_length": "rope:frequencies:rope_forward:dynamic_static",
    "rope.partial_frequencies_over_head_dim": "rope:frequencies:rope_forward:head_dim",
    "bag.not_reduced": "bag:unreduced:embedding_bag_forward",
    "bag.last_bag_dropped": "bag:last_bag_dropped:embedding_bag_forward",
    "bag.empty_bags_refused": "bag:empty_refused:embedding_bag_forward",
    "bag.last_bag_only": "bag:last_bag_row:embedding_bag_forward",
    "bag.sums_in_table_dtype": "bag:running_sum:embedding_bag_forward:float16",
    "bag.repeated_ids_overwritten": "bag:repeated_rows:embedding_bag_backward",
    "bag.padding_weight_gradient": "bag:padding_positions:embedding_bag_backward",
}


@pytest.fixture(scope="module")
def goldens(corpus) -> list:
    return [case for case in corpus.cases if case.operation.startswith(("rope_", "embedding_bag"))]


@pytest.fixture(scope="module")
def by_id(corpus) -> dict:
    return {case.id: case for case in corpus.cases}


def test_at_least_eight_rotary_and_eight_bag_mistakes_cite_a_public_report() -> None:
    assert len(rope_reports.REPORTED) >= 8 and len(bag_reports.REPORTED) >= 8
    assert [m for m in REPORTED if not get(m).source.startswith("https://github.com/")] == []


@pytest.mark.parametrize("mutant", REPORTED)
def test_a_reported_mistake_is_killed_named_first_and_one_verdict_entry(goldens, mutant: str) -> None:
    run = run_diagnosed(MutantAdapter(mutant), goldens)
    failing = [result for result in run.results if result.id in problems(run.results)]
    assert failing
    assert [(result.id, cause_ids(result)[:3]) for result in failing if first_cause(result) != mutant] == []
    assert [entry.id for entry in run.verdict.causes] == [mutant]
    if mutant in READING:
        identity = get(mutant).mistake or mutant  # a bag form of a lookup mistake is that mistake
        read = {c.key for result in failing for c in result.causes if c.mistake == identity and not c.is_mutant}
        assert READING[mutant] in read, read


def _said(case, actual: dict) -> set[str]:
    return {
        s.key for s in describe(case, case.inputs(), CaseResult(case.id, (), (), case.operation, FAIL, actual=actual))
    }


def _reply(mutant: str, case) -> dict:
    return dict(call_python(case.operation, implementation(mutant)[case.operation], **case.inputs()).outputs)


ROPE_CASES = {  # a case each rope reading is read on
    "rope.yarn_always_truncates": "rope.forward.half_split.yarn_untruncated",
    "rope.yarn_never_truncates": "rope.forward.half_split.yarn_above_original",
    "rope.yarn_factor_in_power": "rope.forward.half_split.yarn_above_original",
    "rope.dynamic_static_length": "rope.forward.half_split.dynamic_within",
    "rope.linear_factor_multiplied": "rope.forward.half_split.linear_d64",
}


@pytest.mark.parametrize("mutant", sorted(ROPE_CASES))
def test_a_frequency_reading_is_said_of_its_mistake_s_output_and_not_of_another_s(by_id, mutant: str) -> None:
    case = by_id[ROPE_CASES[mutant]]
    assert READING[mutant] in _said(case, _reply(mutant, case))
    others = [m for m in rope_reports.REPORTED if m != mutant and get(m).covers(case.operation)]
    wrong = {m: _said(case, _reply(m, case)) for m in others + ["rope.positions_from_1", "rope.base_ignored"]}
    assert [m for m, said in wrong.items() if READING[mutant] in said] == []


@settings(max_examples=20, deadline=None)
@given(position=st.integers(0, 4), delta=st.floats(0.25, 4.0))
def test_a_weight_gradient_is_said_wrong_at_padding_positions_only_where_only_they_differ(by_id, position, delta):
    case = by_id["bag.backward.sum.weights_padding"]
    want = case.expected_outputs
    held = np.asarray(case.inputs()["ids"]) == case.inputs()["padding_idx"]
    got = want["grad_per_sample_weights"].copy()
    got[position] += np.float32(delta)
    said = READING["bag.padding_weight_gradient"] in _said(case, {**want, "grad_per_sample_weights": got})
    assert said == bool(held[position])


def _repeated_case(by_id):
    case = by_id["bag.backward.sum.basic"]
    ids = np.asarray(case.inputs()["ids"]).tolist()
    return case, {i for i in ids if ids.count(i) > 1}, {i for i in ids if ids.count(i) == 1}


def test_the_sum_backward_golden_selects_rows_once_and_more_than_once(by_id) -> None:
    _, repeated, single = _repeated_case(by_id)
    assert repeated and single


@settings(max_examples=20, deadline=None)
@given(pick=st.integers(0, 100), column=st.integers(0, 3), delta=st.floats(0.25, 4.0))
def test_a_table_gradient_is_said_overwritten_only_where_repeated_rows_hold_their_last_occurrence(
    by_id, pick, column, delta
):
    case, repeated, single = _repeated_case(by_id)
    want = case.expected_outputs
    assigned = _reply("bag.repeated_ids_overwritten", case)["grad_weight"]
    assert READING["bag.repeated_ids_overwritten"] in _said(case, {**want, "grad_weight": assigned})
    for rows in (sorted(repeated), sorted(single)):  # a row off by delta: not what assignment leaves
        got = assigned.copy()
        got[rows[pick % len(rows)], column % got.shape[1]] += np.float32(delta)
        assert READING["bag.repeated_ids_overwritten"] not in _said(case, {**want, "grad_weight": got})


@settings(max_examples=10, deadline=None)
@given(element=st.integers(0, 1000))
def test_a_half_precision_running_sum_is_said_only_of_an_output_that_is_one(by_id, element) -> None:
    case = by_id["bag.forward.sum.float16_long_bag"]
    inputs = case.inputs()
    call = BagCall(inputs["weight"], inputs["ids"], inputs["offsets"], inputs["mode"])
    running = bag_forward(BagSlip(accumulate_in_dtype=True), call)
    assert READING["bag.sums_in_table_dtype"] in _said(case, {"output": running})
    other = running.copy()
    flat = other.reshape(-1)
    flat[element % flat.size] = np.nextafter(flat[element % flat.size], np.float16(np.inf))
    assert READING["bag.sums_in_table_dtype"] not in _said(case, {"output": other})


def test_a_refusal_is_said_to_refuse_empty_bags_only_of_offsets_holding_equal_entries(by_id) -> None:
    def said(case_id: str) -> set[str]:
        case = by_id[case_id]
        result = CaseResult(case.id, (), (), case.operation, FAIL, error_kind="invalid_offsets")
        return {s.key for s in describe(case, case.inputs(), result)}

    assert READING["bag.empty_bags_refused"] in said("bag.forward.sum.empty_bags")
    assert READING["bag.empty_bags_refused"] not in said("bag.forward.sum.basic")


def test_a_single_row_is_said_to_be_the_last_bag_s_only_when_it_is(by_id) -> None:
    case = by_id["bag.forward.sum.basic"]
    want = case.expected_outputs["output"]
    assert want.shape[0] > 1 and not np.array_equal(want[0], want[-1])
    assert READING["bag.last_bag_only"] in _said(case, {"output": want[-1].copy()})
    assert READING["bag.last_bag_only"] not in _said(case, {"output": want[0].copy()})


def test_a_half_accumulation_slip_passes_every_float32_bag_case(goldens) -> None:
    """A running sum is a half-precision mistake: in float32 it stays within the goldens' tolerance."""
    from embconf.mutation.kills import kill_matrix

    single = [c for c in goldens if c.operation == "embedding_bag_forward" and "float" not in c.id]
    mutant = get("bag.sums_in_table_dtype")
    assert kill_matrix(single, [mutant])[mutant.id] == []


def test_frequencies_grown_for_a_longer_length_are_said_static_only_of_a_first_call(by_id) -> None:
    """After a long call on one instance, frequencies grown for that length are what kept state gives: the static
    reading is said of the same outputs made by a first call, not of a later one."""
    later = by_id["stateful.rope.dynamic.long_then_short.half_split"].calls[-1]
    assert later.before
    first = replace(later, before=())
    outputs = _reply("rope.dynamic_static_length", first)
    assert READING["rope.dynamic_static_length"] in _said(first, outputs)
    assert READING["rope.dynamic_static_length"] not in _said(later, outputs)


def test_an_output_is_said_unreduced_only_when_it_is_the_ids_rows(by_id) -> None:
    case = by_id["bag.forward.sum.two_d"]
    inputs = case.inputs()
    rows = inputs["weight"][inputs["ids"]]
    assert READING["bag.not_reduced"] in _said(case, {"output": rows})
    assert READING["bag.not_reduced"] not in _said(case, {"output": rows[:, ::-1].copy()})


def test_the_last_bag_is_said_dropped_only_of_the_other_bags_rows_when_it_holds_ids(by_id) -> None:
    held, empty = by_id["bag.forward.sum.basic"], by_id["bag.forward.sum.empty_bags"]
    assert int(empty.inputs()["offsets"][-1]) == np.size(empty.inputs()["ids"])  # its last bag holds no id
    for case, holds in ((held, True), (empty, False)):
        want = case.expected_outputs["output"]
        assert (READING["bag.last_bag_dropped"] in _said(case, {"output": want[:-1].copy()})) == holds
    assert READING["bag.last_bag_dropped"] not in _said(held, {"output": held.expected_outputs["output"][1:].copy()})
