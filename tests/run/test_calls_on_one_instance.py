"""Cases of calls on one instance (spec section 9.7, section 15: EMB-STA-1..4): each call judged on its own golden,
the case decided by its first call that does not pass, state kept between calls found, and an older protocol
peer left with the outcomes it had."""

from __future__ import annotations

import json

import pytest
from helpers import EXAMPLE_STUDENT, IMPLS, PYTHON, first_cause, outcomes, peer, report_cases, run_diagnosed, run_report

from embconf.adapters import create_adapter
from embconf.corpus.fixtures import FixtureError, parse_fixture_file
from embconf.corpus.select import select
from embconf.model.outcomes import FAIL, NOT_APPLICABLE, PASS
from embconf.model.vocabulary import spec_version
from embconf.session import RunOptions, Session

STATE_MUTANTS = {  # mutant -> the stateful cases it fails (each passes every case of one call)
    "rope.state.dynamic_never_shrinks": {
        "stateful.rope.dynamic.long_then_short.half_split",
        "stateful.rope.dynamic.long_then_short.interleaved",
        "stateful.rope.dynamic.long_then_shorter.half_split",
        "stateful.rope.dynamic.long_then_original.half_split",
        "stateful.rope.dynamic.long_then_original.interleaved",
        "stateful.rope.dynamic.short_long_short.half_split",
        "stateful.rope.dynamic.backward.long_then_short.half_split",
    },
    "rope.state.dynamic_reset_below_original": {
        "stateful.rope.dynamic.long_then_shorter.half_split",
        "stateful.rope.dynamic.long_then_original.half_split",
        "stateful.rope.dynamic.long_then_original.interleaved",
    },
}


@pytest.fixture(scope="module")
def stateful(corpus):
    return select(corpus.cases, ["stateful.*"])


def test_every_stateful_case_is_a_sequence_the_reference_passes(stateful):
    record = run_diagnosed(create_adapter("reference"), stateful)
    assert len(stateful) == 16 and all(case.is_sequence and "stateful" in case.features for case in stateful)
    assert {r.outcome for r in record.results} == {PASS}


@pytest.mark.parametrize("mutant", sorted(STATE_MUTANTS))
def test_a_dynamic_ntk_module_that_keeps_grown_frequencies_fails_only_the_later_calls(corpus, mutant):
    """transformers #25306 (never shrinks) and 5.x (shrinks only below the original length): each passes every
    case of one call, fails the stateful ones it should, on the call after the long one, and is named."""
    rope = select(corpus.cases, ["rope.*", "stateful.*"])
    record = Session.open(f"mutant:{mutant}", rope, RunOptions()).run()  # through the worker: instances carried
    failed = {r.id: r for r in record.results if r.outcome != PASS and r.outcome != NOT_APPLICABLE}
    assert set(failed) == STATE_MUTANTS[mutant]
    assert all(r.call >= 2 and first_cause(r) == mutant for r in failed.values())
    assert f"call {failed['stateful.rope.dynamic.long_then_shorter.half_split'].call} of 2 on one instance" in (
        failed["stateful.rope.dynamic.long_then_shorter.half_split"].message
    )


def test_a_cache_keyed_by_length_fails_every_later_call_at_another_offset(stateful):
    """rotary-embedding-torch #11: the cache cases fail on their second call, and the diagnosis names it."""
    record = run_diagnosed(create_adapter("mutant:rope.state.cache_by_length"), stateful)
    failed = {r.id: r for r in record.results if r.outcome == FAIL}
    cache = {case.id for case in stateful if case.id.startswith("stateful.rope.cache.")}
    assert cache <= set(failed) and all(failed[c].call == 2 for c in cache)
    assert {first_cause(failed[c]) for c in cache} == {"rope.state.cache_by_length"}


def test_a_layer_whose_backward_adds_into_its_own_buffer_fails_its_second_step(stateful):
    """EMB-STA-4: a fresh layer is right, so every case of one call passes; its second step carries the first's
    gradient, found on call 2 and named as a buffer never zeroed."""
    student = create_adapter(f"tinytorch:{IMPLS / 'tinytorch_layer_grad_buffer.py'}")
    record = run_diagnosed(student, stateful)
    failed = {r.id: r for r in record.results if r.outcome == FAIL}
    assert set(failed) == {
        "stateful.layer.own_backward.two_steps.learned",
        "stateful.layer.own_backward.three_steps.sinusoidal",
    }
    assert all(
        r.call == 2 and first_cause(r) == "symptom:stale_buffer:embedding_layer_own_backward:grad_token_weight"
        for r in failed.values()
    )


def test_the_correct_student_passes_its_steps_and_a_fresh_layer_stays_fresh(corpus):
    cases = select(corpus.cases, ["stateful.layer.*", "stateful.lookup.*", "layer.own_backward.*"])
    record = run_diagnosed(create_adapter(f"tinytorch:{EXAMPLE_STUDENT}"), cases)
    assert {r.id for r in record.results if r.outcome == PASS} >= {c.id for c in cases if c.id.startswith("stateful")}
    assert not [r.id for r in record.results if r.outcome not in (PASS, NOT_APPLICABLE)]


def test_a_repeated_call_must_give_the_first_calls_bits(corpus):
    """EMB-STA-1: a cache filled in float32 after an exact first call answers within tolerance, not the same bits."""
    cases = select(corpus.cases, ["stateful.rope.repeated.half_split"])
    result = run_diagnosed(create_adapter(f"functions:{IMPLS / 'rope_cached_float32.py'}"), cases).results[0]
    assert result.outcome == FAIL and result.call == 2
    assert "not bit for bit what call 1 returned for the same inputs" in result.message


