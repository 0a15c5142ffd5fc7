"""The bag columns (spec section 16): PyTorch's nn.EmbeddingBag and F.embedding_bag, TensorFlow's
embedding_lookup_sparse and safe_embedding_lookup_sparse, TorchRec's EmbeddingBagCollection and Keras-RS's
EmbedReduce, each measured on the bag cases: what it deviates in (and how) is exactly what was measured, a mode or
option it does not declare is not applicable (never a failure), and the glue's verdicts are marked as the glue's.
A column whose framework is not installed is skipped with the reason."""

from __future__ import annotations

import importlib.util
import json
import re
import sys

import numpy as np
import pytest
from helpers import assert_outcome, cases_with, run_reported

from embconf.adapters import ImplementationError, create_adapter
from embconf.adapters.frameworks import install_line

NEEDS = {
    "torch_bag": ["torch"],
    "tensorflow_bag": ["tensorflow"],
    "torchrec": ["torchrec", "fbgemm_gpu", "torch"],
    "keras_rs": ["keras_rs", "keras", "tensorflow"],
}
# what each column does not pass, as measured (torch 2.13.0, tensorflow 2.21.0, torchrec 1.8.0, keras-rs 0.4.0)
TORCH = {
    "bag.error.id_too_large": "error",  # an internal check's message (Expected i < index_size), no range error
    "bag.error.backward_id_negative": "error",  # the same internal check, for a negative id in a later bag
    "bag.error.offsets_decreasing": "error",  # the same internal check
    "bag.error.last_offset_not_n": "fail",  # a last offset < N: the ids after it silently dropped
    "bag.error.backward_offsets_decreasing": "fail",  # mode max takes decreasing offsets
    "bag.error.order_shape_before_range": "error",  # the forward's id check runs before the gradient is seen
    "bag.error.order_offsets_before_range": "error",
}
FORWARD_FIRST = {"bag.error.order_shape_before_range": "fail"}  # index_out_of_range: the forward runs first
DEVIATIONS = {
    "torch_bag": TORCH,
    "torch_bag:functional": TORCH,
    "tensorflow_bag": {"bag.forward.sum.empty_bags": "fail", "bag.error.grad_output_shape": "fail", **FORWARD_FIRST},
    "tensorflow_bag:safe": {  # it prunes non-positive weights only when the combiner is not sum (upstream.md)
        "bag.convention.prune_nonpositive_weights.forward_sum": "fail",
        "bag.convention.prune_nonpositive_weights.forward.sum.weights_zero_negative": "fail",  # computed (2.2.0)
        "bag.convention.prune_nonpositive_weights.backward.sum.weights_zero_negative": "fail",
        **FORWARD_FIRST,
    },
    "torchrec": {
        "bag.forward.sum.no_bags": "error",  # a KeyedJaggedTensor of no bag cannot be split
        "bag.error.id_too_large": "error",
        "bag.error.backward_id_negative": "error",  # PyTorch's internal check (TorchRec pools with F.embedding_bag)
        "bag.error.order_shape_before_range": "error",
        "bag.error.order_offsets_before_range": "error",
        "bag.error.offsets_not_from_zero": "error",  # a KeyedJaggedTensor's offsets are not checked
        "bag.error.offsets_decreasing": "error",
        "bag.error.offsets_past_end": "error",
        "bag.error.last_offset_not_n": "error",
        "bag.error.weights_shape": "error",
        "bag.error.1d_ids_without_offsets": "error",
        "bag.memory.column_wise_uneven": "fail",  # blocks of a multiple of 4 dividing D, else one shard
        "bag.memory.column_wise_more_shards_than_columns": "fail",
        "bag.memory.unknown_sharding": "fail",  # table_wise is one of TorchRec's (documented)
    },
    "torchrec:fused": {
        "bag.forward.sum.no_bags": "error",
        "bag.error.id_too_large": "fail",  # FBGEMM's bounds check WARNING: read as row 0 (documented)
        "bag.error.backward_id_too_large": "fail",
        "bag.error.offsets_decreasing": "fail",  # adjusted, not refused
        "bag.error.offsets_past_end": "fail",
        "bag.error.order_offsets_before_range": "fail",
        "bag.error.offsets_not_from_zero": "error",
        "bag.error.last_offset_not_n": "error",
        "bag.error.weights_shape": "error",
        "bag.error.1d_ids_without_offsets": "error",
        "bag.memory.column_wise_uneven": "fail",
        "bag.memory.column_wise_more_shards_than_columns": "fail",
        "bag.memory.unknown_sharding": "fail",
    },
    "keras_rs": {
        "bag.forward.sum.float16_long_bag": "fail",
        "bag.error.id_negative": "fail",  # a negative id is read, not refused
        "bag.error.backward_id_negative": "fail",
        **FORWARD_FIRST,
    },
}
# features each column leaves undeclared: their cases are not applicable
UNDECLARED = {
    "torch_bag": ("bag-sqrtn", "bag-weighted-mean"),
    "torch_bag:functional": ("bag-sqrtn", "bag-weighted-mean"),
    "tensorflow_bag": ("bag-max", "bag-padding", "bag-last-offset", "bag-2d"),
    "tensorflow_bag:safe": ("bag-max", "bag-padding"),
    "torchrec": ("bag-max", "bag-sqrtn", "bag-padding", "bag-2d", "bag-weighted-mean", "float64"),
    "torchrec:fused": ("bag-max", "bag-sqrtn", "bag-padding", "bag-2d", "bag-weighted-mean", "float64", "float16"),
    "keras_rs": ("bag-max", "bag-padding", "bag-last-offset"),
}


