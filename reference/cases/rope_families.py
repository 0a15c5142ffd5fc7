"""Rotary cases of spec 2.0.0 (area rope, listed after reference/cases/rope.py): every scaling family real code
ships in both pairings, with partial rotary where real code combines them (YaRN below and above the original
length, attention factors other than 1, DeepSeek's mscale; llama3 with other factors and bands; Phi-3's
longrope on both sides of its switch), M-RoPE sections (Qwen2-VL), per-batch ``(B, T)`` position ids, and the
fused rotation whose tables are inputs (``rope_apply``, whose two halves of a table may differ).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from embconf.model.rope import Pairing
from embconf.reference.cases import CaseSpec, values
from embconf.reference.cases.rope import HALF, INTER, features_of, rotation, run, tables

YARN_BELOW = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}
YARN_1024 = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024}
YARN_ATTENTION = {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 2048, "attention_factor": 0.8}
YARN_DEEPSEEK = {  # DeepSeek-V2/V3: mscale == mscale_all_dim, so a = 1 (the softmax scale carries mscale^2)
    "rope_type": "yarn",
    "factor": 40.0,
    "original_max_position_embeddings": 4096,
    "beta_fast": 32.0,
    "beta_slow": 1.0,
    "mscale": 0.707,
    "mscale_all_dim": 0.707,
}
LLAMA3_32 = {
    "rope_type": "llama3",
    "factor": 32.0,
    "original_max_position_embeddings": 8192,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
}
LLAMA3_BANDS = {
    "rope_type": "llama3",
    "factor": 16.0,
    "original_max_position_embeddings": 4096,
    "low_freq_factor": 2.0,
    "high_freq_factor": 8.0,
}
DYNAMIC = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 4096}
QWEN2_VL = [16, 24, 24]  # Qwen2-VL's mrope_section for head_dim 128: temporal, height, width frequencies


def longrope(h: int, original: int = 4096, **extra: Any) -> dict[str, Any]:
    """A longrope scaling of h per-frequency factors like Phi-3's: short near 1, long growing to about 40."""
    short = [round(1.0 + 0.25 * (i / h) ** 2, 4) for i in range(h)]
    long = [round(1.0 + 39.0 * (i / h) ** 3, 4) for i in range(h)]
    return {
        "rope_type": "longrope",
        "short_factor": short,
        "long_factor": long,
        "original_max_position_embeddings": original,
        **extra,
    }


def mrope(section: list[int]) -> dict[str, Any]:
    return {"rope_type": "default", "mrope_section": list(section)}


def vision_positions(batch: Optional[int] = None) -> np.ndarray:
    """Qwen2-VL's (3, T) position ids of 4 text tokens, a 1 x 2 x 3 image (t, h, w from 4) and 6 more text tokens
    (from 7); with ``batch``, (3, B, T) with row b shifted by 5b (left padding)."""
    text = np.arange(4)
    image = np.stack([np.full(6, 4), 4 + np.repeat(np.arange(2), 3), 4 + np.tile(np.arange(3), 2)])
    rows = np.concatenate([np.stack([text] * 3), image, np.stack([np.arange(7, 13)] * 3)], axis=1)
    if batch is None:
        return rows.astype(np.int64)
    return np.stack([rows + 5 * b for b in range(batch)], axis=1).astype(np.int64)


def batch_rows(p0s: list[int], length: int) -> np.ndarray:
    """(B, T) position ids: row b a contiguous run from p0s[b] (decoding several sequences at their own offsets)."""
    return np.stack([run(p0, length) for p0 in p0s])


