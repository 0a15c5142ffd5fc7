"""Mistakes outside the catalogue are said as what was measured, and a sentence names only what its cases show:
cos/sin rounded to float16 (not only bfloat16), linear scaling's factor multiplied instead of divided, a gradient
that is one row broadcast into every row, and "a table of NaN" only for the widths whose table is NaN."""

from __future__ import annotations

import numpy as np
from helpers import run_diagnosed
from rope_cases import case, float32_operations, window

from embconf.diagnosis.difference import described
from embconf.model.outcomes import PROBLEMS
from embconf.mutants.adapter import ImplementationAdapter
from embconf.mutants.compose import Implementation

LINEAR = {"rope_type": "linear", "factor": 4.0}


def _said(ops: dict, cases: list) -> dict[str, list[str]]:
    run = run_diagnosed(ImplementationAdapter(Implementation(ops), "float32"), cases)
    return {r.id: [c.key for c in r.causes] for r in run.results if r.outcome in PROBLEMS}


def test_cos_and_sin_rounded_to_float16_are_said_as_such() -> None:
    cases = [case(f"f16.{op}", op, positions=window(0, 16), d=64) for op in ("rope_forward", "rope_tables")]
    said = _said(float32_operations(tables_in="float16"), cases)
    assert set(said) == {c.id for c in cases}  # the float16 tables fail: float32's precision ruling is exceeded
    for keys in said.values():
        assert any(k.startswith("rope:table_precision:") and k.endswith(":float16") for k in keys), keys
    assert not _said(float32_operations(), cases)  # the float32 tables pass: nothing is said


def test_a_linear_factor_multiplied_instead_of_divided_is_read_from_the_angles() -> None:
    cases = [case("lin.forward", "rope_forward", positions=window(4093), d=64, scaling=LINEAR)]
    said = _said(float32_operations(factor_multiplied=True), cases)
    assert any(k.endswith(":factor_multiplied") for k in said["lin.forward"]), said
    default = [case("plain.forward", "rope_forward", positions=window(4093), d=64)]
    assert not _said(float32_operations(factor_multiplied=True), default)  # no linear scaling: nothing wrong


def test_a_gradient_broadcast_into_every_row_is_said_as_measured() -> None:
    want = np.arange(12.0).reshape(4, 3)
    got = np.tile(np.array([1.0, 2.0, 3.0]), (4, 1))
    assert described("grad_weight", want, got).endswith(
        "every row of the output is the same row (one vector broadcast into every row)"
    )
    other = got.copy()
    other[3] = 0.5
    assert "broadcast" not in described("grad_weight", want, other)


def _t2t_refusing_odd(max_len, embed_dim, dtype="float32"):  # type: ignore[no-untyped-def]
    """tensor2tensor's timing signal, log(10000) / (h - 1) unguarded, refusing odd widths by an assert."""
    assert embed_dim % 2 == 0
    h = embed_dim // 2
    with np.errstate(divide="ignore", invalid="ignore"):
        angles = np.arange(max_len)[:, None] * np.exp(-np.arange(h) * np.log(10000.0) / np.float64(h - 1))
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1).astype(dtype)


def test_a_table_of_nan_is_said_only_of_the_widths_measured_nan() -> None:
    from embconf.corpus.fixtures import load_corpus
    from embconf.model.vocabulary import FIXTURES_DIR

    by_id = load_corpus(FIXTURES_DIR).by_id()
    cases = [by_id[f"sin.canonical.l16_d{d}"] for d in (2, 3)] + [by_id["sin.canonical.l16_d8"]]
    run = run_diagnosed(ImplementationAdapter(Implementation({"sinusoidal_table": _t2t_refusing_odd}), "t2t"), cases)
    titles = [c.title for c in run.verdict.causes if c.id == "sin.small_dim_nan"]
    assert titles and all("NaN" not in t or "D = 2 gives" in t for t in titles), titles
    assert not any("D = 3" in t or "2 or 3" in t for t in titles), titles  # D = 3 is refused, not NaN


def test_the_other_pairing_and_wrong_angles_are_two_mistakes_each_named() -> None:
    """Adjacent pairs where the case asks for rotate_half, and positions from 1: the angles read besides the pairing
    are one of two parts of the case, so the verdict names the pairing too (not the positions alone)."""
    from embconf.reference import OPERATIONS

    def rope_forward(x, position_ids, rotary_dim, base, scaling, pairing):  # type: ignore[no-untyped-def]
        shifted = np.asarray(position_ids) + 1
        return OPERATIONS["rope_forward"](x, shifted, rotary_dim, base, scaling, "interleaved")

    cases = [
        case(f"pairs.{pairing}.{p0}", "rope_forward", positions=window(p0), d=64, pairing=pairing)
        for pairing in ("half_split", "interleaved")  # interleaved cases show the positions alone
        for p0 in (0, 4096, 32768)
    ]
    run = run_diagnosed(ImplementationAdapter(Implementation({"rope_forward": rope_forward}), "pairs"), cases)
    named = {c.identity for c in run.verdict.causes}
    assert "rope.pairing_swapped" in named and len(named) == 2, [c.title for c in run.verdict.causes]


def test_the_first_difference_said_is_the_one_the_case_measured() -> None:
    """With the case's tolerance rule, the plain words count and locate the values outside it, as the failure's own
    message does (not every value that differs in the last bits)."""
    want = np.array([[0.1, 0.2], [0.3, 0.4]])
    got = want + np.array([[1e-4, 0.0], [0.0, 0.05]])
    rule = {"kind": "close", "atol": 1e-3, "rtol": 0.0}
    assert described("table", want, got, rule=rule).startswith(
        "'table' first differs at [1, 1]: expected 0.4, got 0.45; 1 of 4"
    )
    assert described("table", want, got).startswith("'table' first differs at [0, 0]")  # without a rule: any difference


def test_rotary_tables_in_another_dtype_are_said_so() -> None:
    """rope_tables returned in float32 for a bfloat16 case: the dtype not cast back is said (not nothing)."""
    ops = float32_operations()
    exact = ops["rope_tables"]
    ops["rope_tables"] = lambda position_ids, rotary_dim, base, scaling, dtype="float32": tuple(  # noqa: E731
        t.astype(np.float32) for t in exact(position_ids, rotary_dim, base, scaling, "float32")
    )
    cases = [case("tables.bf16", "rope_tables", ("bfloat16",), positions=window(0), d=64, dtype="bfloat16")]
    said = _said(ops, cases)
    assert any(k.startswith("dtype:rope_tables:float32->bfloat16") for k in said["tables.bf16"]), said
