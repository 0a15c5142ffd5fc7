"""The NumPy reference implementation of the spec: a second, executable statement of it.

Each operation of ``spec/vocabulary.json`` is a plain function here, named as
the spec names it; it computes in float64 and rounds once to the case's dtype.

Rooms: the operations by area, ``lookup`` (with ``ids``), ``positions``, ``sinusoid``, ``layer``, ``options``,
``memory``, ``rope`` with ``rope_apply`` (the fused rotation, tables given), ``bag`` (reduced lookups, 2.1.0); ``errors`` (the typed error taxonomy);
``arithmetic`` (float64, or exact for the goldens); ``tolerance`` (spec section 8 resolved per case) with
``bag_tolerance`` (its section 8.9, bags); the goldens
made from the catalogue ``cases`` by ``generate`` and written by ``emit``; ``serve`` (where the reference protocol
peer was, kept for ``python -m``)."""

from __future__ import annotations

from typing import Any, Callable

from embconf.reference.bag import embedding_bag_backward, embedding_bag_forward, sharded_table_bytes
from embconf.reference.errors import ERROR_KINDS, EmbeddingError
from embconf.reference.layer import embedding_layer_backward, embedding_layer_forward, embedding_layer_own_backward
from embconf.reference.lookup import (
    embedding_backward,
    embedding_backward_sparse,
    embedding_forward,
    embedding_forward_max_norm,
)
from embconf.reference.memory import adam_state_bytes, gradient_bytes, parameter_count, table_bytes
from embconf.reference.positions import learned_positions_backward, learned_positions_forward
from embconf.reference.rope import rope_backward, rope_forward, rope_tables
from embconf.reference.rope_apply import rope_apply, rope_apply_backward
from embconf.reference.sinusoid import sinusoidal_table

OPERATIONS: dict[str, Callable[..., Any]] = {
    fn.__name__: fn
    for fn in (
        embedding_forward,
        embedding_backward,
        embedding_backward_sparse,
        embedding_forward_max_norm,
        sinusoidal_table,
        learned_positions_forward,
        learned_positions_backward,
        embedding_layer_forward,
        embedding_layer_backward,
        parameter_count,
        table_bytes,
        gradient_bytes,
        adam_state_bytes,
        rope_tables,
        rope_forward,
        rope_backward,
        embedding_layer_own_backward,
        rope_apply,
        rope_apply_backward,
        embedding_bag_forward,
        embedding_bag_backward,
        sharded_table_bytes,
    )
}

__all__ = ["ERROR_KINDS", "EmbeddingError", "OPERATIONS", *OPERATIONS]