def family_cases() -> list[CaseSpec]:
    yarn, l3, long_, dyn, part = ("EMB-ROPE-9",), ("EMB-ROPE-10",), ("EMB-ROPE-13",), ("EMB-ROPE-8",), ("EMB-ROPE-4",)
    out = []
    for pairing in (HALF, INTER):
        p = pairing
        out += [
            rotation(f"rope.forward.{p}.yarn_below_original", f"YaRN, factor 4, original 4096, at positions 0..15 (below the original length: the ramp and a = 0.1 ln 4 + 1 apply all the same), {p}.", yarn, (2, 16, 64), run(0, 16), p, scaling=YARN_BELOW),
            rotation(f"rope.forward.{p}.yarn_above_original", f"YaRN, factor 4, original 4096, at positions 32764..32771 (above the original length), {p}.", yarn, (2, 8, 64), run(32764, 8), p, scaling=YARN_BELOW),
            rotation(f"rope.forward.{p}.yarn_attention_factor", f"YaRN with attention_factor 0.8 given (not 1, not the default 0.1 ln 8 + 1), {p}.", yarn, (2, 8, 64), run(2044, 8), p, scaling=YARN_ATTENTION),
            rotation(f"rope.forward.{p}.yarn_deepseek_mscale", f"YaRN as DeepSeek-V2/V3 configure it: factor 40, mscale = mscale_all_dim = 0.707, so a = m(40, 0.707) / m(40, 0.707) = 1, {p}.", yarn, (1, 8, 64), run(16380, 8), p, scaling=YARN_DEEPSEEK),
            rotation(f"rope.backward.{p}.yarn_below_original", f"Backward under YaRN below the original length, {p}.", yarn, (2, 16, 64), run(0, 16), p, scaling=YARN_BELOW, backward=True),
            rotation(f"rope.forward.{p}.llama3_factor32_d128", f"llama3 with factor 32 (Llama 3.2), base 500000, positions 32764..32771, {p}.", l3, (1, 8, 128), run(32764, 8), p, base=500000.0, scaling=LLAMA3_32),
            rotation(f"rope.forward.{p}.llama3_bands_d128", f"llama3 with factor 16, original 4096 and bands 2 and 8 (not Llama 3.1's constants), base 500000, {p}.", l3, (2, 8, 128), run(4093, 8), p, base=500000.0, scaling=LLAMA3_BANDS),
            rotation(f"rope.backward.{p}.llama3_bands_d128", f"Backward under llama3 with factor 16 and bands 2 and 8, {p}.", l3, (1, 8, 128), run(4093, 8), p, base=500000.0, scaling=LLAMA3_BANDS, backward=True),
            rotation(f"rope.forward.{p}.longrope_short", f"longrope (Phi-3) at positions 4088..4095: max + 1 = 4096 is the original length, so the short factors, {p}.", long_, (2, 8, 64), run(4088, 8), p, scaling=longrope(32, factor=32.0)),
            rotation(f"rope.forward.{p}.longrope_long", f"longrope at positions 4089..4096: max + 1 = 4097 exceeds the original length, so the long factors; a = sqrt(1 + ln 32 / ln 4096), {p}.", long_, (2, 8, 64), run(4089, 8), p, scaling=longrope(32, factor=32.0)),
            rotation(f"rope.backward.{p}.longrope_long", f"Backward under longrope with the long factors, {p}.", long_, (1, 8, 64), run(32764, 8), p, scaling=longrope(32, factor=32.0), backward=True),
            rotation(f"rope.backward.{p}.dynamic_grown", f"Backward under dynamic NTK past the original length, {p}.", dyn, (2, 8, 64), run(8184, 8), p, scaling=DYNAMIC, backward=True),
        ]
    return out + [
        rotation("rope.forward.half_split.longrope_partial_d128_r96", "longrope with partial rotary (Phi-4-mini: 96 of 128 columns, 48 factors), long factors at positions 131068..131075.", long_ + part, (1, 8, 128), run(131068, 8), HALF, rotary_dim=96, scaling=longrope(48, factor=32.0)),
        rotation("rope.forward.half_split.longrope_attention_factor", "longrope with attention_factor 1.25 given (Phi-3.5's), short factors.", long_, (2, 8, 64), run(0, 8), HALF, scaling=longrope(32, attention_factor=1.25)),
        rotation("rope.forward.interleaved.longrope_no_factor", "longrope without factor or attention_factor: a = 1, long factors.", long_, (2, 8, 64), run(8188, 8), INTER, scaling=longrope(32)),
        rotation("rope.forward.interleaved.yarn_partial_d96_r64", "YaRN with partial rotary (64 of 96), interleaved, factor 4, original 1024, positions 1000..1007: the ramp is over the 32 rotated pairs, not the head.", yarn + part, (2, 8, 96), run(1000, 8), INTER, rotary_dim=64, scaling=YARN_1024),
        rotation("rope.forward.half_split.dynamic_partial_d80_r32", "Dynamic NTK with partial rotary (GPT-NeoX, Phi-2: 32 of 80) past the original length.", dyn + part, (2, 8, 80), run(8184, 8), HALF, rotary_dim=32, scaling=DYNAMIC),
        rotation("rope.forward.interleaved.linear_partial_d64_r32", "Linear scaling with partial rotary (ChatGLM's half of the head), interleaved.", ("EMB-ROPE-7",) + part, (2, 8, 64), run(4093, 8), INTER, rotary_dim=32, scaling={"rope_type": "linear", "factor": 2.0}),
        tables("rope.tables.longrope_short", "longrope tables with the short factors (L = 4096 = the original length).", long_, run(4088, 8), 64, scaling=longrope(32, factor=32.0)),
        tables("rope.tables.longrope_long", "longrope tables with the long factors and a = sqrt(1 + ln 32 / ln 4096).", long_, run(4089, 8), 64, scaling=longrope(32, factor=32.0)),
        tables("rope.tables.llama3_bands", "llama3 tables with factor 16, original 4096, bands 2 and 8.", l3, run(0, 8), 128, base=500000.0, scaling=LLAMA3_BANDS),
        tables("rope.tables.yarn_attention_factor", "YaRN tables with attention_factor 0.8 given.", yarn, run(2044, 8), 64, scaling=YARN_ATTENTION),
        tables("rope.tables.yarn_deepseek_mscale", "YaRN tables with mscale = mscale_all_dim: a = 1.", yarn, run(0, 8), 64, scaling=YARN_DEEPSEEK),
    ]


