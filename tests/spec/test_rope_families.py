"""The rotary families and forms of spec 2.0.0 (EMB-ROPE-13 … 17): their goldens agree with formulas restated
here with Python's math (not the reference), each case carries exactly the features its inputs need, and bad
scalings, positions and tables are refused with the spec's error kinds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from embconf.corpus.fixtures import load_corpus
from embconf.model.rope import APPLY_OPERATIONS, case_feature_problems
from embconf.reference import OPERATIONS
from embconf.reference.errors import EmbeddingError
from embconf.reference.rope import pair_columns
from embconf.reference.tolerance import unit_roundoff


@pytest.fixture(scope="module")
def cases():
    return {case.id: case for case in load_corpus().cases if case.id.startswith("rope.")}


def _ulps(actual: np.ndarray, truth: np.ndarray) -> float:
    """The largest distance in ulps of the actual dtype (values below 2^-14 counted at that scale)."""
    scale = np.maximum(np.abs(truth), 2.0**-14) * unit_roundoff(actual.dtype.name)
    return float(np.max(np.abs(actual.astype(np.float64) - truth) / scale))


def _rotate(x: np.ndarray, angles: np.ndarray, amplitude: float, pairing: str, sign: float = 1.0) -> np.ndarray:
    """x (..., T, d) with pair k of row t turned by angles[..., t, k] (broadcast over x's middle axes)."""
    h = angles.shape[-1]
    i, j = pair_columns(2 * h, pairing)
    out = x.astype(np.float64).copy()
    c, s = amplitude * np.cos(angles), sign * amplitude * np.sin(angles)
    xi, xj = out[..., i].copy(), out[..., j].copy()
    out[..., i], out[..., j] = xi * c - xj * s, xj * c + xi * s
    return out


def test_longrope_goldens_divide_each_frequency_by_the_factor_of_the_calls_length(cases):
    """EMB-ROPE-13: short factors up to L = L0, long ones past it, a = sqrt(1 + ln(factor) / ln(L0))."""
    for case_id, chosen in (
        ("rope.tables.longrope_short", "short_factor"),
        ("rope.tables.longrope_long", "long_factor"),
    ):
        inputs = cases[case_id].inputs()
        s, r, base = inputs["scaling"], inputs["rotary_dim"], inputs["base"]
        theta = [1.0 / (s[chosen][k] * math.pow(base, 2.0 * k / r)) for k in range(r // 2)]
        a = math.sqrt(1 + math.log(s["factor"]) / math.log(s["original_max_position_embeddings"]))
        angles = np.array([[p * t for t in theta] for p in inputs["position_ids"].tolist()])
        golden = cases[case_id].expected_outputs
        assert _ulps(golden["cos"], a * np.cos(angles)) <= 2 and _ulps(golden["sin"], a * np.sin(angles)) <= 2


def test_mrope_goldens_turn_each_section_by_its_own_position_row(cases):
    """EMB-ROPE-14: frequencies of the temporal, height and width sections turn by rows 0, 1 and 2."""
    for case_id in ("rope.forward.half_split.mrope_d128", "rope.forward.interleaved.mrope_d64"):
        case = cases[case_id]
        inputs = case.inputs()
        ids, r, base = inputs["position_ids"], inputs["rotary_dim"], inputs["base"]
        axis = [a for a, n in enumerate(inputs["scaling"]["mrope_section"]) for _ in range(n)]
        angles = np.array(
            [[ids[axis[k], t] * math.pow(base, -2.0 * k / r) for k in range(r // 2)] for t in range(ids.shape[1])]
        )
        truth = _rotate(inputs["x"], angles, 1.0, inputs["pairing"])
        assert _ulps(case.expected_outputs["output"], truth) <= 1, case_id
        assert len({tuple(row) for row in ids}) == 3  # the three rows differ: a section read from another row fails


def test_per_batch_goldens_are_each_rows_own_rotation(cases):
    """EMB-ROPE-15: row b of the batch is the (T,) rotation by row b of the positions."""
    for case_id in ("rope.forward.half_split.batch_positions", "rope.backward.interleaved.batch_positions"):
        case = cases[case_id]
        inputs = case.inputs()
        op = OPERATIONS[case.operation]
        for b, row in enumerate(inputs["position_ids"]):
            one = {**inputs, "x": inputs["x"][b], "position_ids": row}
            if "grad_output" in inputs:
                one["grad_output"] = inputs["grad_output"][b]
            (golden,) = case.expected_outputs.values()
            assert np.array_equal(golden[b], op(**one)), (case_id, b)


def test_dynamic_and_longrope_read_the_length_of_the_whole_batch(cases):
    """L is max(position_ids) + 1 over every row: the short row turns as the long one's scaling says."""
    for case_id in (
        "rope.forward.half_split.dynamic_batch_positions",
        "rope.forward.half_split.longrope_batch_positions",
    ):
        case = cases[case_id]
        inputs = case.inputs()
        short = {**inputs, "x": inputs["x"][:1], "position_ids": inputs["position_ids"][:1]}
        alone = OPERATIONS["rope_forward"](**short)
        golden = case.expected_outputs["output"]
        tol = case.tolerance["output"]
        assert np.any(
            np.abs(alone[0].astype(np.float64) - golden[0]) > tol["atol"] + tol["rtol"] * np.abs(golden[0])
        ), case_id


@pytest.mark.parametrize("pairing", ["half_split", "interleaved"])
def test_rope_apply_goldens_read_each_columns_own_table_values(cases, pairing):
    """EMB-ROPE-16, 17: out_i = x_i c_i - x_j s_i, out_j = x_j c_j + x_i s_j; the transpose reads s_j for i."""
    for op in APPLY_OPERATIONS:
        case = cases[f"rope.{op.replace('rope_', '')}.{pairing}.halves_differ"]
        inputs = case.inputs()
        v = (inputs["grad_output"] if op.endswith("backward") else inputs["x"]).astype(np.float64)
        c, s = inputs["cos"].astype(np.float64), inputs["sin"].astype(np.float64)
        i, j = pair_columns(c.shape[-1], pairing)
        assert not np.allclose(s[:, i], s[:, j])  # halves differ: a backward reading s_i for both fails
        truth = v.copy()
        if op.endswith("backward"):
            truth[..., i], truth[..., j] = (
                v[..., i] * c[:, i] + v[..., j] * s[:, j],
                v[..., j] * c[:, j] - v[..., i] * s[:, i],
            )
        else:
            truth[..., i], truth[..., j] = (
                v[..., i] * c[:, i] - v[..., j] * s[:, i],
                v[..., j] * c[:, j] + v[..., i] * s[:, j],
            )
        (golden,) = case.expected_outputs.values()
        assert _ulps(golden, truth) <= 1, case.id


def test_rope_apply_with_duplicated_spec_tables_is_rope_forward():
    """Tables of rope_tables laid out as Hugging Face's cat(cos, cos) make rope_apply the rotation of EMB-ROPE-2."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 8, 64))
    ids = np.arange(4093, 4101)
    scaling = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}
    cos, sin = OPERATIONS["rope_tables"](ids, 64, 10000.0, scaling, "float64")
    fused = OPERATIONS["rope_apply"](x, np.concatenate([cos, cos], -1), np.concatenate([sin, sin], -1), "half_split")
    assert np.allclose(
        fused, OPERATIONS["rope_forward"](x, ids, 64, 10000.0, scaling, "half_split"), rtol=0, atol=1e-13
    )


def test_every_case_carries_exactly_the_features_its_inputs_need(cases):
    checked = [
        case
        for case in cases.values()
        if case.id.split(".")[1] in ("apply", "apply_backward")
        or "rope-mrope" in case.features
        or "rope-batch-positions" in case.features
    ]
    assert len(checked) >= 20
    for case in checked:
        assert case_feature_problems(case.operation, case.raw_inputs, case.features, case.expected_error) == [], case.id


@pytest.mark.parametrize(
    "scaling, ids, kind",
    [
        (
            {
                "rope_type": "longrope",
                "short_factor": [1.0] * 4,
                "long_factor": [2.0] * 3,
                "original_max_position_embeddings": 8,
            },
            [0, 1],
            "invalid_config",
        ),
        (
            {
                "rope_type": "longrope",
                "short_factor": 1.0,
                "long_factor": [2.0] * 4,
                "original_max_position_embeddings": 8,
            },
            [0, 1],
            "invalid_config",
        ),
        (
            {
                "rope_type": "longrope",
                "short_factor": [1.0, 0.0, 1.0, 1.0],
                "long_factor": [2.0] * 4,
                "original_max_position_embeddings": 8,
            },
            [0, 1],
            "invalid_config",
        ),
        ({"rope_type": "default", "mrope_section": [2, 2]}, [[0, 1]] * 3, "invalid_config"),
        ({"rope_type": "default", "mrope_section": [1, 1, 1]}, [[0, 1]] * 3, "invalid_config"),
        ({"rope_type": "default", "mrope_section": [2, 1, 1]}, [[0, 1]] * 2, "shape_mismatch"),
        ({"rope_type": "default"}, [[[0, 1]]], "shape_mismatch"),
    ],
)
def test_bad_new_scalings_and_positions_are_refused(scaling, ids, kind):
    with pytest.raises(EmbeddingError) as raised:
        OPERATIONS["rope_tables"](np.asarray(ids, dtype=np.int64), 8, 10000.0, scaling, "float32")
    assert raised.value.kind == kind


def test_per_batch_positions_need_x_with_that_batch():
    x = np.zeros((2, 4, 8), dtype=np.float32)
    for ids in (np.zeros((3, 4), dtype=np.int64), np.zeros((2, 4), dtype=np.int64)):
        bad = x[0] if ids.shape[0] == 2 else x  # (4, 8) has no batch axis; batch 2 is not 3
        with pytest.raises(EmbeddingError) as raised:
            OPERATIONS["rope_forward"](bad, ids, 8, 10000.0, None, "half_split")
        assert raised.value.kind == "shape_mismatch"
