"""Mistakes of the rotary families and forms of spec 2.0.0 (area rope): each is the reference run on inputs the
mistake changes (a scaling parameter lost or hard-coded, the wrong factor list, the wrong position row), so its
backward is the gradient of its forward, or a wrong fused rotation whose tables are inputs.

Public bugs: torchtitan #4117 (YaRN off below the original length, interleaved path), llama-models #241
(llama3's Llama 3.1 constants hard-coded), Paddle #74716 (a fused backward that reads the wrong half of sin).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Callable, Optional

import numpy as np

from embconf.model.rope import APPLY_OPERATIONS, ROTATIONS
from embconf.mutants.base import Mutant, register
from embconf.reference import OPERATIONS
from embconf.reference.rope import pair_columns, per_row
from embconf.reference.rope_apply import check_apply

(FWD, BWD), TABLES = ROTATIONS, "rope_tables"
APPLY, APPLY_BWD = APPLY_OPERATIONS
# (scaling, position_ids, pairing) -> the (scaling, position_ids) the mistake computes with
Change = Callable[[Mapping[str, Any], np.ndarray, Optional[str]], tuple[Mapping[str, Any], np.ndarray]]


def _changed(change: Change, scaling: Any, position_ids: Any, pairing: Optional[str]) -> tuple[Any, Any]:
    """The mistake's inputs; a scaling or positions it cannot read are left for the reference to refuse."""
    ids = np.asarray(position_ids)
    if not isinstance(scaling, Mapping) or ids.dtype.kind not in "iu" or ids.size == 0:
        return scaling, position_ids
    try:
        return change(scaling, ids.astype(np.int64), pairing)
    except (KeyError, IndexError, TypeError, ValueError):
        return scaling, position_ids


def _operations(change: Change) -> dict[str, Callable[..., Any]]:
    def rope_forward(x: Any, position_ids: Any, rotary_dim: Any, base: Any, scaling: Any, pairing: Any) -> Any:
        OPERATIONS[FWD](x, position_ids, rotary_dim, base, scaling, pairing)  # the spec's checks and errors
        scaling, position_ids = _changed(change, scaling, position_ids, pairing)
        return OPERATIONS[FWD](x, position_ids, rotary_dim, base, scaling, pairing)

    def rope_backward(
        x: Any, position_ids: Any, rotary_dim: Any, base: Any, scaling: Any, pairing: Any, grad_output: Any
    ) -> Any:
        OPERATIONS[BWD](x, position_ids, rotary_dim, base, scaling, pairing, grad_output)
        scaling, position_ids = _changed(change, scaling, position_ids, pairing)
        return OPERATIONS[BWD](x, position_ids, rotary_dim, base, scaling, pairing, grad_output)

    def rope_tables(position_ids: Any, rotary_dim: Any, base: Any, scaling: Any, dtype: str = "float32") -> Any:
        OPERATIONS[TABLES](position_ids, rotary_dim, base, scaling, dtype)
        scaling, position_ids = _changed(change, scaling, position_ids, None)
        return OPERATIONS[TABLES](position_ids, rotary_dim, base, scaling, dtype)

    return {FWD: rope_forward, BWD: rope_backward, TABLES: rope_tables}


REGISTERED: list[str] = []  # the ids this module registers (the replay names them; the rope symptoms read 1.3.0's)


def changed_inputs(
    name: str, description: str, hint: str, change: Change, tables_too: bool = True, source: str = ""
) -> None:
    """Register ``rope.NAME`` (forward and backward) and, with ``tables_too``, ``rope.tables.NAME``: one mistake."""
    ops = _operations(change)
    primary = register(Mutant(f"rope.{name}", description, hint, {FWD: ops[FWD], BWD: ops[BWD]}, source=source))
    REGISTERED.append(primary.id)
    if tables_too:
        register(replace(primary, id=f"rope.tables.{name}", overrides={TABLES: ops[TABLES]}, mistake=primary.id))
        REGISTERED.append(f"rope.tables.{name}")


def _type(scaling: Mapping[str, Any]) -> str:
    return str(scaling.get("rope_type", "default"))


def _length(ids: np.ndarray) -> int:
    return int(ids.max()) + 1


def _yarn_off_below(scaling: Mapping[str, Any], ids: np.ndarray, pairing: Optional[str]) -> tuple[Any, np.ndarray]:
    below = _type(scaling) == "yarn" and _length(ids) <= int(scaling["original_max_position_embeddings"])
    return ({"rope_type": "default"} if below and pairing == "interleaved" else scaling), ids


