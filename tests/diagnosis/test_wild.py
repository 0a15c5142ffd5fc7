"""Shapes of mistakes met in the wild: an unchecked read outside the table, a backward that clamps, a table
scaled by a constant, one column too many for odd D; each said only when measured, and a near miss is not."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run_diagnosed

from embconf.corpus.fixtures import Case
from embconf.mutants import get
from embconf.mutants.adapter import ImplementationAdapter
from embconf.mutants.compose import Implementation
from embconf.reference import embedding_forward

FWD, BWD = "embedding_forward", "embedding_backward"


@pytest.fixture(scope="module")
def cases(corpus) -> list[Case]:
    return corpus.cases


def _lookup_errors(cases: list[Case]) -> list[Case]:
    return [c for c in cases if c.operation == FWD and c.expected_error == "index_out_of_range"]


def _reads_past_the_end(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Rows read from a flat buffer by offset, unchecked: past the table lie integer bits (denormal floats)."""
    index = np.asarray(ids).astype(np.int64)
    bits = np.arange(1, 4097, dtype=f"int{weight.dtype.itemsize * 8}").view(weight.dtype)
    buffer = np.concatenate([weight.ravel(), bits])
    return buffer.take(index[..., None] * weight.shape[1] + np.arange(weight.shape[1]), mode="wrap")


def test_an_unchecked_read_outside_the_table_is_named_and_shown(cases):
    run = run_diagnosed(
        ImplementationAdapter(Implementation({FWD: _reads_past_the_end}), "flat"), _lookup_errors(cases)
    )
    entry = next(c for c in run.verdict.causes if c.id == "symptom:ids_read_outside_table")
    assert "denormal numbers such as 1.4e-45" in entry.title, entry.title
    failing = next(r for r in run.results if r.id in entry.cases)
    assert "returned a result; expected error index_out_of_range" in failing.message
    assert "e-45" in failing.message  # what came back is shown


def test_a_clamped_or_a_wrapped_row_is_not_called_a_read_outside_the_table(cases):
    for mutant in ("fwd.clamped", "fwd.negative_wraps"):
        wrong = Implementation({FWD: get(mutant).overrides[FWD]})
        run = run_diagnosed(ImplementationAdapter(wrong, mutant), _lookup_errors(cases))
        ids = [c.id for c in run.verdict.causes]
        assert "symptom:ids_read_outside_table" not in ids, run.verdict.summary


def _clamps_both_ways(weight, ids, grad_output, padding_idx=None, scale_grad_by_freq=False):
    index = np.clip(np.asarray(ids).astype(np.int64), 0, weight.shape[0] - 1)
    grad = np.zeros(weight.shape, dtype=np.float64)
    np.add.at(grad, index.reshape(-1), grad_output.reshape(-1, weight.shape[1]))
    return grad.astype(weight.dtype)


def test_a_clamping_forward_and_backward_is_one_mistake(cases):
    chosen = [c for c in cases if c.operation in (FWD, BWD) and c.expected_error == "index_out_of_range"]
    wrong = Implementation({FWD: get("fwd.clamped").overrides[FWD], BWD: _clamps_both_ways})
    run = run_diagnosed(ImplementationAdapter(wrong, "clamps"), chosen)
    assert len(run.verdict.causes) == 1, run.verdict.summary
    entry = run.verdict.causes[0]
    assert {entry.id, *entry.also} >= {"fwd.clamped", "bwd.clamped"}, entry
    assert {r.operation for r in run.results if r.id in entry.cases} == {FWD, BWD}


def test_the_reference_lookup_is_untouched_by_the_helpers():
    weight = np.arange(6, dtype=np.float32).reshape(3, 2)
    assert np.array_equal(_reads_past_the_end(weight, np.array([2, 0])), embedding_forward(weight, np.array([2, 0])))


def _scaled_table(max_len: int, embed_dim: int, dtype: str = "float32") -> np.ndarray:
    """The spec's table times sqrt(2/D), as MLX's SinusoidalPositionalEncoding scales it by default."""
    from embconf.reference import sinusoidal_table

    return (sinusoidal_table(max_len, embed_dim, "float64") * np.sqrt(2.0 / embed_dim)).astype(dtype)


def test_an_amplitude_scaled_table_is_named_with_its_factor(cases):
    chosen = [c for c in cases if c.operation == "sinusoidal_table" and c.expected_error is None]
    chosen = [c for c in chosen if c.inputs()["embed_dim"] > 2 and c.inputs().get("dtype", "float32") == "float32"]
    run = run_diagnosed(ImplementationAdapter(Implementation({"sinusoidal_table": _scaled_table}), "scaled"), chosen)
    titles = [c.title for c in run.verdict.causes]
    assert any("every value multiplied by sqrt(2/D)" in t for t in titles), run.verdict.summary
    assert not any("exponent" in t or "layout" in t for t in titles), run.verdict.summary  # nothing else is wrong


def _next_even_width(max_len: int, embed_dim: int, dtype: str = "float32") -> np.ndarray:
    """The spec's table with the cosine of the last pair appended when D is odd (the extra column never dropped)."""
    from embconf.reference import sinusoidal_table

    table = sinusoidal_table(max_len, embed_dim, "float64")
    if embed_dim % 2:
        extra = np.cos(np.arange(max_len) * 10000.0 ** (-(embed_dim - 1) / embed_dim))
        table = np.concatenate([table, extra[:, None]], axis=1)
    return table.astype(dtype)


def test_one_column_too_many_for_odd_d_is_said_as_such(cases):
    chosen = [c for c in cases if c.operation == "sinusoidal_table" and c.expected_error is None]
    chosen = [c for c in chosen if c.inputs().get("dtype", "float32") in ("float32", "float64")]
    run = run_diagnosed(ImplementationAdapter(Implementation({"sinusoidal_table": _next_even_width}), "even"), chosen)
    assert len(run.verdict.causes) == 1, run.verdict.summary
    title = run.verdict.causes[0].title
    assert "D + 1 columns for D = " in title and "the first D are right" in title, title
    assert all(c.inputs()["embed_dim"] % 2 for c in chosen if c.id in run.verdict.causes[0].cases)


KERAS_MESSAGE = """lookup.forward.ids_1d: raised ValueError: bad ids (expected a result)
Traceback (most recent call last):
  File "/venv/lib/python3.11/site-packages/keras/src/utils/traceback_utils.py", line 122, in error_handler
    raise e.with_traceback(filtered_tb) from None
  File "/home/student/my_embeddings.py", line 14, in embedding_forward
    return layer(ids)
  File "/venv/lib/python3.11/site-packages/keras/src/layers/core/embedding.py", line 140, in call
    outputs = ops.take(self.embeddings, inputs, axis=0)
"""


def test_a_filtered_keras_traceback_does_not_hide_the_users_frame(cases):
    from embconf.diagnosis.symptoms.errors import exception
    from embconf.model.outcomes import ERROR, CaseResult

    case = next(c for c in cases if c.id == "lookup.forward.ids_1d")
    result = CaseResult(case.id, (), (), FWD, ERROR, message=KERAS_MESSAGE)
    (found,) = exception(case, case.inputs(), result)
    assert "at embedding.py:140 in call" in found.summary, found.summary
    assert "reached from my_embeddings.py:14 in embedding_forward" in found.summary, found.summary
    assert "traceback_utils" not in found.summary
