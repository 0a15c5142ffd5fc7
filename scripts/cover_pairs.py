"""Choose, once, the covering rows of the pairwise goldens: ``reference/cases/covering_rows.json``, which
``reference/cases/covering.py`` builds with ``case_at`` into each area's fixture file.

From each operation's domains (``reference/cases/domains.py``) it lists what the catalogue's cases leave
uncovered: an allowed pair of boundaries (``allowed_pairs``), a triple of the options that meet in one formula
(``covering.TRIPLES``), an error boundary without a case expecting its error (``error_points``). It then appends rows, a
covering array built greedily (AETG: each row starts from an uncovered pair, each further domain takes the boundary
that covers most of what is still uncovered with those chosen so far, among a few random orders the best row is
kept), every row checked as built: at its boundaries, with outputs the reference answers. An error boundary gets a
row of its own. Rows already in the file are never changed: a golden once released is frozen (spec MINOR rule),
so a later change of the domains adds rows, it never moves a case.

    python scripts/cover_pairs.py           # append rows for what is uncovered, then `embconf regenerate`
    python scripts/cover_pairs.py --check   # exit 1 naming what is uncovered, or a row no longer as written
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from itertools import combinations, product
from typing import Any, Iterable, Optional

from embconf.model.family import families, family_of
from embconf.reference.cases import CaseSpec, all_cases
from embconf.reference.cases.covering import ROWS_PATH, TRIPLES, derived_features, sample_rows
from embconf.reference.cases.domains import (
    allowed_pairs,
    calls_at,
    case_at,
    counted,
    domain_named,
    domains_of,
    error_points,
    under_convention,
)
from embconf.reference.generate import build_case

Point = tuple[str, str]
Target = frozenset[Point]  # a pair or a triple of boundaries of one operation, to have a case with outputs at

COSTLY = {("weight.rows", "large")}  # a 2^16 + 1-row table: only in the rows that cover its own pairs
WIDE = {("weight.width", "many"): 2, ("weight.dtype", "float64"): 2, ("weight.dtype", "float32"): 1}  # its bytes
TRIES = 12  # random orders tried for each row


def _ordered(a: Point, b: Point) -> tuple[Point, Point]:
    return (a, b) if a <= b else (b, a)


def targets(operation: str) -> list[Target]:
    """The allowed pairs of ``operation`` and its allowed triples (each of the three pairs allowed)."""
    allowed = set(allowed_pairs(operation))
    found = [frozenset(pair) for pair in allowed_pairs(operation)]
    for names in TRIPLES.get(operation, ()):
        boundaries = [[(n, b.name) for b in domain_named(operation, n).boundaries] for n in names]
        found += [
            frozenset(t) for t in product(*boundaries) if all(_ordered(a, b) in allowed for a, b in combinations(t, 2))
        ]
    return found


def _error(call: Any) -> Any:
    return call.error


def covered_by(specs: Iterable[CaseSpec]) -> tuple[dict[str, set[frozenset[Point]]], set[tuple[str, Point, str]]]:
    """({operation: every set of two or three boundaries a call with outputs covers (``counted``: one under a
    declared convention only those holding its boundary)}, {(operation, boundary, error) of a call expecting an
    error})."""
    sets: dict[str, set[frozenset[Point]]] = {}
    errors: set[tuple[str, Point, str]] = set()
    for spec in specs:
        for call, (operation, at) in zip(spec.calls or (spec,), calls_at(spec)):
            if _error(call) is None:
                found = sets.setdefault(operation, set())
                found.update(frozenset(c) for k in (2, 3) for c in counted(operation, at, k))
            else:
                errors.update((operation, (n, b), _error(call)) for n, b in at.items() if b is not None)
    return sets, errors


def missing(specs: list[CaseSpec]) -> tuple[dict[str, list[Target]], dict[str, list[tuple[Point, str]]]]:
    """What the cases leave uncovered, per operation: targets, and error boundaries with their error."""
    sets, errors = covered_by(specs)
    operations = [op for family in families().values() for op in family.operations]
    uncovered = {op: [t for t in targets(op) if t not in sets.get(op, set())] for op in operations}
    failing = {op: [(p, e) for p, e in error_points(op) if (op, p, e) not in errors] for op in operations}
    return {op: t for op, t in uncovered.items() if t}, {op: e for op, e in failing.items() if e}


class Requirements:
    """The requirement ids a row cites: its operation's most cited one, those its boundaries name in the domain
    tables (a bag mode's own rule), and each other boundary's distinctive ones (cited by most hand-written cases at
    it, by few others of the operation; for a row with outputs, read from the cases with outputs). A requirement
    the table gives another boundary of a domain the row is at (another mode's rule) is never cited."""

    def __init__(self, specs: list[CaseSpec]) -> None:
        self.by_op: dict[str, list[tuple[str, ...]]] = {}
        self.by_point: dict[tuple[str, Point, bool], list[tuple[str, ...]]] = {}
        for spec in (s for s in specs if not s.calls and ".pairs." not in s.id):  # a sequence: its calls together
            for operation, at in calls_at(spec):
                self.by_op.setdefault(operation, []).append(spec.requirements)
                for point in ((n, b) for n, b in at.items() if b is not None):
                    self.by_point.setdefault((operation, point, spec.error is not None), []).append(spec.requirements)

    def of(self, operation: str, at: dict[str, str], error: bool) -> tuple[str, ...]:
        named = {(d.name, b.name): b.requirements for d in domains_of(operation) for b in d.boundaries if d.name in at}
        own = [r for point in at.items() for r in named[point]]
        others = {r for point, reqs in named.items() if at[point[0]] != point[1] for r in reqs} - set(own)
        cited = self.by_op.get(operation, [])
        share = Counter(r for reqs in cited for r in set(reqs))
        base = next((r for r, _ in share.most_common() if r not in others), None)
        found = ([base] if base else []) + own + (["EMB-ERR-1"] if error else [])
        for point in at.items():
            at_point = self.by_point.get((operation, point, False), [])
            at_point += self.by_point.get((operation, point, True), []) if error else []
            counts = Counter(r for reqs in at_point for r in set(reqs) if r not in others)
            for req, n in counts.most_common(2):
                if 2 * n >= len(at_point) and 2 * share[req] < len(cited) and req != "EMB-ERR-1":
                    found.append(req)
        return tuple(dict.fromkeys(found))


def _spec(operation: str, at: dict[str, str], case_id: str) -> CaseSpec:
    return case_at(operation, at, case_id, "", ())


def row_spec(row: dict[str, Any]) -> CaseSpec:
    """A row as the case it makes (its boundaries', without its description)."""
    return _spec(row["operation"], row["at"], row["id"])


def _gain(spec: CaseSpec, open_targets: set[Target], allowed: Optional[set]) -> set[Target]:
    """What a case covers of ``open_targets``: nothing unless it has outputs and every pair it is at is allowed
    (``allowed``; None: whatever the table excludes without an error, what the reference answers decides)."""
    operation, at = calls_at(spec)[0]
    points = sorted((n, b) for n, b in at.items() if b is not None)
    if spec.error is not None or (allowed is not None and not all(pair in allowed for pair in combinations(points, 2))):
        return set()
    return {t for t in open_targets if _counts(operation, t, set(points))}


def _counts(operation: str, target: Target, points: set[Point]) -> bool:
    """Whether a case at ``points`` covers ``target``: it is at each of its boundaries, and the target holds each
    declared convention's boundary the case is at (the case runs only where that convention is declared)."""
    return target <= points and all(p in target for p in points if under_convention(operation, p))


def _grow(operation: str, seed: Target, open_targets: set[Target], allowed: set, rng: random.Random) -> dict[str, str]:
    """A row from ``seed``: each other domain, in a random order, at the boundary that covers most open targets."""
    row = dict(seed)
    others = [d for d in domains_of(operation) if d.name not in row]
    rng.shuffle(others)
    by_point: dict[Point, list[Target]] = {}
    for t in open_targets:
        for p in t:
            by_point.setdefault(p, []).append(t)
    for domain in others:
        best, best_score = None, (-1, -9, False)
        names = [b.name for b in domain.boundaries]
        rng.shuffle(names)
        for name in names:
            point = (domain.name, name)
            if point in COSTLY and point not in seed:
                continue
            if (
                point in WIDE
                and seed & COSTLY
                and (
                    any(frozenset({c, point}) not in open_targets for c in seed & COSTLY)
                    or any(p in WIDE for p in row.items())
                )
            ):
                continue  # a wider or larger table only where its own pair with the costly one is open, once a row
            if not all(_ordered(point, p) in allowed for p in row.items()):
                continue
            chosen = set(row.items()) | {point}
            score = (
                sum(1 for t in by_point.get(point, ()) if _counts(operation, t, chosen)),
                -WIDE.get(point, 0) if seed & COSTLY else 0,
                name == domain.boundaries[0].name,  # else the plain value (canonical, absent): fewer features needed
            )
            if score > best_score:
                best, best_score = name, score
        if best is not None:
            row[domain.name] = best
    return row


def _ordered_row(operation: str, row: dict[str, str]) -> dict[str, str]:
    order = [d.name for d in domains_of(operation)]
    return {name: row[name] for name in order if name in row}


def cover(
    operation: str, open_targets: list[Target], first: int, rng: random.Random
) -> tuple[list[dict[str, Any]], list[Target]]:
    """Rows (numbered from ``first``) covering ``open_targets``, and the targets no row could build."""
    allowed, remaining, rows, unbuilt = set(allowed_pairs(operation)), set(open_targets), [], []
    area = family_of(operation).area
    while remaining:
        case_id = f"{area}.pairs.{operation}.{first + len(rows):03d}"
        seeds = sorted(remaining, key=lambda t: sorted(t))
        best: tuple[dict[str, str], set[Target]] = ({}, set())
        for attempt in range(TRIES):
            seed = seeds[0] if attempt == 0 else rng.choice(seeds)
            row = _ordered_row(operation, _grow(operation, seed, remaining, allowed, rng))
            gained = _gain(_spec(operation, row, case_id), remaining, allowed)
            if len(gained) > len(best[1]) and _answered(_spec(operation, row, case_id)):
                best = (row, gained)
        if not best[1]:  # the first open target alone, even where the case is also at a pair excluded as unbuildable
            row = _ordered_row(operation, dict(seeds[0]))
            gained = _gain(_spec(operation, row, case_id), {seeds[0]}, None)
            if not gained or not _answered(_spec(operation, row, case_id)):
                unbuilt.append(seeds[0])
                remaining.discard(seeds[0])
                continue
            best = (row, gained)
        rows.append({"id": case_id, "operation": operation, "at": best[0]})
        remaining -= best[1]
    return rows, unbuilt


def _answered(spec: CaseSpec) -> bool:
    try:
        build_case(spec)
    except AssertionError:
        return False
    return True


def error_rows(operation: str, points: list[tuple[Point, str]], first: int) -> tuple[list[dict[str, Any]], list]:
    """A row at each error boundary expecting its error."""
    area, rows, unbuilt = family_of(operation).area, [], []
    for (name, boundary), error in points:
        case_id = f"{area}.pairs.{operation}.{first + len(rows):03d}"
        spec = _spec(operation, {name: boundary}, case_id)
        if spec.error != error or calls_at(spec)[0][1][name] != boundary or not _answered(spec):
            unbuilt.append(((name, boundary), error))
            continue
        rows.append({"id": case_id, "operation": operation, "at": {name: boundary}})
    return rows, unbuilt


def finished(row: dict[str, Any], requirements: Requirements) -> dict[str, Any]:
    """A row with its description, requirements, features and pinned rows, written once."""
    operation, at = row["operation"], row["at"]
    spec = _spec(operation, at, row["id"])
    reqs = requirements.of(operation, at, spec.error is not None)
    shown = ", ".join(f"{n}={b}" for n, b in at.items())
    if spec.error is None:
        text = f"Pairwise covering row of {operation} at {shown}: every pair of these boundaries ({', '.join(reqs)})."
    else:
        ((name, boundary),) = at.items()
        note = domain_named(operation, name).boundary(boundary).note
        text = f"Error boundary of {operation} at {shown} ({note}): {spec.error} ({', '.join(reqs)})."
    done = {**row, "description": text, "requirements": list(reqs), "features": list(derived_features(spec))}
    pinned = sample_rows(spec)
    return {**done, "sample_rows": pinned} if pinned else done


def load() -> dict[str, list[dict[str, Any]]]:
    return json.loads(ROWS_PATH.read_text(encoding="utf-8"))["rows"] if ROWS_PATH.exists() else {}


def write(rows: dict[str, list[dict[str, Any]]]) -> None:
    """One row a line, areas in the catalogue's order."""
    header = (
        "Covering rows of the pairwise goldens, chosen once by scripts/cover_pairs.py and never changed "
        "(reference/cases/covering.py builds each with case_at)"
    )
    lines = [f'{{"comment": {json.dumps(header)},', ' "rows": {']
    areas = [a for a in rows if rows[a]]
    for i, area in enumerate(areas):
        lines.append(f"  {json.dumps(area)}: [")
        body = [f"   {json.dumps(r, sort_keys=False)}" for r in rows[area]]
        lines += [line + ("," if j < len(body) - 1 else "") for j, line in enumerate(body)]
        lines.append("  ]" + ("," if i < len(areas) - 1 else ""))
    ROWS_PATH.write_text("\n".join(lines + [" }", "}"]) + "\n", encoding="utf-8")


def problems(rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Each committed row no longer built as written (at its boundaries, with its features)."""
    found = []
    for area_rows in rows.values():
        for row in area_rows:
            spec = _spec(row["operation"], row["at"], row["id"])
            at = calls_at(spec)[0][1]
            wrong = [f"{n}={b}" for n, b in row["at"].items() if at[n] != b]
            if wrong:
                found.append(f"{row['id']}: no longer at {', '.join(wrong)}")
            if list(derived_features(spec)) != row["features"]:
                found.append(f"{row['id']}: its features are now {list(derived_features(spec))}")
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 naming what is uncovered or a row changed")
    args = parser.parse_args(argv)
    specs = [spec for _, area_specs in all_cases() for spec in area_specs]
    open_targets, open_errors = missing(specs)
    rows = load()
    if args.check:
        found = problems(rows)
        found += [
            f"{op}: no case with outputs at {' x '.join(f'{n}={b}' for n, b in sorted(t))}"
            for op, ts in open_targets.items()
            for t in ts
        ]
        found += [f"{op}: no case at {n}={b} expecting {e}" for op, es in open_errors.items() for (n, b), e in es]
        print("\n".join(found) if found else "every allowed pair, triple and error boundary has a golden")
        return 1 if found else 0
    requirements, unbuilt = Requirements(specs), []
    operations = [op for family in families().values() for op in family.operations]
    for operation in [op for op in operations if op in open_targets or op in open_errors]:
        area = family_of(operation).area
        taken = [r for r in rows.get(area, []) if r["operation"] == operation]
        first = 1 + max((int(r["id"].rsplit(".", 1)[1]) for r in taken), default=0)
        rng = random.Random(f"{operation}/{first}")
        made, lost = cover(operation, open_targets.get(operation, []), first, rng)
        errs, lost_errors = error_rows(operation, open_errors.get(operation, []), first + len(made))
        rows.setdefault(area, []).extend(finished(r, requirements) for r in made + errs)
        unbuilt += [f"{operation}: cannot build {sorted(t)}" for t in lost]
        unbuilt += [f"{operation}: cannot build error {p} {e}" for p, e in lost_errors]
        print(f"{operation}: {len(made)} covering rows, {len(errs)} error rows", file=sys.stderr)
    order = list(dict.fromkeys(f.area for f in families().values()))
    write({area: rows[area] for area in sorted(rows, key=order.index)})
    print("\n".join(unbuilt) if unbuilt else "every target built")
    return 1 if unbuilt else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