def test_an_older_peer_gets_the_cases_as_not_applicable_with_the_reason(tmp_path):
    """A peer of protocol minor 4 that lists 'stateful' is not sent the cases (PROTOCOL.md section 8); its other
    cases run as before."""
    done, report = run_report(
        tmp_path, peer("minor_4"), select=["stateful.rope.repeated.*", "rope.forward.half_split.d64_p0"]
    )
    cases = report_cases(report)
    assert done.returncode == 0 and outcomes(report)["rope.forward.half_split.d64_p0"] == "pass"
    repeated = cases["stateful.rope.repeated.half_split"]
    assert repeated["outcome"] == "not_applicable" and "feature stateful" in repeated["message"]
    assert "protocol minor 5" in repeated["message"]


def test_a_peer_is_told_the_instance_and_a_cache_by_length_over_the_wire_fails(tmp_path):
    """Minor 5: requests carry 'instance' (schema-checked under --validate-protocol); a peer that caches per
    instance by length fails the cache cases on call 2, with 'call' in the report; the reference peer passes."""
    select_ = ["stateful.rope.cache.*"]
    done, report = run_report(tmp_path, peer("cache_by_length"), "--validate-protocol", select=select_)
    cases = report_cases(report)
    assert done.returncode == 1 and {c["outcome"] for c in cases.values()} == {"fail"}
    assert {c["call"] for c in cases.values()} == {2}
    reference = f"subprocess:{PYTHON} -m embconf.protocol.reference_peer"
    done, report = run_report(tmp_path, reference, "--validate-protocol", select=select_, name="ref.json")
    assert done.returncode == 0 and set(outcomes(report).values()) == {"pass"}
    assert all("call" not in case for case in report["cases"])


def test_a_run_request_names_its_instance_only_to_a_peer_of_minor_5():
    from embconf.protocol.messages import RunRequest, parse_start_reply
    from embconf.protocol.reference_peer import hello

    assert RunRequest(1, "rope_forward", {}, instance=7).wire()["instance"] == 7
    assert "instance" not in RunRequest(1, "rope_forward", {}).wire()
    assert "stateful" in parse_start_reply(hello()).implementation.capabilities.features
    older = parse_start_reply({**hello(), "protocol_minor": 4}).implementation.capabilities
    assert "stateful" not in older.features and "stateful" in older.applies("rope_forward", ["stateful"])


def _sequence_file(tmp_path, calls):
    record = {
        "id": "stateful.test.bad",
        "description": "x",
        "requirements": ["EMB-STA-1"],
        "features": ["stateful"],
        "operation": "table_bytes",
        "calls": calls,
    }
    document = {"format_version": 1, "spec_version": spec_version(), "area": "stateful", "cases": [record]}
    path = tmp_path / "stateful.yaml"
    path.write_text(json.dumps(document))
    return path


def test_a_sequence_of_fewer_than_two_calls_or_a_bad_call_is_refused_in_one_line(tmp_path):
    call = {
        "operation": "table_bytes",
        "inputs": {"num_rows": 2, "embed_dim": 3, "dtype": "float32"},
        "expected": {"outputs": {"bytes": 24, "megabytes": 2.4e-05, "mebibytes": 2.288818359375e-05}},
        "tolerance": {"bytes": {"kind": "exact"}, "megabytes": {"kind": "exact"}, "mebibytes": {"kind": "exact"}},
    }
    path = _sequence_file(tmp_path, [call])
    with pytest.raises(FixtureError, match="two or more calls"):
        parse_fixture_file(path, path.read_bytes())
    path = _sequence_file(tmp_path, [call, {**call, "operation": "no_such_operation"}])
    with pytest.raises(FixtureError, match="call 2: unknown operation"):
        parse_fixture_file(path, path.read_bytes())
    path = _sequence_file(tmp_path, [call, {**call, "inputs": {**call["inputs"], "bogus": 1}}])
    with pytest.raises(FixtureError, match="call 2: unknown input 'bogus'"):
        parse_fixture_file(path, path.read_bytes(), validate=True)
    cases = parse_fixture_file(
        _sequence_file(tmp_path, [call, call]), _sequence_file(tmp_path, [call, call]).read_bytes(), validate=True
    )
    assert [len(c.calls) for c in cases] == [2] and cases[0].calls[1].label.endswith("call 2 of 2 on one instance")


def test_show_prints_each_call_of_a_case_of_calls():
    from helpers import run_cli

    done = run_cli("show", "stateful.lookup.backward.two_calls")
    assert done.returncode == 0 and done.stdout.count("expected outputs:") == 2
    assert "call 1 of 2 on one instance: embedding_backward" in done.stdout
    assert "call 2 of 2 on one instance: embedding_backward" in done.stdout


def test_a_call_that_times_out_decides_its_case_and_no_later_call_is_made(tmp_path):
    """A hang on call 1 is the case's timeout (call 1); call 2 is not sent (no second hang), the run goes on."""
    log = tmp_path / "hangs.txt"
    select_ = ["stateful.lookup.backward.two_calls", "pos.forward.batch1"]
    done, report = run_report(tmp_path, peer("hang", str(log)), "--timeout", "1", select=select_)
    case = report_cases(report)["stateful.lookup.backward.two_calls"]
    assert done.returncode == 1 and case["outcome"] == "timeout" and case["call"] == 1
    assert log.read_text().count("hanging") == 1
    assert outcomes(report)["pos.forward.batch1"] == "pass"
