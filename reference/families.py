"""The reference's table, keyed by the spec's area: each family's operations (a function named as the spec names
the operation, :data:`FUNCTIONS`) and the tolerance rule of each (spec section 8, :data:`TOLERANCES`). A new family
adds its row to each (docs/maintainers.md, "Adding an operation family"); ``tests/test_family_completeness.py``
says what it still lacks."""

from __future__ import annotations

from typing import Any, Callable

from embconf.reference import (
    bag,
    bag_tolerance,
    layer,
    lookup,
    memory,
    positions,
    quantize,
    quantized,
    quantized_tolerance,
    rope,
    rope_apply,
    sinusoid,
    tolerance,
)
from embconf.reference.tolerance import Rule

FUNCTIONS: dict[str, tuple[Callable[..., Any], ...]] = {
    "token_lookup": (
        lookup.embedding_forward,
        lookup.embedding_backward,
        lookup.embedding_backward_sparse,
        lookup.embedding_forward_max_norm,
    ),
    "sinusoidal": (sinusoid.sinusoidal_table,),
    "learned_positions": (positions.learned_positions_forward, positions.learned_positions_backward),
    "embedding_layer": (
        layer.embedding_layer_forward,
        layer.embedding_layer_backward,
        layer.embedding_layer_own_backward,
    ),
    "memory": (memory.parameter_count, memory.table_bytes, memory.gradient_bytes, memory.adam_state_bytes),
    "rope": (
        rope.rope_tables,
        rope.rope_forward,
        rope.rope_backward,
        rope_apply.rope_apply,
        rope_apply.rope_apply_backward,
    ),
    "bags": (bag.embedding_bag_forward, bag.embedding_bag_backward, bag.sharded_table_bytes),
    "quantized": (
        quantized.quantized_lookup,
        quantize.quantize_table,
        quantized.quantized_table_bytes,
        quantized.quantized_bag_forward,
    ),
}

TOLERANCES: dict[str, dict[str, Rule]] = {
    **tolerance.RULES,
    "bags": bag_tolerance.RULES,
    "quantized": quantized_tolerance.RULES,
}

OPERATIONS: dict[str, Callable[..., Any]] = {fn.__name__: fn for functions in FUNCTIONS.values() for fn in functions}
RULES: dict[str, Rule] = {name: rule for rules in TOLERANCES.values() for name, rule in rules.items()}


def for_case(operation: str, inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    """The tolerance of every output of a case, by the rule of its operation."""
    return RULES[operation](inputs, outputs)
