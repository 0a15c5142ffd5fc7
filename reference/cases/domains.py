"""Every operation's input domains, keyed by the spec's area then operation (:data:`DOMAINS`): each input and
option (a key of the layer's config too) with its boundary values, where the spec names an error at one the error
kind, and the pairs of boundaries the spec does not allow together in a case with outputs (:data:`EXCLUDED`).

The case builders read them: :func:`inputs_at` builds an operation's inputs at named boundaries, deterministic
from the case id; :func:`boundaries_of` says which boundary of each domain a golden case (or a
:class:`~embconf.reference.cases.CaseSpec`) is at, and :func:`allowed_pairs` lists every pair of boundaries of two
domains the spec allows, what pairwise coverage counts. Each family's table is its own module
(``domains_lookup``, ``domains_layer``, ``domains_rope``, ``domains_bags``, ``domains_quantized``; the records in ``domain_kinds``, the
shapes of domain in ``domain_shapes`` and ``domain_ids``); a family with no operation of its own has no entry.
"""
from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import Any, Iterable, Optional

from embconf.model.convention import under_a_convention
from embconf.model.family import family_of
from embconf.reference.cases import (
    CaseSpec,
    domains_bags,
    domains_layer,
    domains_lookup,
    domains_quantized,
    domains_rope,
    rng_for,
)
from embconf.reference.cases.domain_kinds import Base, Boundary, Domain, Excluded, Inputs

DOMAINS: dict[str, dict[str, tuple[Domain, ...]]] = {
    **domains_lookup.DOMAINS, **domains_layer.DOMAINS, **domains_rope.DOMAINS, **domains_bags.DOMAINS,
    **domains_quantized.DOMAINS}
EXCLUDED: dict[str, tuple[Excluded, ...]] = {
    **domains_lookup.EXCLUDED, **domains_layer.EXCLUDED, **domains_rope.EXCLUDED, **domains_bags.EXCLUDED,
    **domains_quantized.EXCLUDED}
BASES: dict[str, Base] = {**domains_lookup.BASES, **domains_layer.BASES, **domains_rope.BASES, **domains_bags.BASES,
                         **domains_quantized.BASES}

Point = tuple[str, str]  # (domain name, boundary name)
WITHOUT_ELEMENTS = ("range", "span", "repeats")  # aspects an empty array is at no boundary of


def domains_of(operation: str) -> tuple[Domain, ...]:
    """The domains of ``operation``'s inputs; KeyError naming its area when it has none."""
    return DOMAINS[family_of(operation).area][operation]


def domain_named(operation: str, name: str) -> Domain:
    found = {domain.name: domain for domain in domains_of(operation)}
    if name not in found:
        raise KeyError(f"{operation} has no domain {name!r}; known: {', '.join(found)}")
    return found[name]


def excluded(operation: str, a: Point, b: Point) -> Optional[Excluded]:
    """Why the spec does not allow ``a`` and ``b`` together in a case of ``operation`` with outputs, or None. An
    empty array is at no boundary of its range (or span, or repeats)."""
    for (name, boundary), (other, _) in ((a, b), (b, a)):
        input_name, aspect = name.rsplit(".", 1) if "." in name else (name, "")
        if aspect == "count" and boundary == "empty" and other in (f"{input_name}.{x}" for x in WITHOUT_ELEMENTS):
            return Excluded((name, boundary), (other, _), "no elements: no value to be at it")
    return next((rule for rule in EXCLUDED[family_of(operation).area] if rule.holds(a, b)), None)


def error_points(operation: str) -> list[tuple[Point, str]]:
    """Every error boundary of ``operation`` with the error kind the spec names there."""
    return [((d.name, b.name), b.error) for d in domains_of(operation) for b in d.boundaries if b.error]


def allowed_pairs(operation: str) -> list[tuple[Point, Point]]:
    """Every pair of boundaries of two domains of ``operation`` (each pair in sorted order) that the spec allows
    together in a case with outputs: neither an error boundary (unless the other is a convention that answers it:
    a negative id under drop_negative_ids), and no :data:`EXCLUDED` rule against the pair."""
    declared = {(d.name, b.name): b for d in domains_of(operation) for b in d.boundaries}

    def answered(a: Point, b: Point) -> bool:  # neither an error, or one a convention at the other answers
        return not declared[a].error_under(frozenset(declared[b].features)) and \
            not declared[b].error_under(frozenset(declared[a].features))

    return [_ordered((a, b)) for a, b in combinations(declared, 2)
            if a[0] != b[0] and answered(a, b) and excluded(operation, a, b) is None]


def _calls(case: Any) -> list[Any]:
    return list(case.calls) if getattr(case, "calls", ()) else [case]


def _inputs(case: Any) -> Mapping[str, Any]:
    return case.inputs() if callable(case.inputs) else case.inputs


def boundaries_of(case: Any) -> dict[str, Optional[str]]:
    """{domain name: the boundary the case is at, or None} for a golden case (a corpus ``Case``) or a
    :class:`CaseSpec` of one call; for a case of calls on one instance, its first call (:func:`calls_at` gives
    each)."""
    return calls_at(case)[0][1]


