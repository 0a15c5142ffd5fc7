"""Mistakes of the embedding layer: the sqrt(D) scale, how positions join the tokens, shapes and lengths."""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import partial
from typing import Any, Callable, Optional

import numpy as np

from embconf.model.arrays import Array, Config, Table
from embconf.model.rope import LAYER_FEATURE, Pairing
from embconf.mutants.base import Mutant, register
from embconf.mutants.compose import BASE, ROPE_BASE, Combine, layer_backward, layer_forward, scale_of
from embconf.reference import embedding_layer_backward as ref_backward
from embconf.reference import learned_positions_backward
from embconf.reference.layer import resolve_config

FWD, BWD = "embedding_layer_forward", "embedding_layer_backward"
RULE = "output = token_weight[tokens] * c + positions[s:s+T], c = sqrt(D) only when scale_embeddings (EMB-LAY-2/3)"


def layer(
    mutant_id: str,
    description: str,
    hint: str,
    operation: str,
    fn: Callable[..., Any],
    source: str = "",
    mistake: str = "",
) -> None:
    register(Mutant(mutant_id, description, hint, {operation: fn}, source=source, mistake=mistake))


def combined(combine: Combine) -> Callable[..., np.ndarray]:
    """The layer's forward with its tokens-and-positions step replaced by ``combine``."""
    return partial(layer_forward, BASE, combine=combine)


def _token_factor(factor: Callable[[Mapping[str, Any]], float]) -> Combine:
    return lambda tokens, positions, cfg: tokens * factor(cfg) + positions[None]


def _bfloat16(value: float) -> float:
    """``value`` rounded to bfloat16 (round to nearest even on the upper 16 bits of a float32)."""
    bits = int(np.array(value, dtype=np.float32).view(np.uint32))
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return float(np.array(bits, dtype=np.uint32).view(np.float32))


def _concatenate(tokens: np.ndarray, positions: np.ndarray, cfg: Mapping[str, Any]) -> np.ndarray:
    if cfg["pos_encoding"] == "none":
        return tokens * scale_of(cfg)
    return np.concatenate([tokens * scale_of(cfg), np.broadcast_to(positions, tokens.shape)], axis=-1)


def _fitted(config: Mapping[str, Any], tokens: np.ndarray, start_pos: Any) -> tuple[dict[str, Any], int, bool]:
    """(resolved config, T, whether start_pos + T overruns a position table)."""
    cfg = resolve_config(config)
    length = tokens.shape[-1] if tokens.ndim else 0
    overruns = (
        cfg["pos_encoding"] != "none"
        and isinstance(start_pos, int)
        and 0 <= start_pos
        and start_pos + length > cfg["max_seq_len"]
    )
    return cfg, length, overruns


def _truncates(
    config: Config, token_weight: Array, position_table: Table, tokens: Array, start_pos: Any = 0
) -> np.ndarray:
    cfg, _, overruns = _fitted(config, tokens, start_pos)
    if overruns:
        tokens = tokens[..., : max(cfg["max_seq_len"] - start_pos, 0)]
    return BASE[FWD](config, token_weight, position_table, tokens, start_pos)


def _table_extended(
    config: Config, token_weight: Array, position_table: Table, tokens: Array, start_pos: Any = 0
) -> np.ndarray:
    cfg, length, overruns = _fitted(config, tokens, start_pos)
    if overruns and cfg["pos_encoding"] == "sinusoidal":
        config = {**cfg, "max_seq_len": start_pos + length}
    return BASE[FWD](config, token_weight, position_table, tokens, start_pos)


def _start_pos_ignored(
    config: Config, token_weight: Array, position_table: Table, tokens: Array, start_pos: Any = 0
) -> np.ndarray:
    return BASE[FWD](config, token_weight, position_table, tokens, 0)


