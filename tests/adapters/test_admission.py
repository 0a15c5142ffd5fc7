"""Honest implementations are admitted: a functions module declines a case, an implementation that computes its
sinusoid declares it (EMB-MEM-1, 1.1.0), the older TinyTorch API without start_pos runs its start_pos = 0 cases,
and an empty sequence reaches the layer with learned positions."""

from __future__ import annotations

from collections import Counter

from helpers import EXAMPLE_STUDENT, IMPLS, assert_outcome, run_named

from embconf.model.outcomes import NOT_APPLICABLE, PASS, PROBLEMS

DECLINING = """
from embconf.reference import embedding_forward as _forward, parameter_count as _count

def embedding_forward(weight, ids):
    if ids.ndim > 2:
        raise NotImplementedError("ids of rank 3 and above are not supported")
    return _forward(weight, ids)

def parameter_count(config):
    return _count(config, storage="computed")  # positions computed on every call: nothing stored

EMBCONF_FEATURES = ["sinusoid_computed"]
"""


def test_a_function_declines_a_case_and_a_computed_sinusoid_is_declared(tmp_path, corpus):
    module = tmp_path / "declining.py"
    module.write_text(DECLINING)
    run = run_named(f"functions:{module}", corpus.cases, diagnose=False)
    by_id = {r.id: r for r in run.results}
    assert [r.id for r in run.results if r.outcome in PROBLEMS] == []
    assert_outcome(by_id["lookup.forward.ids_3d"], NOT_APPLICABLE)
    assert (
        by_id["lookup.forward.ids_3d"].message
        == "skipped by the implementation: declined: ids of rank 3 and above are not supported"
    )
    assert_outcome(by_id["mem.parameters.small_sinusoidal_computed"], PASS)
    assert_outcome(by_id["mem.parameters.small_sinusoidal"], NOT_APPLICABLE)  # the stored answer is not this one's


def test_both_answers_of_emb_mem_1_are_pinned(corpus):
    cases = [c for c in corpus.cases if c.operation == "parameter_count" and "sinusoidal" in c.id]
    stored = {c.id: c.expected_outputs["non_trainable"] for c in cases if "sinusoid_stored" in c.features}
    computed = {c.id: c.expected_outputs["non_trainable"] for c in cases if "sinusoid_computed" in c.features}
    assert len(stored) == len(computed) == 3
    assert all(value > 0 for value in stored.values()) and set(computed.values()) == {0}
    assert {case_id + "_computed" for case_id in stored} == set(computed)


def test_the_older_tinytorch_api_runs_its_start_pos_0_cases(corpus):
    run = run_named(f"tinytorch:{IMPLS / 'tinytorch_older_api.py'}", corpus.cases, diagnose=False)
    assert [r.id for r in run.results if r.outcome in PROBLEMS] == []
    reasons = Counter(r.message for r in run.results if r.outcome == NOT_APPLICABLE and "start_pos" in r.message)
    assert any("PositionalEncoding.forward takes no start_pos" in m for m in reasons)
    assert any("EmbeddingLayer.forward takes no start_pos" in m for m in reasons)
    ran = [r for r in run.results if r.outcome == PASS and r.operation.startswith("learned_positions")]
    assert ran and all(c.raw_inputs.get("start_pos", 0) == 0 for c in corpus.cases if c.id in {r.id for r in ran})


def test_an_empty_sequence_reaches_the_layer_with_learned_positions(corpus):
    cases = [
        c
        for c in corpus.cases
        if c.id.startswith("layer.") and "empty_sequence" in c.id and "rope-layer" not in c.features
    ]
    assert len(cases) == 3 and all(c.inputs()["tokens"].shape[-1] == 0 for c in cases)
    for spec in ("reference", f"tinytorch:{EXAMPLE_STUDENT}", f"functions:{IMPLS / 'numpy_functions.py'}"):
        assert {r.outcome for r in run_named(spec, cases, diagnose=False).results} == {PASS}, spec
