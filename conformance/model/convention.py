"""Conventions, declared once: a :class:`Convention` is a documented choice of real code that the canonical cases
of one family would fail (a sinusoid profile, EMB-SIN-V* and EMB-SIN-6; a rotary convention, EMB-ROPE-V*; a bag
convention, EMB-BAG-V*). An implementation declares it; the canonical cases it changes are then replaced by cases
under it: frozen goldens that carry its feature and, where it says so (:attr:`Convention.computed`), cases the run
computes from the canonical ones (:mod:`embconf.corpus.conventions`).

Each kind of convention is one :class:`ConventionKind` (its family's area, its features, how it is declared and
read back, its claim clause), listed in :data:`KINDS`; :class:`~embconf.model.contract.Capabilities` holds every
declared convention in one field and asks the kinds, never a family by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Iterable, Optional, Protocol, runtime_checkable

from embconf.model import bag_conventions, quantize_conventions, rope_conventions, sinusoid
from embconf.model.declarations import ConventionKind
from embconf.model.vocabulary import features


@runtime_checkable
class Convention(Protocol):
    """One declarable convention: what it is, which canonical cases it changes, and the cases that replace them."""

    @property
    def kind(self) -> str:
        """The name of its kind (:data:`KINDS`)."""
        ...

    @property
    def feature(self) -> str:
        """The feature of the cases under it (implied by the declaration, never claimed directly)."""
        ...

    @property
    def requirement(self) -> str: ...

    @property
    def canonical_marker(self) -> Optional[str]:
        """The feature the canonical cases it changes carry (implied unless it is declared), or None."""
        ...

    @property
    def computed(self) -> bool:
        """Whether the run that declares it computes its cases from the canonical cases it changes."""
        ...

    def describe(self) -> str: ...

    def changes(self, operation: str, features: Iterable[str]) -> bool:
        """Whether a canonical case of ``operation`` with ``features`` has another answer under it."""
        ...

    def replaced(self) -> str:
        """Why a canonical case it changes is not applicable (one line)."""
        ...


KINDS: tuple[ConventionKind, ...] = (
    sinusoid.KIND,
    rope_conventions.KIND,
    bag_conventions.KIND,
    quantize_conventions.KIND,
)


def kind_of_area(area: str) -> Optional[ConventionKind]:
    """The kind of convention a family's implementations may declare, or None."""
    return next((kind for kind in KINDS if kind.area == area), None)


@lru_cache(maxsize=None)
def convention_features() -> frozenset[str]:
    """Every feature a convention's cases carry: declared as a convention, never claimed as a feature."""
    return frozenset().union(*(kind.features for kind in KINDS))


@lru_cache(maxsize=None)
def canonical_markers() -> frozenset[str]:
    """The features of canonical cases that a declared convention replaces (implied unless one is declared)."""
    return frozenset().union(*(kind.markers for kind in KINDS))


def under_a_convention(features: Iterable[str]) -> bool:
    """Whether a case is one under a convention (it carries a convention's own feature, not a canonical marker)."""
    return bool(set(features) & (convention_features() - canonical_markers()))


def claimable_features() -> frozenset[str]:
    """The features of the vocabulary an implementation may claim directly: all but the conventions'."""
    return frozenset(features()) - convention_features()


def canonical_features() -> frozenset[str]:
    """What an implementation of every canonical answer claims: every claimable feature but the exclusive
    choices (each at its default, implied)."""
    from embconf.model.features import exclusive_choices

    return claimable_features() - exclusive_choices()


def declared_of(conventions: Iterable[Any], kind: str) -> frozenset[Any]:
    """The conventions of one kind (its name, :attr:`ConventionKind.name`) among ``conventions``."""
    return frozenset(c for c in conventions if c.kind == kind)


def read_declared(raw: Mapping[str, Any]) -> frozenset[Any]:
    """Every convention a capabilities mapping declares (plain values, a start reply, a functions: module's
    attributes read as keys); ValueError (one line) for anything malformed."""
    return frozenset().union(*(kind.read(raw) for kind in KINDS))


def conventions_json(conventions: Iterable[Any]) -> dict[str, Any]:
    """The declared conventions as the capabilities' fields, kind by kind (the same keys as on the wire)."""
    fields: dict[str, Any] = {}
    for kind in KINDS:
        fields.update(kind.to_json(declared_of(conventions, kind.name)))
    return fields


def claim_clauses(conventions: Iterable[Any]) -> str:
    """What a conformance claim adds for the declared conventions, kind by kind (spec section 11)."""
    return "".join(kind.claim_clause(declared_of(conventions, kind.name)) for kind in KINDS)


def implied_features(conventions: Iterable[Any]) -> set[str]:
    """What declaring ``conventions`` implies: each one's feature, and every canonical marker but theirs."""
    declared = list(conventions)
    return {c.feature for c in declared} | (canonical_markers() - {c.canonical_marker for c in declared})


def replacing(conventions: Iterable[Any], operation: str, case_features: Iterable[str]) -> Optional[Any]:
    """The first declared convention (in a stable order) that changes a canonical case, or None."""
    found = list(case_features)
    return next((c for c in ordered(conventions) if c.changes(operation, found)), None)


def undeclared_reason(conventions: Iterable[Any], missing: list[str]) -> Optional[str]:
    """Why a case whose missing features belong to a convention kind is not applicable, or None."""
    declared = list(conventions)
    for kind in KINDS:
        reason = kind.undeclared([f for f in missing if f in kind.features], declared_of(declared, kind.name))
        if reason:
            return reason
    return None


def contradictory_conventions(conventions: Iterable[Any]) -> Optional[str]:
    """Why declaring ``conventions`` together contradicts itself (one line), or None."""
    declared = list(conventions)
    for kind in KINDS:
        if kind.single and len(declared_of(declared, kind.name)) > 1:
            return f"it declares more than one {kind.name} convention; declare one"
    return None


def ordered(conventions: Iterable[Any]) -> list[Any]:
    """Conventions in a stable order: by kind (as :data:`KINDS` lists them), then by feature."""
    names = [kind.name for kind in KINDS]
    return sorted(conventions, key=lambda c: (names.index(c.kind), c.feature))