def layout_cases() -> list[CaseSpec]:
    """M-RoPE sections (EMB-ROPE-14) and per-batch position ids (EMB-ROPE-15)."""
    mr, bat = ("EMB-ROPE-14",), ("EMB-ROPE-15",)
    return [
        rotation("rope.forward.half_split.mrope_d128", "M-RoPE (Qwen2-VL, sections 16/24/24): text, a 1x2x3 image and text; frequencies 0..15 turn by the temporal positions, 16..39 by the height, 40..63 by the width.", mr, (2, 16, 128), vision_positions(), HALF, scaling=mrope(QWEN2_VL)),
        rotation("rope.forward.interleaved.mrope_d64", "M-RoPE, sections 8/12/12, interleaved pairing.", mr, (1, 2, 16, 64), vision_positions(), INTER, scaling=mrope([8, 12, 12])),
        rotation("rope.forward.half_split.mrope_batch", "M-RoPE with per-batch positions (3, B, T): each batch row its own temporal, height and width positions.", mr + bat, (2, 4, 16, 64), vision_positions(2), HALF, scaling=mrope([8, 12, 12])),
        rotation("rope.backward.half_split.mrope_d128", "Backward under M-RoPE, sections 16/24/24.", mr, (2, 16, 128), vision_positions(), HALF, scaling=mrope(QWEN2_VL), backward=True),
        tables("rope.tables.mrope_d128", "M-RoPE tables (T, h) of the (3, T) positions, sections 16/24/24.", mr, vision_positions(), 128, scaling=mrope(QWEN2_VL)),
        rotation("rope.forward.half_split.batch_positions", "Per-batch position ids (B, T) = (2, 8): x (B, heads, T, d), each batch row at its own offset (0 and 4093).", bat, (2, 4, 8, 64), batch_rows([0, 4093], 8), HALF),
        rotation("rope.forward.interleaved.batch_positions", "Per-batch position ids (3, 8), interleaved, x (B, T, d): offsets 5, 0 and 32764.", bat, (3, 8, 64), batch_rows([5, 0, 32764], 8), INTER),
        rotation("rope.backward.half_split.batch_positions", "Backward with per-batch position ids (2, 8).", bat, (2, 2, 8, 64), batch_rows([3, 131068], 8), HALF, backward=True),
        rotation("rope.backward.interleaved.batch_positions", "Backward with per-batch position ids, interleaved.", bat, (2, 8, 64), batch_rows([16, 0], 8), INTER, backward=True),
        rotation("rope.forward.half_split.dynamic_batch_positions", "Dynamic NTK with per-batch positions: L = 8192 is the largest over the batch, so both rows use the grown base.", bat + ("EMB-ROPE-8",), (2, 8, 64), batch_rows([0, 8184], 8), HALF, scaling=DYNAMIC),
        rotation("rope.forward.half_split.longrope_batch_positions", "longrope with per-batch positions: one row past the original length chooses the long factors for the whole batch.", bat + ("EMB-ROPE-13",), (2, 8, 64), batch_rows([0, 4093], 8), HALF, scaling=longrope(32, factor=32.0)),
        tables("rope.tables.batch_positions", "Tables (B, T, h) of per-batch position ids (2, 8).", bat, batch_rows([0, 32764], 8), 64),
    ]


