"""``embconf mutants`` (the catalogue, its kill rate, or the diagnosis figures) and ``embconf explain``."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from embconf.corpus.command import add_fixtures, corpus_of
from embconf.model import exits
from embconf.model.errors import UserError
from embconf.model.impl import Impl
from embconf.untrusted.arguments import typed

if TYPE_CHECKING:
    from embconf.mutants.base import Mutant


def register(sub: Any) -> None:
    mutants = sub.add_parser(
        "mutants", help="list the catalogue of known mistakes and which cases kill each (the kill rate)"
    )
    add_fixtures(mutants)
    mutants.add_argument(
        "--area",
        metavar="AREA",
        help="only the mistakes of this spec area (e.g. bags; `embconf list requirements` shows the areas)",
    )
    mutants.add_argument(
        "--diagnosis",
        action="store_true",
        help="measure the diagnosis instead: kill rate, right mutant ranked first, a student corpus, correct implementations",
    )
    mutants.add_argument(
        "--students",
        type=Path,
        metavar="DIR",
        help="with --diagnosis: a corpus of wrong modules with SYMPTOM attributes",
    )
    mutants.add_argument(
        "--correct",
        action="append",
        metavar="KIND:TARGET",
        default=None,
        help="with --diagnosis: a correct implementation that must get no failure and no diagnosis (repeatable)",
    )
    mutants.set_defaults(handler=lambda args: mutants_command(MutantsOptions.read(args)))

    explain = sub.add_parser(
        "explain",
        help="explain a mutant (its mistake, fix and killing cases), a case (the mutants it kills) or a requirement (its cases and the mistakes they catch)",
    )
    explain.add_argument("id", help="a mutant id (e.g. bwd.overwrite), a case id or a requirement id (e.g. EMB-BWD-2)")
    add_fixtures(explain)
    explain.set_defaults(handler=lambda args: explain_command(args.id, args.fixtures))


@dataclass(frozen=True)
class MutantsOptions:
    """``embconf mutants``'s options as given (``correct``: each --correct parsed; empty: the defaults)."""

    fixtures: Optional[Path] = None
    area: Optional[str] = None
    diagnosis: bool = False
    students: Optional[Path] = None
    correct: tuple[Impl, ...] = ()

    @classmethod
    def read(cls, args: argparse.Namespace) -> MutantsOptions:
        from embconf.adapters import parse_impl

        return typed(cls, args, correct=tuple(parse_impl(text) for text in args.correct or ()))  # parsed once


def mutants_command(options: MutantsOptions) -> int:
    chosen = _chosen(options.area)
    cases = corpus_of(options.fixtures).cases
    if options.diagnosis:
        from embconf.mutation.measure import DEFAULT_CORRECT, print_figures

        figures = print_figures(cases, options.students, options.correct or DEFAULT_CORRECT, mutants=chosen)
        return exits.failed_if(not figures)
    from embconf.mutation.report import print_catalogue

    return exits.failed_if(not print_catalogue(cases, mutants=chosen))


def _chosen(area: Optional[str]) -> Optional[list[Mutant]]:
    """The catalogue's mistakes of ``area`` (None: every mistake); UserError for an area with none."""
    if area is None:
        return None
    from embconf.mutants import catalogue

    chosen = [m for m in catalogue() if m.area == area]
    if not chosen:
        known = sorted({m.area for m in catalogue()})
        raise UserError(f"--area {area}: no mistake of the catalogue is in that area (areas: {', '.join(known)})")
    return chosen


def explain_command(name: str, fixtures: Optional[Path]) -> int:
    from embconf.mutation.report import explain

    try:
        explain(name, corpus_of(fixtures).cases)
    except KeyError as exc:
        raise UserError(exc.args[0]) from None
    return exits.OK