def _sinusoid_grad(
    config: Config, token_weight: Array, position_table: Table, tokens: Array, start_pos: Any, grad_output: Array
) -> tuple[np.ndarray, Optional[np.ndarray]]:
    grad_w, grad_p = ref_backward(config, token_weight, position_table, tokens, start_pos, grad_output)
    cfg = resolve_config(config)
    if cfg["pos_encoding"] == "sinusoidal":
        batched = grad_output if tokens.ndim == 2 else grad_output[None]
        constant = np.zeros((cfg["max_seq_len"], cfg["embed_dim"]), dtype=token_weight.dtype)
        grad_p = learned_positions_backward(constant, batched, start_pos, batched)[1]
    return grad_w, grad_p


layer(
    "layer.scale_sum",
    "multiplies the sum (tokens + positions) by sqrt(D): the positions get scaled too",
    f"scale the token part only, then add the positions: {RULE}",
    FWD,
    combined(lambda t, p, cfg: (t + p[None]) * scale_of(cfg)),
)
layer(
    "layer.scale_d",
    "scales the tokens by D instead of sqrt(D)",
    f"use math.sqrt(embed_dim): {RULE}",
    FWD,
    combined(_token_factor(lambda cfg: cfg["embed_dim"] if cfg["scale_embeddings"] else 1.0)),
)
layer(
    "layer.scale_divided",
    "divides the tokens by sqrt(D) instead of multiplying",
    f"multiply by sqrt(D): {RULE}",
    FWD,
    combined(_token_factor(lambda cfg: 1.0 / scale_of(cfg))),
    source="https://github.com/Kyubyong/transformer/issues/132",
)
layer(
    "layer.scale_always",
    "scales the tokens by sqrt(D) even when scale_embeddings is False",
    f"apply sqrt(D) only when scale_embeddings is True: {RULE}",
    FWD,
    combined(_token_factor(lambda cfg: math.sqrt(cfg["embed_dim"]))),
    mistake="layer.scale_always",
)
layer(
    "layer.scale_missing",
    "never scales the tokens, even when scale_embeddings is True",
    f"multiply the looked-up rows by sqrt(D) when scale_embeddings: {RULE}",
    FWD,
    combined(_token_factor(lambda cfg: 1.0)),
    mistake="layer.scale_missing",
)
layer(
    "layer.scale_bfloat16",
    "computes the factor sqrt(D) in bfloat16 (Gemma's sqrt(3072) = 55.5 instead of 55.4256)",
    f"compute sqrt(D) in float32 or wider: {RULE}",
    FWD,
    combined(_token_factor(lambda cfg: _bfloat16(scale_of(cfg)))),
)
layer(
    "layer.concat_positions",
    "concatenates the positions to the tokens on the last axis instead of adding them: the output is 2D wide",
    f"add, do not concatenate: {RULE}",
    FWD,
    combined(_concatenate),
    source="https://github.com/ml-explore/mlx/issues/147",
)
layer(
    "layer.no_squeeze",
    "returns (1, T, D) for 1-D tokens instead of (T, D)",
    "1-D tokens (T,) give a (T, D) output: drop the batch axis you added (EMB-LAY-4)",
    FWD,
    partial(layer_forward, BASE, squeeze=False),
)
layer(
    "layer.truncates",
    "silently drops the tokens past max_seq_len instead of raising",
    "raise sequence_too_long when start_pos + T > max_seq_len (EMB-LAY-8); never truncate the input",
    FWD,
    _truncates,
)
layer(
    "layer.table_extended",
    "computes a longer sinusoidal table when start_pos + T > max_seq_len instead of raising",
    "max_seq_len bounds sinusoidal positions too: raise sequence_too_long (EMB-LAY-8)",
    FWD,
    _table_extended,
)
layer(
    "layer.start_pos_ignored",
    "ignores start_pos: positions always start at 0",
    f"take the position rows from start_pos: {RULE}",
    FWD,
    _start_pos_ignored,
)
layer(
    "layer.scale_missing_grad",
    "leaves the factor sqrt(D) out of the token gradient when scale_embeddings is True",
    "the token gradient is c times the scatter-add of grad_output, c = sqrt(D) when scaling (EMB-LAY-5)",
    BWD,
    partial(layer_backward, BASE, grad_scale=lambda cfg: 1.0),
    mistake="layer.scale_missing",
)
layer(
    "layer.scale_always_grad",
    "scales the tokens by sqrt(D) even when scale_embeddings is False: the token gradient is sqrt(D) times the scatter-add",
    f"apply sqrt(D) only when scale_embeddings is True, in the backward as in the forward: {RULE}",
    BWD,
    partial(layer_backward, BASE, grad_scale=lambda cfg: math.sqrt(cfg["embed_dim"])),
    mistake="layer.scale_always",
)
layer(
    "layer.sinusoid_grad",
    "gives the sinusoidal table a gradient (the batch sum of grad_output), as if it were trainable",
    "the sinusoidal table is a constant: its gradient is None (EMB-LAY-6)",
    BWD,
    _sinusoid_grad,
)

