"""``embconf explore``: its options, and the command. Each area is searched in turn (:mod:`embconf.explore.search`)
on one implementation opened as ``embconf run`` opens it; every failure is printed shrunk, with the verdict
``run`` prints for it, and written as a candidate fixture on request. Exit 0: nothing found; 1: a failure found;
2: bad usage, or Hypothesis not installed (one line naming the extra)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from embconf.explore.budget import DEFAULT_CASES, DEFAULT_SECONDS, Budget
from embconf.model import exits
from embconf.model.errors import UserError
from embconf.model.impl import Impl
from embconf.processes.options import Limits, add_limits
from embconf.untrusted.arguments import typed

INSTALL = "embconf explore needs Hypothesis (the extra explore): pip install hypothesis, or pip install -e '.[explore]' in a checkout"


def register(sub: Any) -> None:
    explore = sub.add_parser(
        "explore", help="search the input domains for a failure the goldens miss, shrunk to a minimal case"
    )
    from embconf.adapters import kinds_help
    from embconf.reference.cases.domains import DOMAINS

    explore.add_argument("--impl", required=True, help=kinds_help())
    explore.add_argument("--area", choices=list(DOMAINS), help="search this family only (default: every family)")
    explore.add_argument(
        "--budget", type=int, default=DEFAULT_CASES, metavar="N", help=f"cases per area (default {DEFAULT_CASES})"
    )
    explore.add_argument(
        "--seconds",
        type=float,
        default=DEFAULT_SECONDS,
        metavar="S",
        help=f"seconds per area to search, and as long again to shrink a failure (default {DEFAULT_SECONDS:g})",
    )
    explore.add_argument("--seed", type=int, default=0, help="the same seed draws the same cases (default 0)")
    explore.add_argument(
        "--write-cases",
        type=Path,
        metavar="FILE",
        help="write each shrunk failure to FILE as a candidate fixture (embconf run --fixtures FILE runs it)",
    )
    explore.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    add_limits(explore)
    explore.set_defaults(handler=lambda args: explore_command(ExploreArguments.read(args)))


@dataclass(frozen=True)
class ExploreArguments:
    """``embconf explore``'s options as given."""

    impl: Impl
    area: Optional[str]
    budget: int
    seconds: float
    seed: int
    write_cases: Optional[Path]
    quiet: bool
    limits: Limits

    @classmethod
    def read(cls, args: argparse.Namespace) -> ExploreArguments:
        from embconf.adapters import parse_impl

        return typed(cls, args, impl=parse_impl(args.impl), limits=Limits.read(args))


def explore_command(given: ExploreArguments) -> int:
    try:
        import hypothesis  # noqa: F401 - the optional extra `explore`
    except ImportError:
        raise UserError(INSTALL) from None
    if given.budget < 1 or not given.seconds > 0:
        raise UserError("--budget must be at least 1 case and --seconds more than 0")
    if given.write_cases is not None and given.write_cases.exists() and not given.write_cases.is_file():
        raise UserError(f"cannot write the candidate cases: {given.write_cases} is not a regular file")
    from embconf import session
    from embconf.explore.search import areas, search

    options = session.RunOptions.of(given.limits)
    adapter = session.open_implementation(given.impl, options)
    found = []
    try:
        for area in [given.area] if given.area else areas():
            tally = search(adapter, area, Budget(given.budget, given.seconds), given.seed, _progress(given.quiet))
            _said(tally, given.quiet)
            if tally.failure is not None:
                found.append(tally.failure)
                _reproduce(adapter, tally.failure, options, given.impl)
    finally:
        adapter.close()
    if found and given.write_cases is not None:
        from embconf.explore.candidate import write_candidates

        write_candidates(given.write_cases, found, str(given.impl), given.seed)
        print(
            f"wrote {len(found)} candidate case{'s' if len(found) != 1 else ''} to {given.write_cases}: "
            f"embconf run --impl {given.impl} --fixtures {given.write_cases}"
        )
    if not found:
        print(f"explore: no failure found on {given.impl} (seed {given.seed})")
    return exits.failed_if(bool(found))


def _progress(quiet: bool) -> Any:
    """The live progress line on stderr (a terminal only; elsewhere one line an area, :func:`_said`)."""
    if quiet or not sys.stderr.isatty():
        return None
    return lambda tally: sys.stderr.write(f"\r{_line(tally)}\x1b[K")


def _line(tally: Any, state: str = "") -> str:
    state = state or ("a failure, shrinking" if tally.failure is not None else "no failure yet")
    skipped = f", {tally.outside} outside the spec skipped" if tally.outside else ""
    other = f", {tally.inapplicable} not applicable" if tally.inapplicable else ""
    return f"explore {tally.area}: {tally.run} cases{skipped}{other}, {tally.seconds:.1f} s, {state}"


def _said(tally: Any, quiet: bool) -> None:
    """The area's last progress line, what it found."""
    if quiet:
        return
    found = "a failure, shrunk" if tally.failure is not None else "no failure"
    cut = " (the time budget ended it)" if tally.cut_short else ""
    start, clear = ("\r", "\x1b[K") if sys.stderr.isatty() else ("", "")
    sys.stderr.write(f"{start}{_line(tally, found + cut)}{clear}\n")


def _reproduce(adapter: Any, case: Any, options: Any, impl: Impl) -> None:
    """The shrunk case, then the verdict ``embconf run`` prints for it (diagnosed as a run diagnoses)."""
    from embconf.corpus.command import print_case
    from embconf.reports.console import Console
    from embconf.session import Session

    print(f"explore: a failure in {case.operation}, shrunk to this case:")
    print_case(case)
    run = Session(adapter, [case], options, impl)
    run.keep([case.id])
    record = run.run()
    print()
    Console(sys.stdout, quiet=True).report(record)
