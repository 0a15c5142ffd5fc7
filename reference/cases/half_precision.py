"""Half-precision cases (spec section 13): float16 and bfloat16 tables, gradients, positions, layers, sinusoids.

Goldens are the float64 results rounded once to the half dtype (EMB-HLF-2). Each case
carries its dtype's feature, so an implementation that does not claim it gets not_applicable.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from embconf.model.dtypes import HALF_DTYPES, round_once
from embconf.reference.cases import CaseSpec, rng_for, table, token_ids, values
from embconf.reference.cases.sinusoidal import sampled_rows
from embconf.reference.cases.token_lookup import i64

AREA = "half_precision"
SPECIALS = {  # NaN, +-inf, -0.0, 0.0, the smallest subnormal, the largest finite value, the smallest normal
    "float16": [np.nan, np.inf, -np.inf, -0.0, 0.0, 2.0**-24, 65504.0, -65504.0, 2.0**-14],
    "bfloat16": [np.nan, np.inf, -np.inf, -0.0, 0.0, 2.0**-133, 3.3895313892515355e38, -3.3895313892515355e38, 2.0**-126],
}
LONG = {"float16": 4096, "bfloat16": 1024}  # past the last exactly representable run of integers: 2048 and 256


def _lookup(case_id: str, description: str, reqs: tuple[str, ...], dtype: str, ids: np.ndarray, vocab: int, dim: int,
            backward: bool, weight: np.ndarray | None = None, grad: np.ndarray | None = None) -> CaseSpec:
    inputs: dict[str, Any] = {"weight": table(case_id, vocab, dim, dtype) if weight is None else weight, "ids": ids}
    if backward:
        inputs["grad_output"] = values(case_id, ids.shape + (dim,), dtype, "grad") if grad is None else grad
    return CaseSpec(case_id, description, ("EMB-HLF-1", "EMB-HLF-2") + reqs, "embedding_backward" if backward else "embedding_forward",
                    inputs, (dtype,))


def _many_repeats(case_id: str, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """1000 ids, 980 of them id 0, with positive upstream rows in [0.5, 1.5): a long same-sign sum."""
    ids = np.zeros(1000, np.int64)
    ids[::100] = 1
    ids[50::100] = 2
    grad = round_once(rng_for(case_id + "/grad").random((1000, 4)) + 0.5, dtype)
    return ids, grad


def lookup_cases(dtype: str) -> list[CaseSpec]:
    p = f"half.{dtype}"
    special = round_once(np.array(SPECIALS[dtype], np.float64), dtype).reshape(3, 3)
    many_ids, many_grad = _many_repeats(f"{p}.backward.many_repeats", dtype)
    return [
        _lookup(f"{p}.forward.random", f"A {dtype} table stays {dtype}; rows are copied bit for bit.", ("EMB-FWD-2", "EMB-FWD-3"), dtype,
                token_ids(f"{p}.forward.random", 10, (3, 4)), 10, 4, False),
        _lookup(f"{p}.forward.special_values", f"{dtype} NaN, +-inf, -0.0, the smallest subnormal and the largest finite values survive the lookup.",
                ("EMB-FWD-2", "EMB-TOL-2"), dtype, i64([[2, 1, 0], [0, 1, 2]]), 3, 3, False, weight=special),
        _lookup(f"{p}.backward.distinct", f"Distinct ids: the {dtype} gradient rows are the upstream rows, exactly.", ("EMB-BWD-2", "EMB-BWD-3"), dtype,
                i64([4, 0, 2]), 6, 3, True),
        _lookup(f"{p}.backward.few_repeats", f"Ids repeated up to 3 times: accumulation in {dtype} itself is admitted ((k-1)u <= 1/8).",
                ("EMB-BWD-2", "EMB-BWD-4", "EMB-HLF-3"), dtype, i64([[0, 2, 0], [1, 0, 2]]), 4, 5, True),
        _lookup(f"{p}.backward.many_repeats", f"Id 0 repeated 980 times: (k-1)u > 1/8, so the sum must be accumulated in float32 (a {dtype} running sum stalls).",
                ("EMB-BWD-2", "EMB-BWD-4", "EMB-HLF-3"), dtype, many_ids, 3, 4, True, grad=many_grad),
    ]


def positions_cases(dtype: str) -> list[CaseSpec]:
    p, reqs = f"half.{dtype}", ("EMB-HLF-1", "EMB-HLF-2")
    cases = []
    for backward in (False, True):
        case_id = f"{p}.positions.{'backward' if backward else 'forward'}"
        inputs: dict[str, Any] = {"table": table(case_id, 8, 4, dtype), "x": values(case_id, (4, 3, 4), dtype, "x"), "start_pos": 2}
        if backward:
            inputs["grad_output"] = values(case_id, (4, 3, 4), dtype, "grad")
        cases.append(CaseSpec(case_id, f"Learned positions in {dtype}: " + ("batch sums of 4 sequences." if backward else "x + P[2:5]."),
                              reqs + (("EMB-POS-3", "EMB-POS-4") if backward else ("EMB-POS-1",)),
                              "learned_positions_backward" if backward else "learned_positions_forward", inputs, (dtype,)))
    return cases


def _layer(case_id: str, description: str, reqs: tuple[str, ...], dtype: str, config: dict[str, Any], tokens: np.ndarray,
           backward: bool = False) -> CaseSpec:
    vocab, dim = config["vocab_size"], config["embed_dim"]
    learned = config.get("pos_encoding") == "learned"
    inputs: dict[str, Any] = {"config": config, "token_weight": table(case_id, vocab, dim, dtype, "tokens"),
                              "position_table": table(case_id, config["max_seq_len"], dim, dtype, "positions") if learned else None,
                              "tokens": tokens, "start_pos": 0}
    if backward:
        inputs["grad_output"] = values(case_id, tokens.shape + (dim,), dtype, "grad")
    return CaseSpec(case_id, description, ("EMB-HLF-1", "EMB-HLF-2") + reqs,
                    "embedding_layer_backward" if backward else "embedding_layer_forward", inputs, (dtype,))


def layer_cases(dtype: str) -> list[CaseSpec]:
    p = f"half.{dtype}.layer"
    cfg = {"vocab_size": 9, "embed_dim": 8, "max_seq_len": 6, "pos_encoding": "learned", "scale_embeddings": True}
    sin = {"vocab_size": 9, "embed_dim": 8, "max_seq_len": 6, "pos_encoding": "sinusoidal", "scale_embeddings": True}
    tokens = i64([[3, 0, 3, 8], [1, 3, 0, 2]])
    return [
        _layer(f"{p}.forward_learned_scaled", f"A scaled {dtype} layer with learned positions.", ("EMB-LAY-2", "EMB-HLF-5"), dtype, cfg, tokens),
        _layer(f"{p}.backward_learned_scaled", f"Its {dtype} gradients: c times the scatter-add, and the batch sums.", ("EMB-LAY-5", "EMB-LAY-6", "EMB-HLF-3"), dtype, cfg, tokens, True),
        _layer(f"{p}.forward_sinusoidal", f"A scaled {dtype} layer with sinusoidal positions.", ("EMB-LAY-3", "EMB-HLF-4"), dtype, sin, tokens),
    ]


def sinusoid_cases(dtype: str) -> list[CaseSpec]:
    p, long = f"half.{dtype}.sin", LONG[dtype]
    exact_limit = 2048 if dtype == "float16" else 256
    rows = sorted(set(sampled_rows(long)) | {exact_limit + 1, exact_limit + 3, long - 3})
    return [
        CaseSpec(f"{p}.l64_d16", f"The canonical table in {dtype}, rounded once from float64.", ("EMB-HLF-1", "EMB-HLF-2", "EMB-HLF-4", "EMB-SIN-2"),
                 "sinusoidal_table", {"max_len": 64, "embed_dim": 16, "dtype": dtype}, (dtype,)),
        CaseSpec(f"{p}.l{long}_d8", f"{long} positions in {dtype}: past {exact_limit} integer positions are not representable in {dtype}, so angles are computed in float32 or wider (sampled rows).",
                 ("EMB-HLF-4", "EMB-SIN-5"), "sinusoidal_table", {"max_len": long, "embed_dim": 8, "dtype": dtype}, (dtype,), sample_rows={"table": rows}),
    ]


def gemma_case() -> CaseSpec:
    cfg = {"vocab_size": 4, "embed_dim": 3072, "max_seq_len": 8, "pos_encoding": "none", "scale_embeddings": True}
    return _layer("half.bfloat16.layer.gemma_scale", "Gemma's scaled bfloat16 layer, D = 3072: sqrt(3072) = 55.4256 may be rounded to 55.5 in bfloat16 (within 2 ulps).",
                  ("EMB-LAY-2", "EMB-HLF-5"), "bfloat16", cfg, i64([2, 0, 3]))


def cases() -> list[CaseSpec]:
    specs: list[CaseSpec] = []
    for dtype in HALF_DTYPES:
        specs += lookup_cases(dtype) + positions_cases(dtype) + layer_cases(dtype) + sinusoid_cases(dtype)
    return specs + [gemma_case()]
