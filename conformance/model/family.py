"""Operation families, declared once: a :class:`Family` is a spec area (``spec/vocabulary.json``'s ``areas``) with
the operations the vocabulary places in it, the requirement families it owns and the kind of convention its
implementations may declare. Nothing here is typed by hand that the vocabulary already says: a new family is a
new area in the vocabulary, and each layer's table keyed by area (docs/maintainers.md, "Adding an operation
family"; ``tests/test_family_completeness.py`` lists what a new one still lacks).

An area with no operation of its own (``lookup_options``, ``half_precision``, ``stateful``) is a family too: its
cases run the operations of other families under options, dtypes or calls on one instance, so its layers need a
case builder and nothing per operation.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from embconf.model.vocabulary import areas, operations, requirement_families, requirement_subjects
from embconf.model.vocabulary import family_of as requirement_family


@dataclass(frozen=True)
class Family:
    """One spec area as a family of operations."""

    area: str
    title: str
    fixture_file: Optional[str]
    operations: tuple[str, ...]  # in the vocabulary's order
    requirement_families: tuple[str, ...]  # ``FWD`` of EMB-FWD-*, the families of requirements it owns

    @property
    def requirements(self) -> tuple[str, ...]:
        """Every requirement id of the family, in the spec's order (Appendix B)."""
        owned = set(self.requirement_families)
        return tuple(req for req in requirement_subjects() if requirement_family(req) in owned)


@lru_cache(maxsize=None)
def families() -> dict[str, Family]:
    """{area: its family}, in the spec's order; ``general`` (rules every family shares) is none."""
    found = {}
    for area, entry in areas().items():
        if entry.get("fixture_file") is None:
            continue
        ops = tuple(name for name, op in operations().items() if op["area"] == area)
        owned = tuple(name for name, fam in requirement_families().items() if fam["area"] == area)
        found[area] = Family(area, entry["title"], entry["fixture_file"], ops, owned)
    return found


def family(area: str) -> Family:
    """The family of ``area``; KeyError naming the known areas otherwise."""
    known = families()
    if area not in known:
        raise KeyError(f"no operation family {area!r}; known: {', '.join(known)}")
    return known[area]


def family_of(operation: str) -> Family:
    """The family an operation belongs to (its area in the vocabulary)."""
    return families()[operations()[operation]["area"]]


def operations_of(area: str) -> tuple[str, ...]:
    """The operations of ``area``, as the vocabulary places them: the one source of a family's operation list."""
    return family(area).operations
