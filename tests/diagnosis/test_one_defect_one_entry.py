"""One defect, one entry: a table whose last row is dropped in every bag is one verdict entry located in that row
(the bags holding id V-1 forward, the row of id V-1 backward), never "no known mistake matches" case after case; a
case a catalogue mistake matches keeps no plain reading beside it; a plain entry cites only the cases no mistake
explains; and a "smaller error besides" a rotary mistake is said only when fixing that mistake would not make the
case pass."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
from helpers import assert_exit, run_reported
from rope_cases import case

from embconf.adapters.reference import ReferenceAdapter
from embconf.diagnosis.localise import said_by_mistakes
from embconf.diagnosis.rope_fit import NEGATED, Kind, Reading
from embconf.diagnosis.symptoms.base import symptom
from embconf.diagnosis.symptoms.rope import _besides, _turned
from embconf.diagnosis.verdict import run_verdict
from embconf.model.outcomes import FAIL, CaseResult
from embconf.model.record import Cause, CauseKind, RunRecord

LAST_ROW_DROPPED = """
from embconf.reference.bag import embedding_bag_backward as _backward, embedding_bag_forward as _forward

EMBCONF_FEATURES = ["bag-sum", "bag-mean", "bag-max", "bag-sqrtn", "bag-padding", "bag-2d", "bag-weights"]


def embedding_bag_forward(weight, ids, offsets, mode, per_sample_weights=None, padding_idx=None,
                          include_last_offset=False):
    table = weight.copy()
    table[-1] = 0  # the last row read as zeros: dropped from every bag
    return _forward(table, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset)


def embedding_bag_backward(weight, ids, offsets, mode, grad_output, per_sample_weights=None, padding_idx=None,
                           include_last_offset=False):
    grad, weights = _backward(weight, ids, offsets, mode, grad_output, per_sample_weights, padding_idx,
                              include_last_offset)
    grad = grad.copy()
    grad[-1] = 0
    return grad, weights
"""


def test_a_row_dropped_in_every_bag_is_one_entry_located_in_that_row(tmp_path: Path) -> None:
    module = tmp_path / "last_row_dropped.py"
    module.write_text(LAST_ROW_DROPPED, encoding="utf-8")
    done, report = run_reported(tmp_path, f"functions:{module}", select=["bag.*"])
    assert_exit(done, 1)
    (entry,) = report["verdict"]["mistakes"]
    assert "in the bags holding id V-1, and every such bag differs" in entry["title"], entry["title"]
    assert "in the row of id V-1, and every such row differs" in entry["title"], entry["title"]
    assert any(".forward." in c for c in entry["cases"]) and any(".backward." in c for c in entry["cases"])
    said = [d["summary"] for c in report["cases"] if c["outcome"] == "fail" for d in c.get("diagnosis") or []]
    assert any("in the bags holding id 7 (V-1) (1 of 3 bags)" in s for s in said), said


def _result(case_id: str, *causes: Cause) -> CaseResult:
    return CaseResult(case_id, (), (), "embedding_bag_forward", FAIL, causes=list(causes))


MUTANT = Cause(CauseKind.MUTANT, "bag.some_mistake", "a mistake", "a mistake")
PLAIN = symptom("unexplained:embedding_bag_forward:output", "what was measured", complete=False)


def test_a_case_a_catalogue_mistake_matches_keeps_no_plain_reading() -> None:
    run = RunRecord(
        [_result("matched", MUTANT, PLAIN), _result("partly", replace(MUTANT, complete=False), PLAIN)],
        ReferenceAdapter().capabilities(),
        {"name": "t"},
    )
    said_by_mistakes(run)
    assert [c.key for c in run.results[0].causes] == ["bag.some_mistake"]
    assert [c.key for c in run.results[1].causes] == ["bag.some_mistake", PLAIN.key]


def test_a_plain_entry_cites_only_the_cases_no_mistake_explains() -> None:
    run = RunRecord(
        [_result("explained", MUTANT, PLAIN), _result("left", PLAIN), _result("also", MUTANT)],
        ReferenceAdapter().capabilities(),
        {"name": "t"},
    )
    verdict = run_verdict(run)
    assert [(m.id, m.cases) for m in verdict.causes] == [
        ("bag.some_mistake", ("explained", "also")),
        (PLAIN.id, ("left",)),
    ]


def test_a_smaller_error_besides_is_said_only_when_fixing_the_mistake_leaves_the_case_failing() -> None:
    c = case("besides", "rope_forward", positions=np.arange(8), d=8)
    want = c.expected_outputs["output"]
    shape = (8, 4)
    rough = Reading(Kind.MODEL, {"departures": [NEGATED], "rough": True, "residual": np.zeros(shape)})
    fixed = _besides(rough, c, "output", want, lambda turn: _turned(want, turn, 8, "half_split"))
    assert fixed.params["rough"] is False  # nothing left once the mistake is fixed: no error besides
    left = Reading(Kind.MODEL, {**rough.params, "residual": np.full(shape, 2.0**-6)})
    kept = _besides(left, c, "output", want, lambda turn: _turned(want, turn, 8, "half_split"))
    assert kept.params["rough"] is True  # 2^-6 rad left on every pair: beyond the case's tolerance
