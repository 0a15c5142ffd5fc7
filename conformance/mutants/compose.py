"""Composed operations: the row-sparse gradient and the embedding layer, built from an implementation's parts.

:class:`Implementation` is the reference with some operations replaced. Its
composed operations call its own parts (lookup, sinusoid table, learned
positions), so with no replacement it gives exactly the reference's results, and
with a wrong part it fails the way a real layer built on that part fails. The
layer checks its inputs as the reference does (``reference.layer.check_layer_inputs``), its token ids through
its own lookup part.
The keyword knobs of :func:`layer_forward` and :func:`layer_backward` let the
layer mutants change one step of the composition.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any, Callable, Optional

import numpy as np

from embconf.model.arrays import Array, Config, Table
from embconf.model.dtypes import round_once
from embconf.reference import OPERATIONS
from embconf.reference.errors import EmbeddingError
from embconf.reference.layer import check_layer_inputs, own_tables, rope_settings, token_scale
from embconf.reference.lookup import validate_ids

F64 = np.float64
Combine = Callable[[np.ndarray, np.ndarray, Mapping[str, Any]], np.ndarray]
Scale = Callable[[Mapping[str, Any]], float]


class Implementation:
    """The reference's operations with ``overrides`` in place; composed operations use this object's parts."""

    def __init__(self, overrides: Optional[Mapping[str, Callable[..., Any]]] = None, rope_layer: bool = False) -> None:
        self.rope_layer = rope_layer  # it claims the rope layer (feature rope-layer): 'rope' is a pos_encoding
        composed: dict[str, Callable[..., Any]] = {
            "embedding_backward_sparse": partial(backward_sparse, self),
            "embedding_layer_forward": partial(layer_forward, self),
            "embedding_layer_backward": partial(layer_backward, self),
            "embedding_layer_own_backward": partial(own_backward, self),
        }
        if rope_layer:  # a rope layer stores no table: the reference counts it so when asked (EMB-LAY-10)
            composed["parameter_count"] = partial(OPERATIONS["parameter_count"], rope_layer=True)
        self.operations: dict[str, Callable[..., Any]] = {**OPERATIONS, **composed, **dict(overrides or {})}

    def __getitem__(self, operation: str) -> Callable[..., Any]:
        return self.operations[operation]


def backward_sparse(
    impl: Implementation, weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique ids and the rows of this implementation's dense gradient."""
    dense = impl["embedding_backward"](weight, ids, grad_output)
    indices = np.unique(validate_ids(ids, weight.shape[0]))
    return indices, dense[indices]


def scale_of(cfg: Mapping[str, Any]) -> float:
    """The spec's token factor c: sqrt(D) when scaling, else 1."""
    return token_scale(cfg["embed_dim"], cfg["scale_embeddings"])


def add_scaled(tokens: np.ndarray, positions: np.ndarray, cfg: Mapping[str, Any]) -> np.ndarray:
    """The spec's combination: tokens * c + positions (broadcast over the batch)."""
    return tokens * scale_of(cfg) + positions[None]


def positions(
    impl: Implementation, cfg: Mapping[str, Any], table: Optional[np.ndarray], start: int, seq_len: int
) -> np.ndarray:
    """The (T, D) float64 position rows from this implementation's learned or sinusoidal part."""
    dim = cfg["embed_dim"]
    if cfg["pos_encoding"] == "learned":
        assert table is not None  # the layer's checks require a table for learned positions
        return impl["learned_positions_forward"](table.astype(F64), np.zeros((1, seq_len, dim)), start)[0]
    if cfg["pos_encoding"] == "sinusoidal":
        return impl["sinusoidal_table"](start + seq_len, dim, "float64")[start:]
    return np.zeros((seq_len, dim))


