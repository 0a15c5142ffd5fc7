"""What the pairwise goldens asked of the framework adapters' glue: a framework's own refusal read as the spec's
error kind, where the adapter maps that framework's refusals, or as a decline where the framework cannot hold the
input at all. Skips with the reason when the framework is absent."""

from __future__ import annotations

from helpers import run_reported
from test_frameworks import needs


def test_pytorch_refusing_a_scale_grad_by_freq_that_is_not_a_bool_is_invalid_config(tmp_path):
    """nn.Embedding stores scale_grad_by_freq=1; F.embedding's argument parser refuses it (a TypeError), in
    PyTorch's own words: the forward's and the backward's case pass, decided by PyTorch, not by the glue."""
    needs("torch")
    cases = ("token_lookup.pairs.embedding_forward.016", "token_lookup.pairs.embedding_backward.012")
    report = run_reported(tmp_path, "torch", select=cases, timeout=300)[1]
    found = {c["id"]: c for c in report["cases"]}
    assert set(found) == set(cases)
    assert all(c["outcome"] == "pass" and "decided_by" not in c for c in found.values()), found


def test_pytorch_refusing_a_last_offset_past_the_ids_under_torchrec_is_invalid_offsets(tmp_path):
    """TorchRec pools with F.embedding_bag(include_last_offset=True), whose own check of a last offset past the ids
    ("the last offset value should be the size of the indices tensor") is the spec's invalid_offsets."""
    needs("torchrec")
    case = "bags.pairs.embedding_bag_backward.044"  # 6 ids, offsets [0, 7]
    report = run_reported(tmp_path, "torchrec", select=(case,), timeout=300)[1]
    (found,) = report["cases"]
    assert found["outcome"] == "pass" and "decided_by" not in found, found


def test_pytorch_declines_a_parameter_count_whose_table_is_past_int64(tmp_path):
    """nn.Embedding on the meta device counts a table of 2^53 + 1 rows; one of 2^63 + 1 rows (a size past int64) or
    of 768 x (2^53 + 1) float32 elements (a size in bytes past int64) it refuses to make: PyTorch's decline (not
    the glue's), never an error."""
    needs("torch")
    counted, past_sizes, past_bytes = (f"memory.pairs.parameter_count.{n:03d}" for n in (18, 3, 17))
    report = run_reported(tmp_path, "torch", select=(counted, past_sizes, past_bytes), timeout=300)[1]
    found = {c["id"]: c for c in report["cases"]}
    assert found[counted]["outcome"] == "pass", found[counted]
    for case in (found[past_sizes], found[past_bytes]):
        assert case["outcome"] == "not_applicable" and case.get("declined") and "decided_by" not in case, case
        assert "int64" in case["message"], case
