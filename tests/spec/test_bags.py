"""Bags (spec section 16, since 2.1.0): the goldens agree with the formulas restated here with Python's fractions
and decimals (not the reference), each golden is the exact value rounded once, correct float32 code passes every
bag case, and an implementation that claims no bag feature gets every bag case not_applicable and nothing else."""

from __future__ import annotations

import textwrap
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest
from helpers import IMPLS, outcomes, problems, run_named

from embconf.corpus.fixtures import load_corpus
from embconf.model.bag import case_feature_problems
from embconf.model.outcomes import NOT_APPLICABLE, PASS

getcontext().prec = 80
FLOAT32 = f"functions:{IMPLS / 'bag_float32.py'}"


@pytest.fixture(scope="module")
def corpus():
    return load_corpus().cases


@pytest.fixture(scope="module")
def bags(corpus):
    return {case.id: case for case in corpus if case.id.startswith("bag.")}


def _counted(inputs: dict) -> list[list[int]]:
    """Each bag's counted positions, read from the spec's words: offsets (or the rows of 2-D ids), padding."""
    ids = np.asarray(inputs["ids"]).reshape(-1).tolist()
    if inputs["offsets"] is None:
        width = np.asarray(inputs["ids"]).shape[1]
        spans = [(r * width, (r + 1) * width) for r in range(np.asarray(inputs["ids"]).shape[0])]
    else:
        starts = [int(v) for v in inputs["offsets"]]
        ends = starts[1:] + ([] if inputs.get("include_last_offset") else [len(ids)])
        spans = list(zip(starts, ends))
    pad = inputs.get("padding_idx")
    pad = None if pad is None else pad % inputs["weight"].shape[0]
    return [[i for i in range(start, end) if ids[i] != pad] for start, end in spans]


def _exact_rows(inputs: dict) -> list[list[Fraction]]:
    """output[b][j] as exact numbers: Σ w W, divided by Σ w (mean) or sqrt(Σ w²) (sqrtn, 80 digits); max as stored."""
    weight, ids = inputs["weight"].astype(np.float64), np.asarray(inputs["ids"]).reshape(-1)
    given = inputs.get("per_sample_weights")
    w = [Fraction(1)] * ids.size if given is None else [Fraction(float(x)) for x in given.reshape(-1)]
    rows = []
    for positions in _counted(inputs):
        if inputs["mode"] == "max":
            rows.append(
                [
                    max((Fraction(weight[ids[i], j]) for i in positions), default=Fraction(0))
                    for j in range(weight.shape[1])
                ]
            )
            continue
        total = [
            sum((w[i] * Fraction(weight[ids[i], j]) for i in positions), Fraction(0)) for j in range(weight.shape[1])
        ]
        divisor = {"sum": Fraction(1), "mean": sum((w[i] for i in positions), Fraction(0))}.get(inputs["mode"])
        if divisor is None:
            squares = sum((w[i] * w[i] for i in positions), Fraction(0))
            divisor = Fraction((Decimal(squares.numerator) / Decimal(squares.denominator)).sqrt())  # 80 digits
        rows.append([t / divisor if positions and divisor else Fraction(0) for t in total])
    return rows


def _nearest(value: float, exact: Fraction, dtype: np.dtype) -> bool:
    """Whether ``value`` is a nearest value of ``dtype`` to ``exact`` (no neighbour is closer)."""
    here = np.asarray(value, dtype=dtype)
    distance = abs(Fraction(float(here)) - exact)
    return all(
        abs(Fraction(float(np.nextafter(here, toward, dtype=dtype))) - exact) >= distance
        for toward in (np.asarray(-np.inf, dtype), np.asarray(np.inf, dtype))
    )


