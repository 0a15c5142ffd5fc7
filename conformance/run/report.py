"""``embconf report FILE``: a saved run report (``embconf run --report-json FILE``) rendered again, as the console,
JUnit, Markdown or HTML would have shown the run: the record read back (:meth:`RunRecord.from_json`), never
recomputed. A report of a run that did not finish renders as far as it got, and says so."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

from embconf.model import exits
from embconf.model.errors import UserError


def register(sub: Any) -> None:
    report = sub.add_parser("report", help="render a saved run report (embconf run --report-json FILE) again")
    report.add_argument("file", type=Path, metavar="FILE", help="a report embconf run --report-json wrote")
    report.add_argument("--junit", type=Path, metavar="OUT", help="write it as JUnit XML here (- for stdout)")
    report.add_argument("--markdown", type=Path, metavar="OUT", help="write it as a one-column Markdown matrix here")
    report.add_argument("--html", type=Path, metavar="OUT", help="write it as a one-column HTML matrix here")
    report.add_argument(
        "--no-colour", "--no-color", dest="colour", action="store_false", default=None, help="no ANSI colour"
    )
    report.set_defaults(
        handler=lambda args: report_command(args.file, args.junit, args.markdown, args.html, args.colour)
    )


def load_record(path: Path) -> Any:
    """The run record a report file holds; UserError (one line) when it cannot be read or is not a report."""
    from embconf.reports.json_report import read_record

    try:
        return read_record(path)
    except ValueError as exc:
        raise UserError(f"{path}: {exc}" if str(path) not in str(exc) else str(exc)) from None


def report_command(
    file: Path,
    junit_file: Optional[Path] = None,
    markdown_file: Optional[Path] = None,
    html_file: Optional[Path] = None,
    colour: Optional[bool] = None,
) -> int:
    """The console rendering of the report ``file`` on stdout (stderr when the JUnit file is stdout), each file
    asked for; exit 1 when the run had a failure or did not finish, as ``embconf run`` would have."""
    from embconf.reports import junit
    from embconf.reports.console import Console
    from embconf.untrusted.write import ConsoleStream, OutputTarget

    record = load_record(file)
    target = OutputTarget.check(junit_file) if junit_file is not None else None
    for path in (markdown_file, html_file):
        if path is not None:
            OutputTarget.check(path)
    if target is not None:
        junit.write(target, record, str(record.impl))
    if markdown_file is not None or html_file is not None:
        _write_matrix(record, file, markdown_file, html_file)
    out = ConsoleStream(sys.stderr if target is not None and target.is_stdout else sys.stdout)
    console = Console(out, colour=colour, quiet=True)
    console.report(record)
    console.notes(record)
    return exits.failed_if(record.problems or not record.complete)


def _write_matrix(record: Any, file: Path, markdown_file: Optional[Path], html_file: Optional[Path]) -> None:
    from embconf.matrix import html, markdown
    from embconf.matrix.model import build
    from embconf.untrusted.write import write_text

    document = build([record], dict(record.fixtures), command=f"embconf report {file}")
    for path, renderer in ((markdown_file, markdown.render), (html_file, html.render)):
        if path is not None:
            write_text(path, renderer(document))
