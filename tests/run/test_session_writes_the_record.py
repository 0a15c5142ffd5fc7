"""The session is the only writer of the run record: diagnosis reads a record and returns what it found (each
case's causes and the verdict), and the session writes it in as it finishes; the first pass is one loop, so a
session stopped partway and finished runs every case once, in order, as a whole iteration would."""

from __future__ import annotations

import itertools

from helpers import cause_ids, run_undiagnosed

from embconf.adapters import create_adapter
from embconf.corpus.select import select
from embconf.model.record import NO_FAILURES
from embconf.session import RunOptions, Session

OVERWRITE = "mutant:bwd.overwrite"


def test_diagnosis_returns_the_causes_and_leaves_the_record_as_it_was(corpus):
    from embconf.diagnosis.run import diagnose_run

    cases = select(corpus.cases, ["lookup.backward.*"])
    record = run_undiagnosed(create_adapter(OVERWRITE), cases)
    found = diagnose_run(record, cases)
    assert all(list(result.causes) == [] for result in record.results)
    assert record.verdict is NO_FAILURES
    failing = [result.id for result in record.problems]
    assert failing and sorted(found.causes) == sorted(failing)
    assert all(found.causes[case_id][0].key == "bwd.overwrite" for case_id in failing)
    assert found.verdict.causes[0].key == "bwd.overwrite"


def test_the_session_writes_in_what_diagnosis_returned(corpus):
    from embconf.diagnosis.run import diagnose_run

    cases = select(corpus.cases, ["lookup.backward.*"])
    finished = Session(create_adapter(OVERWRITE), cases, RunOptions(), OVERWRITE).run()
    found = diagnose_run(run_undiagnosed(create_adapter(OVERWRITE), cases), cases)
    assert {r.id: cause_ids(r) for r in finished.results if r.causes} == {
        case_id: [cause.id for cause in causes] for case_id, causes in found.causes.items()
    }
    assert finished.verdict == found.verdict


def test_a_session_stopped_partway_finishes_every_case_once_in_order(corpus):
    cases = select(corpus.cases, ["lookup.backward.*"])
    whole = Session(create_adapter(OVERWRITE), cases, RunOptions(), OVERWRITE).run()
    session = Session(create_adapter(OVERWRITE), cases, RunOptions(), OVERWRITE)
    first = [result.id for result in itertools.islice(iter(session), 3)]
    record = session.finish()
    assert first == [case.id for case in cases[:3]]
    assert [r.id for r in record.results] == [r.id for r in whole.results]
    assert [r.outcome for r in record.results] == [r.outcome for r in whole.results]
    assert record.verdict == whole.verdict