# A student's rope layer (EMB-LAY-10/11): mutants that claim the feature rope-layer and both pairings.
ROPE_CLAIMS = frozenset({LAYER_FEATURE, Pairing.HALF_SPLIT.feature, Pairing.INTERLEAVED.feature})
ROPE_START_IGNORED = register(
    Mutant(
        "layer.rope_start_pos_ignored",
        "a rope layer rotates by the positions 0..T-1 whatever start_pos says (a cache offset lost)",
        "rotate row t by position start_pos + t, in the forward and in the backward (EMB-LAY-10)",
        {
            FWD: partial(layer_forward, ROPE_BASE, rope_start=lambda start: 0),
            BWD: partial(layer_backward, ROPE_BASE, rope_start=lambda start: 0),
        },
        claims=ROPE_CLAIMS,
    )
)
register(
    Mutant(
        "layer.rope_grad_rotated_forward",
        "a rope layer's backward rotates grad_output by +angle, as the forward does, before the scatter-add",
        "rotate grad_output back (by -angle, the transpose) before the scatter-add (EMB-LAY-11)",
        {BWD: partial(layer_backward, ROPE_BASE, rope_grad="rope_forward")},
        claims=ROPE_CLAIMS,
        mistake="rope.backward_rotates_forward",
    )
)

# The layer's own parameters (EMB-LAY-12): tables built without gradient tracking get no gradient from its backward.
OWN = "embedding_layer_own_backward"


def _untracked_tables(
    config: Mapping[str, Any], tokens: np.ndarray, start_pos: Any, grad_output: np.ndarray
) -> tuple[None, None]:
    BASE[OWN](config, tokens, start_pos, grad_output)  # its checks run; its own tables never see the gradient
    return None, None


def _untracked_positions(
    config: Mapping[str, Any], tokens: np.ndarray, start_pos: Any, grad_output: np.ndarray
) -> tuple[np.ndarray, None]:
    return BASE[OWN](config, tokens, start_pos, grad_output)[0], None


layer(
    "layer.untracked_tables",
    "its own token and position tables receive no gradient from its own backward (built without gradient "
    "tracking, or cut out of the graph in the forward), measured before any optimizer exists",
    "make the tables trainable parameters the forward builds its output from (TinyTorch: Tensor(data, "
    "requires_grad=True), indexed or sliced, never rebuilt from .data) (EMB-LAY-12)",
    OWN,
    _untracked_tables,
)
layer(
    "layer.untracked_positions",
    "its own learned position table receives no gradient from its own backward (built without gradient tracking, "
    "or cut out of the graph in the forward), measured before any optimizer exists",
    "make the position table a trainable parameter the forward slices (TinyTorch: Tensor(data, requires_grad=True), "
    "never rebuilt from .data) (EMB-LAY-12)",
    OWN,
    _untracked_positions,
    mistake="no_gradient:position_table",  # one mistake with the layer backward's table that gets no gradient
)
