"""One reading, one entry: a plain reading located differently on different cases (the rows of the ids that occur
once on one, the row of id 0 on another) is one verdict entry, under the identity it has where it is not located,
else its first location's."""

from __future__ import annotations

from embconf.adapters.reference import ReferenceAdapter
from embconf.diagnosis.identity import one_identity_per_reading
from embconf.diagnosis.symptoms.base import symptom
from embconf.diagnosis.verdict import run_verdict
from embconf.model.outcomes import FAIL, CaseResult
from embconf.model.record import Cause, RunRecord

KEY = "zero_values:embedding_bag_backward:grad_weight"


def _result(case_id: str, *causes: Cause) -> CaseResult:
    return CaseResult(case_id, (), (), "embedding_bag_backward", FAIL, causes=list(causes))


def _reading(title: str, mistake: str) -> Cause:
    return symptom(KEY, title, title=title, complete=False, mistake=mistake)


def _run(*results: CaseResult) -> RunRecord:
    run = RunRecord(list(results), ReferenceAdapter().capabilities(), {"name": "t"})
    one_identity_per_reading(run)
    return run


def test_a_reading_located_in_other_units_on_other_cases_is_one_entry_of_its_unlocated_identity() -> None:
    run = _run(
        _result("whole", _reading("'grad_weight' is all zeros", "zeros:embedding_bag_backward:grad_weight")),
        _result("once", _reading("in the rows of the ids that occur once", "located:ids once")),
        _result("first", _reading("in the row of id 0", "located:id 0")),
    )
    (entry,) = run_verdict(run).causes
    assert entry.cases == ("whole", "once", "first")
    assert "in the row of id 0" in entry.title and "occur once" in entry.title, entry.title


def test_a_reading_only_located_takes_its_first_location_and_other_readings_keep_theirs() -> None:
    other = symptom("unexplained:embedding_bag_backward:grad_weight", "elsewhere", mistake="located:id 0")
    run = _run(
        _result("once", _reading("in the rows of the ids that occur once", "located:ids once")),
        _result("first", _reading("in the row of id 0", "located:id 0"), other),
    )
    assert [c.mistake for r in run.results for c in r.causes] == [
        "located:ids once",
        "located:ids once",
        "located:id 0",
    ]
    assert [m.cases for m in run_verdict(run).causes][0] == ("once", "first")
