"""The JSON report (schema: spec/schemas/report.schema.json), written as JSON lines as the run goes, and read back.

A report file is one JSON object a line:

- ``{"record": "header", ...}``: the suite, the implementation, its capabilities, the environment, the fixtures
  and ``planned`` (how many cases the run is to run), written before the first case;
- ``{"record": "case", ...}``: one case's result, written as the case is judged; a case whose entry changes when
  the run finishes (its diagnosis, a change ``--repeat`` found) is written again, and the later line stands;
- ``{"record": "footer", ...}``: the counts, the verdict and ``"complete": true``, written when the run finishes.

A run killed halfway leaves the header and the cases judged so far: :func:`read` gives that record with
``complete`` false and a verdict saying where it stopped. :func:`read` also takes a report of format 1 (one JSON
document). ``RunRecord.from_json(read(path))`` is the record again, for ``embconf report`` and ``embconf matrix
--merge``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional, Union

from embconf.model.outcomes import PROBLEMS, CaseResult
from embconf.model.record import RunRecord
from embconf.untrusted.write import LineWriter, OutputError, OutputTarget, PathLike, as_target

HEADER, CASE, FOOTER = "header", "case", "footer"
MAX_REPORT = 512 * 2**20  # bytes a report file read back may hold


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
    """The report document (the schema's one object) of a report file, JSON lines or format 1; a run that did not
    finish is ``"complete": false`` with a verdict saying where it stopped (a last line cut short is dropped).
    ValueError (one line) when it cannot be read or is not a report."""
    from embconf.untrusted.read import InputError, read_bounded

    name = str(path)
    try:
        raw = read_bounded(Path(path), MAX_REPORT, "report")
    except FileNotFoundError:
        raise ValueError(f"{name}: no such file") from None
    except InputError as exc:
        raise ValueError(str(exc)) from None
    return parse(raw, name)


def parse(raw: bytes, name: str = "report") -> dict[str, Any]:
    """The report document of a report's bytes (as :func:`read`); ValueError (one line)."""
    from embconf.untrusted.read import InputError, load_json

    try:
        document = load_json(raw, name)
    except InputError:
        document = None  # JSON lines (or not JSON)
    if isinstance(document, dict) and "cases" in document:
        return document  # format 1: one document
    lines = [line for line in raw.splitlines() if line.strip()]
    entries = []
    for number, line in enumerate(lines, 1):
        try:
            entries.append(load_json(line, name))
        except InputError as exc:
            if number < len(lines):
                raise ValueError(f"{exc} (line {number})") from None  # only the last line may be cut short
    return _assemble(entries, name)


def read_record(path: Union[str, Path]) -> RunRecord:
    """The run record a report file holds (:func:`read`, then :meth:`RunRecord.from_json`); ValueError (one line)."""
    return RunRecord.from_json(read(path))


def _assemble(entries: list[Any], path: Union[str, Path]) -> dict[str, Any]:
    if not entries or not isinstance(entries[0], dict) or entries[0].get("record") != HEADER:
        raise ValueError(f"{path} is not an embconf run report: it does not start with a report header")
    document = {key: value for key, value in entries[0].items() if key != "record"}
    cases: dict[str, dict[str, Any]] = {}
    footer: Optional[dict[str, Any]] = None
    for entry in entries[1:]:
        kind = entry.get("record") if isinstance(entry, dict) else None
        if kind == CASE and isinstance(entry.get("id"), str):
            cases[entry["id"]] = {key: value for key, value in entry.items() if key != "record"}
        elif kind == FOOTER:
            footer = {key: value for key, value in entry.items() if key != "record"}
        else:
            raise ValueError(f"{path}: a line that is not a report's header, case or footer")
    document["cases"] = list(cases.values())
    if footer is None:
        return {**document, **_unfinished(document)}
    return {**document, **footer}


def _unfinished(document: dict[str, Any]) -> dict[str, Any]:
    """The footer a report without one stands for: the run stopped after the cases it holds."""
    record = RunRecord.from_json({**document, "complete": False})
    ran, planned = len(document["cases"]), document.get("planned", len(document["cases"]))
    failing = sum(result.outcome in PROBLEMS for result in record.results)
    return {
        "complete": False,
        "summary": record.summary(),
        "declined": len(record.declined),
        "verdict": {
            "summary": f"incomplete: the run stopped after {ran} of {planned} cases (no diagnosis)",
            "explained": 0,
            "failures": failing,
            "mistakes": [],
        },
    }