def needs(impl: str) -> None:
    missing = [m for m in NEEDS[impl.partition(":")[0]] if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{impl}: needs {', '.join(missing)}, not installed")


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Each column's report of the bag cases, run once for the tests below."""
    done: dict[str, dict] = {}

    def report(impl: str) -> dict:
        needs(impl)
        if impl not in done:
            folder = tmp_path_factory.mktemp(impl.replace(":", "-"))
            done[impl] = run_reported(folder, impl, "--case-timeout", "120", select=("bag.*",), timeout=600)[1]
        return done[impl]

    return report


@pytest.mark.parametrize("impl", sorted(DEVIATIONS))
def test_each_bag_column_deviates_exactly_as_measured(reports, impl):
    report = reports(impl)
    deviations = {c["id"]: c["outcome"] for c in report["cases"] if c["outcome"] not in ("pass", "not_applicable")}
    assert deviations == DEVIATIONS[impl]
    assert len(cases_with(report, "pass")) >= 20  # a column of bags, not of refusals


@pytest.mark.parametrize("impl", sorted(UNDECLARED))
def test_a_mode_or_option_a_column_lacks_is_not_applicable_never_a_failure(reports, impl):
    cases = reports(impl)["cases"]
    for feature in UNDECLARED[impl]:
        tagged = [c for c in cases if feature in c.get("features", ())]
        assert tagged, feature
        for case in tagged:
            assert_outcome(case, "not_applicable", feature)


def test_tensorflow_documents_that_it_assumes_no_empty_rows_and_its_offsets_are_the_glues(reports):
    cases = {c["id"]: c for c in reports("tensorflow_bag")["cases"]}
    assert "at least one id for each row" in cases["bag.forward.sum.empty_bags"]["documented"]["sentence"]
    glue = (
        "offsets_not_from_zero",
        "offsets_decreasing",
        "offsets_past_end",
        "1d_ids_without_offsets",
        "weights_shape",
    )
    for case in glue:
        assert cases[f"bag.error.{case}"]["outcome"] == "pass" and cases[f"bag.error.{case}"]["decided_by"] == "glue"
    own = cases["bag.error.id_too_large"]  # TensorFlow's own range check
    assert own["outcome"] == "pass" and "decided_by" not in own


def test_safe_lookup_is_judged_under_the_conventions_it_declares(reports):
    cases = {c["id"]: c for c in reports("tensorflow_bag:safe")["cases"]}
    dropped = [c for i, c in cases.items() if i.startswith("bag.convention.drop_negative_ids.")]
    assert len(dropped) >= 4 and all(c["outcome"] == "pass" for c in dropped)  # the frozen four, and those computed
    assert cases["bag.convention.drop_negative_ids.error.id_negative"]["outcome"] == "pass"  # replaces the canonical
    assert_outcome(cases["bag.error.id_negative"], "not_applicable", "bag convention", "EMB-BAG-V1")
    assert_outcome(cases["bag.forward.mean.weights_negative"], "not_applicable", "bag convention", "EMB-BAG-V2")
    assert cases["bag.convention.prune_nonpositive_weights.forward_mean"]["outcome"] == "pass"  # pruned in mean


def test_pytorch_refuses_in_its_own_words_and_torchrec_shards_rows_as_the_spec(reports):
    for impl in ("torch_bag", "torch_bag:functional"):
        cases = {c["id"]: c for c in reports(impl)["cases"]}
        own = ("weights_with_max", "offsets_not_from_zero", "grad_output_shape", "last_offset_not_boolean")
        for case in (f"bag.error.{name}" for name in own):
            assert cases[case]["outcome"] == "pass" and "decided_by" not in cases[case], (impl, case)
    rec = {c["id"]: c for c in reports("torchrec")["cases"]}
    for case in ("bag.error.unknown_mode", "bag.error.last_offset_not_boolean"):  # no PoolingType, no such flag
        assert rec[case]["outcome"] == "pass" and rec[case]["decided_by"] == "glue", case
    rows = [c for i, c in rec.items() if i.startswith("bag.memory.row_wise")]  # TorchRec's planner cuts the spec's rows
    assert len(rows) == 5 and all(c["outcome"] == "pass" and "decided_by" not in c for c in rows)
    assert "table_wise" in rec["bag.memory.unknown_sharding"]["documented"]["sentence"]


def test_fbgemms_fused_backward_is_read_from_its_optimizer_step_and_its_bounds_check_is_cited(reports):
    fused = {c["id"]: c for c in reports("torchrec:fused")["cases"]}
    backward = [c for i, c in fused.items() if i.startswith("bag.backward.") and c["outcome"] != "not_applicable"]
    assert len(backward) >= 6 and all(c["outcome"] == "pass" for c in backward)  # repeated ids, weights, a long bag
    assert "BoundsCheckMode.WARNING" in fused["bag.error.id_too_large"]["documented"]["sentence"]


@pytest.mark.parametrize("impl, module", [("tensorflow_bag", "tensorflow"), ("torchrec", "torchrec")])
def test_a_missing_bag_framework_is_its_install_line(monkeypatch, impl, module):
    if impl == "torchrec":
        needs("torch_bag")  # torch is imported first, for real
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImplementationError, match=re.escape(install_line(impl.replace("_bag", "")))) as raised:
        create_adapter(impl)
    if impl == "torchrec":
        assert "pip install --no-deps torchrec" in str(raised.value)  # never its CUDA fbgemm-gpu