def apply(
    case_id: str,
    description: str,
    reqs: tuple[str, ...],
    shape: tuple[int, ...],
    pairing: str,
    table_shape: tuple[int, ...],
    equal_halves: bool = False,
    dtype: str = "float32",
    backward: bool = False,
    error: Optional[str] = None,
    sin_shape: Optional[tuple[int, ...]] = None,
) -> CaseSpec:
    """A rope_apply (or rope_apply_backward) case with tables given as inputs: random numbers, each column its
    own unless ``equal_halves`` (Hugging Face's cat(freqs, freqs): both columns of a pair read the same value)."""

    def table(salt: str, of: tuple[int, ...]) -> np.ndarray:
        if not equal_halves:
            return values(case_id, of, dtype, salt)
        once = values(case_id, of[:-1] + (of[-1] // 2,), dtype, salt)
        i = np.argsort(np.concatenate([*_pair_index(of[-1], pairing)]))
        return np.concatenate([once, once], axis=-1)[..., i]

    inputs: dict[str, Any] = {
        "x": values(case_id, shape, dtype),
        "cos": table("cos", table_shape),
        "sin": table("sin", sin_shape or table_shape),
        "pairing": pairing,
    }
    operation = "rope_apply_backward" if backward else "rope_apply"
    if backward:
        inputs["grad_output"] = values(case_id, shape, dtype, "grad")
    first = ("EMB-ROPE-17",) if backward else ("EMB-ROPE-16",)
    return CaseSpec(
        case_id, description, first + reqs, operation, inputs, features_of(operation, inputs, error), error=error
    )


def _pair_index(width: int, pairing: str) -> tuple[np.ndarray, np.ndarray]:
    h = width // 2
    if Pairing(pairing) is Pairing.HALF_SPLIT:
        return np.arange(h), np.arange(h) + h
    return 2 * np.arange(h), 2 * np.arange(h) + 1


def apply_cases() -> list[CaseSpec]:
    three, part, bat, err = ("EMB-ROPE-3",), ("EMB-ROPE-4",), ("EMB-ROPE-15",), ("EMB-ROPE-12", "EMB-ERR-1")
    out = []
    for p in (HALF, INTER):
        out += [
            apply(f"rope.apply.{p}.equal_halves", f"Tables given as inputs, both columns of each pair reading the same value (Hugging Face's cat(freqs, freqs)), {p}.", three, (2, 16, 64), p, (16, 64), equal_halves=True),
            apply(f"rope.apply.{p}.halves_differ", f"Tables whose two columns of a pair differ: column i reads cos_i and sin_i, column j cos_j and sin_j, {p}.", three, (2, 2, 8, 64), p, (8, 64)),
            apply(f"rope.apply_backward.{p}.halves_differ", f"Backward with tables whose halves differ: grad_i = g_i cos_i + g_j sin_j, grad_j = g_j cos_j - g_i sin_i (a backward that reads sin_i for both fails), {p}.", three, (2, 2, 8, 64), p, (8, 64), backward=True),
            apply(f"rope.apply_backward.{p}.equal_halves", f"Backward with equal halves, {p}.", three, (2, 16, 64), p, (16, 64), equal_halves=True, backward=True),
        ]
    return out + [
        apply("rope.apply.half_split.partial_d128_r64", "Tables of width 64 for x of width 128 (GPT-NeoX, Phi): columns 64..127 pass through.", three + part, (2, 8, 128), HALF, (8, 64)),
        apply("rope.apply_backward.interleaved.partial_d64_r32", "Backward with tables of width 32 for x of width 64: grad_output's other columns copied.", three + part, (2, 8, 64), INTER, (8, 32), backward=True),
        apply("rope.apply.half_split.batch_tables", "Per-batch tables (B, T, r) = (2, 8, 64) for x (B, heads, T, d).", three + bat, (2, 3, 8, 64), HALF, (2, 8, 64)),
        apply("rope.apply_backward.half_split.batch_tables", "Backward with per-batch tables whose halves differ.", three + bat, (2, 3, 8, 64), HALF, (2, 8, 64), backward=True),
        apply("rope.apply.half_split.bfloat16", "bfloat16 x and tables: products and sum in bfloat16 allowed.", three + ("EMB-ROPE-11",), (2, 8, 64), HALF, (8, 64), dtype="bfloat16"),
        apply("rope.apply_backward.interleaved.float16", "float16 backward with tables whose halves differ.", three + ("EMB-ROPE-11",), (2, 8, 64), INTER, (8, 64), dtype="float16", backward=True),
        apply("rope.apply.error.odd_width", "Tables of odd width 7 are shape_mismatch.", err, (2, 8, 8), HALF, (8, 7), error="shape_mismatch"),
        apply("rope.apply.error.rows", "Tables of 7 rows for T = 8 are shape_mismatch.", err, (2, 8, 8), INTER, (7, 8), error="shape_mismatch"),
        apply("rope.apply.error.cos_sin_shapes", "cos (8, 8) and sin (8, 6) are shape_mismatch.", err, (2, 8, 8), HALF, (8, 8), sin_shape=(8, 6), error="shape_mismatch"),
        apply("rope.apply.error.unknown_pairing", "An unknown pairing is invalid_config.", err, (2, 8, 8), "reversed", (8, 8), error="invalid_config"),
    ]


def error_cases() -> list[CaseSpec]:
    err, bad = ("EMB-ROPE-12", "EMB-ERR-1"), "invalid_config"
    return [
        rotation("rope.error.mrope_section_sum", "mrope_section [8, 8, 8] for rotary_dim 64 (h = 32) is invalid_config.", err + ("EMB-ROPE-14",), (2, 16, 64), vision_positions(), HALF, scaling=mrope([8, 8, 8]), error=bad),
        rotation("rope.error.mrope_positions_shape", "M-RoPE with position_ids (T,) instead of (3, T) is shape_mismatch.", err + ("EMB-ROPE-14",), (2, 8, 64), run(0, 8), HALF, scaling=mrope([8, 12, 12]), error="shape_mismatch"),
        rotation("rope.error.longrope_factor_count", "longrope with 16 short and long factors for rotary_dim 64 (h = 32) is invalid_config.", err + ("EMB-ROPE-13",), (2, 8, 64), run(0, 8), HALF, scaling=longrope(16), error=bad),
        rotation("rope.error.batch_positions_rows", "Per-batch position ids of 3 rows for x of batch 2 are shape_mismatch.", err + ("EMB-ROPE-15",), (2, 8, 64), batch_rows([0, 1, 2], 8), INTER, error="shape_mismatch"),
    ]


def cases() -> list[CaseSpec]:
    return family_cases() + layout_cases() + apply_cases() + error_cases()
