"""The one session every entry point drives (issue 33, item 1): it plans every case (a declared sinusoid
point's computed cases too), yields each first result as it is judged, and finishes into a frozen record."""

from __future__ import annotations

import dataclasses

import pytest
from mlx_family import MLX_COS_FIRST_FULL_TURNS, MLX_OPTIONS

from embconf.adapters import create_adapter
from embconf.corpus.select import select
from embconf.model.outcomes import FAIL, PASS
from embconf.model.record import RunRecord
from embconf.session import RunOptions, Session


def test_a_session_plans_the_computed_family_cases(tmp_path, corpus):
    module = tmp_path / "family.py"
    module.write_text(MLX_COS_FIRST_FULL_TURNS.format(parameters=MLX_OPTIONS))
    session = Session.open(f"functions:{module}", select(corpus.cases, ["sin.*"]), RunOptions())
    family = [case.id for case in session.cases if case.id.startswith("sin.family.")]
    record = session.run()
    assert len(family) == 9 and [r.id for r in record.results if r.outcome == PASS] == family


def test_iterating_gives_first_results_and_finishing_freezes_the_record(corpus):
    cases = select(corpus.cases, ["lookup.backward.*"])
    session = Session(create_adapter("mutant:bwd.overwrite"), cases, RunOptions(), "mutant:bwd.overwrite")
    first = [result.outcome for result in session]
    assert FAIL in first and len(first) == len(session.cases)
    record = session.finish()
    assert [r.outcome for r in record.results] == first and record.verdict.causes
    assert session.finish() is record
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.verdict = record.verdict
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.results[0].outcome = PASS
    assert isinstance(record.results, tuple) and isinstance(record.results[0].causes, tuple)


def test_keep_runs_only_the_cases_left_and_only_before_the_run(corpus):
    cases = select(corpus.cases, ["lookup.forward.*"])
    session = Session(create_adapter("reference"), cases)
    session.keep([cases[1].id, cases[0].id])
    assert [r.id for r in session.run().results] == [cases[0].id, cases[1].id]
    with pytest.raises(RuntimeError):
        session.keep([cases[0].id])


def test_the_hang_policy_implements_the_protocols_of_what_it_wraps(tmp_path):
    """Wrapped, an adapter that plans nothing does not claim to plan (the session then sends it no plan); the
    worker plans, forgets and prepares; a protocol peer plans and forgets (issue 33, item 4)."""
    from helpers import peer

    from embconf.isolation import IsolationOptions, open_adapter
    from embconf.isolation.hangs import with_hang_policy
    from embconf.model.contract import Forgetting, Planning, Preparing

    def claims(adapter):
        return {p.__name__ for p in (Planning, Forgetting, Preparing) if isinstance(adapter, p)}

    assert claims(with_hang_policy(create_adapter("reference"))) == set()
    worker = open_adapter("reference", IsolationOptions())
    over_the_wire = open_adapter(peer("raises"), IsolationOptions())
    try:
        assert claims(worker) == {"Planning", "Forgetting", "Preparing"}
        assert claims(over_the_wire) == {"Planning", "Forgetting"}
    finally:
        worker.close()
        over_the_wire.close()


def test_an_impl_is_parsed_once_into_a_value_every_entry_point_takes(corpus):
    from embconf.adapters import ImplementationError, parse_impl
    from embconf.model.impl import Impl
    from embconf.session import run_implementation

    name = Impl.parse(" subprocess: python peer.py --flag ")
    assert name == Impl("subprocess", "python peer.py --flag") and str(name) == "subprocess:python peer.py --flag"
    assert Impl.parse(name) is name and parse_impl(name) is name and str(Impl("reference")) == "reference"
    with pytest.raises(ImplementationError, match="expected KIND:TARGET, KIND one of"):
        parse_impl(":x")
    name = Impl("mutant", "bwd.overwrite")
    record = run_implementation(name, select(corpus.cases, ["lookup.backward.*"]))
    assert record.impl is name and record.problems  # the value travelled to the record, never parsed again
    report = record.to_json()  # which writes it as the text it was given
    assert (report["implementation"]["impl"], report["adapter"]) == ("mutant:bwd.overwrite", "mutant")
    assert RunRecord.from_json(report).impl == name


def test_a_frozen_record_travels_between_processes_and_stays_frozen(corpus):
    import pickle

    record = Session(create_adapter("mutant:bwd.overwrite"), select(corpus.cases, ["lookup.backward.*"])).run()
    copied = pickle.loads(pickle.dumps(record))
    assert copied.to_json() == record.to_json()
    with pytest.raises(TypeError):
        copied.fixtures["cases"] = 1  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        copied.impl = "other"
