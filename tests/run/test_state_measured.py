"""State measured, not inferred: a case that fails inside a run is run again alone on a fresh worker; one that then
passes is "state carried across calls" (its cases cited, no per-case mistake named for them), a stateless wrong
module is never said to carry state, a crash when run alone costs one line, a case of calls starts on a fresh
instance, and dynamic-NTK frequencies kept for a shorter call are named from what the calls measured."""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

import pytest
from helpers import IMPLS

from embconf.corpus.select import select
from embconf.model.outcomes import PASS
from embconf.session import RunOptions, Session

CARRIED = "fails only after other calls ran: state carried across calls"


def _run(corpus, module: str, *patterns: str):
    return Session.open(f"functions:{IMPLS / module}", select(corpus.cases, list(patterns)), RunOptions()).run()


def _state_causes(record) -> list:
    return [c for r in record.results for c in r.causes if c.symptom is not None and c.symptom.family == "state"]


@pytest.fixture(scope="module")
def cached(corpus):
    return _run(corpus, "rope_cache_by_width.py", "rope.forward.*", "stateful.rope.cache.*")


def test_a_module_level_cache_is_named_as_state_carried_citing_its_cases(cached, corpus):
    (entry,) = [c for c in cached.verdict.causes if CARRIED in c.title]
    results = {r.id: r for r in cached.results}
    carried = [i for i in entry.cases if "state:carried:rope_forward" in [str(c.symptom) for c in results[i].causes]]
    assert len(carried) >= 8 and all(results[i].outcome != PASS for i in carried)
    for case_id in carried:  # its one cause: no per-case mistake is named for a case that passes alone
        assert len(results[case_id].causes) == 1, results[case_id].causes
    alone = _run(corpus, "rope_cache_by_width.py", carried[-1])
    assert [r.outcome for r in alone.results] == [PASS]  # what the sentence says, measured again


def test_state_carried_and_the_cache_the_cases_of_calls_show_are_one_entry(cached):
    """The same cache fails the cases of calls (the catalogue's cache by length replays them): one defect."""
    sequences = {r.id for r in cached.results if r.id.startswith("stateful.") and r.outcome.value == "fail"}
    entries = [c for c in cached.verdict.causes if CARRIED in c.title or c.id == "rope.state.cache_by_length"]
    assert len(entries) == 1 and sequences and sequences <= set(entries[0].cases)


def test_a_case_of_calls_starts_on_a_fresh_instance(cached):
    """Earlier cases of the same width filled the module's cache: on the module as the run left it, the first call
    would already fail; on a fresh worker the first call passes and the second (another offset) fails."""
    sequences = [r for r in cached.results if r.id.startswith("stateful.rope.cache.") and r.outcome != PASS]
    applicable = [r for r in sequences if r.outcome.value != "not_applicable"]
    assert applicable and all(r.call == 2 for r in applicable), [(r.id, r.call) for r in applicable]


def test_a_stateless_wrong_module_is_never_said_to_carry_state(corpus):
    record = _run(corpus, "rope_bfloat16_angles.py", "rope.forward.*")
    assert record.count(PASS) < len(record.results)
    assert _state_causes(record) == []
    assert not any(c.symptom is not None and c.symptom.family == "state" for c in record.verdict.causes)


def test_a_crash_when_run_alone_costs_one_line_and_says_nothing_of_state(corpus, caplog):
    marker = Path(tempfile.gettempdir(), f"embconf-rope-crash-alone.{os.getpid()}")  # the worker's parent: this
    marker.unlink(missing_ok=True)
    try:
        with caplog.at_level(logging.WARNING):
            record = _run(corpus, "rope_crash_alone.py", "rope.forward.half_split.*")
    finally:
        marker.unlink(missing_ok=True)
    assert record.count(PASS) == 1 and {r.outcome.value for r in record.results} <= {"pass", "fail", "not_applicable"}
    assert _state_causes(record) == []
    said = [r.getMessage() for r in caplog.records if "alone" in r.getMessage()]
    assert len(said) == 1 and "\n" not in said[0] and "crashed" in said[0], said


def test_dynamic_frequencies_kept_for_a_shorter_call_are_named_from_the_calls(corpus):
    """transformers #25306's kept frequencies, reset only by a longer call (neither catalogue rule): the later
    call's outputs are the reference's with the earlier call's grown frequencies, said as that state."""
    record = _run(corpus, "rope_dynamic_kept.py", "rope.forward.*", "stateful.rope.dynamic.*")
    failing = {r.id: r for r in record.results if r.id.startswith("stateful.") and r.outcome.value == "fail"}
    assert "stateful.rope.dynamic.long_then_short.half_split" in failing
    for result in failing.values():
        assert result.call >= 2 and [c.identity for c in result.causes] == ["state:dynamic_kept"], result.causes
        assert "grown for an earlier call's length" in result.causes[0].summary
    assert not any("frequencies differ" in c.title for c in record.verdict.causes)
