"""One defect, one verdict entry: a line that raises the same untyped exception on inputs the spec refuses with
different error kinds (PyTorch's internal check for an id out of range, decreasing offsets and a gradient of the
wrong shape) is one missing check, and a forward and its backward that both let one error kind through are one
lenient check; the verdict line that names them stays short."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import run_diagnosed

from embconf.corpus.fixtures import Case
from embconf.diagnosis.titles import merged_title
from embconf.mutants.adapter import ImplementationAdapter
from embconf.mutants.compose import Implementation
from embconf.reference import embedding_bag_backward, embedding_bag_forward

FWD, BWD = "embedding_bag_forward", "embedding_bag_backward"
SHORT = 400  # characters: a verdict line of two mistakes


def _internal_check(weight: np.ndarray, ids: np.ndarray, offsets: Any) -> None:
    """One check deep inside, as PyTorch's kernel has: every bad id or offset gets the same RuntimeError."""
    flat = np.asarray(ids).reshape(-1)
    starts = np.asarray(offsets if offsets is not None else [0]).reshape(-1)
    if flat.size and (flat.min() < 0 or flat.max() >= weight.shape[0]) or np.any(np.diff(starts) < 0):
        raise RuntimeError("Expected i < index_size to be true, but got false.")


def forward(weight: np.ndarray, ids: np.ndarray, offsets: Any, *args: Any, **kwargs: Any) -> np.ndarray:
    _internal_check(weight, ids, offsets)
    return embedding_bag_forward(weight, ids, offsets, *args, **kwargs)


def backward(weight: np.ndarray, ids: np.ndarray, offsets: Any, *args: Any, **kwargs: Any) -> Any:
    _internal_check(weight, ids, offsets)
    return embedding_bag_backward(weight, ids, offsets, *args, **kwargs)


@pytest.fixture(scope="module")
def errors(corpus) -> list[Case]:
    return [case for case in corpus.cases if case.id.startswith("bag.error.")]


def test_one_line_raising_for_several_error_kinds_is_one_entry(errors) -> None:
    run = run_diagnosed(ImplementationAdapter(Implementation({FWD: forward, BWD: backward}), "one check"), errors)
    raised = [c for c in run.verdict.causes if c.id.startswith("symptom:untyped:RuntimeError")]
    kinds = {errors_by_id.expected_error for errors_by_id in errors if errors_by_id.id in raised[0].cases}
    assert len(raised) == 1 and len(kinds) >= 2, [c.title for c in run.verdict.causes]
    assert all(kind in raised[0].title for kind in kinds), raised[0].title  # each kind said, with its count
    assert all(kind in raised[0].hint for kind in kinds), raised[0].hint  # and the fix raises each
    assert len(run.verdict.summary) <= SHORT, run.verdict.summary


def test_titles_differing_in_one_span_are_said_once_with_each_count() -> None:
    said = "raised E at f.py:3 in g (`x`); this input should be rejected with {} before it is used"
    title = merged_title([said.format("index_out_of_range")] * 2 + [said.format("invalid_offsets")])
    assert title == said.format("index_out_of_range (in 2 of 3 cases) or invalid_offsets (in 1 of 3 cases)")
    other = merged_title(["the table is never updated", "a gradient of another shape"])  # nothing shared
    assert other == "the table is never updated (in 1 of 2 cases); a gradient of another shape (in 1 of 2 cases)"
