"""What the pairwise goldens asked of the framework adapters' glue: a framework's own refusal read as the spec's
error kind, where the adapter maps that framework's refusals. Skips with the reason when the framework is absent."""

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