def test_offsets_become_bags_by_the_spec_rules_in_the_glue():
    from embconf.adapters.bags import bag_bounds, jagged_positions
    from embconf.reference.errors import EmbeddingError

    bounds = bag_bounds(np.array([5, 6, 7, 8]), np.array([0, 1, 1]))
    assert bounds == [range(0, 1), range(1, 1), range(1, 4)]  # an empty bag, the last one to N
    assert [a.tolist() for a in jagged_positions(bounds)] == [[0, 2, 2, 2], [0, 0, 1, 2]]
    assert bag_bounds(np.zeros((2, 3), np.int64), None) == [range(0, 3), range(3, 6)]
    assert bag_bounds(np.arange(3), np.array([0, 1, 3]), include_last_offset=True) == [range(0, 1), range(1, 3)]
    for ids, offsets, last, kind in [
        (np.arange(3), np.array([0, 2, 1]), False, "invalid_offsets"),
        (np.arange(3), np.array([0, 2]), True, "invalid_offsets"),
        (np.arange(3), None, False, "shape_mismatch"),
        (np.zeros((2, 2), np.int64), np.array([0]), False, "shape_mismatch"),
    ]:
        with pytest.raises(EmbeddingError) as raised:
            bag_bounds(ids, offsets, last)
        assert raised.value.kind == kind and raised.value.decided_by == "glue"  # type: ignore[attr-defined]


def test_a_segfault_inside_pytorch_costs_its_one_case_and_the_worker_goes_on(cases_by_id):
    """Mode max with no offsets but ids present kills PyTorch 2.13's process (docs/upstream.md): in the worker that
    is one crash, said in one line, and the cases around it still pass."""
    from embconf.corpus.fixtures import Case
    from embconf.isolation import IsolatedAdapter
    from embconf.session import RunOptions, run

    needs("torch_bag")
    empty = cases_by_id["bag.forward.sum.no_bags"]
    inputs = {**empty.raw_inputs, "ids": {"dtype": "int64", "shape": [2], "data": [1, 2]}, "mode": "max"}
    crash = Case(
        "bag.forward.max.no_bags_two_ids",
        "",
        empty.requirements,
        ("bag-max",),
        empty.operation,
        inputs,
        empty.raw_expected,
        empty.tolerance,
    )
    around = [cases_by_id["bag.forward.sum.basic"], crash, empty, cases_by_id["bag.forward.max.basic"]]
    adapter = IsolatedAdapter("torch_bag")
    try:
        results = {result.id: result for result in run(adapter, around, RunOptions()).results}
    finally:
        adapter.close()
    assert_outcome(results[crash.id], "crash", "killed by SIGSEGV")
    assert "the worker process was killed by SIGSEGV" in results[crash.id].message.splitlines()[0]  # its one line
    assert [results[case.id].outcome for case in around if case is not crash] == ["pass"] * 3


def test_torchrec_glue_refuses_an_unknown_dtype_and_leaves_zero_shards_to_torchrec(tmp_path):
    """The dtype's name is the glue's to read (invalid_config); no shards at all reaches TorchRec's planner, whose
    own refusal (or none) is what the run shows, not a division in the glue."""
    needs("torchrec")
    cases = ("bags.pairs.sharded_table_bytes.010", "bags.pairs.sharded_table_bytes.011")  # float8; 0 row-wise shards
    report = run_reported(tmp_path, "torchrec", select=cases, timeout=600)[1]
    found = {c["id"]: c for c in report["cases"]}
    assert found[cases[0]]["outcome"] == "pass" and found[cases[0]]["decided_by"] == "glue"
    assert "sharding_plan.py" in json.dumps(found[cases[1]]), found[cases[1]]  # raised inside TorchRec
