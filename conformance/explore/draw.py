"""One drawn case: an operation of a family, a boundary (or none: the operation's starting input) for each of its
input domains, at most one of them an error boundary, and a seed for the values (:class:`Drawn`); the seeded draws
of them (:class:`Drawer`); the case built from one (:func:`build`), the reference's answer its golden; and the
Hypothesis strategy of the draws inside a failure (:func:`within`), whose simplest draw is the operation's
starting inputs with seed 0, so that a failure shrinks towards it.

A draw the spec does not answer is never a case: a pair of boundaries the spec does not allow together is
dropped before building, and a draw whose error (the one the domains name) the reference does not raise is
outside the spec (several errors at once, an order the spec leaves open): :func:`build` gives None for it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Optional, Sequence

from hypothesis import strategies as st

from embconf.corpus.fixtures import Case, case_of, load_corpus
from embconf.explore.features import needed_features
from embconf.reference.cases import tag_canonical_table
from embconf.reference.cases.domains import (
    Point,
    boundaries_of,
    calls_at,
    case_at,
    domain_named,
    domains_of,
    error_points,
    excluded,
)
from embconf.reference.generate import build_case

SOURCE = "found by embconf explore"


@dataclass(frozen=True)
class Drawn:
    """An operation, the boundary each chosen domain is put at (in the domains' order), and the values' seed."""

    operation: str
    at: tuple[Point, ...]
    seed: int

    @property
    def case_id(self) -> str:
        return f"explore.{self.operation}.s{self.seed}." + "_".join(str(i) for i in self.indices())

    def indices(self) -> list[int]:
        """Each domain's boundary as its index in the table (0: not set), so the id names the draw."""
        chosen = dict(self.at)
        return [
            1 + [b.name for b in d.boundaries].index(chosen[d.name]) if d.name in chosen else 0
            for d in domains_of(self.operation)
        ]


class Drawer:
    """Draws cases of ``operations`` from a seeded generator: each domain at one of its valid boundaries or, one
    time in 3k + 1 (k boundaries), left at the starting input; one case in four at one error boundary. A boundary
    whose features (a convention's) are not all ``claimed`` is never drawn. (Measured against choosing, of several
    draws, the one at the most triples of boundaries not met yet: that chose rare combinations of errors and large
    tables, and met the catalogue's evading mutants later than these plain draws.)"""

    def __init__(self, operations: Sequence[str], claimed: frozenset[str], seed: int) -> None:
        self.operations = list(operations)
        self.choices = {operation: _choices(operation, claimed) for operation in operations}
        self.random = random.Random(seed)

    def next(self) -> Drawn:
        """The next draw: the same seed gives the same draws."""
        operation = self.random.choice(self.operations)
        valid, errors = self.choices[operation]
        chosen = {name: picked for name, options in valid if (picked := self.random.choice(options)) is not None}
        if errors and self.random.random() < 0.25:
            name, boundary = self.random.choice(errors)
            chosen[name] = boundary
        return Drawn(operation, allowed(operation, chosen), self.random.randrange(2**31))


def _choices(operation: str, claimed: frozenset[str]) -> tuple[list[tuple[str, list[Optional[str]]]], list[Point]]:
    """Each domain's choices (None, then its valid boundaries three times, a :data:`COSTLY` one once: a boundary
    is drawn more often than the starting input), and the error boundaries, of those whose features are all
    ``claimed``."""
    valid = []
    for domain in domains_of(operation):
        names = [b.name for b in domain.boundaries if not b.error and set(b.features) <= claimed]
        valid.append((domain.name, [None, *(n for n in names for _ in range(1 if (domain.name, n) in COSTLY else 3))]))
    errors = [
        point
        for point, _ in error_points(operation)
        if set(domain_named(operation, point[0]).boundary(point[1]).features) <= claimed
    ]
    return valid, errors


def within(failing: Drawn) -> Any:
    """The Hypothesis strategy of the draws inside ``failing``: each of its boundaries kept (seven times in eight)
    or dropped to the starting input, its seed or 0. A failure shrinks to the fewest boundaries that still fail,
    each dropped one where the operation starts, and to seed 0 when that fails too."""

    @st.composite
    def draw(data: Any) -> Drawn:
        kept = {name: boundary for name, boundary in failing.at if data(st.sampled_from(KEEP))}
        seed = data(st.sampled_from((0, failing.seed)))
        return Drawn(failing.operation, allowed(failing.operation, kept), seed)

    return draw()


COSTLY = {("weight.rows", "large")}  # a table of 2^16 + 1 rows: drawn a third as often as another boundary
KEEP = (False,) + (True,) * 7  # dropped first: what a shrink moves towards


def allowed(operation: str, chosen: dict[str, str]) -> tuple[Point, ...]:
    """``chosen`` in the domains' order, without a point that cannot be built with an earlier one (an
    :data:`~embconf.reference.cases.domains.EXCLUDED` pair with no error: nothing to be at)."""
    kept: list[Point] = []
    for domain in domains_of(operation):
        if domain.name in chosen:
            point = (domain.name, chosen[domain.name])
            if not any(_unbuildable(operation, point, other) for other in kept):
                kept.append(point)
    return tuple(kept)


@lru_cache(maxsize=None)
def _unbuildable(operation: str, a: Point, b: Point) -> bool:
    rule = excluded(operation, a, b)
    return rule is not None and rule.error is None


def build(drawn: Drawn) -> Optional[Case]:
    """The case of a draw, the reference's outputs (float64, rounded once) or error its golden, the tolerance the
    spec's rule for them; None when it cannot be built or the reference does not raise the error the domains name
    there (outside the spec)."""
    try:
        spec = case_at(drawn.operation, dict(drawn.at), drawn.case_id, describe(drawn), ())
        at = [(name, b) for name, b in boundaries_of(spec).items() if b is not None]
    except Exception:  # noqa: BLE001 - a setter that cannot put this boundary on these inputs: no case
        return None
    spec = replace(spec, requirements=requirements_of(drawn.operation, at, spec.error))
    spec = tag_canonical_table(
        replace(spec, features=needed_features(spec.operation, spec.inputs, spec.error, spec.features))
    )
    try:
        return case_of(build_case(spec, checked=True), SOURCE)
    except AssertionError:  # the reference's error is not the one the domains name: outside the spec
        return None


def describe(drawn: Drawn) -> str:
    where = ", ".join(f"{name}={boundary}" for name, boundary in drawn.at) or "its starting inputs"
    return f"Found by embconf explore: {drawn.operation} at {where} (values seeded {drawn.seed})."


def requirements_of(operation: str, at: Sequence[Point], error: Optional[str]) -> tuple[str, ...]:
    """The requirement ids of the golden of ``operation`` expecting the same error (or outputs) that shares the
    most of these boundaries: what a case there exercises."""
    best: tuple[int, tuple[str, ...]] = (-1, ())
    for points, expected, requirements in _goldens().get(operation, ()):
        score = len(points & set(at)) + (1000 if expected == error else 0)
        if score > best[0]:
            best = (score, requirements)
    return best[1] or ("EMB-GEN-1",)


@lru_cache(maxsize=1)
def _goldens() -> dict[str, list[tuple[frozenset[Point], Optional[str], tuple[str, ...]]]]:
    """{operation: (the boundaries, the error it expects or None, the requirements) of each golden of one call}."""
    found: dict[str, list[tuple[frozenset[Point], Optional[str], tuple[str, ...]]]] = {}
    for case in load_corpus().cases:
        if not case.is_sequence:  # a case of calls cites what its sequence pins, not each call's requirements
            ((operation, points),) = calls_at(case)
            at = frozenset((name, b) for name, b in points.items() if b is not None)
            found.setdefault(operation, []).append((at, case.expected_error, tuple(case.requirements)))
    return found
