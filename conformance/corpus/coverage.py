"""``embconf coverage``: how much of each family's input domains the goldens cover. The domains and what counts
are the reference's (``reference/cases/domains.py``): a pair is an allowed pair of boundaries of two domains of one
operation (``allowed_pairs``), covered when a call with outputs is at both (``covered_pairs``; a call under a declared convention only for the
pairs holding its convention's boundary); an error boundary
(``error_points``) is covered when a call at it expects the error the spec names there. Each covered one names the
first case at it. Imported only by the ``coverage`` command: ``embconf run`` never loads the domains."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable, Optional

from embconf.model.family import Family, families
from embconf.reference.cases.domains import Point, allowed_pairs, calls_at, counted, error_points

Pair = tuple[Point, Point]
ErrorPoint = tuple[Point, str]  # (boundary, the error kind the spec names there)


@dataclass(frozen=True)
class Tally:
    """How many of ``total`` are covered."""

    covered: int
    total: int

    def fraction(self) -> Fraction:
        return Fraction(self.covered, self.total) if self.total else Fraction(1)

    def percent(self) -> int:
        """Rounded, never to 100 while one is missing."""
        shown = round(100 * self.fraction())
        return 99 if shown == 100 and self.covered < self.total else shown

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.covered + other.covered, self.total + other.total)


@dataclass(frozen=True)
class OperationCoverage:
    """One operation's allowed pairs and error boundaries, each covered one with the case at it."""

    operation: str
    covered: dict[Pair, str]
    missing: list[Pair]
    errors_covered: dict[ErrorPoint, str]
    errors_missing: list[ErrorPoint]


@dataclass(frozen=True)
class FamilyCoverage:
    """A family's operations' coverage (none for a family whose cases run other families' operations)."""

    family: Family
    operations: tuple[OperationCoverage, ...]

    @property
    def pairs(self) -> Tally:
        return sum((Tally(len(o.covered), len(o.covered) + len(o.missing)) for o in self.operations), Tally(0, 0))

    @property
    def errors(self) -> Tally:
        return sum(
            (Tally(len(o.errors_covered), len(o.errors_covered) + len(o.errors_missing)) for o in self.operations),
            Tally(0, 0),
        )

    def below(self, percent: float) -> bool:
        """Whether its pairs or its error boundaries are covered less than ``percent``."""
        return any(t.fraction() * 100 < Fraction(percent) for t in (self.pairs, self.errors))


def witnesses(cases: Iterable[Any]) -> tuple[dict[str, dict[Pair, str]], dict[str, dict[ErrorPoint, str]]]:
    """({operation: {pair of boundaries a call with outputs is at: the first such case}}, {operation: {(boundary,
    error): the first case with a call at it expecting that error}}), call by call as ``covered_pairs`` counts."""
    pairs: dict[str, dict[Pair, str]] = {}
    errors: dict[str, dict[ErrorPoint, str]] = {}
    for case in cases:
        for call, (operation, at) in zip(case.calls or (case,), calls_at(case)):
            if call.expected_error is None:
                for a, b in counted(operation, at):
                    pairs.setdefault(operation, {}).setdefault((a, b), case.id)
            else:
                for point in ((name, boundary) for name, boundary in at.items() if boundary is not None):
                    errors.setdefault(operation, {}).setdefault((point, call.expected_error), case.id)
    return pairs, errors


def measure(cases: Iterable[Any], area: Optional[str] = None) -> list[FamilyCoverage]:
    """Each family's coverage by ``cases`` (only ``area``'s when given), in the spec's order."""
    pairs, errors = witnesses(cases)
    chosen = [f for f in families().values() if area is None or f.area == area]
    return [
        FamilyCoverage(f, tuple(_operation(op, pairs.get(op, {}), errors.get(op, {})) for op in f.operations))
        for f in chosen
    ]


def _operation(operation: str, pairs: dict[Pair, str], errors: dict[ErrorPoint, str]) -> OperationCoverage:
    allowed, points = allowed_pairs(operation), error_points(operation)
    return OperationCoverage(
        operation,
        {pair: pairs[pair] for pair in allowed if pair in pairs},
        [pair for pair in allowed if pair not in pairs],
        {point: errors[point] for point in points if point in errors},
        [point for point in points if point not in errors],
    )


def _pair_text(operation: str, pair: Pair) -> str:
    (a, x), (b, y) = pair
    return f"{operation}: {a}={x} x {b}={y}"


def _error_text(operation: str, point: ErrorPoint) -> str:
    (name, boundary), error = point
    return f"{operation}: {name}={boundary} (error {error})"


def report_lines(measured: list[FamilyCoverage], missing: bool = False, covered: bool = False) -> list[str]:
    """A line per family and the total (of more than one); under each family its missing pairs and error boundaries (``missing``)
    and its covered ones with the case at each (``covered``)."""
    width = max(len(f.area) for f in families().values()) + 2
    lines = []
    for found in measured:
        if not found.operations:
            lines.append(f"{found.family.area:<{width}}no operation of its own: its cases count for those they call")
            continue
        lines.append(f"{found.family.area:<{width}}{_summary(found.pairs, found.errors)}")
        for op in found.operations:
            if covered:
                lines += [f"  {_pair_text(op.operation, p)}  by {case}" for p, case in op.covered.items()]
                lines += [f"  {_error_text(op.operation, p)}  by {case}" for p, case in op.errors_covered.items()]
            if missing:
                lines += [f"  {_pair_text(op.operation, p)}" for p in op.missing]
                lines += [f"  {_error_text(op.operation, p)}" for p in op.errors_missing]
    pairs, errors = _totals(measured)
    return lines + ([f"{'total':<{width}}{_summary(pairs, errors)}"] if len(measured) > 1 else [])


def _summary(pairs: Tally, errors: Tally) -> str:
    return (
        f"{pairs.covered} of {pairs.total} allowed pairs ({pairs.percent()}%), "
        f"{errors.covered} of {errors.total} error boundaries"
    )


def _totals(measured: list[FamilyCoverage]) -> tuple[Tally, Tally]:
    return sum((f.pairs for f in measured), Tally(0, 0)), sum((f.errors for f in measured), Tally(0, 0))


def _tally(tally: Tally) -> dict[str, Any]:
    return {"covered": tally.covered, "total": tally.total, "percent": float(round(100 * tally.fraction(), 2))}


def _point(point: Point) -> dict[str, str]:
    return {"domain": point[0], "boundary": point[1]}


def as_json(measured: list[FamilyCoverage]) -> dict[str, Any]:
    """The same figures and lists as a JSON document (``--json FILE``, for CI)."""
    pairs, errors = _totals(measured)
    return {
        "families": {found.family.area: _family_json(found) for found in measured},
        "total": {"pairs": _tally(pairs), "error_boundaries": _tally(errors)},
    }


def _family_json(found: FamilyCoverage) -> dict[str, Any]:
    return {
        "pairs": _tally(found.pairs),
        "error_boundaries": _tally(found.errors),
        "operations": {
            op.operation: {
                "covered": [{"pair": [_point(a), _point(b)], "case": c} for (a, b), c in op.covered.items()],
                "missing": [[_point(a), _point(b)] for a, b in op.missing],
                "errors_covered": [{**_point(p), "error": e, "case": c} for (p, e), c in op.errors_covered.items()],
                "errors_missing": [{**_point(p), "error": e} for p, e in op.errors_missing],
            }
            for op in found.operations
        },
    }
