"""``embconf run``: its options, and the command. The pipeline is :mod:`embconf.session`; the reports are
derived from the run record it returns."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from embconf.corpus.command import Selection, add_selection
from embconf.model import exits
from embconf.model.errors import UserError
from embconf.model.impl import Impl
from embconf.processes.options import REPEAT, Limits, add_limits
from embconf.untrusted.arguments import typed


def register(sub: Any) -> None:
    run = sub.add_parser("run", help="validate an implementation against the golden cases")
    from embconf.adapters import kinds_help

    run.add_argument("--impl", help=f"{kinds_help()}; default: the TinyTorch module tinytorch.core.embeddings")
    add_selection(run)
    run.add_argument("--expectations", type=Path, help="YAML file of cases known to fail, each with a reason")
    run.add_argument(
        "--write-expectations",
        type=Path,
        metavar="FILE",
        help="write the cases that failed in this run as an expectations file (listed reasons are kept)",
    )
    run.add_argument(
        "--report-json",
        type=Path,
        help="write the JSON report here as the run goes, one JSON object a line (- for stdout; the console then "
        "goes to stderr); embconf report FILE renders it",
    )
    run.add_argument("--junit", type=Path, help="write JUnit XML here (- for stdout)")
    run.add_argument(
        "--strict",
        action="store_true",
        help="an xpass (a listed failure that now passes), an expectation that matches no case, a case the "
        "implementation declines within its declared capabilities, and a case whose result changes under --repeat fail the run",
    )
    run.add_argument(
        "--allow-modified-fixtures",
        action="store_true",
        help="run on fixture files whose hash differs from the manifest (the report says so)",
    )
    run.add_argument(
        "--no-colour",
        "--no-color",
        dest="colour",
        action="store_false",
        default=None,
        help="no ANSI colour even on a terminal",
    )
    run.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    run.add_argument(
        "-v", "--verbose", action="store_true", help="list every requirement, those with no applicable case too"
    )
    run.add_argument(
        "--validate-protocol",
        action="store_true",
        help="subprocess implementations: check every message the implementation sends against spec/schemas/protocol-*",
    )
    add_limits(run)
    run.add_argument(*REPEAT[0], **REPEAT[1])
    run.set_defaults(handler=lambda args: run_command(RunArguments.read(args)))


def loaded(step: Callable[[], Any], default: bool = False) -> Any:
    """``step()`` (opening the implementation, or its first answer); a load failure is one line, with a
    pointer to --impl when the default implementation was meant."""
    from embconf.adapters import ImplementationError

    try:
        return step()
    except ImplementationError as exc:
        if default:
            raise UserError(
                f"no --impl given and the default TinyTorch module is not importable ({exc}); name one with --impl KIND:TARGET, "
                "e.g. --impl tinytorch:path/to/embeddings.py or --impl reference"
            ) from None
        raise


@dataclass(frozen=True)
class RunArguments:
    """``embconf run``'s options as given: ``impl`` parsed (``default``: no --impl, the TinyTorch module meant)."""

    impl: Impl
    default: bool
    selection: Selection
    expectations: Optional[Path]
    write_expectations: Optional[Path]
    report_json: Optional[Path]
    junit: Optional[Path]
    strict: bool
    allow_modified_fixtures: bool
    colour: Optional[bool]
    quiet: bool
    verbose: bool
    validate_protocol: bool
    limits: Limits
    repeat: int

    @classmethod
    def read(cls, args: argparse.Namespace) -> RunArguments:
        from embconf.adapters import DEFAULT_IMPL, parse_impl  # light: no NumPy before the peer starts

        impl = parse_impl(DEFAULT_IMPL if args.impl is None else args.impl)  # parsed once, here
        return typed(
            cls, args, impl=impl, default=args.impl is None, selection=Selection.read(args), limits=Limits.read(args)
        )


def run_command(given: RunArguments) -> int:
    from embconf.protocol.early import start_early

    impl = given.impl
    start_early(impl)  # a protocol peer starts beside what follows
    from embconf import session  # the module embconf.session
    from embconf.corpus.command import selected
    from embconf.corpus.expectations import Expectations
    from embconf.model.outcomes import XPASS
    from embconf.reports.console import Console
    from embconf.reports.targets import ReportTargets
    from embconf.untrusted.write import ConsoleStream

    targets = ReportTargets.check(given.report_json, given.junit, given.write_expectations)  # before anything runs
    out = ConsoleStream(targets.console_stream())  # a reader that goes away (| head) ends no run
    options = session.RunOptions.of(given.limits, given.repeat, given.strict, given.validate_protocol)
    adapter = loaded(
        lambda: session.open_implementation(impl, options), given.default
    )  # it starts while the fixtures load
    try:
        corpus, cases = selected(given.selection, allow_modified=given.allow_modified_fixtures)
        expectations = Expectations.load(given.expectations) if given.expectations else None
        loaded(adapter.capabilities, given.default)
        options = dataclasses.replace(options, expectations=expectations)
        console = Console(out, colour=given.colour, quiet=given.quiet, verbose=given.verbose)
        run = session.Session(adapter, cases, options, impl, corpus.report_block(len(cases)), owns_adapter=True)
        live = targets.live_json()
        if live is not None:
            live.header(run.header())
        for number, result in enumerate(run, 1):
            console.progress(number, len(run.cases), result)
            if live is not None:
                live.case(result)
        record = run.finish()
        if live is not None:
            live.footer(record)
    finally:
        adapter.close()
    notes, write_errors = targets.write(record)  # before the console, which may have no reader
    if live is not None and live.error:
        write_errors.insert(0, live.error)
    note = "\n".join(
        line
        for line in (
            f"warning: ran on MODIFIED fixture files: {', '.join(corpus.modified_files)}"
            if corpus.modified_files
            else "",
            f"warning: the fixture files {', '.join(corpus.unshipped_files)} differ from the ones this embconf "
            "shipped with (a local corpus: the report lists them)"
            if corpus.unshipped_files
            else "",
        )
        if line
    )
    console.report(record, note)
    console.notes(record)
    for line in notes:
        print(line, file=out)
    for line in write_errors:
        print(f"embconf: {line}", file=sys.stderr)
    bad = record.problems or (given.strict and record.count(XPASS))
    stale = given.strict and record.unmatched_expectations
    if stale:
        print(
            f"embconf: --strict: {len(record.unmatched_expectations)} expectation(s) match no case; remove them",
            file=sys.stderr,
        )
    declined = [r for r in record.declined if r.expectation is None] if given.strict else []
    if declined:
        print(
            f"embconf: --strict: {len(declined)} case(s) declined within the declared capabilities and not listed "
            "in --expectations; a conformance claim cannot rest on declined cases",
            file=sys.stderr,
        )
    if write_errors:
        return exits.USAGE
    return exits.failed_if(bad or stale or declined)
