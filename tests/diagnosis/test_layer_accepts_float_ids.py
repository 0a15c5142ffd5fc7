"""A layer that accepts a float id is read as the lookup is: its token rows (the output less the spec's positions,
over c) say which row each id read, so 0.5 read as row 0 is the cast a lookup's float id shows, not "returns a
result where the spec raises"; and a layer backward whose token table got no gradient on a case expecting an error
is the missing gradient (its positions' gradient beside it changes nothing), as a backward returning none at all is."""

from __future__ import annotations

import numpy as np
import pytest

from embconf.diagnosis.symptoms import describe
from embconf.model.outcomes import FAIL, CaseResult
from embconf.model.symptom import NO_GRADIENT
from embconf.reference.layer import embedding_layer_backward, embedding_layer_forward

CAST = {"ids_truncated", "ids_rounded_or_truncated"}


@pytest.fixture(scope="module")
def float_id_cases(corpus):
    """The layer cases expecting invalid_index for a float id that is no integer, by operation."""
    found = {}
    for case in corpus.cases:
        tokens = case.inputs().get("tokens") if case.operation.startswith("embedding_layer") else None
        if case.expected_error == "invalid_index" and isinstance(tokens, np.ndarray) and tokens.dtype.kind == "f":
            if np.isfinite(tokens).all() and np.any(tokens != np.trunc(tokens)):
                found.setdefault(case.operation, case)
    assert {"embedding_layer_forward", "embedding_layer_backward"} <= set(found), sorted(found)
    return found


def _result(case, actual) -> CaseResult:
    return CaseResult(case.id, case.requirements, case.features, case.operation, FAIL, actual=actual)


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"scale_embeddings": True},
        {"pos_encoding": "sinusoidal"},
        {"pos_encoding": "none", "scale_embeddings": True},
    ],
)
def test_a_layer_reading_a_float_id_as_a_row_is_the_cast(float_id_cases, config):
    case = float_id_cases["embedding_layer_forward"]
    inputs = case.inputs()
    inputs["config"] = {**inputs["config"], **config}
    truncated = np.trunc(inputs["tokens"]).astype(np.int64)
    args = (inputs["config"], inputs["token_weight"], inputs.get("position_table"), truncated, inputs["start_pos"])
    (found,) = describe(case, inputs, _result(case, {"output": embedding_layer_forward(*args)}))
    assert found.key in CAST, (found.key, found.title)


def test_a_layer_reading_other_rows_is_no_cast(float_id_cases):
    case = float_id_cases["embedding_layer_forward"]
    inputs = case.inputs()
    shifted = (np.trunc(inputs["tokens"]).astype(np.int64) + 1) % inputs["config"]["vocab_size"]
    args = (inputs["config"], inputs["token_weight"], inputs.get("position_table"), shifted, inputs["start_pos"])
    found = describe(case, inputs, _result(case, {"output": embedding_layer_forward(*args)}))
    assert not any(s.key in CAST for s in found), [s.key for s in found]


def test_no_token_gradient_on_a_case_expecting_an_error_is_the_missing_gradient(float_id_cases):
    case = float_id_cases["embedding_layer_backward"]
    inputs = case.inputs()
    truncated = np.trunc(inputs["tokens"]).astype(np.int64)
    _, grad_positions = embedding_layer_backward(
        inputs["config"], inputs["token_weight"], inputs["position_table"], truncated, inputs["start_pos"],
        inputs["grad_output"],
    )  # fmt: skip
    actual = {"grad_token_weight": None, "grad_position_table": grad_positions}
    (found,) = describe(case, inputs, _result(case, actual))
    assert found.symptom is not None and found.symptom.family == NO_GRADIENT and "grad_token_weight" in found.key
