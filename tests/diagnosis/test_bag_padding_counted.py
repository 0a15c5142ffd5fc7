"""A bag that counts its padding id like any id (EMB-BAG-7: a padding_idx ignored, or a negative one compared with
the ids as given) is measured by replaying the case through the reference without padding_idx
(conformance/diagnosis/symptoms/replayed.py), and said only where those are the outputs: a mean that leaves the
padding out of its sum but counts it in its divisor is not told it counts the padding id."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import cause_ids, problems, run_diagnosed

from embconf.corpus.fixtures import Case
from embconf.model.outcomes import Outcome
from embconf.mutants import get
from embconf.mutants.adapter import ImplementationAdapter
from embconf.mutants.compose import Implementation
from embconf.reference import embedding_bag_forward

FWD = "embedding_bag_forward"
COUNTED = "symptom:padding_counted:bag"


@pytest.fixture(scope="module")
def padded(corpus) -> list[Case]:
    return [case for case in corpus.cases if case.operation == FWD and "bag-padding" in case.features]


def _negative_padding_unresolved(weight: np.ndarray, ids: Any, offsets: Any, mode: str, **options: Any) -> Any:
    """padding_idx range-checked, then compared with the ids as given: -1 matches no id."""
    embedding_bag_forward(weight, ids, offsets, mode, **options)  # the spec's checks
    if (options.get("padding_idx") or 0) < 0:
        options = {**options, "padding_idx": None}
    return embedding_bag_forward(weight, ids, offsets, mode, **options)


def _padding_matters(case: Case) -> bool:
    """Whether a negative padding_idx changes the case's outputs (some id is the padding row it names)."""
    inputs = case.inputs()
    if case.expected_error is not None or (inputs.get("padding_idx") or 0) >= 0:
        return False
    weight, ids, offsets, mode = (inputs.pop(k) for k in ("weight", "ids", "offsets", "mode"))
    padded = embedding_bag_forward(weight, ids, offsets, mode, **inputs)
    counted = embedding_bag_forward(weight, ids, offsets, mode, **{**inputs, "padding_idx": None})
    return not np.array_equal(padded, counted, equal_nan=True)


def test_a_negative_padding_idx_never_resolved_is_said_to_count_the_padding_id(padded) -> None:
    """Every case it fails is one whose padding id appears (the outputs with and without padding_idx differ), and
    each is said to count the padding id."""
    run = run_diagnosed(ImplementationAdapter(Implementation({FWD: _negative_padding_unresolved}), "-1"), padded)
    failing = problems(run.results)
    assert "bag.forward.sum.padding_negative" in failing
    judged = {r.id for r in run.results if r.outcome is not Outcome.NOT_APPLICABLE}  # conventions not declared
    assert failing == [c.id for c in padded if c.id in judged and _padding_matters(c)]  # each true, none missed
    assert all(cause_ids(r)[:1] == [COUNTED] for r in run.results if r.id in failing)
    (entry,) = run.verdict.causes
    assert entry.id == COUNTED and "(= -1)" in entry.title and "V + padding_idx" in entry.hint


def test_a_mean_over_the_padded_length_is_not_said_to_count_the_padding_id(padded) -> None:
    run = run_diagnosed(ImplementationAdapter(Implementation(get("bag.mean_counts_padding").overrides), "mean"), padded)
    assert problems(run.results)
    assert [i for r in run.results for i in cause_ids(r) if i == COUNTED] == []
