"""The JSON report (schema: spec/schemas/report.schema.json), written as JSON lines as the run goes, and read back.

A report file is one JSON object a line:

- ``{"record": "header", ...}``: the suite, the implementation, its capabilities, the environment, the fixtures
  and ``planned`` (how many cases the run is to run), written before the first case;
- ``{"record": "case", ...}``: one case's result, written as the case is judged; a case whose entry changes when
  the run finishes (its diagnosis, a change ``--repeat`` found) is written again, and the later line stands;
- ``{"record": "footer", ...}``: the counts, the verdict and ``"complete": true``, written when the run finishes.

A run killed halfway leaves the header and the cases judged so far: :func:`read` gives that record with
``complete`` false and a verdict saying where it stopped. :func:`read` also takes a report of format 1 (one JSON
document). :func:`read_record` is the record again, for ``embconf report`` and ``embconf matrix --merge``; both read
the file as untrusted input, bounded and typed (:mod:`embconf.reports.saved`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional, Union

from embconf.model.outcomes import CaseResult
from embconf.model.record import RunRecord
from embconf.untrusted.write import LineWriter, OutputError, OutputTarget, PathLike, as_target

HEADER, CASE, FOOTER = "header", "case", "footer"


class JsonLinesReport:
    """A report file written as the run goes: :meth:`header`, :meth:`case` per case, :meth:`footer`. A write that
    fails stops the writing (the run goes on); :attr:`error` says why, in one line."""

    def __init__(self, target: Union[PathLike, OutputTarget]) -> None:
        self.target = as_target(target)
        self._writer: Optional[LineWriter] = None
        self._written: dict[str, str] = {}  # case id -> its last line
        self.error = ""

    def header(self, record: RunRecord) -> None:
        """The header of ``record`` (its results not yet run): opens the file."""
        try:
            self._writer = self.target.open_lines()
        except OutputError as exc:
            self.error = str(exc)
            return
        self._line({"record": HEADER, **record.header_json()})

    def case(self, result: CaseResult) -> None:
        line = _dump({"record": CASE, **result.to_json()})
        if self._written.get(result.id) != line:
            self._written[result.id] = line
            self._write(line)

    def footer(self, record: RunRecord) -> None:
        """Every case whose entry changed since it was written, then the footer; closes the file."""
        for result in record.results:
            self.case(result)
        self._line({"record": FOOTER, **record.footer_json()})
        if self._writer is not None:
            self._writer.close()

    def _line(self, entry: dict[str, Any]) -> None:
        self._write(_dump(entry))

    def _write(self, line: str) -> None:
        if self._writer is None or self.error:
            return
        try:
            self._writer.write(line + "\n")
        except OutputError as exc:
            self.error = str(exc)
            self._writer.close()


def _dump(entry: dict[str, Any]) -> str:
    return json.dumps(entry, default=str, separators=(",", ":"))


def write(target: Union[PathLike, OutputTarget], record: RunRecord) -> None:
    """A finished record as a whole report file (OutputError, one line, when it cannot be written)."""
    report = JsonLinesReport(target)
    report.header(record)
    for result in record.results:
        report.case(result)
    report.footer(record)
    if report.error:
        raise OutputError(report.error)


def read(path: Union[str, Path]) -> dict[str, Any]:
    """The report document of a report file, read bounded and typed (:func:`embconf.reports.saved.read`)."""
    from embconf.reports.saved import read as read_saved

    return read_saved(path)


def parse(raw: bytes, name: str = "report") -> dict[str, Any]:
    """The report document of a report's bytes (:func:`embconf.reports.saved.parse`)."""
    from embconf.reports.saved import parse as parse_saved

    return parse_saved(raw, name)


def read_record(path: Union[str, Path]) -> RunRecord:
    """The run record a report file holds, streamed, bounded and typed (:func:`embconf.reports.saved.read_record`);
    ValueError (one line)."""
    from embconf.reports.saved import read_record as read_saved_record

    return read_saved_record(path)