FORWARD_CASES = [
    "bag.forward.sum.basic", "bag.forward.sum.empty_bags", "bag.forward.sum.padding", "bag.forward.sum.padding_negative",
    "bag.forward.sum.last_offset", "bag.forward.sum.two_d", "bag.forward.sum.weights_zero_negative",
    "bag.forward.sum.long_bag", "bag.forward.sum.float64", "bag.forward.mean.padding_empty", "bag.forward.mean.weights",
    "bag.forward.mean.weights_sum_zero", "bag.forward.mean.last_offset", "bag.forward.max.negative_values",
    "bag.forward.max.padding_empty", "bag.forward.sqrtn.weights_zero_negative", "bag.forward.sqrtn.padding_empty",
    "bag.forward.sqrtn.float64",
]  # fmt: skip


@pytest.mark.parametrize("case_id", FORWARD_CASES)
def test_forward_goldens_are_the_exact_reduction_rounded_once(bags, case_id):
    case = bags[case_id]
    inputs, golden = case.inputs(), case.expected_outputs["output"]
    exact = _exact_rows(inputs)
    assert golden.shape == (len(exact), inputs["weight"].shape[1]) and golden.dtype == inputs["weight"].dtype
    wrong = [
        (b, j) for b, row in enumerate(exact) for j, x in enumerate(row) if not _nearest(golden[b, j], x, golden.dtype)
    ]
    assert wrong == []


def test_an_empty_bag_a_bag_of_padding_and_a_zero_weight_sum_are_zero_rows_never_nan(bags):
    for case_id, row in (("bag.forward.sum.empty_bags", 0), ("bag.forward.mean.padding_empty", 1),
                         ("bag.forward.max.padding_empty", 2), ("bag.forward.mean.weights_sum_zero", 0)):  # fmt: skip
        golden = bags[case_id].expected_outputs["output"]
        assert np.array_equal(golden[row], np.zeros(golden.shape[1])) and not np.signbit(golden[row]).any()


def _exact_backward(inputs: dict) -> tuple[np.ndarray, list[Fraction]]:
    """(grad_weight as Fractions, grad of each weight) by EMB-BAG-10..12 restated: g w / q to each counted row;
    max to the first counted position holding the maximum; d(g . out)/d w_i."""
    weight, ids = inputs["weight"].astype(np.float64), np.asarray(inputs["ids"]).reshape(-1)
    g = inputs["grad_output"].astype(np.float64)
    given = inputs.get("per_sample_weights")
    w = [Fraction(1)] * ids.size if given is None else [Fraction(float(x)) for x in given.reshape(-1)]
    grad = np.full(weight.shape, Fraction(0), dtype=object)
    grad_w = [Fraction(0)] * ids.size
    outputs = _exact_rows(inputs)
    for b, positions in enumerate(_counted(inputs)):
        gb = [Fraction(x) for x in g[b]]
        if inputs["mode"] == "max":
            for j in range(weight.shape[1]):
                first = next((i for i in positions if Fraction(weight[ids[i], j]) == outputs[b][j]), None)
                if first is not None:
                    grad[ids[first], j] += gb[j]
            continue
        total = sum((w[i] for i in positions), Fraction(0))
        divisor = Fraction(1) if inputs["mode"] == "sum" else total
        if inputs["mode"] == "mean" and divisor:
            for i in positions:
                grad[ids[i]] += np.array([x * w[i] / divisor for x in gb], dtype=object)
                grad_w[i] = (
                    sum((gb[j] * (Fraction(weight[ids[i], j]) - outputs[b][j]) for j in range(len(gb))), Fraction(0))
                    / divisor
                )
        elif inputs["mode"] == "sum":
            for i in positions:
                grad[ids[i]] += np.array([x * w[i] for x in gb], dtype=object)
                grad_w[i] = sum((gb[j] * Fraction(weight[ids[i], j]) for j in range(len(gb))), Fraction(0))
        elif positions:  # sqrtn: g w_i / s to the row; g.W_i / s - w_i (g.S) / s^3 to the weight
            squares = sum((w[i] * w[i] for i in positions), Fraction(0))
            s = Fraction((Decimal(squares.numerator) / Decimal(squares.denominator)).sqrt())
            dot_s = sum(
                (gb[j] * w[i] * Fraction(weight[ids[i], j]) for i in positions for j in range(len(gb))), Fraction(0)
            )
            for i in positions:
                grad[ids[i]] += np.array([x * w[i] / s for x in gb], dtype=object)
                dot = sum((gb[j] * Fraction(weight[ids[i], j]) for j in range(len(gb))), Fraction(0))
                grad_w[i] = dot / s - w[i] * dot_s / s**3
    return grad, grad_w


