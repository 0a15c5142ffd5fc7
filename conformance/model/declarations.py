"""What every kind of convention shares (:mod:`embconf.model.convention`): a :class:`ConventionKind`, and for the
kinds declared as a list of names (EMB-ROPE-V*, EMB-BAG-V*) reading that list into members of their enum, the
kind built from the enum, and the clause a conformance claim adds for them (spec section 11)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, TypeVar

Member = TypeVar("Member", bound=enum.Enum)


@dataclass(frozen=True)
class ConventionKind:
    """A kind of convention: the family it belongs to and how it is declared (on the wire, in a report, in a
    ``functions:`` module), read back and claimed."""

    name: str  # "rope": as claims say it ("rope conventions")
    area: str  # its family's spec area
    features: frozenset[str]  # every feature of its cases: declared as a convention, never claimed
    markers: frozenset[str]  # the canonical markers its conventions put on the cases they change
    module_attributes: Mapping[str, str]  # a functions: module's attribute -> the capabilities' key it stands for
    read: Callable[[Mapping[str, Any]], frozenset[Any]]  # the conventions a capabilities mapping declares
    to_json: Callable[[frozenset[Any]], dict[str, Any]]  # the declared conventions as capabilities' fields
    claim_clause: Callable[[frozenset[Any]], str]  # what a conformance claim adds (spec section 11), or ""
    undeclared: Callable[[list[str], frozenset[Any]], Optional[str]]  # why a case of features it lacks is N/A
    single: bool = False  # an implementation declares at most one (a point, not a set of choices)


def declared_names(kind: str, members: type[Member], declared: Any) -> frozenset[Member]:
    """The ``kind`` conventions ``declared`` names (a list of names; None: none); ValueError (one line) else."""
    if declared is None:
        return frozenset()
    if isinstance(declared, str) or not isinstance(declared, (list, tuple, set, frozenset)):
        raise ValueError(f"{kind} conventions must be a list of names, got {repr(declared)[:200]}")
    if not all(isinstance(name, str) for name in declared):  # a list or an object is no name (nor hashable)
        raise ValueError(f"{kind} conventions must be a list of names (strings), got {repr(declared)[:200]}")
    known = {member.value: member for member in members}
    unknown = [name[:80] for name in declared if name not in known]
    if unknown:
        raise ValueError(f"unknown {kind} convention(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return frozenset(known[name] for name in declared)


def claim_clause(kind: str, conventions: Iterable[Any]) -> str:
    """``, <kind> conventions: <each described>; their canonical cases not provided``, or "" for none."""
    named = sorted(conventions, key=lambda c: c.value)
    if not named:
        return ""
    return f", {kind} conventions: " + "; ".join(c.describe() for c in named) + "; their canonical cases not provided"


def enum_kind(name: str, area: str, members: type[Member], markers: Iterable[str] = ()) -> ConventionKind:
    """The kind of the conventions ``members`` enumerates, declared as a list of names under ``<name>_conventions``
    (``EMBCONF_<NAME>_CONVENTIONS`` in a functions: module)."""
    key = f"{name}_conventions"

    def read(raw: Mapping[str, Any]) -> frozenset[Any]:
        return declared_names(name, members, raw.get(key))

    def to_json(declared: frozenset[Any]) -> dict[str, Any]:
        return {key: sorted(c.value for c in declared)} if declared else {}

    def undeclared(missing: list[str], declared: frozenset[Any]) -> Optional[str]:
        return None  # said as any feature it lacks: "needs optional feature(s) <name>-<convention>"

    return ConventionKind(
        name,
        area,
        frozenset(member.feature for member in members),  # type: ignore[attr-defined]
        frozenset(markers),
        {f"EMBCONF_{name.upper()}_CONVENTIONS": key},
        read,
        to_json,
        lambda declared: claim_clause(name, declared),
        undeclared,
    )