def layer_inputs(
    config: Config, token_weight: Array, position_table: Table, tokens: Array, start_pos: Any, rope_layer: bool = False
) -> tuple[dict[str, Any], np.ndarray, int]:
    """(config, tokens as (B, T), start_pos) after the layer's checks, the token ids left to the lookup part: a
    layer built on a lookup checks its ids there, so a lookup that clamps or wraps them does so in the layer too."""
    stand_in = np.zeros(np.shape(tokens), dtype=np.int64)
    cfg, _, _, start = check_layer_inputs(config, token_weight, position_table, stand_in, start_pos, rope_layer)
    return cfg, (tokens if tokens.ndim == 2 else tokens[None]), start


def layer_forward(
    impl: Implementation,
    config: Config,
    token_weight: Array,
    position_table: Table,
    tokens: Array,
    start_pos: Any = 0,
    *,
    combine: Combine = add_scaled,
    squeeze: bool = True,
    rope_start: Callable[[int], int] = lambda start: start,
) -> np.ndarray:
    """Lookup, then ``combine`` with the positions (a rope layer: the rotation of this implementation's
    rope_forward, from position ``rope_start(start_pos)``), in float64, rounded once to the table's dtype."""
    cfg, batched, start = layer_inputs(config, token_weight, position_table, tokens, start_pos, impl.rope_layer)
    rows = impl["embedding_forward"](token_weight.astype(F64), batched)
    if cfg["pos_encoding"] == "rope":
        settings = rope_settings(cfg, rope_start(start), batched.shape[1])
        out = round_once(impl["rope_forward"](rows * scale_of(cfg), **settings), token_weight.dtype)
        return out[0] if squeeze and tokens.ndim == 1 else out
    out = round_once(
        combine(rows, positions(impl, cfg, position_table, start, batched.shape[1]), cfg), token_weight.dtype
    )
    return out[0] if squeeze and tokens.ndim == 1 else out


def layer_backward(
    impl: Implementation,
    config: Config,
    token_weight: Array,
    position_table: Table,
    tokens: Array,
    start_pos: Any,
    grad_output: Array,
    *,
    grad_scale: Scale = scale_of,
    rope_start: Callable[[int], int] = lambda start: start,
    rope_grad: str = "rope_backward",
) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """grad_scale(cfg) times this implementation's scatter-add (of G rotated back by its ``rope_grad``, for a
    rope layer); its learned-position gradient; None otherwise."""
    cfg, batched, start = layer_inputs(config, token_weight, position_table, tokens, start_pos, impl.rope_layer)
    grad = grad_output if tokens.ndim == 2 else grad_output[None]
    if grad.shape != batched.shape + (cfg["embed_dim"],):
        raise EmbeddingError("shape_mismatch", f"grad_output has shape {grad_output.shape}")
    grad = grad.astype(F64)
    if cfg["pos_encoding"] == "rope":
        settings = rope_settings(cfg, rope_start(start), batched.shape[1])
        back = impl[rope_grad]
        grad = back(grad, **settings) if rope_grad == "rope_forward" else back(grad, grad_output=grad, **settings)
    padding = {"padding_idx": cfg["padding_idx"]} if cfg.get("padding_idx") is not None else {}  # spec 1.1, EMB-PAD-5
    grad_w = impl["embedding_backward"](token_weight.astype(F64), batched, grad, **padding) * grad_scale(cfg)
    if cfg["pos_encoding"] != "learned":
        return round_once(grad_w, token_weight.dtype), None
    assert position_table is not None  # the layer's checks require a table for learned positions
    grad_p = impl["learned_positions_backward"](position_table.astype(F64), np.zeros(grad.shape), start, grad)[1]
    return round_once(grad_w, token_weight.dtype), round_once(grad_p, position_table.dtype)


def own_backward(
    impl: Implementation, config: Mapping[str, Any], tokens: np.ndarray, start_pos: Any, grad_output: np.ndarray
) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """This implementation's layer backward on tables of the layer's own shapes (EMB-LAY-12)."""
    token_weight, position_table = own_tables(config, impl.rope_layer)
    return impl["embedding_layer_backward"](config, token_weight, position_table, tokens, start_pos, grad_output)


BASE = Implementation()  # the reference's parts, composed: what a mutant of the layer builds on
ROPE_BASE = Implementation(rope_layer=True)  # the same, with the rope layer (feature rope-layer)
