"""What rotary and bag conventions share (EMB-ROPE-V*, EMB-BAG-V*): reading a declared list of names into members
of the conventions' enum, and the clause a conformance claim adds for them (spec section 11)."""

from __future__ import annotations

import enum
from typing import Any, Iterable, TypeVar

Convention = TypeVar("Convention", bound=enum.Enum)


def declared_names(kind: str, members: type[Convention], declared: Any) -> frozenset[Convention]:
    """The ``kind`` conventions ``declared`` names (a list of names; None: none); ValueError (one line) else."""
    if declared is None:
        return frozenset()
    if isinstance(declared, str) or not isinstance(declared, (list, tuple, set, frozenset)):
        raise ValueError(f"{kind} conventions must be a list of names, got {repr(declared)[:200]}")
    if not all(isinstance(name, str) for name in declared):  # a list or an object is no name (nor hashable)
        raise ValueError(f"{kind} conventions must be a list of names (strings), got {repr(declared)[:200]}")
    known = {member.value: member for member in members}
    unknown = [str(name) for name in declared if name not in known]
    if unknown:
        raise ValueError(f"unknown {kind} convention(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return frozenset(known[name] for name in declared)


def claim_clause(kind: str, conventions: Iterable[Any]) -> str:
    """``, <kind> conventions: <each described>; their canonical cases not provided``, or "" for none."""
    named = sorted(conventions, key=lambda c: c.value)
    if not named:
        return ""
    return f", {kind} conventions: " + "; ".join(c.describe() for c in named) + "; their canonical cases not provided"
