"""A coarse refusal of the last window that fits (start_pos + T = max_seq_len, raised with no error kind) is called
an off-by-one length check only when the same check refuses no valid window with room to spare: a layer whose
backward raises on every 1-D token sequence, an empty one too, says nothing of its length check."""

from __future__ import annotations

import pytest

from embconf.adapters.reference import ReferenceAdapter
from embconf.corpus.fixtures import load_corpus
from embconf.diagnosis.conditions import off_by_one
from embconf.diagnosis.symptoms.base import symptom
from embconf.model.contract import UNSPECIFIED
from embconf.model.outcomes import FAIL, CaseResult
from embconf.model.record import RunRecord

LAST = "embedding_layer.pairs.embedding_layer_backward.006"  # learned, start_pos 7 + T 1 = max_seq_len 8
EMPTY = "layer.backward.learned.empty_sequence"  # learned, T = 0
SAID = symptom("boundary:rejects_s+T=L", "rejects start_pos + T = max_seq_len: the length check is off by one")


@pytest.fixture(scope="module")
def by_id():
    return {case.id: case for case in load_corpus().cases if case.id in (LAST, EMPTY)}


def _refused(case_id: str, *causes) -> CaseResult:
    result = CaseResult(case_id, (), (), "embedding_layer_backward", FAIL, causes=list(causes))
    result.error_kind = UNSPECIFIED
    return result


def _said(results: list[CaseResult], by_id) -> list[str]:
    run = RunRecord(results, ReferenceAdapter().capabilities(), {"name": "t"})
    off_by_one(run, by_id)
    return [c.key for c in run.results[0].causes]


def test_a_coarse_refusal_of_the_last_window_is_not_an_off_by_one_when_a_roomy_window_is_refused_too(by_id) -> None:
    assert _said([_refused(LAST, SAID), _refused(EMPTY)], by_id) == []


def test_a_coarse_refusal_of_the_last_window_alone_is_said_an_off_by_one(by_id) -> None:
    assert _said([_refused(LAST, SAID)], by_id) == [SAID.key]
