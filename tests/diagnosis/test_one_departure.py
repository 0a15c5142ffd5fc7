"""One defect, one entry, where measured: a generic frequency reading whose outputs are the run's fitted frequency
mistake's once the run's other departure (the base ignored) is applied, and a layer's "positions not added" on a
pos_encoding the run's memory mistake reads as unknown, join that mistake's entry; elsewhere they stay their own."""

from __future__ import annotations

import pytest

from embconf.corpus.fixtures import Case
from embconf.diagnosis.one_departure import frequency_departure, unknown_pos_encoding
from embconf.diagnosis.replay import mutant_reply
from embconf.diagnosis.verdict import run_verdict
from embconf.model.outcomes import FAIL, CaseResult
from embconf.model.record import Cause, CauseKind, RunRecord
from embconf.mutants import get

LLAMA3_TABLE, SCALING_TABLE = "rope.tables.llama3_d128", "rope.pairs.rope_tables.034"
ROPE_LAYER, MEMORY = "layer.forward.rope.half_split.start_pos", "memory.pairs.parameter_count.020"


@pytest.fixture(scope="module")
def by_id(corpus) -> dict[str, Case]:
    return {case.id: case for case in corpus.cases}


def _symptom(key: str, mistake: str = "") -> Cause:
    return Cause(CauseKind.SYMPTOM, key, f"title of {key}", "", mistake=mistake)


def _run(*results: CaseResult) -> RunRecord:
    return RunRecord(list(results), None, {})  # type: ignore[arg-type]


def _frequency_run(by_id: dict[str, Case], base: float) -> RunRecord:
    """A llama3 table case answered as the unscaled frequencies of ``base``, read as generic, beside the fitted
    scaling and base mistakes of other cases."""
    case = by_id[LLAMA3_TABLE]
    actual = dict(mutant_reply(get("rope.tables.scaling_ignored"), case, {**case.inputs(), "base": base}).outputs)
    generic = _symptom("rope:frequencies:rope_tables", mistake="rope:frequencies:")
    return _run(
        CaseResult(case.id, (), (), case.operation, FAIL, actual=actual, causes=[generic]),
        CaseResult(
            SCALING_TABLE,
            (),
            (),
            "rope_tables",
            FAIL,
            causes=[_symptom("rope:frequencies:rope_tables:scaling_ignored", mistake="rope.scaling_ignored")],
        ),
        CaseResult(
            "base",
            (),
            (),
            "rope_tables",
            FAIL,
            causes=[_symptom("rope:frequencies:rope_tables:base_10000", mistake="rope.base_ignored")],
        ),
    )


def test_a_generic_frequency_reading_the_fitted_mistake_gives_with_the_base_ignored_is_one_entry(by_id):
    run = _frequency_run(by_id, 10000.0)
    frequency_departure(run, by_id)
    verdict = run_verdict(run)
    entry = next(c for c in verdict.causes if c.identity == "rope.scaling_ignored")
    assert set(entry.cases) == {LLAMA3_TABLE, SCALING_TABLE}
    assert len(verdict.causes) == 2
    assert "in place of the case's 500000" in run.results[0].causes[0].title


def test_a_generic_frequency_reading_no_fitted_mistake_gives_stays_its_own(by_id):
    run = _frequency_run(by_id, 20000.0)  # neither the case's base nor the one the run's base mistake uses
    frequency_departure(run, by_id)
    assert len(run_verdict(run).causes) == 3


def _position_run(by_id: dict[str, Case], layer_id: str, mutant: bool = True) -> RunRecord:
    memory = [Cause(CauseKind.MUTANT, "mem.unknown_pos_as_none", "counts unknown as none", "")] if mutant else []
    return _run(
        CaseResult(
            layer_id,
            (),
            (),
            by_id[layer_id].operation,
            FAIL,
            causes=[_symptom("position_scale:0", mistake="position_scale")],
        ),
        CaseResult(MEMORY, (), (), "parameter_count", FAIL, causes=memory),
    )


def test_positions_not_added_on_an_unknown_pos_encoding_is_the_memory_mistake(by_id):
    run = _position_run(by_id, ROPE_LAYER)
    unknown_pos_encoding(run, by_id)
    verdict = run_verdict(run)
    assert [(c.id, set(c.cases)) for c in verdict.causes] == [("mem.unknown_pos_as_none", {ROPE_LAYER, MEMORY})]


def test_positions_not_added_on_a_known_pos_encoding_or_without_the_memory_mistake_stay_their_own(by_id):
    learned = next(
        i
        for i, c in by_id.items()
        if c.operation == "embedding_layer_forward"
        and (c.inputs().get("config") or {}).get("pos_encoding") == "learned"
    )
    for run in (_position_run(by_id, learned), _position_run(by_id, ROPE_LAYER, mutant=False)):
        unknown_pos_encoding(run, by_id)
        assert run.results[0].causes[0].mistake == "position_scale"