@pytest.mark.parametrize(
    "case_id",
    ["bag.backward.sum.basic", "bag.backward.sum.padding", "bag.backward.sum.weights_zero_negative",
     "bag.backward.sum.weights_padding", "bag.backward.mean.padding_empty", "bag.backward.mean.weights",
     "bag.backward.max.basic", "bag.backward.max.ties_first_position", "bag.backward.max.ties_other_order",
     "bag.backward.max.ties_padding", "bag.backward.max.repeated", "bag.backward.sum.long_bag",
     "bag.backward.sqrtn.basic", "bag.backward.sqrtn.weights", "bag.backward.sqrtn.two_d"],
)  # fmt: skip
def test_backward_goldens_are_the_exact_gradients_rounded_once(bags, case_id):
    case = bags[case_id]
    inputs, golden = case.inputs(), case.expected_outputs
    grad, grad_w = _exact_backward(inputs)
    table = golden["grad_weight"]
    assert [(r, j) for r, j in np.ndindex(*grad.shape) if not _nearest(table[r, j], grad[r, j], table.dtype)] == []
    if inputs.get("per_sample_weights") is None:
        assert golden["grad_per_sample_weights"] is None
    else:
        flat = golden["grad_per_sample_weights"].reshape(-1)
        assert [i for i, x in enumerate(grad_w) if not _nearest(flat[i], x, flat.dtype)] == []


def test_max_ties_go_to_the_first_counted_position_only(bags):
    """Rows 2 and 5 tie for the maximum in columns 0 and 2 (rows 1 and 4 in column 1): the bag [5, 2] routes them to
    row 5, the bag [2, 5] to row 2, and with 5 as padding to row 2; every tied row getting it, the lowest id or the
    last position fails one of the three."""
    expected = {"bag.backward.max.ties_first_position": (5, 4), "bag.backward.max.ties_other_order": (2, 1),
                "bag.backward.max.ties_padding": (2, 1)}  # fmt: skip
    for case_id, (first, first_of_column_1) in expected.items():
        grad, g = bags[case_id].expected_outputs["grad_weight"], bags[case_id].inputs()["grad_output"]
        for j in (0, 2):
            assert grad[first, j] == g[0, j] and grad[7 - first, j] == 0, (case_id, j)
        receivers = np.flatnonzero(grad[:, 1])
        assert first_of_column_1 in receivers and 5 - first_of_column_1 not in receivers


def test_sharded_bytes_are_the_clamped_blocks(bags):
    expected = {
        "bag.memory.row_wise_uneven": [3 * 8 * 4] * 3 + [8 * 4],
        "bag.memory.row_wise_more_shards_than_rows": [16 * 2] * 3 + [0, 0],
        "bag.memory.row_wise_empty_tail": [3 * 4 * 8] * 3 + [0],
        "bag.memory.row_wise_criteo": [5_000_000 * 128 * 4] * 8,
        "bag.memory.column_wise_uneven": [3 * 1000 * 2] * 3 + [1000 * 2],
        "bag.memory.column_wise_more_shards_than_columns": [50 * 4, 50 * 4, 0],
    }
    assert {cid: bags[cid].expected_outputs["shard_bytes"].tolist() for cid in expected} == expected


