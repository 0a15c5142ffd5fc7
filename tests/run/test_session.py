"""The one session every entry point drives (issue 33, item 1): it plans every case (a declared sinusoid
point's computed cases too), yields each first result as it is judged, and finishes into a frozen record."""

from __future__ import annotations

import dataclasses

import pytest
from helpers import MLX_COS_FIRST_FULL_TURNS, MLX_OPTIONS

from embconf.adapters import create_adapter
from embconf.corpus.select import select
from embconf.model.outcomes import FAIL, PASS
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
