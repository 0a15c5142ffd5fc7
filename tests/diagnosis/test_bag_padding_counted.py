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


def test_a_negative_padding_idx_never_resolved_is_said_to_count_the_padding_id(padded) -> None:
    run = run_diagnosed(ImplementationAdapter(Implementation({FWD: _negative_padding_unresolved}), "-1"), padded)
    failing = problems(run.results)
    assert failing == ["bag.forward.sum.padding_negative"]
    assert cause_ids(run.results[[r.id for r in run.results].index(failing[0])])[:1] == [COUNTED]
    (entry,) = run.verdict.causes
    assert entry.id == COUNTED and "(= -1)" in entry.title and "V + padding_idx" in entry.hint


def test_a_mean_over_the_padded_length_is_not_said_to_count_the_padding_id(padded) -> None:
    run = run_diagnosed(ImplementationAdapter(Implementation(get("bag.mean_counts_padding").overrides), "mean"), padded)
    assert problems(run.results)
    assert [i for r in run.results for i in cause_ids(r) if i == COUNTED] == []
