"""The text of ``embconf mutants`` (the catalogue and its kill rate) and ``embconf explain ID``."""

from __future__ import annotations

import sys
import textwrap
from typing import Optional, Sequence, TextIO

from embconf.corpus.fixtures import Case
from embconf.model.vocabulary import requirement_subjects, requirement_text, section_of, sections
from embconf.mutants import catalogue, get
from embconf.mutants.base import Mutant
from embconf.mutation.kills import evading, kill_matrix, kill_rate, killing, run_mutant


def print_catalogue(
    cases: Sequence[Case], out: TextIO = sys.stdout, mutants: Optional[Sequence[Mutant]] = None
) -> bool:
    """Every mutant (or those of ``mutants``) with its kill status against ``cases``; True when each is killed."""
    chosen = list(catalogue() if mutants is None else mutants)
    matrix = kill_matrix(cases, chosen)
    evaders = evading(matrix)
    width = max(len(m.id) for m in chosen)
    for mutant in chosen:
        kills = matrix[mutant.id]
        status = f"killed by {len(kills)} case{'s' if len(kills) != 1 else ''}" if kills else "SURVIVED"
        status = "evades by design" if mutant.id in evaders else status
        out.write(f"{mutant.id:<{width}}  {mutant.area:<17}  {status:<20}  {mutant.description}\n")
    survivors = [mutant_id for mutant_id, kills in matrix.items() if not kills and mutant_id not in evaders]
    counted = len(matrix) - len(evaders)
    out.write(
        f"\n{counted} mutants, {counted - len(survivors)} killed, {len(survivors)} survived: kill rate {100 * kill_rate(matrix):.1f}%\n"
    )
    if evaders:
        out.write(
            f"{len(evaders)} more evading by design, killed only at the combinations of boundaries they name (no golden "
            f"at any yet; embconf explore finds them): {', '.join(evaders)}\n"
        )
    if survivors:
        out.write(
            f"a surviving mutant is a missing case: add one to reference/cases/ that fails {', '.join(survivors)}\n"
        )
    return not survivors


def explain(target: str, cases: Sequence[Case], out: TextIO = sys.stdout) -> None:
    """The full explanation of a mutant, a case or a requirement; KeyError when ``target`` is none of them."""
    by_id = {case.id: case for case in cases}
    if target in by_id:
        _explain_case(by_id[target], out)
    elif target.upper() in requirement_subjects():
        _explain_requirement(target.upper(), cases, out)
    else:
        _explain_mutant(get(target), cases, out)


def _explain_requirement(requirement: str, cases: Sequence[Case], out: TextIO) -> None:
    """What a requirement pins (its subject and spec section), the cases that pin it and the catalogue's
    mistakes those cases catch."""
    pinning = [case for case in cases if requirement in case.requirements]
    section = section_of(requirement)
    caught = [m for m in catalogue() if any(m.covers(c.operation) and _kills(c, m) for c in pinning)]
    lines = [
        f"requirement {requirement}: {requirement_subjects()[requirement]}",
        f"  spec:   SPEC.md section {section}, {sections()[section]}",
        *textwrap.wrap(requirement_text(requirement), 110, initial_indent="  rule:   ", subsequent_indent="          "),
        f"  pinned by {len(pinning)} case{'s' if len(pinning) != 1 else ''}" + (":" if pinning else ""),
    ]
    lines += [f"    {case.id:<48} {case.operation}" for case in pinning]
    lines.append(
        f"  catches {len(caught)} mistake{'s' if len(caught) != 1 else ''} of the catalogue" + (":" if caught else "")
    )
    lines += [f"    {m.id:<28} {m.description}" for m in caught]
    out.write("\n".join(lines) + "\n")


def _explain_mutant(mutant: Mutant, cases: Sequence[Case], out: TextIO) -> None:
    kills = kill_matrix(cases, [mutant])[mutant.id]
    lines = [
        f"mutant {mutant.id}  (area: {mutant.area})",
        f"  mistake:    {mutant.description}",
        f"  fix:        {mutant.hint}",
        f"  overrides:  {', '.join(mutant.overrides)}",
        f"  affects:    {', '.join(mutant.covered_operations)}",
    ]
    if mutant.convention:
        lines.append(f"  reported:   {mutant.summary}")
    if mutant.equivalent:
        lines.append(f"  equivalent: {', '.join(mutant.equivalent)} (the same results on every input)")
    if mutant.source:
        lines.append(f"  seen in:    {mutant.source}")
    lines.append(
        f"  killed by {len(kills)} case{'s' if len(kills) != 1 else ''}:"
        if kills
        else "  SURVIVED: no case kills it; add one to reference/cases/"
    )
    lines += [f"    {result.id:<48} {result.outcome:<6} [{', '.join(result.requirements)}]" for result in kills]
    out.write("\n".join(lines) + "\n")


def _explain_case(case: Case, out: TextIO) -> None:
    killed = [m for m in catalogue() if m.covers(case.operation) and _kills(case, m)]
    lines = [
        f"case {case.id}  ({case.source})",
        f"  {case.description}",
        f"  operation:    {case.operation}",
        f"  requirements: {', '.join(case.requirements)}",
        f"  features:     {', '.join(case.features) or '-'}",
        f"  expected:     {'error ' + case.expected_error if case.expected_error else 'outputs ' + ', '.join(case.raw_expected['outputs'])}",
        f"  kills {len(killed)} mutant{'s' if len(killed) != 1 else ''}" + (":" if killed else ""),
    ]
    lines += [f"    {m.id:<28} {m.description}" for m in killed]
    out.write("\n".join(lines) + "\n")


def _kills(case: Case, mutant: Mutant) -> bool:
    return bool(killing(run_mutant(mutant, [case])))  # a case it does not cover: the reference, which passes
