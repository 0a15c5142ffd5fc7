"""Pairwise cases of the quantized operations (spec section 17), built from their input domains: greedily, each case
starts at a pair of boundaries no case covers yet and takes, domain by domain, the boundary that covers the most
pairs still uncovered and is allowed with those chosen (no error boundary, no :data:`EXCLUDED` pair); a case is then
measured at the boundaries it is really at. Then one case at each error boundary. The same domains give the same
cases, so their ids (the pair each case was built for) are stable."""
from __future__ import annotations

from typing import Callable, Optional

from embconf.reference.cases import CaseSpec
from embconf.reference.cases.domains import (
    Point,
    allowed_pairs,
    boundaries_of,
    case_at,
    domains_of,
    error_points,
    excluded,
)

Describe = Callable[[CaseSpec], CaseSpec]  # gives a built case its requirements and features


def _fits(operation: str, point: Point, chosen: dict[str, str]) -> bool:
    return all(excluded(operation, point, (name, b)) is None for name, b in chosen.items())


def _choose(operation: str, seed: tuple[Point, Point], uncovered: set[tuple[Point, Point]]) -> dict[str, str]:
    chosen = {seed[0][0]: seed[0][1], seed[1][0]: seed[1][1]}
    for domain in domains_of(operation):
        if domain.name in chosen:
            continue
        best: Optional[tuple[int, str]] = None
        for boundary in domain.boundaries:
            point = (domain.name, boundary.name)
            if boundary.error or not _fits(operation, point, chosen):
                continue
            gain = sum(1 for name, b in chosen.items() if _pair(point, (name, b)) in uncovered)
            if best is None or gain > best[0]:
                best = (gain, boundary.name)
        if best is not None:
            chosen[domain.name] = best[1]
    return chosen


def _pair(a: Point, b: Point) -> tuple[Point, Point]:
    return (a, b) if a <= b else (b, a)


def _covers(case: CaseSpec) -> set[tuple[Point, Point]]:
    points = sorted((name, b) for name, b in boundaries_of(case).items() if b is not None)
    return {(a, b) for i, a in enumerate(points) for b in points[i + 1 :]}


def pairwise(operation: str, prefix: str, describe: Describe) -> list[CaseSpec]:
    """Cases of ``operation`` covering every allowed pair of its boundaries, then one at each error boundary; ids
    ``<prefix>.<domain>.<boundary>.<domain>.<boundary>`` (the pair each was built for)."""
    allowed = set(allowed_pairs(operation))
    uncovered, cases, unbuildable = set(allowed), [], set[tuple[Point, Point]]()
    while uncovered - unbuildable:
        seed = min(uncovered - unbuildable)
        at = _choose(operation, seed, uncovered)
        case_id = f"{prefix}.{seed[0][0]}.{seed[0][1]}.{seed[1][0]}.{seed[1][1]}"
        case = describe(case_at(operation, at, case_id, f"pairwise: {_said(at)}", ()))
        covered = _covers(case) & allowed
        if seed not in covered:
            unbuildable.add(seed)  # the builder did not land on it: measured as missing, never looped on
        if covered & uncovered and case.error is None:
            cases.append(case)
            uncovered -= covered
        else:
            unbuildable.add(seed)
    for (name, boundary), error in error_points(operation):
        case_id = f"{prefix}.error.{name}.{boundary}"
        cases.append(describe(case_at(operation, {name: boundary}, case_id, f"{error} at {name} {boundary}", ())))
    return cases


def _said(at: dict[str, str]) -> str:
    return ", ".join(f"{name} {boundary}" for name, boundary in at.items())
