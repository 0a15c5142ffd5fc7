"""``embconf report FILE``: a saved run report (``embconf run --report-json FILE``) rendered again, as the console,
JUnit, Markdown or HTML would have shown the run: the record read back (:meth:`RunRecord.from_json`), never
recomputed. A report of a run that did not finish renders as far as it got, and says so."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from embconf.model import exits
from embconf.model.errors import UserError
from embconf.untrusted.arguments import typed


def register(sub: Any) -> None:
    report = sub.add_parser("report", help="render a saved run report (embconf run --report-json FILE) again")
    report.add_argument("file", type=Path, metavar="FILE", help="a report embconf run --report-json wrote")
    report.add_argument("--junit", type=Path, metavar="OUT", help="write it as JUnit XML here (- for stdout)")
    report.add_argument("--markdown", type=Path, metavar="OUT", help="write it as a one-column Markdown matrix here")
    report.add_argument("--html", type=Path, metavar="OUT", help="write it as a one-column HTML matrix here")
    report.add_argument(
        "--no-colour", "--no-color", dest="colour", action="store_false", default=None, help="no ANSI colour"
    )
    report.set_defaults(handler=lambda args: report_command(typed(ReportOptions, args)))


@dataclass(frozen=True)
class ReportOptions:
    """``embconf report``'s options as given."""

    file: Path
    junit: Optional[Path] = None
    markdown: Optional[Path] = None
    html: Optional[Path] = None
    colour: Optional[bool] = None


def load_record(path: Path) -> Any:
    """The run record a report file holds; UserError (one line) when it cannot be read or is not a report."""
    from embconf.reports.json_report import read_record

    try:
        return read_record(path)
    except ValueError as exc:
        raise UserError(f"{path}: {exc}" if str(path) not in str(exc) else str(exc)) from None


def report_command(options: ReportOptions) -> int:
    """The console rendering on stdout (stderr when --junit goes to stdout), each file asked for; exit 1 when
    the run had a failure or did not finish, as ``embconf run`` would have."""
    from embconf.reports import junit
    from embconf.reports.console import Console
    from embconf.untrusted.write import ConsoleStream, OutputTarget

    record = load_record(options.file)
    target = OutputTarget.check(options.junit) if options.junit is not None else None
    for path in (options.markdown, options.html):
        if path is not None:
            OutputTarget.check(path)
    if target is not None:
        junit.write(target, record, str(record.impl))
    _write_matrix(options, record)
    out = ConsoleStream(sys.stderr if target is not None and target.is_stdout else sys.stdout)
    console = Console(out, colour=options.colour, quiet=True)
    console.report(record)
    console.notes(record)
    return exits.failed_if(record.problems or not record.complete)


def _write_matrix(options: ReportOptions, record: Any) -> None:
    if options.markdown is None and options.html is None:
        return
    from embconf.matrix import html, markdown
    from embconf.matrix.model import build
    from embconf.untrusted.write import write_text

    document = build([record], dict(record.fixtures), command=f"embconf report {options.file}")
    for path, renderer in ((options.markdown, markdown.render), (options.html, html.render)):
        if path is not None:
            write_text(path, renderer(document))
