"""Bag errors (EMB-BAG-13, spec 2.1.0): every kind the section names, in its order (invalid_config, shape_mismatch,
invalid_offsets, index_out_of_range), from the reference and from code written apart from it; the new kind
invalid_offsets is in the vocabulary, the fixture and wire schemas, and a wrong kind fails the case."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import IMPLS, outcomes, run_named

from embconf.corpus.fixtures import load_corpus
from embconf.model.vocabulary import SCHEMAS_DIR, error_kinds
from embconf.reference import embedding_bag_backward, embedding_bag_forward, sharded_table_bytes
from embconf.reference.errors import ERROR_KINDS, EmbeddingError

W = np.arange(24, dtype=np.float32).reshape(6, 4) / 8
IDS = np.array([1, 2, 3, 4], dtype=np.int64)
G2, G3 = np.ones((2, 4), dtype=np.float32), np.ones((3, 4), dtype=np.float32)

# (what, keyword arguments of embedding_bag_backward past the weight, the kind)
ERRORS = [
    ("unknown mode", dict(ids=IDS, offsets=np.array([0, 2]), mode="median"), "invalid_config"),
    ("weights with max", dict(ids=IDS, offsets=np.array([0, 2]), mode="max", per_sample_weights=np.ones(4, np.float32)), "invalid_config"),
    ("padding_idx = V", dict(ids=IDS, offsets=np.array([0, 2]), mode="sum", padding_idx=6), "invalid_config"),
    ("padding_idx < -V", dict(ids=IDS, offsets=np.array([0, 2]), mode="sum", padding_idx=-7), "invalid_config"),
    ("include_last_offset not a boolean", dict(ids=IDS, offsets=np.array([0, 2]), mode="sum", include_last_offset=1), "invalid_config"),
    ("3-D ids", dict(ids=IDS.reshape(1, 2, 2), offsets=None, mode="sum"), "shape_mismatch"),
    ("1-D ids without offsets", dict(ids=IDS, offsets=None, mode="sum"), "shape_mismatch"),
    ("2-D ids with offsets", dict(ids=IDS.reshape(2, 2), offsets=np.array([0, 1]), mode="sum"), "shape_mismatch"),
    ("2-D offsets", dict(ids=IDS, offsets=np.array([[0, 2]]), mode="sum"), "shape_mismatch"),
    ("weights of another shape", dict(ids=IDS, offsets=np.array([0, 2]), mode="sum", per_sample_weights=np.ones(3, np.float32)), "shape_mismatch"),
    ("offsets from 1", dict(ids=IDS, offsets=np.array([1, 2]), mode="sum"), "invalid_offsets"),
    ("offsets decreasing", dict(ids=IDS, offsets=np.array([0, 3, 2]), mode="mean", grad_output=np.ones((3, 4), np.float32)), "invalid_offsets"),
    ("an offset past N", dict(ids=IDS, offsets=np.array([0, 5]), mode="sum"), "invalid_offsets"),
    ("last offset not N", dict(ids=IDS, offsets=np.array([0, 2, 3]), mode="sum", include_last_offset=True), "invalid_offsets"),
    ("an id = V", dict(ids=np.array([1, 6, 0, 0]), offsets=np.array([0, 2]), mode="sum"), "index_out_of_range"),
    ("a negative id", dict(ids=np.array([1, -1, 0, 0]), offsets=np.array([0, 2]), mode="max"), "index_out_of_range"),
    ("a negative padding id", dict(ids=np.array([-1, 0, 0, 0]), offsets=np.array([0, 2]), mode="sum", padding_idx=-1), "index_out_of_range"),
    ("grad_output not (B, D)", dict(ids=IDS, offsets=np.array([0, 2]), mode="sum", grad_output=np.ones((4, 4), np.float32)), "shape_mismatch"),
    # two errors: the first of the order wins
    ("config before shapes", dict(ids=IDS, offsets=None, mode="median"), "invalid_config"),
    ("shapes before offsets", dict(ids=IDS, offsets=np.array([1, 2]), mode="sum", grad_output=np.ones((3, 4), np.float32)), "shape_mismatch"),
    ("offsets before ids", dict(ids=np.array([9, 0, 0, 0]), offsets=np.array([0, 3, 2]), mode="sum", grad_output=G3), "invalid_offsets"),
]  # fmt: skip
BACKWARD_ONLY = {"grad_output not (B, D)", "shapes before offsets"}  # the forward has no grad_output


def _float32_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bag_float32_errors", IMPLS / "bag_float32.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("what, call, kind", ERRORS, ids=[e[0] for e in ERRORS])
def test_each_error_has_its_kind_in_the_reference_and_in_independent_code(what, call, kind):
    call = {"grad_output": G2, **call}
    with pytest.raises(EmbeddingError) as raised:
        embedding_bag_backward(W, **call)
    assert raised.value.kind == kind
    if what not in BACKWARD_ONLY:
        with pytest.raises(EmbeddingError) as raised:
            embedding_bag_forward(W, **{k: v for k, v in call.items() if k != "grad_output"})
        assert raised.value.kind == kind
    independent = _float32_module()
    with pytest.raises(independent.SpecError) as other:
        independent.embedding_bag_backward(W, **call)
    assert other.value.kind == kind


@pytest.mark.parametrize(
    "args", [(10, 4, "float32", 0, "row_wise"), (10, 4, "float32", 2, "table_wise"), (10, 4, "int4", 2, "row_wise")]
)
def test_bad_shardings_are_invalid_config(args):
    with pytest.raises(EmbeddingError) as raised:
        sharded_table_bytes(*args)
    assert raised.value.kind == "invalid_config"


def test_invalid_offsets_is_a_kind_of_the_vocabulary_the_reference_and_both_schemas():
    assert "invalid_offsets" in error_kinds() and tuple(error_kinds()) == ERROR_KINDS
    fixture = json.loads((SCHEMAS_DIR / "fixture.schema.json").read_text())
    reply = json.loads((SCHEMAS_DIR / "protocol-run-reply.schema.json").read_text())
    fixture_kinds = fixture["$defs"]["expected"]["oneOf"][1]["properties"]["error"]["enum"]
    assert set(fixture_kinds) == set(error_kinds()) == set(reply["$defs"]["error_kind"]["enum"])


def test_empty_offsets_are_zero_bags_and_a_zero_length_bag_is_a_zero_row():
    assert embedding_bag_forward(W, np.array([], np.int64), np.array([], np.int64), "sum").shape == (0, 4)
    out = embedding_bag_forward(W, np.array([], np.int64), np.array([0]), "mean")
    assert out.shape == (1, 4) and not out.any()


def test_a_wrong_error_kind_fails_the_case(tmp_path):
    """Code that answers decreasing offsets with index_out_of_range (PyTorch's CPU check says "out of bounds")."""
    impl = tmp_path / "offsets_as_range.py"
    impl.write_text(
        f"import sys\nsys.path.insert(0, {str(IMPLS)!r})\nimport bag_float32\nfrom bag_float32 import *\n\n"
        "def embedding_bag_forward(weight, ids, offsets, mode, **options):\n"
        "    try:\n        return bag_float32.forward(weight, ids, offsets, mode, **options)\n"
        "    except bag_float32.SpecError as exc:\n"
        "        if exc.kind == 'invalid_offsets':\n            exc.kind = 'index_out_of_range'  # BUG\n        raise\n"
    )
    cases = [c for c in load_corpus().cases if c.id in ("bag.error.offsets_decreasing", "bag.error.id_too_large")]
    result = outcomes(run_named(f"functions:{impl}", cases))
    assert result == {"bag.error.offsets_decreasing": "fail", "bag.error.id_too_large": "pass"}
