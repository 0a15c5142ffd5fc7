"""The case builders, keyed by the spec's area: one fixture file each, in file order. A new family adds its row
(docs/maintainers.md, "Adding an operation family")."""

from __future__ import annotations

from typing import Callable

from embconf.reference.cases import (
    CaseSpec,
    bags,
    embedding_layer,
    half_precision,
    learned_positions,
    lookup_options,
    memory,
    quantized,
    rope,
    sinusoidal,
    stateful,
    token_lookup,
)

BUILDERS: dict[str, Callable[[], list[CaseSpec]]] = {
    "token_lookup": token_lookup.cases,
    "sinusoidal": sinusoidal.cases,
    "learned_positions": learned_positions.cases,
    "embedding_layer": embedding_layer.cases,
    "memory": memory.cases,
    "lookup_options": lookup_options.cases,
    "half_precision": half_precision.cases,
    "rope": rope.cases,
    "stateful": stateful.cases,
    "bags": bags.cases,
    "quantized": quantized.cases,
}
