"""One mistake, one entry: a mistake seen in several operations, or both as a catalogue mutant and as a measured
symptom, is one verdict entry, grouped by what the mistake is, never by a case's wording; two mistakes stay two."""

from __future__ import annotations

import pytest
from helpers import run_diagnosed

from embconf.corpus.fixtures import Case
from embconf.diagnosis.verdict import run_verdict
from embconf.model.outcomes import FAIL, CaseResult
from embconf.model.record import Cause, CauseKind, RunRecord
from embconf.mutants import get
from embconf.mutants.adapter import ImplementationAdapter
from embconf.mutants.compose import Implementation
from embconf.reference import embedding_backward

LAYER_FWD, LAYER_BWD = "embedding_layer_forward", "embedding_layer_backward"
POS_BWD, LOOKUP_BWD = "learned_positions_backward", "embedding_backward"


@pytest.fixture(scope="module")
def cases(corpus) -> list[Case]:
    return corpus.cases


def _valid(cases: list[Case], *operations: str) -> list[Case]:
    return [c for c in cases if c.operation in operations and c.expected_error is None]


def test_a_mistake_in_the_forward_and_the_backward_is_one_entry(cases):
    """Always x sqrt(D), as autograd carries it into the token gradient: one mistake, listed once."""
    wrong = Implementation(
        {
            LAYER_FWD: get("layer.scale_always").overrides[LAYER_FWD],
            LAYER_BWD: get("layer.scale_always_grad").overrides[LAYER_BWD],
        }
    )
    run = run_diagnosed(ImplementationAdapter(wrong, "always scaled"), _valid(cases, LAYER_FWD, LAYER_BWD))
    assert len(run.verdict.causes) == 1, run.verdict.summary
    entry = run.verdict.causes[0]
    assert {entry.id, *entry.also} >= {"layer.scale_always", "layer.scale_always_grad"}, entry
    operations = {r.operation for r in run.results if r.id in entry.cases}
    assert operations == {LAYER_FWD, LAYER_BWD}, operations
    assert run.verdict.explained == run.verdict.failures
    assert "layer.scale_always + layer.scale_always_grad" in run.verdict.summary or (
        "layer.scale_always_grad + layer.scale_always" in run.verdict.summary
    ), run.verdict.summary


def _row0_shifted(weight, ids, grad_output, padding_idx=None, scale_grad_by_freq=False):
    """A second, uncatalogued mistake in the token gradient: row 0's gradient is off by 0.5."""
    grad = embedding_backward(weight, ids, grad_output, padding_idx, scale_grad_by_freq)
    grad[0] += 0.5
    return grad


def test_a_symptom_the_named_mutant_shows_is_that_mutant(cases):
    """A batch-averaged position gradient measures as 'the gradient is 1/B times the expected': in the layer,
    where a second mistake leaves the mutant only partly matching, the symptom is still that mutant's mistake."""
    wrong = Implementation({POS_BWD: get("pos.grad_averaged").overrides[POS_BWD], LOOKUP_BWD: _row0_shifted})
    run = run_diagnosed(ImplementationAdapter(wrong, "averaged"), _valid(cases, POS_BWD, LAYER_BWD))
    ids = [c.id for c in run.verdict.causes]
    assert "pos.grad_averaged" in ids, run.verdict.summary
    assert not any(i.startswith("symptom:factor") for i in ids), run.verdict.summary
    entry = run.verdict.causes[ids.index("pos.grad_averaged")]
    assert any(c.startswith("layer.") for c in entry.cases)  # the layer's cases are its too


def test_two_mistakes_stay_two_entries(cases):
    """A second, unrelated mistake (indexed assignment in the token gradient) is not merged into the first."""
    wrong = Implementation(
        {POS_BWD: get("pos.grad_averaged").overrides[POS_BWD], LOOKUP_BWD: get("bwd.overwrite").overrides[LOOKUP_BWD]}
    )
    run = run_diagnosed(ImplementationAdapter(wrong, "two"), _valid(cases, POS_BWD, LOOKUP_BWD, LAYER_BWD))
    ids = [c.id for c in run.verdict.causes]
    assert "pos.grad_averaged" in ids and "bwd.overwrite" in ids, run.verdict.summary


def _cause(key: str, kind: CauseKind = CauseKind.MUTANT, mistake: str = "") -> Cause:
    return Cause(kind, key, f"title of {key}", key, mistake=mistake)


def _failing(case_id: str, *causes: Cause) -> CaseResult:
    return CaseResult(case_id, (), (), "embedding_forward", FAIL, causes=list(causes))


def test_the_verdict_groups_by_identity_not_by_id():
    run = RunRecord(
        [
            _failing("a", _cause("fwd.x", mistake="x")),
            _failing("b", _cause("bwd.x", mistake="x")),
            _failing("c", _cause("bwd.x", mistake="x"), _cause("k", CauseKind.SYMPTOM, mistake="x")),
            _failing("d", _cause("k", CauseKind.SYMPTOM)),
        ],
        None,  # type: ignore[arg-type]
        {},
    )
    verdict = run_verdict(run)
    first = verdict.causes[0]
    assert (first.id, set(first.also), set(first.cases)) == ("bwd.x", {"fwd.x", "symptom:k"}, {"a", "b", "c"})
    assert [c.id for c in verdict.causes] == ["bwd.x", "symptom:k"]  # the symptom unmerged on "d" is its own
    assert verdict.to_json()["mistakes"][0]["also"] == ["fwd.x", "symptom:k"]


def test_a_detached_position_table_is_one_mistake_in_every_backward(cases):
    """'grad_table' None in the positions' backward and 'grad_position_table' None in the layer's: one identity."""
    from embconf.diagnosis.symptoms import describe
    from embconf.judging.compare import Mismatch

    found = set()
    for operation, name in ((POS_BWD, "grad_table"), (LAYER_BWD, "grad_position_table")):
        case = next(c for c in _valid(cases, operation) if name in c.expected_outputs)
        actual = {**case.expected_outputs, name: None}
        missing = [Mismatch(name, "missing", f"'{name}' is None")]
        result = CaseResult(case.id, (), (), operation, FAIL, mismatches=missing, actual=actual)
        found |= {s.identity for s in describe(case, case.inputs(), result) if s.key.startswith("no_gradient")}
    assert found == {"no_gradient:position_table"}, found


def test_the_matrix_groups_deviations_beyond_the_verdict_by_identity():
    from embconf.matrix.model import _deviations
    from embconf.model.record import NO_FAILURES

    problems = [
        _failing("a", _cause("fwd.x", mistake="fwd.x")),
        _failing("b", _cause("bwd.x", mistake="fwd.x")),
        _failing("c", _cause("other")),
    ]
    deviations = _deviations(problems, NO_FAILURES)
    assert [(d["likely_cause"], d["cases"]) for d in deviations] == [("fwd.x", ["a", "b"]), ("other", ["c"])]
