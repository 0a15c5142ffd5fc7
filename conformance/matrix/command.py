"""``embconf matrix``: several implementations run one after another through :mod:`embconf.session`, each
isolated as ``embconf run`` runs it, laid side by side (:mod:`embconf.matrix.model`); or, with ``--merge``,
the columns of matrix files (or run reports) measured in other environments laid side by side (:mod:`embconf.matrix.merge`)."""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from embconf.corpus.command import Selection, add_selection
from embconf.model import exits
from embconf.model.errors import UserError
from embconf.model.impl import Impl
from embconf.processes.options import Limits, add_limits
from embconf.untrusted.arguments import typed


def register(sub: Any) -> None:
    from embconf.adapters import kinds_help

    matrix = sub.add_parser(
        "matrix", help="run several implementations and lay them side by side, requirement by requirement"
    )
    matrix.add_argument(
        "--impl",
        action="append",
        metavar="KIND:TARGET",
        help=f"an implementation (repeatable: one column each): {kinds_help()}",
    )
    matrix.add_argument(
        "--merge",
        action="append",
        type=Path,
        metavar="FILE",
        help="instead of running: a matrix JSON measured elsewhere (embconf matrix --json) or a run's report "
        "(embconf run --report-json), repeatable; "
        "their columns side by side, each with the environment it was measured in",
    )
    matrix.add_argument(
        "--regenerate-with",
        metavar="COMMAND",
        help="the command the written documents name to regenerate them (default: this command line); "
        "docs/regenerate-matrix.sh names itself",
    )
    add_selection(matrix)
    for flag in ("--markdown", "--html", "--json"):
        matrix.add_argument(flag, type=Path, metavar="FILE", help=f"write the matrix as {flag[2:]} here")
    add_limits(matrix, run_scope="each implementation's run")
    matrix.set_defaults(handler=lambda args: matrix_command(MatrixOptions.read(args)))


@dataclass(frozen=True)
class MatrixOptions:
    """``embconf matrix``'s options as given (each --impl parsed)."""

    impl: tuple[Impl, ...]
    merge: tuple[Path, ...]
    regenerate_with: Optional[str]
    selection: Selection
    markdown: Optional[Path]
    html: Optional[Path]
    json: Optional[Path]
    limits: Limits

    @classmethod
    def read(cls, args: argparse.Namespace) -> MatrixOptions:
        from embconf.adapters import parse_impl

        return typed(
            cls,
            args,
            impl=tuple(parse_impl(text) for text in args.impl or ()),  # each parsed once, here: before any runs
            merge=tuple(args.merge or ()),
            selection=Selection.read(args),
            limits=Limits.read(args),
        )


def matrix_command(options: MatrixOptions) -> int:
    """Write the files asked for and print each column's claim; exit 0 (a matrix records failures, it does
    not fail on them)."""
    from embconf.corpus.command import selected
    from embconf.matrix.model import build
    from embconf.session import RunOptions, run_implementation

    if bool(options.impl) == bool(options.merge):
        raise UserError("embconf matrix: give --impl KIND:TARGET (to run) or --merge FILE (to merge), not both")
    command = options.regenerate_with or (
        "embconf " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:2] == ["matrix"] else ""
    )
    if options.merge:
        return _write(options, merged(list(options.merge), command))
    corpus, cases = selected(options.selection)
    run_options = RunOptions.of(options.limits)
    fixtures = corpus.report_block(len(cases))
    records = []
    for impl in options.impl:
        records.append(run_implementation(impl, cases, run_options, fixtures=fixtures))
        print(f"{impl}: {len(cases)} cases run", file=sys.stderr)
    return _write(options, build(records, fixtures, command=command))


def merged(paths: list[Path], command: str) -> dict[str, Any]:
    """The matrix of the column files at ``paths``; UserError (one line) when one cannot be read or merged."""
    from embconf.matrix.merge import load_column_file, merge

    doc = merge([(str(path), load_column_file(path)) for path in paths], command=command)
    return {**doc, "sources": [path.name for path in paths]}  # the files, not a folder of this machine


def _write(options: MatrixOptions, document: dict[str, Any]) -> int:
    from embconf.matrix import html, markdown
    from embconf.matrix.model import write_json

    for path, writer in ((options.json, write_json), (options.markdown, markdown.write), (options.html, html.write)):
        if path:
            writer(path, document)
    for column in document["implementations"]:
        print(f"{column['impl']:<28} {column['claim']['statement']}")
    return exits.OK
