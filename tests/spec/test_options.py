"""Spec 1.1 options (section 12): padding_idx, scale_grad_by_freq and max_norm.

The reference states the rules; PyTorch's nn.Embedding, given the same options through its own
arguments, passes every case; each known mistake fails a case written for it; implementations
that do not claim the features get not_applicable and nothing else.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from helpers import (
    EXAMPLE_STUDENT,
    IMPLS,
    ROOT,
    SPEC_1_1_FEATURES,
    assert_exit,
    assert_outcome,
    run_report,
    run_undiagnosed,
)

from embconf.adapters import create_adapter
from embconf.adapters.guard import GuardedAdapter
from embconf.corpus.fixtures import load_corpus
from embconf.model.outcomes import FAIL, NOT_APPLICABLE, PASS, PROBLEMS
from embconf.mutants import get
from embconf.mutants.adapter import ImplementationAdapter
from embconf.mutants.compose import Implementation
from embconf.mutation.kills import killing, run_mutant
from embconf.reference import embedding_backward, embedding_forward, embedding_forward_max_norm
from embconf.reference.errors import EmbeddingError

OPTION_FEATURES = {"padding_idx", "max_norm", "scale_grad_by_freq"}
# Each mistake of the issue, and a case written to catch it.
MUTANT_CASES = {
    "opt.padding_grad_kept": "options.padding.backward_zero_row",
    "opt.padding_zeroed_forward": "options.padding.forward_row_as_stored",
    "opt.padding_negative_unnormalised": "options.padding.backward_negative_one",
    "opt.max_norm_every_row": "options.max_norm.referenced_rows",
    "opt.max_norm_after_lookup": "options.max_norm.referenced_rows",
    "opt.max_norm_inclusive": "options.max_norm.norm_equals_max",
    "opt.freq_per_sequence": "options.freq.backward_batch",
    "opt.freq_in_forward": "options.freq.forward_unchanged",
}


@pytest.fixture(scope="module")
def cases():
    return load_corpus().cases


@pytest.fixture(scope="module")
def option_cases(cases):
    """The canonical option cases on the encodings every layer has (a rope layer's padding case needs the feature
    rope-layer; a case under a sinusoid profile or a convention answers for the implementation that declares it)."""
    from embconf.model.convention import under_a_convention

    return [
        c
        for c in cases
        if OPTION_FEATURES & set(c.features) and "rope-layer" not in c.features and not under_a_convention(c.features)
    ]


def test_padding_rules_of_the_reference():
    w, g = np.arange(12, dtype=np.float32).reshape(4, 3), np.ones((3, 3), np.float32)
    ids = np.array([3, 0, 3])
    assert np.array_equal(embedding_forward(w, ids, padding_idx=3), w[ids])  # EMB-PAD-1: stored row
    grad = embedding_backward(w, ids, g, padding_idx=-1)  # EMB-PAD-3: -1 is row 3
    assert not np.signbit(grad[3]).any() and (grad[3] == 0).all() and (grad[0] == 1).all()
    for bad in (4, -5):
        with pytest.raises(EmbeddingError) as err:
            embedding_forward(w, ids, padding_idx=bad)
        assert err.value.kind == "invalid_config"


def test_frequencies_count_over_the_batch():
    w, g = np.zeros((3, 1), np.float32), np.ones((2, 2, 1), np.float32)
    grad = embedding_backward(w, np.array([[1, 1], [1, 2]]), g, scale_grad_by_freq=True)
    assert grad[:, 0].tolist() == [0.0, 1.0, 1.0]  # id 1: 3 terms / 3 occurrences in the batch


def test_max_norm_is_strict_leaves_the_input_and_reports_the_table_after():
    w = np.array([[3.0, 4.0], [6.0, 8.0], [0.3, 0.4]], np.float32)
    before = w.copy()
    out, after = embedding_forward_max_norm(w, np.array([0, 1, 1]), 5.0, 2.0)
    assert np.array_equal(w, before)  # EMB-GEN-1: the input is not modified
    assert np.array_equal(after[0], w[0]) and np.array_equal(after[2], w[2])  # norm == max_norm, unreferenced
    assert np.isclose(np.linalg.norm(after[1]), 5.0, rtol=1e-6) and np.array_equal(out[1:], after[[1, 1]])


def test_every_option_case_applies_to_the_reference_and_passes(option_cases):
    assert len(option_cases) >= 25
    run = run_undiagnosed(create_adapter("reference"), option_cases)
    assert {r.outcome for r in run.results} == {PASS}


@pytest.mark.parametrize("mutant_id", sorted(MUTANT_CASES))
def test_each_mistake_fails_the_case_written_for_it(cases, mutant_id):
    killed = {r.id for r in killing(run_mutant(get(mutant_id), cases))}
    assert MUTANT_CASES[mutant_id] in killed, sorted(killed)


def test_renormalising_the_input_in_place_violates_emb_gen_1(option_cases):
    """PyTorch's in-place update, done to the caller's array: the right values, and still a failure."""

    def in_place(weight, ids, max_norm, norm_type):
        out, after = embedding_forward_max_norm(weight, ids, max_norm, norm_type)
        weight[...] = after
        return out, weight.copy()

    chosen = [c for c in option_cases if c.id == "options.max_norm.referenced_rows"]
    run = run_undiagnosed(
        GuardedAdapter(ImplementationAdapter(Implementation({"embedding_forward_max_norm": in_place}))), chosen
    )
    assert_outcome(run.results[0], FAIL, "weight")


def test_renormalising_a_copy_is_told_by_the_table_after(option_cases):
    chosen = [c for c in option_cases if c.id == "options.max_norm.referenced_rows"]
    run = run_mutant(get("opt.max_norm_after_lookup"), chosen)
    assert [m.output for m in run.results[0].mismatches] == ["weight_after"]


def test_torch_passes_every_option_case_through_nn_embeddings_own_arguments(option_cases):
    pytest.importorskip("torch")
    adapter = GuardedAdapter(create_adapter("torch"))
    caps = adapter.capabilities()  # a framework has no layer of its own (EMB-LAY-12), nor float ids (an IndexError)
    chosen = [  # nor a sinusoid table (the adapter declines a sinusoidal layer)
        c
        for c in option_cases
        if not caps.applies(c.operation, c.features)
        and c.inputs().get("config", {}).get("pos_encoding") != "sinusoidal"
    ]
    assert OPTION_FEATURES <= {f for c in chosen for f in c.features}  # every option, through torch's own arguments
    run = run_undiagnosed(adapter, chosen)
    assert run.results and [f"{r.id}: {r.message}" for r in run.results if r.outcome != PASS] == []


IMPLEMENTATIONS = [
    ("functions", f"functions:{IMPLS / 'numpy_functions.py'}", None),
    ("tinytorch", f"tinytorch:{EXAMPLE_STUDENT}", None),
    ("javascript", f"subprocess:node {ROOT / 'examples/javascript/embconf_impl.js'}", "node"),
]


@pytest.mark.parametrize("name,impl,needs", IMPLEMENTATIONS, ids=[i[0] for i in IMPLEMENTATIONS])
def test_implementations_without_the_features_are_not_applicable_and_clean(name, impl, needs, tmp_path):
    if needs and shutil.which(needs) is None:
        pytest.skip(f"{needs} is not installed")
    result, report = run_report(tmp_path, impl, timeout=600)
    assert_exit(result, 0)
    outcomes = {c["id"]: c["outcome"] for c in report["cases"]}
    new = [c.id for c in load_corpus().cases if SPEC_1_1_FEATURES & set(c.features)]
    assert {outcomes[i] for i in new} == {NOT_APPLICABLE}
    assert not [i for i, o in outcomes.items() if o in PROBLEMS]