def _llama31(scaling: Mapping[str, Any], ids: np.ndarray, pairing: Optional[str]) -> tuple[Any, np.ndarray]:
    if _type(scaling) != "llama3":
        return scaling, ids
    constants = {
        "factor": 8.0,
        "original_max_position_embeddings": 8192,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
    }
    return {**scaling, **constants}, ids


def _without(*keys: str, family: str) -> Change:
    def change(scaling: Mapping[str, Any], ids: np.ndarray, pairing: Optional[str]) -> tuple[Any, np.ndarray]:
        return ({k: v for k, v in scaling.items() if k not in keys} if _type(scaling) == family else scaling), ids

    return change


def _factors(use: str, at_original: bool = False) -> Change:
    """longrope with one list for both (``use``), or the long list from L = L0 on (``at_original``)."""

    def change(scaling: Mapping[str, Any], ids: np.ndarray, pairing: Optional[str]) -> tuple[Any, np.ndarray]:
        if _type(scaling) != "longrope":
            return scaling, ids
        if at_original:
            long = _length(ids) >= int(scaling["original_max_position_embeddings"])
            use_list = scaling["long_factor"] if long else scaling["short_factor"]
        else:
            use_list = scaling[use]
        return {**scaling, "short_factor": use_list, "long_factor": use_list}, ids

    return change


def _longrope_unscaled(scaling: Mapping[str, Any], ids: np.ndarray, pairing: Optional[str]) -> tuple[Any, np.ndarray]:
    return ({**scaling, "attention_factor": 1.0} if _type(scaling) == "longrope" else scaling), ids


def _temporal_only(scaling: Mapping[str, Any], ids: np.ndarray, pairing: Optional[str]) -> tuple[Any, np.ndarray]:
    if not scaling.get("mrope_section") or ids.shape[0] != 3:
        return scaling, ids
    return scaling, np.stack([ids[0]] * 3)


def _height_width_swapped(
    scaling: Mapping[str, Any], ids: np.ndarray, pairing: Optional[str]
) -> tuple[Any, np.ndarray]:
    if not scaling.get("mrope_section") or ids.shape[0] != 3:
        return scaling, ids
    return scaling, ids[[0, 2, 1]]


def _first_row(scaling: Mapping[str, Any], ids: np.ndarray, pairing: Optional[str]) -> tuple[Any, np.ndarray]:
    axis = ids.ndim - 2  # the batch axis of (B, T), or of (3, B, T) with M-RoPE
    batched = ids.ndim == (3 if scaling.get("mrope_section") else 2)
    if not batched:
        return scaling, ids
    return scaling, np.broadcast_to(np.take(ids, [0], axis=axis), ids.shape).copy()


TITAN = "https://github.com/pytorch/torchtitan/issues/4117"
changed_inputs(
    "yarn_off_below_original",
    "switches YaRN off (plain frequencies, no attention factor) when max(position_ids) + 1 is within the original "
    "length, on the interleaved path",
    "apply YaRN's ramp and attention factor at every length, in both pairings (EMB-ROPE-9)",
    _yarn_off_below,
    tables_too=False,
    source=TITAN,
)
changed_inputs(
    "llama3_constants",
    "uses Llama 3.1's llama3 constants (factor 8, original 8192, bands 1 and 4) whatever the scaling says",
    "read factor, original_max_position_embeddings, low_freq_factor and high_freq_factor from the scaling",
    _llama31,
    source="https://github.com/meta-llama/llama-models/issues/241",
)
changed_inputs(
    "yarn_attention_factor_ignored",
    "ignores a given YaRN attention_factor and scales the tables by 0.1 ln(factor) + 1 (or the mscale ratio)",
    "a = attention_factor when the scaling gives it (EMB-ROPE-9)",
    _without("attention_factor", family="yarn"),
)
changed_inputs(
    "yarn_mscale_ignored",
    "ignores YaRN's mscale and mscale_all_dim: a = 0.1 ln(factor) + 1 instead of m(factor, mscale) / m(factor, mscale_all_dim)",
    "with mscale and mscale_all_dim, a = m(factor, mscale) / m(factor, mscale_all_dim) (DeepSeek: 1)",
    _without("mscale", "mscale_all_dim", family="yarn"),
)
changed_inputs(
    "longrope_short_always",
    "uses longrope's short factors at every length (never switches to the long ones)",
    "divide by long_factor when max(position_ids) + 1 > original_max_position_embeddings (EMB-ROPE-13)",
    _factors("short_factor"),
)
changed_inputs(
    "longrope_long_at_original",
    "switches to longrope's long factors at L = original_max_position_embeddings (>= where the spec says >)",
    "the long factors only when max(position_ids) + 1 > original_max_position_embeddings",
    _factors("", at_original=True),
)
changed_inputs(
    "longrope_attention_missing",
    "leaves out longrope's attention factor: cos and sin are not multiplied by it",
    "a = attention_factor, or sqrt(1 + ln(factor) / ln(original_max_position_embeddings)) for factor > 1",
    _longrope_unscaled,
)
changed_inputs(
    "mrope_temporal_only",
    "rotates every M-RoPE frequency by the temporal positions (mrope_section ignored)",
    "frequency k turns by the temporal, height or width positions its section names (EMB-ROPE-14)",
    _temporal_only,
)
changed_inputs(
    "mrope_height_width_swapped",
    "takes M-RoPE's height positions for the width section and the width positions for the height section",
    "position_ids rows are temporal, height, width, in that order (EMB-ROPE-14)",
    _height_width_swapped,
)
changed_inputs(
    "batch_positions_first_row",
    "rotates every batch row by the positions of the first (per-batch position_ids (B, T) read as (T,))",
    "row b of x turns by row b of position_ids (EMB-ROPE-15)",
    _first_row,
)


