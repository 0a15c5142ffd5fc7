"""transformers' rotary models on the cases of spec 2.0.0 they can run: longrope through their rotary module,
per-batch ``(B, T)`` position ids as the model's forward passes them, and ``rope_apply`` through the model's own
``apply_rotary_pos_emb`` with the case's tables (whose two halves differ), its backward by autograd. Skips with
the reason when transformers or torch is absent. And what every rotary adapter's glue owes the pairwise goldens:
an empty sequence viewed as heads, a table dtype the spec does not name refused."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import problems, run_undiagnosed
from test_frameworks import needs

from embconf.adapters import create_adapter
from embconf.adapters.rope import batches, check_table_dtype, rotary_fraction
from embconf.corpus.fixtures import load_corpus
from embconf.model.outcomes import PASS
from embconf.reference.errors import EmbeddingError

FAMILIES = (
    "rope.forward.half_split.longrope_short",
    "rope.forward.half_split.longrope_long",
    "rope.tables.longrope_long",
    "rope.forward.half_split.batch_positions",
    "rope.backward.half_split.batch_positions",
    "rope.tables.batch_positions",
    "rope.forward.half_split.longrope_batch_positions",
    "rope.apply.half_split.halves_differ",
    "rope.apply_backward.half_split.halves_differ",
    "rope.apply.half_split.batch_tables",
    "rope.apply.half_split.bfloat16",
    "rope.forward.half_split.yarn_attention_factor",
    "rope.forward.half_split.llama3_bands_d128",
)


@pytest.fixture(scope="module")
def chosen():
    return [case for case in load_corpus().cases if case.id in FAMILIES or case.id.startswith("rope.apply.error.")]


@pytest.mark.parametrize("impl", ["transformers:llama", "transformers:gpt_neox", "transformers:phi"])
def test_transformers_runs_the_2_1_families_it_declares(chosen, impl):
    needs(impl)
    adapter = create_adapter(impl)
    try:
        caps = adapter.capabilities()
        assert {"rope_apply", "rope_apply_backward"} <= set(caps.operations)
        assert {"rope-longrope", "rope-batch-positions"} <= set(caps.features)
        run = run_undiagnosed(adapter, chosen)
    finally:
        adapter.close()
    assert problems(run.results) == []
    passed = {r.id for r in run.results if r.outcome == PASS}
    assert set(FAMILIES) <= passed  # run, not declined
    errors = [r for r in run.results if r.id.startswith("rope.apply.error.") and r.outcome == PASS]
    assert len(errors) == 3 and all(r.decided_by == "glue" for r in errors)  # the adapter checks the tables' shapes


def test_partial_tables_go_where_the_model_splits_x(chosen):
    """GPT-NeoX's apply_rotary_pos_emb splits x at the tables' width; Llama rotates the whole head and declines."""
    partial = [case for case in load_corpus().cases if case.id == "rope.apply.half_split.partial_d128_r64"]
    for impl, outcome in (("transformers:gpt_neox", PASS), ("transformers:llama", "not_applicable")):
        needs(impl)
        adapter = create_adapter(impl)
        try:
            (result,) = run_undiagnosed(adapter, partial).results
        finally:
            adapter.close()
        assert result.outcome == outcome, (impl, result.message[:300])


EMPTY_SEQUENCES = ("rope.pairs.rope_forward.012", "rope.pairs.rope_forward.022", "rope.pairs.rope_forward.037")


def results_on(impl: str, *ids: str) -> list:
    """The results of ``impl`` (skipped when its framework is absent) on the golden cases ``ids``."""
    needs(impl)
    adapter = create_adapter(impl)
    try:
        return run_undiagnosed(adapter, [case for case in load_corpus().cases if case.id in ids]).results
    finally:
        adapter.close()


@pytest.mark.parametrize("impl", ["transformers:phi", "transformers:gpt_neox", "megatron", "ggml", "onnxruntime_rope"])
def test_an_empty_sequence_is_rotated_by_adapters_that_view_x_as_heads(impl):
    """No position ids, x of shape (0, d): each adapter's (batch, heads, T, d) view names its leading sizes, as a
    -1 beside a 0 is ambiguous to a reshape."""
    results = results_on(impl, *EMPTY_SEQUENCES)
    assert problems(results) == []
    assert any(r.outcome == PASS for r in results)


def test_batches_counts_the_matrices_of_an_empty_sequence():
    x = np.zeros((3, 0, 8))
    assert batches(x) == 3 and x.reshape(batches(x), 1, 0, 8).shape == (3, 1, 0, 8)
    assert batches(np.zeros((0, 8))) == 1


@pytest.mark.parametrize("impl", ["transformers:llama", "megatron"])
def test_a_table_dtype_the_spec_does_not_name_is_refused_by_the_glue(impl):
    """The adapter turns the dtype's name into its framework's dtype: a name it cannot turn is invalid_config."""
    (result,) = results_on(impl, "rope.pairs.rope_tables.045")  # dtype float8
    assert result.outcome == PASS and result.decided_by == "glue", result.message[:300]


def test_check_table_dtype_names_the_unknown_dtype():
    with pytest.raises(EmbeddingError, match="float8") as raised:
        check_table_dtype("float8")
    assert raised.value.kind == "invalid_config"
    check_table_dtype("bfloat16")  # a dtype the spec names passes


@pytest.mark.parametrize("impl", ["transformers:phi", "megatron"])
def test_a_rotary_width_of_zero_reaches_the_framework_not_a_division_in_the_glue(impl):
    """The tables' probe is rotary_dim wide: for rotary_dim 0 the glue's share of the head is 1, not 0 / 0, and what
    the run shows is the framework's answer (these two return empty tables: no check of the width, a failure)."""
    (result,) = results_on(impl, "rope.pairs.rope_tables.042")  # rotary_dim 0
    assert result.outcome == "fail" and "ZeroDivisionError" not in result.message, result.message[:300]
    assert rotary_fraction(0, 0) == 1.0 and rotary_fraction(2, 8) == 0.25
