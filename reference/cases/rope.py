"""Rotary position embedding cases (spec section 14, since 1.3.0): tables, the rotation and its backward for
d in {2, 4, 6, 64, 128, 130}, both pairings, partial rotary, arbitrary positions, every scaling family,
float32/float16/bfloat16/float64, and the errors.

Positions come in windows of similar magnitude (p0 near 0, 4096, 32768, 131072) so that each case's
tolerance, which grows with its largest angle (spec 8.8), is tight for its own rows. The features a case
carries follow from its inputs (:func:`_features`), so no case can forget one.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from embconf.model.rope import (
    APPLY_OPERATIONS,
    BATCH_POSITIONS_FEATURE,
    PARTIAL_FEATURE,
    POSITIONS_FEATURE,
    Pairing,
    RopeScaling,
    batch_positions,
)
from embconf.reference.cases import CaseSpec, values

AREA = "rope"
HALF, INTER = "half_split", "interleaved"
DEFAULT: dict[str, Any] = {"rope_type": "default"}
LINEAR4 = {"rope_type": "linear", "factor": 4.0}
LINEAR8 = {"rope_type": "linear", "factor": 8.0}
DYNAMIC = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 4096}
DYNAMIC_LONG = {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": 32768}
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}
YARN_QWEN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
YARN_EXPLICIT = {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096, "beta_fast": 16.0, "beta_slow": 2.0, "attention_factor": 1.0}
YARN_MSCALE = {"rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096, "mscale": 1.0, "mscale_all_dim": 0.5}
YARN_UNTRUNCATED = {"rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False}
LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192, "low_freq_factor": 1.0, "high_freq_factor": 4.0}
LLAMA3_SMALL = {"rope_type": "llama3", "factor": 32.0, "original_max_position_embeddings": 8192, "low_freq_factor": 1.0, "high_freq_factor": 4.0}
SAMPLED_LONG = [0, 1, 4095, 4096, 32767, 32768, 131071, 131072]
PACKED = [0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4]  # three sequences packed into one row
SHUFFLED = [7, 3, 3, 0, 12, 5, 5, 1]  # non-monotonic, repeated
HALF_DTYPES = ("float16", "bfloat16")


def run(p0: int, length: int) -> np.ndarray:
    return np.arange(p0, p0 + length, dtype=np.int64)


def _contiguous(ids: np.ndarray) -> bool:
    """Whether every row of position ids (the last axis) is one contiguous run."""
    if ids.size == 0:  # no position: nothing out of order
        return True
    rows = ids.reshape(-1, ids.shape[-1]) if ids.ndim else ids.reshape(1, 1)
    return all(row.size == 0 or np.array_equal(row, run(int(row[0]), row.size)) for row in rows)


def features_of(operation: str, inputs: dict[str, Any], error: Optional[str]) -> tuple[str, ...]:
    """The features a case needs: its pairing, partial rotary, non-contiguous positions, its scaling (and M-RoPE),
    per-batch positions or tables, its dtype."""
    found: list[str] = []
    if operation != "rope_tables" and inputs["pairing"] in {p.value for p in Pairing}:
        found.append(Pairing(inputs["pairing"]).feature)
    x = inputs.get("x")
    applied = operation in APPLY_OPERATIONS
    rotary = inputs["cos"].shape[-1] if applied else inputs["rotary_dim"]
    if error is None and x is not None and rotary < x.shape[-1]:
        found.append(PARTIAL_FEATURE)
    if not applied and not _contiguous(np.asarray(inputs["position_ids"])):
        found.append(POSITIONS_FEATURE)
    try:
        scaling = RopeScaling.of(None if applied else inputs["scaling"])
    except ValueError:
        scaling = RopeScaling()
    found += scaling.features
    rank = inputs["cos"].ndim if applied else np.asarray(inputs["position_ids"]).ndim
    if error is None and (rank == 3 if applied else batch_positions(rank, scaling.mrope_section is not None)):
        found.append(BATCH_POSITIONS_FEATURE)
    dtype = inputs["dtype"] if operation == "rope_tables" else x.dtype.name if x is not None else "float32"
    if dtype != "float32":
        found.append(dtype)
    return tuple(found)


def tables(case_id: str, description: str, reqs: tuple[str, ...], ids: Any, rotary_dim: int, base: float = 10000.0,
           scaling: Optional[dict[str, Any]] = None, dtype: str = "float32", error: Optional[str] = None) -> CaseSpec:
    inputs = {"position_ids": np.asarray(ids, dtype=np.int64), "rotary_dim": rotary_dim, "base": base,
              "scaling": dict(scaling or DEFAULT), "dtype": dtype}
    return CaseSpec(case_id, description, ("EMB-ROPE-1",) + reqs, "rope_tables", inputs,
                    features_of("rope_tables", inputs, error), error=error)


def rotation(case_id: str, description: str, reqs: tuple[str, ...], shape: tuple[int, ...], ids: Any, pairing: str,
             rotary_dim: Optional[int] = None, base: float = 10000.0, scaling: Optional[dict[str, Any]] = None,
             dtype: str = "float32", backward: bool = False, error: Optional[str] = None,
             grad_shape: Optional[tuple[int, ...]] = None) -> CaseSpec:
    """A rope_forward case, or with ``backward`` a rope_backward case (grad_output of ``grad_shape``, default x's)."""
    inputs: dict[str, Any] = {"x": values(case_id, shape, dtype), "position_ids": np.asarray(ids, dtype=np.int64),
                              "rotary_dim": shape[-1] if rotary_dim is None else rotary_dim, "base": base,
                              "scaling": dict(scaling or DEFAULT), "pairing": pairing}
    operation = "rope_backward" if backward else "rope_forward"
    if backward:
        inputs["grad_output"] = values(case_id, grad_shape or shape, dtype, "grad")
    first = ("EMB-ROPE-6",) if backward else ("EMB-ROPE-2",)
    reqs = first + (("EMB-ROPE-3",) if error is None else ()) + reqs
    return CaseSpec(case_id, description, reqs, operation, inputs, features_of(operation, inputs, error), error=error)


def rotation_cases() -> list[CaseSpec]:
    """The rotation at p0 = 0 for every width and both pairings, then windows of long positions."""
    shapes = {2: (8, 2), 4: (2, 8, 4), 6: (2, 3, 8, 6), 64: (1, 16, 64), 128: (2, 16, 128), 130: (1, 2, 16, 130)}
    out = []
    for pairing in (HALF, INTER):
        for d, shape in shapes.items():
            note = {2: "one frequency, the pairings coincide", 6: "three pairs, leading axes batch and heads",
                    130: "d = 130: h = 65 pairs"}.get(d, f"{d // 2} pairs")
            out.append(rotation(f"rope.forward.{pairing}.d{d}_p0", f"{pairing} rotation of x {shape}, positions 0..{shape[-2] - 1}: {note}.", (), shape, run(0, shape[-2]), pairing))
    long = ("EMB-ROPE-11",)
    return out + [
        rotation("rope.forward.half_split.d128_p4096", "Positions 4093..4100 (a window at 4096), base 10000.", long, (2, 8, 128), run(4093, 8), HALF),
        rotation("rope.forward.interleaved.d128_p4096", "Interleaved, positions 4093..4100, base 10000.", long, (2, 8, 128), run(4093, 8), INTER),
        rotation("rope.forward.half_split.d128_p32768", "Positions 32764..32771, base 10000.", long, (1, 8, 128), run(32764, 8), HALF),
        rotation("rope.forward.interleaved.d64_base500000_p32768", "Interleaved, base 500000 (Llama 3), positions 32764..32771.", long, (2, 8, 64), run(32764, 8), INTER, base=500000.0),
        rotation("rope.forward.half_split.d128_base500000_p131072", "Base 500000, positions 131068..131075: float32 angles conform here (EMB-ROPE-11).", long, (2, 8, 128), run(131068, 8), HALF, base=500000.0),
        rotation("rope.forward.interleaved.d128_p131072", "Interleaved, base 10000, positions 131068..131075.", long, (1, 8, 128), run(131068, 8), INTER),
        rotation("rope.forward.half_split.d6_p131072", "d = 6, positions 131072..131075: the first frequency turns 20,860 times.", long, (3, 4, 6), run(131072, 4), HALF),
    ]


def partial_and_position_cases() -> list[CaseSpec]:
    part, pos = ("EMB-ROPE-4",), ("EMB-ROPE-5",)
    return [
        rotation("rope.forward.half_split.partial_d128_r32", "Partial rotary (GPT-NeoX rotary_pct 0.25): 32 of 128 columns rotate, pairs (k, k + 16); the rest pass through.", part, (2, 8, 128), run(0, 8), HALF, rotary_dim=32),
        rotation("rope.forward.interleaved.partial_d64_r32", "Partial rotary, interleaved (GPT-J rotary_dim): 32 of 64 columns rotate.", part, (2, 8, 64), run(0, 8), INTER, rotary_dim=32),
        rotation("rope.forward.half_split.partial_d130_r64", "Partial rotary, d = 130, r = 64 (frequencies divide by r), positions 4093..4100.", part, (1, 8, 130), run(4093, 8), HALF, rotary_dim=64),
        rotation("rope.forward.interleaved.partial_d6_r2", "Partial rotary, d = 6, r = 2: one pair rotates at frequency 1, four columns pass through.", part, (2, 8, 6), run(0, 8), INTER, rotary_dim=2),
        rotation("rope.backward.half_split.partial_d128_r32", "Backward of partial rotary: the pass-through columns copy grad_output.", part, (2, 8, 128), run(0, 8), HALF, rotary_dim=32, backward=True),
        rotation("rope.forward.half_split.packed_restart", "Packed sequences: positions restart at 0 twice within the row.", pos, (2, 16, 64), PACKED, HALF),
        rotation("rope.forward.interleaved.non_monotonic", "Non-monotonic, repeated position ids: each row rotates by its own id.", pos, (2, 8, 64), SHUFFLED, INTER),
        rotation("rope.forward.half_split.sampled_long", "Sampled long positions 0 .. 131072 in one call (the bound is that of the largest angle).", pos, (1, 8, 128), SAMPLED_LONG, HALF),
        rotation("rope.backward.interleaved.packed_restart", "Backward with packed, restarting positions.", pos, (2, 16, 64), PACKED, INTER, backward=True),
        tables("rope.tables.sampled_long", "Tables at sampled positions 0 .. 131072.", pos, SAMPLED_LONG, 128),
    ]


def backward_cases() -> list[CaseSpec]:
    return [
        rotation("rope.backward.half_split.d64_p0", "Backward: grad_output rotated by the negative angle, positions 0..15.", (), (2, 16, 64), run(0, 16), HALF, backward=True),
        rotation("rope.backward.interleaved.d64_p0", "Backward, interleaved pairs.", (), (2, 16, 64), run(0, 16), INTER, backward=True),
        rotation("rope.backward.half_split.d128_base500000_p131072", "Backward at positions 131068..131075, base 500000.", ("EMB-ROPE-11",), (2, 8, 128), run(131068, 8), HALF, base=500000.0, backward=True),
        rotation("rope.backward.interleaved.d6_p4096", "Backward, d = 6, positions 4093..4100.", (), (2, 3, 8, 6), run(4093, 8), INTER, backward=True),
        rotation("rope.backward.half_split.d2_p0", "Backward, d = 2: one pair.", (), (8, 2), run(0, 8), HALF, backward=True),
    ]


def table_cases() -> list[CaseSpec]:
    return [
        tables("rope.tables.d64_p0", "Tables for r = 64 at positions 0..15: one column per frequency, row 0 is cos 1, sin 0.", (), run(0, 16), 64),
        tables("rope.tables.d2_p0", "r = 2: the single frequency 1, cos(p) and sin(p).", (), run(0, 16), 2),
        tables("rope.tables.d130_p0", "r = 130: 65 frequencies base^(-2k/130).", (), run(0, 8), 130),
        tables("rope.tables.d128_p4096", "Positions 4093..4100, r = 128.", ("EMB-ROPE-11",), run(4093, 8), 128),
        tables("rope.tables.d128_base500000_p131072", "Base 500000, positions 131068..131075.", ("EMB-ROPE-11",), run(131068, 8), 128, base=500000.0),
        tables("rope.tables.d64_p32768", "Positions 32764..32771, r = 64.", ("EMB-ROPE-11",), run(32764, 8), 64),
    ]


def scaling_cases() -> list[CaseSpec]:
    lin, dyn, yarn, l3 = ("EMB-ROPE-7",), ("EMB-ROPE-8",), ("EMB-ROPE-9",), ("EMB-ROPE-10",)
    return [
        tables("rope.tables.linear_d64", "Linear scaling, factor 4: theta_k / 4.", lin, run(4093, 8), 64, scaling=LINEAR4),
        rotation("rope.forward.half_split.linear_d64", "Linear scaling, factor 4, positions 4093..4100.", lin, (2, 8, 64), run(4093, 8), HALF, scaling=LINEAR4),
        rotation("rope.forward.interleaved.linear_d128_p131072", "Linear scaling, factor 8, interleaved, positions 131068..131075.", lin, (1, 8, 128), run(131068, 8), INTER, scaling=LINEAR8),
        rotation("rope.forward.half_split.dynamic_within", "Dynamic NTK within the original length (L = 16 <= 4096): the frequencies are unscaled.", dyn, (2, 16, 64), run(0, 16), HALF, scaling=DYNAMIC),
        rotation("rope.forward.half_split.dynamic_grown", "Dynamic NTK past the original length: L = 8192, base' = base * 3^(64/62).", dyn, (2, 8, 64), run(8184, 8), HALF, scaling=DYNAMIC),
        rotation("rope.forward.interleaved.dynamic_p131072", "Dynamic NTK, factor 4, original 32768, positions 131068..131075.", dyn, (1, 8, 128), run(131068, 8), INTER, scaling=DYNAMIC_LONG),
        tables("rope.tables.dynamic_grown", "Dynamic NTK tables: L = max(position_ids) + 1 = 8192 > 4096.", dyn, run(8184, 8), 64, scaling=DYNAMIC),
        tables("rope.tables.yarn_d64", "YaRN, factor 4, original 4096: the frequency ramp, and the tables scaled by a = 0.1 ln 4 + 1.", yarn, run(16380, 8), 64, scaling=YARN),
        rotation("rope.forward.half_split.yarn_p131072", "YaRN (Qwen2.5: factor 4, original 32768), base 500000, positions 131068..131075.", yarn, (2, 8, 128), run(131068, 8), HALF, base=500000.0, scaling=YARN_QWEN),
        rotation("rope.forward.interleaved.yarn_explicit", "YaRN with beta_fast 16, beta_slow 2 and attention_factor 1 given.", yarn, (2, 8, 64), run(4093, 8), INTER, scaling=YARN_EXPLICIT),
        rotation("rope.forward.half_split.yarn_mscale", "YaRN with mscale 1 and mscale_all_dim 0.5 (a = m(40, 1) / m(40, 0.5)).", yarn, (1, 8, 64), run(0, 8), HALF, scaling=YARN_MSCALE),
        rotation("rope.forward.half_split.yarn_untruncated", "YaRN with truncate false (gpt-oss): the ramp's ends are not rounded.", yarn, (1, 8, 64), run(32764, 8), HALF, base=150000.0, scaling=YARN_UNTRUNCATED),
        rotation("rope.backward.half_split.yarn_d64", "Backward under YaRN: the attention factor scales the gradient too.", yarn, (2, 8, 64), run(16380, 8), HALF, scaling=YARN, backward=True),
        rotation("rope.forward.half_split.llama3_p131072", "llama3 (Llama 3.1: factor 8, original 8192, bands 1 and 4), base 500000, positions 131068..131075.", l3, (2, 8, 128), run(131068, 8), HALF, base=500000.0, scaling=LLAMA3),
        rotation("rope.forward.interleaved.llama3_d64_p4096", "llama3, factor 32 (Llama 3.2), interleaved, d = 64, positions 4093..4100.", l3, (2, 8, 64), run(4093, 8), INTER, base=500000.0, scaling=LLAMA3_SMALL),
        tables("rope.tables.llama3_d128", "llama3 tables, r = 128, base 500000, positions 0..7: every band present.", l3, run(0, 8), 128, base=500000.0, scaling=LLAMA3),
        rotation("rope.backward.interleaved.llama3_p131072", "Backward under llama3, interleaved, base 500000, positions 131068..131075.", l3, (2, 8, 128), run(131068, 8), INTER, base=500000.0, scaling=LLAMA3, backward=True),
        rotation("rope.backward.interleaved.linear_d64", "Backward under linear scaling, factor 4, interleaved.", lin, (2, 8, 64), run(4093, 8), INTER, scaling=LINEAR4, backward=True),
        rotation("rope.forward.half_split.partial_linear_d128_r64", "Partial rotary (64 of 128) with linear scaling, factor 8.", lin + ("EMB-ROPE-4",), (2, 8, 128), run(32764, 8), HALF, rotary_dim=64, scaling=LINEAR8),
        rotation("rope.forward.interleaved.dynamic_partial_d130_r128", "Partial rotary (128 of 130) with dynamic NTK past the original length: the exponent is r / (r - 2) with r = 128.", dyn + ("EMB-ROPE-4",), (1, 8, 130), run(8184, 8), INTER, rotary_dim=128, scaling=DYNAMIC),
    ]


def dtype_cases() -> list[CaseSpec]:
    prec = ("EMB-ROPE-11",)
    return [
        tables("rope.tables.bfloat16_d64_p131072", "bfloat16 tables at positions 131068..131075: angles in float32, rounded once.", prec, run(131068, 8), 64, dtype="bfloat16"),
        tables("rope.tables.float16_d128_p32768", "float16 tables at positions 32764..32771.", prec, run(32764, 8), 128, dtype="float16"),
        tables("rope.tables.float64_d64_p0", "float64 tables.", (), run(0, 16), 64, dtype="float64"),
        rotation("rope.forward.half_split.bfloat16_d128_p131072", "bfloat16 x rotated at positions 131068..131075 (its own dtype allowed, float32 angles required).", prec, (2, 8, 128), run(131068, 8), HALF, dtype="bfloat16"),
        rotation("rope.forward.interleaved.bfloat16_d64_p0", "bfloat16 x, interleaved, positions 0..15.", prec, (2, 16, 64), run(0, 16), INTER, dtype="bfloat16"),
        rotation("rope.forward.half_split.float16_d128_p4096", "float16 x, positions 4093..4100.", prec, (2, 8, 128), run(4093, 8), HALF, dtype="float16"),
        rotation("rope.forward.interleaved.float16_d64_p32768", "float16 x, interleaved, positions 32764..32771.", prec, (2, 8, 64), run(32764, 8), INTER, dtype="float16"),
        rotation("rope.forward.half_split.float64_d64_p131072", "float64 x at positions 131068..131075: the angle term is float32's.", prec, (2, 8, 64), run(131068, 8), HALF, dtype="float64"),
        rotation("rope.backward.half_split.bfloat16_d64_p32768", "bfloat16 backward at positions 32764..32771.", prec, (2, 8, 64), run(32764, 8), HALF, dtype="bfloat16", backward=True),
        rotation("rope.backward.interleaved.float16_d128_p0", "float16 backward, interleaved, positions 0..15.", prec, (1, 16, 128), run(0, 16), INTER, dtype="float16", backward=True),
    ]


def error_cases() -> list[CaseSpec]:
    err = ("EMB-ROPE-12", "EMB-ERR-1")
    bad = "invalid_config"
    return [
        rotation("rope.error.odd_rotary_dim", "rotary_dim 5 (odd) is invalid_config.", err, (2, 8, 8), run(0, 8), HALF, rotary_dim=5, error=bad),
        rotation("rope.error.rotary_dim_zero", "rotary_dim 0 is invalid_config.", err, (2, 8, 8), run(0, 8), HALF, rotary_dim=0, error=bad),
        rotation("rope.error.rotary_dim_above_d", "rotary_dim 10 > d = 8 is invalid_config.", err, (2, 8, 8), run(0, 8), INTER, rotary_dim=10, error=bad),
        rotation("rope.error.unknown_rope_type", "An unknown rope_type is invalid_config.", err, (2, 8, 8), run(0, 8), HALF, scaling={"rope_type": "exponential", "factor": 2.0}, error=bad),
        rotation("rope.error.unknown_pairing", "An unknown pairing is invalid_config (no pairing feature: every implementation must refuse it).", err, (2, 8, 8), run(0, 8), "reversed", error=bad),
        rotation("rope.error.base_negative", "base -10000 is invalid_config.", err, (2, 8, 8), run(0, 8), HALF, base=-10000.0, error=bad),
        tables("rope.error.tables_base_zero", "rope_tables with base 0 is invalid_config.", err, run(0, 8), 8, base=0.0, error=bad),
        tables("rope.error.tables_odd_rotary_dim", "rope_tables with rotary_dim 7 is invalid_config.", err, run(0, 8), 7, error=bad),
        rotation("rope.error.dynamic_rotary_dim_2", "Dynamic NTK with rotary_dim 2: the exponent r / (r - 2) is undefined, invalid_config.", err + ("EMB-ROPE-8",), (2, 8, 2), run(0, 8), HALF, scaling=DYNAMIC, error=bad),
        rotation("rope.error.yarn_missing_original", "YaRN without original_max_position_embeddings is invalid_config.", err + ("EMB-ROPE-9",), (2, 8, 8), run(0, 8), HALF, scaling={"rope_type": "yarn", "factor": 4.0}, error=bad),
        rotation("rope.error.x_rank_1", "x of rank 1 (no sequence axis) is shape_mismatch.", err, (8,), run(0, 8), HALF, rotary_dim=8, error="shape_mismatch"),
        rotation("rope.error.positions_length", "7 position ids for T = 8 rows is shape_mismatch.", err, (2, 8, 8), run(0, 7), HALF, error="shape_mismatch"),
        rotation("rope.error.grad_output_shape", "grad_output of shape (2, 8, 6) for x (2, 8, 8) is shape_mismatch.", err, (2, 8, 8), run(0, 8), INTER, backward=True, grad_shape=(2, 8, 6), error="shape_mismatch"),
    ]


def cases() -> list[CaseSpec]:
    from embconf.reference.cases import rope_conventions, rope_families  # spec 2.0.0's cases, after 1.3.0's

    return (rotation_cases() + table_cases() + backward_cases() + partial_and_position_cases() + scaling_cases() + dtype_cases() + error_cases()
            + rope_families.cases() + rope_conventions.cases())