def _fused(forward_columns: str = "own", backward_sin: str = "own", backward_sign: float = -1.0) -> dict[str, Any]:
    """A fused rotation whose table reads are wrong: ``first`` reads column i's value for both columns of a pair;
    the backward's sin read ``mixed`` swaps the two halves (Paddle #74716); ``backward_sign`` +1 rotates forward."""

    def reads(cos: np.ndarray, sin: np.ndarray, pairing: str, x: np.ndarray) -> tuple[Any, ...]:
        i, j = pair_columns(cos.shape[-1], pairing)
        c, s = per_row(cos.astype(np.float64), x), per_row(sin.astype(np.float64), x)
        ci, cj, si, sj = c[..., i], c[..., j], s[..., i], s[..., j]
        if forward_columns == "first":
            cj, sj = ci, si
        return i, j, ci, cj, si, sj

    def rope_apply(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, pairing: str) -> np.ndarray:
        OPERATIONS[APPLY](x, cos, sin, pairing)
        i, j, ci, cj, si, sj = reads(cos, sin, pairing, x)
        wide, out = x.astype(np.float64), x.copy()
        out[..., i] = wide[..., i] * ci - wide[..., j] * si
        out[..., j] = wide[..., j] * cj + wide[..., i] * sj
        return out

    def rope_apply_backward(
        x: np.ndarray, cos: np.ndarray, sin: np.ndarray, pairing: str, grad_output: np.ndarray
    ) -> np.ndarray:
        OPERATIONS[APPLY_BWD](x, cos, sin, pairing, grad_output)
        check_apply(x, cos, sin, pairing)
        i, j, ci, cj, si, sj = reads(cos, sin, pairing, x)
        if backward_sin == "mixed":
            si, sj = sj, si
        g, out = grad_output.astype(np.float64), grad_output.copy()
        out[..., i] = g[..., i] * ci - backward_sign * g[..., j] * sj
        out[..., j] = g[..., j] * cj + backward_sign * g[..., i] * si
        return out

    return {APPLY: rope_apply, APPLY_BWD: rope_apply_backward}


PADDLE = "https://github.com/PaddlePaddle/Paddle/issues/74716"
FUSED = (
    "rope.apply_backward_mixes_halves",
    "rope.apply_first_half_tables",
    "rope.apply_backward_rotates_forward",
)
REGISTERED.extend(FUSED)
register(
    Mutant(
        "rope.apply_backward_mixes_halves",
        "the fused backward reads sin of the other column of each pair (g_i cos_i + g_j sin_i where sin_j is meant): "
        "right only when the two halves of sin are equal",
        "grad_i = g_i cos_i + g_j sin_j, grad_j = g_j cos_j - g_i sin_i (EMB-ROPE-17)",
        {APPLY_BWD: _fused(backward_sin="mixed")[APPLY_BWD]},
        source=PADDLE,
    )
)
register(
    Mutant(
        "rope.apply_first_half_tables",
        "reads only the first column of each pair from cos and sin (assumes the halves are equal, cat(freqs, freqs))",
        "column j of a pair reads cos_j and sin_j, its own values (EMB-ROPE-16)",
        _fused(forward_columns="first"),
    )
)
register(
    Mutant(
        "rope.apply_backward_rotates_forward",
        "the fused backward applies the forward rotation (+sin) to grad_output instead of its transpose",
        "grad_i = g_i cos_i + g_j sin_j, grad_j = g_j cos_j - g_i sin_i (EMB-ROPE-17)",
        {APPLY_BWD: _fused(backward_sign=1.0)[APPLY_BWD]},
    )
)
