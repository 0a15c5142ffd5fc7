"""What a mutant is: a named, realistic mistake, as a small override of reference operations.

A :class:`Mutant` replaces one or two operations of the spec (functions with the
reference's signatures); every other operation is the reference's. Operations
that are built from others (the row-sparse gradient, the embedding layer) are
composed from the mutant's own parts, as a real implementation composes them, so a
wrong lookup also shows in the layer. Area modules register mutants with
:func:`mutant` (a decorator) or :func:`register`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

from embconf.model.record import Cause, CauseKind
from embconf.model.rope import LAYER_FEATURE
from embconf.model.vocabulary import operation_area, operations
from embconf.mutants.with_options import with_options
from embconf.reference import OPERATIONS

Operation = Callable[..., Any]
OPERATION_ORDER = list(operations())

ROPE_PARTS = frozenset({"rope_forward", "rope_backward"})  # parts of a layer only when it claims rope-layer
# Which operations each composed operation is built from (see compose.py).
DEPENDS: dict[str, frozenset[str]] = {
    "embedding_backward_sparse": frozenset({"embedding_backward"}),
    "embedding_layer_forward": frozenset(
        {"embedding_forward", "sinusoidal_table", "learned_positions_forward", "rope_forward"}
    ),
    "embedding_layer_backward": frozenset({"embedding_backward", "learned_positions_backward", "rope_backward"}),
    "embedding_layer_own_backward": frozenset(
        {"embedding_layer_backward", "embedding_backward", "learned_positions_backward", "rope_backward"}
    ),
}


@dataclass(frozen=True)
class Mutant:
    """One known mistake: what is wrong, how to fix it, and the operations it replaces."""

    id: str
    description: str
    hint: str
    overrides: Mapping[str, Operation] = field(repr=False)
    equivalent: tuple[str, ...] = ()  # ids whose outputs are identical on every input
    convention: Optional[str] = None  # a published sinusoid convention this mutant follows
    source: str = ""  # a public bug report showing the mistake in the wild
    family: Mapping[str, Any] = field(
        default_factory=dict
    )  # a sinusoid mutant's point in diagnosis.sinusoid_fit's family
    mistake: str = ""  # the id of the mistake's primary form, shared by its forms in other operations (one entry)
    claims: frozenset[str] = frozenset()  # features it claims beyond the reference's (a rope layer: rope-layer)
    fresh: Optional[Callable[[], Mapping[str, Operation]]] = field(default=None, repr=False)  # a mistake in state
    # kept between calls (section 15): a new set of its overrides for each instance, and for each call on none
    evades: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()  # evading by design: the only combinations
    # (operation, its (domain, boundary) points, all at once) where it misbehaves, none of them a golden's yet

    @property
    def area(self) -> str:
        """The spec area of the operations it replaces (``spec/vocabulary.json``)."""
        return operation_area(min(self.overrides, key=OPERATION_ORDER.index))

    def covers(self, operation: str) -> bool:
        """Whether this mutant can change the result of ``operation`` (directly or through a part)."""
        parts = DEPENDS.get(operation, frozenset())
        if LAYER_FEATURE not in self.claims:  # a layer built on rope parts only where the mutant claims one
            parts = parts - ROPE_PARTS
        return operation in self.overrides or bool(parts & set(self.overrides))

    @property
    def covered_operations(self) -> list[str]:
        return [op for op in OPERATIONS if self.covers(op)]

    @property
    def summary(self) -> str:
        """The one line a failure report shows as its likely cause."""
        if self.convention:
            return f"follows the {self.convention} convention; the spec's canonical table is interleaved (EMB-SIN-2) -> {self.hint}"
        return f"{self.description} -> {self.hint}"

    def explain(self, note: str = "") -> Cause:
        """This mistake as the cause of a failing case; ``note`` says how it matched when not exactly ("computed in float32")."""
        summary = self.summary
        if note:
            summary = f"{self.description} ({note}) -> {self.hint}" if not self.convention else f"{summary} ({note})"
        return Cause(CauseKind.MUTANT, self.id, self.description, summary, self.hint, mistake=self.mistake)

    def names(self, mutant_id: str) -> bool:
        """Whether ``mutant_id`` is this mutant or one declared equivalent to it."""
        return mutant_id == self.id or mutant_id in self.equivalent


_REGISTRY: dict[str, Mutant] = {}


def register(new: Mutant) -> Mutant:
    if new.id in _REGISTRY:
        raise AssertionError(f"duplicate mutant id {new.id}")
    unknown = set(new.overrides) - set(OPERATIONS)
    if unknown or not new.overrides:
        raise AssertionError(f"{new.id}: overrides must name spec operations, got {sorted(new.overrides)}")
    if len({operation_area(op) for op in new.overrides}) != 1:
        raise AssertionError(f"{new.id}: overrides operations of several areas {sorted(new.overrides)}")
    _REGISTRY[new.id] = replace(new, overrides=with_options_all(new.overrides))
    return _REGISTRY[new.id]


def with_options_all(overrides: Mapping[str, Operation]) -> dict[str, Operation]:
    """Each override composed with the optional inputs its operation takes (:func:`with_options`)."""
    return {op: with_options(op, fn) for op, fn in overrides.items()}


def mutant(
    mutant_id: str, description: str, hint: str, operation: str, **extra: Any
) -> Callable[[Operation], Operation]:
    """Register the decorated function (with the spec's signature of ``operation``) as a mutant overriding it."""

    def decorate(fn: Operation) -> Operation:
        register(Mutant(mutant_id, description, hint, {operation: fn}, **extra))
        return fn

    return decorate


def registry() -> dict[str, Mutant]:
    return _REGISTRY
