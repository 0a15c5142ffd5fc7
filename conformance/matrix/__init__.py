"""The conformance matrix: implementations side by side, requirement by requirement.

:func:`build` turns the runs of :mod:`embconf.matrix.run` into one JSON document
(spec/schemas/matrix.schema.json); the renderers read only that document, so a saved JSON can be
rendered again: :mod:`.markdown` and :mod:`.html`.
"""
from __future__ import annotations

from typing import Any

from embconf.matrix.model import MATRIX_FORMAT, build, write_json

__all__ = ["MATRIX_FORMAT", "build", "write_json"]


def cli_output(runs: list, corpus: Any, case_count: int, args: Any) -> int:
    """Write the files ``embconf matrix`` was asked for, print the headline per column; exit 0 (a matrix
    records failures, it does not fail on them)."""
    import shlex
    import sys

    from embconf.matrix import html, markdown

    fixtures = {"manifest_sha256": corpus.manifest_sha256, "modified": corpus.modified_files, "cases": case_count}
    document = build(runs, fixtures, command="embconf " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:2] == ["matrix"] else "")
    for path, writer in ((args.json, write_json), (args.markdown, markdown.write), (args.html, html.write)):
        if path:
            writer(path, document)
    for column in document["implementations"]:
        print(f"{column['impl']:<28} {column['claim']['statement']}")
    return 0