def calls_at(case: Any) -> list[tuple[str, dict[str, Optional[str]]]]:
    """(operation, boundaries) of each call of a case (one for a case of one call)."""
    return [(call.operation, _at(call, case)) for call in _calls(case)]


def _at(call: Any, case: Any) -> dict[str, Optional[str]]:
    inputs, features = _inputs(call), frozenset(getattr(call, "features", ()) or case.features)
    return {d.name: d.at(inputs, features) for d in domains_of(call.operation)}


def _error(call: Any) -> Optional[str]:
    """The error a golden call (``expected_error``) or a :class:`CaseSpec` (``error``) expects."""
    return call.expected_error if hasattr(call, "expected_error") else call.error


def under_convention(operation: str, point: Point) -> bool:
    """Whether a boundary of ``operation`` is a declared convention's (not the canonical answer): a case at it runs
    only for an implementation that declares that convention."""
    return under_a_convention(domain_named(operation, point[0]).boundary(point[1]).features)


def counted(operation: str, at: Mapping[str, Optional[str]], size: int = 2) -> list[tuple[Point, ...]]:
    """The combinations of ``size`` boundaries (each sorted) that a call of ``operation`` with outputs at ``at``
    covers: every one when it is at the canonical conventions, else only those holding each convention boundary it
    is at (for every other implementation the case does not run, so those combinations are not tested)."""
    points = sorted((name, b) for name, b in at.items() if b is not None)
    needed = {p for p in points if under_convention(operation, p)}
    return [combo for combo in combinations(points, size) if needed <= set(combo)]


def covered_pairs(cases: Iterable[Any]) -> dict[str, set[tuple[Point, Point]]]:
    """{operation: the allowed pairs some call with outputs is at (:func:`counted`)}."""
    found: dict[str, set[tuple[Point, Point]]] = {}
    for case in cases:
        for call in _calls(case):
            if _error(call) is None:
                pairs = counted(call.operation, _at(call, case))
                found.setdefault(call.operation, set()).update((a, b) for a, b in pairs)
    return {op: pairs & set(allowed_pairs(op)) for op, pairs in found.items()}


def _ordered(pair: tuple[Point, Point]) -> tuple[Point, Point]:
    a, b = pair
    return (a, b) if a <= b else (b, a)


def inputs_at(operation: str, at: Mapping[str, str], case_id: str, **given: Any) -> Inputs:
    """``operation``'s inputs at the boundaries ``at`` ({domain name: boundary}), the rest at the operation's
    starting inputs or as ``given``; deterministic from ``case_id`` (:func:`~embconf.reference.cases.rng_for`).
    Domains are set in their table's order, then the derived inputs follow (a gradient's shape), then a derived
    input's own shape boundary."""
    rng = rng_for(case_id + "/domains")
    base = BASES[operation]
    inputs = base.make(rng)
    inputs.update(given)
    chosen = [(domain_named(operation, name), boundary) for name, boundary in at.items()]
    order = {d.name: i for i, d in enumerate(domains_of(operation))}
    chosen.sort(key=lambda item: order[item[0].name])
    for domain, boundary in chosen:
        domain.boundary(boundary)
        if domain.aspect != "shape":
            domain.put(inputs, boundary, rng)
    base.finish(inputs, rng)
    for domain, boundary in chosen:
        if domain.aspect == "shape":
            domain.put(inputs, boundary, rng)
    return inputs


def case_at(operation: str, at: Mapping[str, str], case_id: str, description: str, requirements: tuple[str, ...],
            features: tuple[str, ...] = (), **given: Any) -> CaseSpec:
    """A :class:`CaseSpec` at the boundaries ``at`` (the other inputs as ``given``): its error the one the spec
    names there (:func:`error_at`), its features ``features`` and those its boundaries need (a convention's)."""
    inputs = inputs_at(operation, at, case_id, **given)
    chosen: list[Boundary] = [domain_named(operation, name).boundary(boundary) for name, boundary in at.items()]
    features = tuple(dict.fromkeys(features + tuple(f for b in chosen for f in b.features)))
    return CaseSpec(case_id, description, requirements, operation, inputs, features,
                    error_at(operation, inputs, frozenset(features)))


def error_at(operation: str, inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
    """The error the spec names for inputs of ``operation``: the first error boundary they are at (in the table's
    order), else that of an :data:`EXCLUDED` pair they are at; None for a case with outputs."""
    found = [(d.name, d.at(inputs, features), d) for d in domains_of(operation)]
    points = [(name, boundary) for name, boundary, _ in found if boundary is not None]
    errors = (d.boundary(boundary).error_under(features) for name, boundary, d in found if boundary is not None)
    first = next((error for error in errors if error), None)
    if first is not None:
        return first
    rules = (excluded(operation, a, b) for a, b in combinations(points, 2))
    return next((rule.error for rule in rules if rule is not None and rule.error), None)
