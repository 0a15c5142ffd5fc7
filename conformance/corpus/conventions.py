"""The cases a run computes for the conventions an implementation declares (:mod:`embconf.model.convention`):
each kind whose conventions say so (:attr:`~embconf.model.convention.Convention.computed`) has its computer here,
keyed by its family's area, so the session asks for the declared conventions' cases without naming a family.

A computed case never stands in for a frozen one: a case whose id is among those run already is left out.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from embconf.corpus.fixtures import Case
from embconf.corpus.named_conventions import named_convention_cases
from embconf.corpus.sinusoid_point import point_cases
from embconf.model.bag_conventions import BagConvention
from embconf.model.convention import KINDS, declared_of
from embconf.model.rope_conventions import RopeConvention

Computer = Callable[[frozenset[Any], Sequence[Case]], list[Case]]

# area -> the cases of that family's declared conventions, computed from the cases run
COMPUTERS: dict[str, Computer] = {
    "sinusoidal": point_cases,
    "rope": named_convention_cases(RopeConvention, "rope.convention."),
    "bags": named_convention_cases(BagConvention, "bag.convention."),
}


def computed_cases(conventions: Iterable[Any], cases: Sequence[Case]) -> list[Case]:
    """The cases of the declared ``conventions`` that are computed in the run (none declared: none)."""
    declared = list(conventions)
    known = {case.id for case in cases}
    built: list[Case] = []
    for kind in KINDS:
        chosen = frozenset(c for c in declared_of(declared, kind.name) if c.computed)
        if chosen:
            built += [case for case in COMPUTERS[kind.area](chosen, cases) if case.id not in known]
    return built
