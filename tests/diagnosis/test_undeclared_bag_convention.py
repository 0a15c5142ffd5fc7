"""A bag convention followed without declaring it (EMB-BAG-V1, V2; conformance/diagnosis/symptoms/conventions.py):
code that drops negative ids or prunes non-positive weights, as TensorFlow's safe_embedding_lookup_sparse does,
fails the canonical cases those conventions change; the diagnosis replays them through the reference under each
convention and names the one the outputs follow (with both ways out), and names none for code that answers them
otherwise (a negative id wrapped to the end of the table)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import cause_ids, problems, run_diagnosed

from embconf.corpus.fixtures import Case
from embconf.mutants import get
from embconf.mutants.adapter import ImplementationAdapter
from embconf.mutants.compose import Implementation
from embconf.reference import embedding_bag_backward, embedding_bag_forward

FWD, BWD = "embedding_bag_forward", "embedding_bag_backward"
DROP, PRUNE = "symptom:convention:bag:drop_negative_ids", "symptom:convention:bag:prune_nonpositive_weights"


@pytest.fixture(scope="module")
def bags(corpus) -> list[Case]:
    return [case for case in corpus.cases if case.id.startswith(("bag.forward.", "bag.backward.", "bag.error."))]


def _following(*conventions: str) -> Implementation:
    """The reference with the conventions, declaring none of them."""

    def forward(*args: Any, **kwargs: Any) -> np.ndarray:
        return embedding_bag_forward(*args, **kwargs, conventions=conventions)

    def backward(*args: Any, **kwargs: Any) -> Any:
        return embedding_bag_backward(*args, **kwargs, conventions=conventions)

    return Implementation({FWD: forward, BWD: backward})


def _named(run, case_id: str) -> list[str]:
    return next(cause_ids(result) for result in run.results if result.id == case_id)


def test_negative_ids_dropped_undeclared_are_named_as_the_convention(bags) -> None:
    run = run_diagnosed(ImplementationAdapter(_following("drop_negative_ids"), "drops negative ids"), bags)
    assert set(problems(run.results)) == {"bag.error.id_negative", "bag.error.backward_id_negative"}
    assert all(DROP in _named(run, case_id) for case_id in problems(run.results))
    (entry,) = run.verdict.causes
    assert entry.id == DROP and "EMBCONF_BAG_CONVENTIONS = ['drop_negative_ids']" in entry.hint


def test_nonpositive_weights_pruned_undeclared_are_named_as_the_convention(bags) -> None:
    run = run_diagnosed(ImplementationAdapter(_following("prune_nonpositive_weights"), "prunes weights"), bags)
    failing = problems(run.results)
    assert "bag.forward.sum.weights_zero_negative" in failing
    assert all(_named(run, case_id)[:1] == [PRUNE] for case_id in failing)
    assert [c.id for c in run.verdict.causes] == [PRUNE]


def test_a_negative_id_wrapped_is_not_said_to_follow_a_convention(bags) -> None:
    wrapped = get("bag.negative_ids_wrapped").overrides[FWD]
    run = run_diagnosed(ImplementationAdapter(Implementation({FWD: wrapped}), "wraps"), bags)
    assert "bag.error.id_negative" in problems(run.results)
    assert [i for r in run.results for i in cause_ids(r) if i.startswith("symptom:convention:")] == []