def test_the_catalogue_covers_every_mode_dtype_convention_and_error_kind(bags):
    ops = {c.operation for c in bags.values()}
    assert len(bags) >= 44 and ops == {"embedding_bag_forward", "embedding_bag_backward", "sharded_table_bytes"}
    for mode in ("sum", "mean", "max", "sqrtn"):
        for kind in ("forward", "backward"):
            assert any(cid.startswith(f"bag.{kind}.{mode}.") for cid in bags), (kind, mode)
    features = {f for case in bags.values() for f in case.features}
    assert {
        "float16",
        "bfloat16",
        "float64",
        "int32_ids",
        "bag-drop_negative_ids",
        "bag-prune_nonpositive_weights",
    } <= features
    assert {c.expected_error for c in bags.values()} >= {
        "index_out_of_range",
        "invalid_offsets",
        "invalid_config",
        "shape_mismatch",
    }


def test_every_bag_case_carries_exactly_the_features_its_inputs_need(bags):
    assert [
        (cid, p)
        for cid, c in bags.items()
        for p in case_feature_problems(c.operation, c.raw_inputs, c.features, c.expected_error)
    ] == []
    case = bags["bag.forward.mean.weights"]
    assert case_feature_problems(case.operation, case.raw_inputs, ["bag-mean", "bag-weights"], None) == [
        "a bag case of these inputs needs feature 'bag-weighted-mean'"
    ]
    assert case_feature_problems(case.operation, case.raw_inputs, [*case.features, "bag-2d"], None) == [
        "feature 'bag-2d' does not match the case's inputs"
    ]


def test_correct_float32_code_passes_every_bag_case(bags):
    """Sums in float32 in bag order, divisors in float32: within section 8.9 everywhere (no false failure)."""
    run = run_named(FLOAT32, list(bags.values()))
    assert problems(run.results) == []
    applicable = [cid for cid, outcome in outcomes(run).items() if outcome == PASS]
    assert len(applicable) == len(
        [
            c
            for c in bags.values()
            if "bag-drop_negative_ids" not in c.features and "bag-prune_nonpositive_weights" not in c.features
        ]
    )


def _module(tmp_path, name: str, body: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(f"import sys\nsys.path.insert(0, {str(IMPLS)!r})\n" + textwrap.dedent(body))
    return f"functions:{path}"


def test_half_precision_accumulated_in_its_own_dtype_fails_the_long_bag(tmp_path, bags):
    """EMB-HLF-3 for bags: a float16 sum of 512 terms accumulated in float16 is outside 8.9's bound."""
    right = "return np.float64 if dtype == np.float64 else np.float32"
    source = (IMPLS / "bag_float32.py").read_text()
    assert right in source
    (tmp_path / "half_sums.py").write_text(
        source.replace(right, "return np.float64 if dtype == np.float64 else dtype.type  # BUG")
    )
    run = run_named(
        f"functions:{tmp_path / 'half_sums.py'}",
        [bags["bag.forward.sum.float16_long_bag"], bags["bag.forward.sum.float16"]],
    )
    assert outcomes(run) == {"bag.forward.sum.float16_long_bag": "fail", "bag.forward.sum.float16": "pass"}


def test_an_implementation_without_bag_features_gets_every_bag_case_not_applicable(tmp_path, corpus):
    """Bag functions without a bag feature, and a module with none: not_applicable, the rest as before."""
    silent = _module(tmp_path, "undeclared", "from bag_float32 import embedding_bag_forward, embedding_bag_backward\n")
    bag_cases = [c for c in corpus if c.id.startswith("bag.")]
    assert set(outcomes(run_named(silent, bag_cases)).values()) == {NOT_APPLICABLE}
    plain = f"functions:{IMPLS / 'numpy_functions.py'}"
    others = [c for c in corpus if c.id.startswith("lookup.forward.")][:10]
    with_bags = outcomes(run_named(plain, others + bag_cases))
    assert {with_bags[c.id] for c in bag_cases} == {NOT_APPLICABLE}
    assert {cid: with_bags[cid] for cid in (c.id for c in others)} == outcomes(run_named(plain, others))
