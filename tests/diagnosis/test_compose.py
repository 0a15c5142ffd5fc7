"""Compositional diagnosis: two mistakes in one implementation are both named; a case another mistake stopped
first rules nothing out; a condition or a boundary is said only when the run measured it."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import run_diagnosed

from embconf.corpus.fixtures import Case
from embconf.mutants import get
from embconf.mutants.adapter import ImplementationAdapter
from embconf.mutants.compose import Implementation

SIN = "sinusoidal_table"
FWD = "embedding_layer_forward"


@pytest.fixture(scope="module")
def cases(corpus) -> list[Case]:
    return corpus.cases


def _verdict_ids(run) -> list[str]:
    """The ids each verdict entry names: its own and the forms of the same mistake merged into it."""
    return [i for cause in run.verdict.causes for i in (cause.id, *cause.also)]


def _only(cases: list[Case], *operations: str) -> list[Case]:
    return [c for c in cases if c.operation in operations]


def _column_exponent_crashing_on_odd(max_len: int, embed_dim: int, dtype: str = "float32") -> np.ndarray:
    """A wrong exponent (the column index) that also crashes for odd D >= 3, as `pe[:, 1::2] = cos` code does."""
    if embed_dim % 2 and embed_dim >= 3:
        raise IndexError(f"index {embed_dim} is out of bounds for axis 1 with size {embed_dim}")
    return get("sin.column_exponent").overrides[SIN](max_len, embed_dim, dtype)


def test_a_crash_on_some_cases_does_not_erase_the_wrong_values_on_the_others(cases):
    run = run_diagnosed(
        ImplementationAdapter(Implementation({SIN: _column_exponent_crashing_on_odd}), "two mistakes"),
        _only(cases, SIN),
    )
    ids = _verdict_ids(run)
    assert "sin.column_exponent" in ids, run.verdict.summary
    crash = next(c for c in run.verdict.causes if c.id.startswith("symptom:untyped:IndexError"))
    assert "whenever embed_dim is odd and at least 3" in crash.title, crash.title
    assert run.verdict.explained == run.verdict.failures, run.verdict.summary


def _float64_column_exponent(max_len: int, embed_dim: int, dtype: str = "float32") -> np.ndarray:
    """Wrong frequencies in a table left in float64."""
    return get("sin.column_exponent").overrides[SIN](max_len, embed_dim, "float64")


def test_a_dtype_slip_and_wrong_values_are_both_named(cases):
    chosen = [c for c in _only(cases, SIN) if "float64" not in c.id]
    run = run_diagnosed(
        ImplementationAdapter(Implementation({SIN: _float64_column_exponent}), "dtype and values"), chosen
    )
    ids = _verdict_ids(run)
    assert "sin.column_exponent" in ids, run.verdict.summary
    assert any(i.startswith("symptom:dtype") for i in ids), run.verdict.summary
    assert not any("values are right" in c.title for c in run.verdict.causes), run.verdict.summary


def _scaled_always_from_zero(config, token_weight, position_table, tokens, start_pos=0):
    """Always x sqrt(D) and positions always from 0: two mistakes whose departures add up on one output."""
    return get("layer.scale_always").overrides[FWD](config, token_weight, position_table, tokens, 0)


def test_two_mistakes_in_one_output_are_both_named(cases):
    chosen = [c for c in _only(cases, FWD) if c.expected_error is None]
    run = run_diagnosed(
        ImplementationAdapter(Implementation({FWD: _scaled_always_from_zero}), "scale and start"), chosen
    )
    ids = _verdict_ids(run)
    assert {"layer.scale_always", "layer.start_pos_ignored"} <= set(ids), run.verdict.summary


def test_a_mistake_is_still_ruled_out_by_a_case_it_fails_differently(cases):
    """The sign-flipped exponent is not named for a table whose exponent is the column index (all its departures
    differ), even with a crash on odd widths beside it."""
    run = run_diagnosed(
        ImplementationAdapter(Implementation({SIN: _column_exponent_crashing_on_odd}), "two mistakes"),
        _only(cases, SIN),
    )
    named = {c.key for r in run.results for c in r.causes}
    assert "sin.exponent_sign" not in named
    assert "layer.scale_always" not in named


def _checks_tokens_only(config, token_weight, position_table, tokens, start_pos=0):
    """A length check on T alone: start_pos never enters it (and positions start at 0)."""
    return get("layer.start_pos_ignored").overrides[FWD](config, token_weight, position_table, tokens, start_pos)


POS = "learned_positions_forward"


def _positions_off_by_one(table, x, start_pos=0):
    """A length check that lets exactly one position past the end through (it reads a copy of the last row)."""
    if isinstance(start_pos, int) and start_pos >= 0 and start_pos + x.shape[1] == table.shape[0] + 1:
        return Implementation()[POS](np.concatenate([table, table[-1:]]), x, start_pos)
    return Implementation()[POS](table, x, start_pos)


@pytest.mark.parametrize(
    "operation, replaced",
    [(FWD, _checks_tokens_only), (POS, _positions_off_by_one)],
    ids=["start_left_out", "off_by_one"],
)
def test_a_window_accepted_one_past_the_end_is_off_by_one_only_when_a_longer_one_is_refused(cases, operation, replaced):
    run = run_diagnosed(
        ImplementationAdapter(Implementation({operation: replaced}), "length check"), _only(cases, operation)
    )
    said = [c.summary for r in run.results for c in r.causes if c.key == "boundary:accepts_s+T=L+1"]
    assert said, "the case one past the end is accepted and described"
    by_id = {c.id: c for c in cases}
    refused_longer = [
        r.id
        for r in run.results
        if r.outcome.value == "pass"
        and by_id[r.id].expected_error == "sequence_too_long"
        and _overflow(by_id[r.id]) >= 2
    ]
    for summary in said:
        assert ("off by one" in summary) == (replaced is _positions_off_by_one and bool(refused_longer)), summary
        assert "leaves start_pos out" not in summary or replaced is _checks_tokens_only, summary
    if replaced is _checks_tokens_only:  # the refusals and acceptances of spec 1.2's longer windows tell it
        assert any("leaves start_pos out" in summary for summary in said), said


def _overflow(case: Case) -> int:
    inputs = case.inputs()
    start = inputs.get("start_pos") or 0
    if "x" in inputs:
        return int(start) + inputs["x"].shape[1] - inputs["table"].shape[0]
    return int(start) + inputs["tokens"].shape[-1] - inputs["config"]["max_seq_len"]


def _mib_of_float32_bytes(num_rows: int, embed_dim: int, dtype: str) -> dict:
    """MB computed as MiB, of a byte count that takes 4 bytes per element whatever the dtype: two factors."""
    from embconf.reference import table_bytes

    result = table_bytes(
        num_rows, embed_dim, "float32" if dtype in ("float16", "bfloat16", "float64", "int8") else dtype
    )
    return {**result, "megabytes": result["mebibytes"]}


def test_two_mistakes_that_multiply_are_both_named(cases):
    chosen = [c for c in _only(cases, "table_bytes") if c.expected_error is None]
    run = run_diagnosed(
        ImplementationAdapter(Implementation({"table_bytes": _mib_of_float32_bytes}), "unit and size"), chosen
    )
    ids = _verdict_ids(run)
    assert {"mem.mb_as_mib", "mem.every_dtype_float32"} <= set(ids), run.verdict.summary
    assert run.verdict.explained == run.verdict.failures, run.verdict.summary


def _clipped_copy_l2(weight, ids, max_norm, norm_type=2.0):
    """tf.nn.embedding_lookup(max_norm=): the gathered copy clipped by its L2 norm, the table never updated."""
    output, _ = get("opt.max_norm_always_l2").overrides["embedding_forward_max_norm"](weight, ids, max_norm, norm_type)
    return output, weight.copy()


def test_two_mistakes_that_mask_each_other_are_both_named(cases):
    """A table never updated hides the wrong norm in 'weight_after'; the output still shows it."""
    chosen = [c for c in _only(cases, "embedding_forward_max_norm") if c.expected_error is None]
    run = run_diagnosed(
        ImplementationAdapter(Implementation({"embedding_forward_max_norm": _clipped_copy_l2}), "tf clip"), chosen
    )
    ids = _verdict_ids(run)
    assert {"opt.max_norm_after_lookup", "opt.max_norm_always_l2"} <= set(ids), run.verdict.summary
    assert run.verdict.explained == run.verdict.failures, run.verdict.summary


def _one_hot_lookup(weight, ids):
    """A lookup as a one-hot matrix product, as haiku's ONE_HOT style computes it: every row sums over the table."""
    one_hot = (ids.reshape(-1)[:, None] == np.arange(weight.shape[0])[None, :]).astype(weight.dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        rows = np.stack([(one_hot[i][:, None] * weight).sum(axis=0) for i in range(one_hot.shape[0])])
    return rows.reshape(ids.shape + weight.shape[1:])


def test_a_one_hot_product_lookup_is_named_by_the_nan_it_spreads_and_a_gather_is_not(cases):
    lookup = "embedding_forward"
    special = [c for c in cases if c.id == "lookup.forward.special_values"]
    run = run_diagnosed(ImplementationAdapter(Implementation({lookup: _one_hot_lookup}), "one-hot"), special)
    assert [c.key for c in run.verdict.causes] == ["one_hot_product:embedding_forward"]
    wrong_nan = Implementation(
        {lookup: lambda weight, ids: np.full(ids.shape + weight.shape[1:], np.nan, weight.dtype)}
    )
    run = run_diagnosed(ImplementationAdapter(wrong_nan, "all NaN"), special)  # NaN everywhere is not this mistake
    assert "one_hot_product:embedding_forward" not in {c.key for r in run.results for c in r.causes}
